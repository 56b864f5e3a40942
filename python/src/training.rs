//! Training and sampling from Python: the Rust API's optimizers
//! (`tempo::optim`, re-exported by `tempo.optim`) and categorical sampling
//! (`tempo::rl`), each one call of the Rust function, located at the
//! Python line that makes it. What the Rust functions would assert (an
//! iteration dimension outside the parameter's domain, a gradient of
//! another shape) is refused here first, as a `TempoError` at that line.

use super::errors::tempo_error;
use super::{PyDim, PyExpr, PyProgram, PyTensor, caller, describe, located, operand, refused};
use pyo3::prelude::*;
use tempo::Expr;
use tempo::optim::{self, Adam};

/// The state `tempo.optim.adam` declares for a parameter `w`, tensors
/// over the parameter's domain named after it (outputs, or read as any
/// tensor).
#[pyclass(unsendable, name = "AdamState", module = "tempo")]
struct PyAdamState {
    /// The first moments `w_m`: `m[0] = (1 - beta1) g[0]`,
    /// `m[i] = beta1 m[i-1] + (1 - beta1) g[i]`.
    #[pyo3(get)]
    m: Py<PyTensor>,
    /// The second moments `w_v`: `v[0] = (1 - beta2) g[0]^2`,
    /// `v[i] = beta2 v[i-1] + (1 - beta2) g[i]^2`.
    #[pyo3(get)]
    v: Py<PyTensor>,
    /// `w_beta1_power[i] = beta1^(i+1)`, scalars over the iteration
    /// dimension (the bias correction).
    #[pyo3(get)]
    beta1_power: Py<PyTensor>,
    /// `w_beta2_power[i] = beta2^(i+1)`.
    #[pyo3(get)]
    beta2_power: Py<PyTensor>,
}

/// A Python tensor of the Rust one, over `domain`.
fn wrapped(py: Python<'_>, tensor: tempo::Tensor, domain: Vec<tempo::Dim>) -> PyResult<Py<PyTensor>> {
    Py::new(py, PyTensor { tensor, domain })
}

impl PyAdamState {
    fn new(py: Python<'_>, state: optim::AdamState, param: &PyTensor, iteration: &PyDim) -> PyResult<Self> {
        let over_iteration = vec![iteration.dim.clone()];
        Ok(PyAdamState {
            m: wrapped(py, state.m, param.domain.clone())?,
            v: wrapped(py, state.v, param.domain.clone())?,
            beta1_power: wrapped(py, state.beta1_power, over_iteration.clone())?,
            beta2_power: wrapped(py, state.beta2_power, over_iteration)?,
        })
    }
}

/// Refuses an update the Rust optimizers cannot make: `iteration` not in
/// `param`'s domain, a gradient of another domain or point type, points
/// that are not floats.
fn check_update(py: Python<'_>, op: &str, param: &PyTensor, grad: &PyTensor, iteration: &PyDim) -> PyResult<()> {
    let name = param.tensor.name();
    let domain = param.tensor.domain();
    if !domain.iter().any(|d| d == iteration.dim.name()) {
        return Err(refused(
            py,
            op,
            format!(
                "the iteration dimension '{}' is not in the domain of '{name}' ([{}]): a parameter is a tensor over the iteration",
                iteration.dim.name(),
                domain.join(", ")
            ),
        ));
    }
    if grad.tensor.domain() != domain || grad.tensor.point_type() != param.tensor.point_type() {
        return Err(refused(
            py,
            op,
            format!(
                "the gradient '{}' ({} over [{}]) is not of the parameter '{name}' ({} over [{}]): give p.grad(name, loss, {name})",
                grad.tensor.name(),
                describe(grad.tensor.point_type()),
                grad.tensor.domain().join(", "),
                describe(param.tensor.point_type()),
                domain.join(", ")
            ),
        ));
    }
    if !param.tensor.point_type().element.is_float() {
        return Err(refused(
            py,
            op,
            format!("'{name}' has {} points: optimizers update floats", describe(param.tensor.point_type())),
        ));
    }
    Ok(())
}

/// Runs a Rust optimizer at the Python caller's line: a panic (an
/// assertion the checks above did not foresee) comes back as a
/// `TempoError` at that line rather than ending the interpreter.
pub(super) fn guarded<R>(py: Python<'_>, op: &str, f: impl FnOnce() -> R) -> PyResult<R> {
    let at = caller(py);
    let site = at.clone();
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        tempo::site::at_column(&site.file, site.line, site.column, f)
    }))
    .map_err(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "the optimizer failed".into());
        tempo_error(py, format!("{at}: error: {message}"), Some(op), None)
    })
}

/// The initial value of `param`: an expression, or a number everywhere.
fn initial(py: Python<'_>, init: &Bound<'_, PyAny>, param: &PyTensor) -> PyResult<Expr> {
    let init = operand(init)?;
    Ok(located(py, || init.or_splat(param.tensor.point_type().clone())))
}

/// Plain gradient descent, `tempo::optim::sgd`: defines `param` over the
/// iteration dimension `iteration` as `param[0] = init` and
/// `param[i] = param[i-1] - lr * g[i-1].stop_gradient()`, where `grad` is
/// `p.grad(name, loss, param)` (declared before, as here). `init` is an
/// `Expr` (an input's point, `w0[()]`) or a number; `param` must have no
/// branches yet. Returns nothing: `param` is now defined.
///
/// >>> import numpy as np
/// >>> p = tempo.Program(); i = p.dim("i", "I"); t = p.dim("t", "T")
/// >>> x = p.input("x", [t], [3], "float64")
/// >>> w = p.tensor("w", [i], [3], "float64")
/// >>> loss = p.tensor("loss", [i, t], [], "float64")
/// >>> err = ((w[i] - tempo.constant([1.0, -2.0, 0.5], "float64")) * x[t]).sum()
/// >>> p.otherwise(loss, err * err)
/// >>> g = p.grad("g", loss, w)
/// >>> tempo.optim.sgd(p, w, g, i, 0.0, lr=0.05)
/// >>> p.output(loss)
/// >>> losses = p.compile().run(I=40, T=8, seed=1)["loss"].sum(axis=1)
/// >>> bool(losses[-1] < 1e-3 * losses[0])
/// True
#[pyfunction]
#[pyo3(signature = (program, param, grad, iteration, init, lr))]
fn sgd(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    param: &PyTensor,
    grad: &PyTensor,
    iteration: &PyDim,
    init: &Bound<'_, PyAny>,
    lr: f64,
) -> PyResult<()> {
    check_update(py, "optim.sgd", param, grad, iteration)?;
    let init = initial(py, init, param)?;
    guarded(py, "optim.sgd", || optim::sgd(&mut program.program, &param.tensor, &grad.tensor, &iteration.dim, init, lr))
}

/// Gradient descent with momentum, `tempo::optim::sgd_momentum`, as
/// PyTorch's `SGD(lr, momentum)` (no dampening): the velocity
/// `v[0] = g[0]`, `v[i] = momentum * v[i-1] + g[i]` (the gradient read
/// through `stop_gradient`), and `param[0] = init`,
/// `param[i] = param[i-1] - lr * v[i-1]`. Returns the velocity, a tensor
/// named `{param}_velocity` over `param`'s domain. Arguments as `sgd`'s.
///
/// >>> p = tempo.Program(); i = p.dim("i", "I")
/// >>> w = p.tensor("w", [i], [], "float64")
/// >>> loss = p.tensor("loss", [i], [], "float64")
/// >>> p.otherwise(loss, (w[i] - 3.0) * (w[i] - 3.0))
/// >>> g = p.grad("g", loss, w)
/// >>> velocity = tempo.optim.momentum(p, w, g, i, 0.0, lr=0.1, momentum=0.5)
/// >>> p.output(w)
/// >>> p.compile().run(I=3)["w"].round(6).tolist()   # v: -6, -7.8
/// [0.0, 0.6, 1.38]
#[pyfunction]
#[pyo3(signature = (program, param, grad, iteration, init, lr, momentum))]
#[allow(clippy::too_many_arguments)]
fn momentum(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    param: &PyTensor,
    grad: &PyTensor,
    iteration: &PyDim,
    init: &Bound<'_, PyAny>,
    lr: f64,
    momentum: f64,
) -> PyResult<Py<PyTensor>> {
    check_update(py, "optim.momentum", param, grad, iteration)?;
    let init = initial(py, init, param)?;
    let velocity = guarded(py, "optim.momentum", || {
        optim::sgd_momentum(&mut program.program, &param.tensor, &grad.tensor, &iteration.dim, init, lr, momentum)
    })?;
    wrapped(py, velocity, param.domain.clone())
}

/// Adam, `tempo::optim::adam`, as PyTorch computes it (defaults PyTorch's);
/// with `weight_decay` it is AdamW (decoupled decay):
/// `param[0] = init` and, `k = i` gradients seen,
/// `param[i] = param[i-1] - lr * (m̂ / (sqrt(v̂) + eps) + weight_decay * param[i-1])`
/// with `m̂ = m[i-1] / (1 - beta1^k)`, `v̂ = v[i-1] / (1 - beta2^k)` and the
/// moments of the gradient read through `stop_gradient`. Returns the
/// state it declares (`AdamState`: `m`, `v`, `beta1_power`,
/// `beta2_power`, named `{param}_m`, ...). Arguments as `sgd`'s.
///
/// >>> p = tempo.Program(); i = p.dim("i", "I")
/// >>> w = p.tensor("w", [i], [2], "float64")
/// >>> loss = p.tensor("loss", [i], [], "float64")
/// >>> d = w[i] - tempo.constant([3.0, -1.0], "float64")
/// >>> p.otherwise(loss, (d * d).sum())
/// >>> g = p.grad("g", loss, w)
/// >>> state = tempo.optim.adam(p, w, g, i, 0.0, lr=0.1)
/// >>> p.output(w)
/// >>> p.compile().run(I=3)["w"].round(6).tolist()   # the first step: lr each way
/// [[0.0, 0.0], [0.1, -0.1], [0.199897, -0.199588]]
#[pyfunction]
#[pyo3(signature = (program, param, grad, iteration, init, lr = 1e-3, betas = (0.9, 0.999), eps = 1e-8, weight_decay = 0.0))]
#[pyo3(
    text_signature = "(program, param, grad, iteration, init, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0)"
)]
#[allow(clippy::too_many_arguments)]
fn adam(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    param: &PyTensor,
    grad: &PyTensor,
    iteration: &PyDim,
    init: &Bound<'_, PyAny>,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
) -> PyResult<PyAdamState> {
    check_update(py, "optim.adam", param, grad, iteration)?;
    let init = initial(py, init, param)?;
    let config = Adam { lr, beta1: betas.0, beta2: betas.1, eps, weight_decay };
    let state = guarded(py, "optim.adam", || {
        optim::adam(&mut program.program, &param.tensor, &grad.tensor, &iteration.dim, init, &config)
    })?;
    PyAdamState::new(py, state, param, iteration)
}

/// Adam with several updates per iteration, `tempo::optim::adam_epochs`
/// (the epochs of PPO on one rollout): `params[k]` the parameters of
/// epoch `k` (tensors of one domain and point type, over `iteration`) and
/// `grads[k]` the gradient of epoch `k`'s loss with respect to them. The
/// updates are `adam`'s in the order (iteration 0, epoch 0), (0, 1), ...,
/// (1, 0), ...: `params[0][0] = init`, `params[0][i]` the update of
/// `params[K-1][i-1]`, and `params[k][i]` that of `params[k-1][i]`.
/// Returns each epoch's `AdamState`. With one epoch this is `adam`:
///
/// >>> p = tempo.Program(); i = p.dim("i", "I")
/// >>> w = [p.tensor(f"w{k}", [i], [], "float64") for k in range(2)]
/// >>> loss = [p.tensor(f"loss{k}", [i], [], "float64") for k in range(2)]
/// >>> for k in range(2):
/// ...     p.otherwise(loss[k], (w[k][i] - 3.0) * (w[k][i] - 3.0))
/// >>> g = [p.grad(f"g{k}", loss[k], w[k]) for k in range(2)]
/// >>> states = tempo.optim.adam_epochs(p, w, g, i, 0.0, lr=0.5)
/// >>> p.output(w[1])
/// >>> bool(abs(p.compile().run(I=30)["w1"][-1] - 3.0) < 0.5)
/// True
#[pyfunction]
#[pyo3(signature = (program, params, grads, iteration, init, lr = 1e-3, betas = (0.9, 0.999), eps = 1e-8, weight_decay = 0.0))]
#[pyo3(
    text_signature = "(program, params, grads, iteration, init, lr=0.001, betas=(0.9, 0.999), eps=1e-08, weight_decay=0.0)"
)]
#[allow(clippy::too_many_arguments)]
fn adam_epochs(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    params: Vec<PyRef<'_, PyTensor>>,
    grads: Vec<PyRef<'_, PyTensor>>,
    iteration: &PyDim,
    init: &Bound<'_, PyAny>,
    lr: f64,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
) -> PyResult<Vec<PyAdamState>> {
    if params.is_empty() || params.len() != grads.len() {
        return Err(refused(
            py,
            "optim.adam_epochs",
            format!(
                "adam_epochs takes one gradient per epoch's parameters ({} parameters, {} gradients)",
                params.len(),
                grads.len()
            ),
        ));
    }
    for (param, grad) in params.iter().zip(&grads) {
        check_update(py, "optim.adam_epochs", param, grad, iteration)?;
        if param.tensor.domain() != params[0].tensor.domain()
            || param.tensor.point_type() != params[0].tensor.point_type()
        {
            return Err(refused(
                py,
                "optim.adam_epochs",
                format!(
                    "every epoch's parameters have one domain and point type: '{}' is {} over [{}], '{}' {} over [{}]",
                    param.tensor.name(),
                    describe(param.tensor.point_type()),
                    param.tensor.domain().join(", "),
                    params[0].tensor.name(),
                    describe(params[0].tensor.point_type()),
                    params[0].tensor.domain().join(", ")
                ),
            ));
        }
    }
    let init = initial(py, init, &params[0])?;
    let config = Adam { lr, beta1: betas.0, beta2: betas.1, eps, weight_decay };
    let tensors: Vec<tempo::Tensor> = params.iter().map(|p| p.tensor.clone()).collect();
    let gradients: Vec<tempo::Tensor> = grads.iter().map(|g| g.tensor.clone()).collect();
    let states = guarded(py, "optim.adam_epochs", || {
        optim::adam_epochs(&mut program.program, &tensors, &gradients, &iteration.dim, init, &config)
    })?;
    states.into_iter().zip(&params).map(|(state, param)| PyAdamState::new(py, state, param, iteration)).collect()
}

/// A sampled action with its log-probability and the distribution's
/// entropy (`tempo::rl::Sample`), per row of the logits.
#[pyclass(unsendable, name = "Sample", module = "tempo")]
pub(super) struct PySample {
    pub(super) sample: tempo::rl::Sample,
}

#[pymethods]
impl PySample {
    /// The sampled class of each row (int64), cut from the gradient.
    #[getter]
    fn action(&self) -> PyExpr {
        PyExpr { expr: self.sample.action.clone() }
    }
    /// The log-probability of the action under `softmax(logits)`, per row
    /// (differentiable with respect to the logits: a policy gradient).
    #[getter]
    fn log_prob(&self) -> PyExpr {
        PyExpr { expr: self.sample.log_prob.clone() }
    }
    /// The entropy `-sum(p log p)` of each row's distribution.
    #[getter]
    fn entropy(&self) -> PyExpr {
        PyExpr { expr: self.sample.entropy.clone() }
    }
}

/// Refuses logits without a class axis (a scalar).
fn check_logits(py: Python<'_>, op: &str, logits: &PyExpr) -> PyResult<()> {
    if logits.expr.rank() == 0 {
        return Err(refused(py, op, "logits need a class axis (the last): a scalar has none"));
    }
    Ok(())
}

/// `categorical(logits, seed)`: samples a class from `softmax(logits)`
/// along the last axis of `logits` (one per row, Gumbel-max with the
/// seeded generator: a pure function of `seed`, the point and the row),
/// `tempo::rl::categorical`. Returns a `Sample`: `action` (int64 per
/// row), `log_prob` and `entropy` (per row, differentiable).
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> a = p.tensor("a", [t], [], "int64")
/// >>> logits = tempo.constant([0.0, 0.0, 50.0])   # class 2, nearly surely
/// >>> p.otherwise(a, tempo.categorical(logits, seed=3).action)
/// >>> p.output(a)
/// >>> p.compile().run(T=4)["a"].tolist()
/// [2, 2, 2, 2]
#[pyfunction]
fn categorical(py: Python<'_>, logits: &PyExpr, seed: i64) -> PyResult<PySample> {
    check_logits(py, "categorical", logits)?;
    Ok(PySample { sample: located(py, || tempo::rl::categorical(&logits.expr, seed)) })
}

/// `categorical_log_prob(logits, action)`: the log-probability of the
/// integer `action` (one per row of `logits`) under `softmax(logits)`
/// along the last axis, per row, `tempo::rl::categorical_log_prob`
/// (differentiable with respect to the logits).
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> y = p.tensor("y", [t], [2], "float64")
/// >>> logits = tempo.constant([[0.0, 0.0], [1.0, 1.0]], "float64")
/// >>> p.otherwise(y, tempo.categorical_log_prob(logits, tempo.constant([0, 1], "int64")))
/// >>> p.output(y)
/// >>> p.compile().run(T=1)["y"].round(4).tolist()
/// [[-0.6931, -0.6931]]
#[pyfunction]
fn categorical_log_prob(py: Python<'_>, logits: &PyExpr, action: &PyExpr) -> PyResult<PyExpr> {
    check_logits(py, "categorical_log_prob", logits)?;
    Ok(PyExpr { expr: located(py, || tempo::rl::categorical_log_prob(&logits.expr, &action.expr)) })
}

/// Adds this file's classes and functions to the module.
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyAdamState>()?;
    m.add_class::<PySample>()?;
    m.add_function(wrap_pyfunction!(sgd, m)?)?;
    m.add_function(wrap_pyfunction!(momentum, m)?)?;
    m.add_function(wrap_pyfunction!(adam, m)?)?;
    m.add_function(wrap_pyfunction!(adam_epochs, m)?)?;
    m.add_function(wrap_pyfunction!(categorical, m)?)?;
    m.add_function(wrap_pyfunction!(categorical_log_prob, m)?)?;
    Ok(())
}
