//! Reinforcement-learning helpers from Python (`tempo.rl`): the Rust API's
//! returns and advantages (`tempo::rl::discounted_returns`, `gae`) and the
//! normal policy (`normal`, `normal_log_prob`), each one call of the Rust
//! function located at the Python line; what the Rust function would
//! assert is refused first as a `TempoError` at that line.

use super::training::{PySample, guarded};
use super::{PyDim, PyExpr, PyProgram, PyTensor, describe, located, refused};
use pyo3::prelude::*;

/// Refuses a tensor that `t` is not a dimension of, or whose points are
/// not floats; `like` (when given) must have the same domain and point
/// type.
fn check_series(
    py: Python<'_>,
    op: &str,
    what: &str,
    x: &PyTensor,
    t: &PyDim,
    like: Option<&PyTensor>,
) -> PyResult<()> {
    let name = x.tensor.name();
    if !x.domain.iter().any(|d| d.name() == t.dim.name()) {
        return Err(refused(py, op, format!("{what} '{name}' is not over dimension '{}'", t.dim.name())));
    }
    let point = x.tensor.point_type();
    if !matches!(point.element, tempo::ElementType::F32 | tempo::ElementType::F64) {
        return Err(refused(py, op, format!("{what} '{name}' has points of {}: floats expected", describe(point))));
    }
    if let Some(like) = like {
        let same_domain = x.domain.iter().map(|d| d.name()).eq(like.domain.iter().map(|d| d.name()));
        if !same_domain || like.tensor.point_type() != point {
            return Err(refused(
                py,
                op,
                format!("{what} '{name}' must have the domain and point type of '{}'", like.tensor.name()),
            ));
        }
    }
    Ok(())
}

/// `discounted_returns(p, name, rewards, t, gamma, dones=None)`: the
/// returns `G[t] = r[t] + gamma * G[t+1]`, `G[T-1] = r[T-1]`, a new tensor
/// `name` over `rewards`' domain (floats, one per environment or a batch
/// of them in each point, with the step dimension `t`), run backward after the rollout. With `dones` (1.0 where an
/// episode ends at that step) the sum restarts after each end:
/// `G[t] = r[t] + gamma * (1 - done[t]) * G[t+1]` (`tempo::rl::discounted_returns`).
///
/// >>> import numpy as np
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> r = p.input("r", [t], [], "float64")
/// >>> p.output(tempo.rl.discounted_returns(p, "G", r, t, 0.5))
/// >>> p.compile().run(T=3, r=np.array([1.0, 2.0, 4.0]))["G"].tolist()
/// [3.0, 4.0, 4.0]
#[pyfunction]
#[pyo3(signature = (program, name, rewards, t, gamma, dones = None))]
fn discounted_returns(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    name: &str,
    rewards: &PyTensor,
    t: &PyDim,
    gamma: f64,
    dones: Option<&PyTensor>,
) -> PyResult<PyTensor> {
    check_series(py, "rl.discounted_returns", "rewards", rewards, t, None)?;
    if let Some(d) = dones {
        check_series(py, "rl.discounted_returns", "dones", d, t, Some(rewards))?;
    }
    let tensor = guarded(py, "rl.discounted_returns", || {
        tempo::rl::discounted_returns(
            &mut program.program,
            name,
            &rewards.tensor,
            &t.dim,
            gamma,
            dones.map(|d| &d.tensor),
        )
    })?;
    Ok(PyTensor { tensor, domain: rewards.domain.clone() })
}

/// `gae(p, name, rewards, values, t, gamma, lam, dones=None)`:
/// generalized advantage estimation (`tempo::rl::gae`), a new tensor
/// `name` over `rewards`' domain: the TD residuals `delta[t] = r[t] +
/// gamma * V[t+1] - V[t]` (`V[T] = 0`; with `dones`, no bootstrap across
/// an episode's end) in `{name}_delta`, and the advantages `A[t] =
/// delta[t] + gamma * lam * A[t+1]`, `A[T-1] = delta[T-1]`. `rewards`,
/// `values` and `dones` are floats of one point type (a batch of
/// environments in each point) over the same domain, which has
/// the step dimension `t`; read `values` through `stop_gradient` first
/// where the advantages are not to be differentiated.
///
/// >>> import numpy as np
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> r = p.input("r", [t], [], "float64"); v = p.input("v", [t], [], "float64")
/// >>> p.output(tempo.rl.gae(p, "A", r, v, t, 0.5, 1.0))
/// >>> p.compile().run(T=2, r=np.array([1.0, 1.0]), v=np.array([0.0, 0.0]))["A"].tolist()
/// [1.5, 1.0]
#[pyfunction]
#[pyo3(signature = (program, name, rewards, values, t, gamma, lam, dones = None))]
#[allow(clippy::too_many_arguments)]
fn gae(
    py: Python<'_>,
    mut program: PyRefMut<'_, PyProgram>,
    name: &str,
    rewards: &PyTensor,
    values: &PyTensor,
    t: &PyDim,
    gamma: f64,
    lam: f64,
    dones: Option<&PyTensor>,
) -> PyResult<PyTensor> {
    check_series(py, "rl.gae", "rewards", rewards, t, None)?;
    check_series(py, "rl.gae", "values", values, t, Some(rewards))?;
    if let Some(d) = dones {
        check_series(py, "rl.gae", "dones", d, t, Some(rewards))?;
    }
    let tensor = guarded(py, "rl.gae", || {
        let dones = dones.map(|d| &d.tensor);
        tempo::rl::gae(&mut program.program, name, &rewards.tensor, &values.tensor, &t.dim, gamma, lam, dones)
    })?;
    Ok(PyTensor { tensor, domain: rewards.domain.clone() })
}

/// Refuses a float parameter of a normal policy that is not broadcast to
/// the mean's shape (one value, or the mean's shape).
fn check_normal(py: Python<'_>, op: &str, mean: &PyExpr, log_sigma: &PyExpr) -> PyResult<()> {
    let (m, s) = (mean.expr.point_type(), log_sigma.expr.point_type());
    if !matches!(m.element, tempo::ElementType::F32 | tempo::ElementType::F64) || s.element != m.element {
        return Err(refused(
            py,
            op,
            format!("a normal policy takes floats of one type: mean {}, log_sigma {}", describe(m), describe(s)),
        ));
    }
    let size: i64 = s.shape.iter().product();
    if s.shape != m.shape && size != 1 {
        return Err(refused(
            py,
            op,
            format!("log_sigma is {}: one value, or the mean's shape {}", describe(s), describe(m)),
        ));
    }
    Ok(())
}

/// `normal(mean, log_sigma, seed)`: samples independent normals with
/// `mean` and `log_sigma` (one value, or `mean`'s shape) from the seeded
/// generator, `action = mean + exp(log_sigma) * eps`, cut from the
/// gradient (`tempo::rl::normal`). Returns a `Sample`: `action`,
/// `log_prob` and `entropy` per element, differentiable with respect to
/// `mean` and `log_sigma`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> a = p.tensor("a", [t], [2], "float64")
/// >>> mean = tempo.constant([1.0, 10.0], "float64")
/// >>> p.otherwise(a, tempo.rl.normal(mean, tempo.constant(-20.0, "float64"), seed=3).action)
/// >>> p.output(a)
/// >>> p.compile().run(T=1)["a"].round(3).tolist()
/// [[1.0, 10.0]]
#[pyfunction]
fn normal(py: Python<'_>, mean: &PyExpr, log_sigma: &PyExpr, seed: i64) -> PyResult<PySample> {
    check_normal(py, "rl.normal", mean, log_sigma)?;
    Ok(PySample { sample: located(py, || tempo::rl::normal(&mean.expr, &log_sigma.expr, seed)) })
}

/// `normal_log_prob(action, mean, log_sigma)`: the log-density of each
/// element of `action` under independent normals with `mean` and
/// `log_sigma` (`tempo::rl::normal_log_prob`), differentiable with respect
/// to `mean` and `log_sigma`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> y = p.tensor("y", [t], [2], "float64")
/// >>> zero = tempo.constant([0.0, 0.0], "float64")
/// >>> p.otherwise(y, tempo.rl.normal_log_prob(tempo.constant([0.0, 1.0], "float64"), zero, zero))
/// >>> p.output(y)
/// >>> p.compile().run(T=1)["y"].round(4).tolist()
/// [[-0.9189, -1.4189]]
#[pyfunction]
fn normal_log_prob(py: Python<'_>, action: &PyExpr, mean: &PyExpr, log_sigma: &PyExpr) -> PyResult<PyExpr> {
    check_normal(py, "rl.normal_log_prob", mean, log_sigma)?;
    if action.expr.point_type() != mean.expr.point_type() {
        return Err(refused(
            py,
            "rl.normal_log_prob",
            format!(
                "the action is {}, the mean {}: one shape and type",
                describe(action.expr.point_type()),
                describe(mean.expr.point_type())
            ),
        ));
    }
    Ok(PyExpr { expr: located(py, || tempo::rl::normal_log_prob(&action.expr, &mean.expr, &log_sigma.expr)) })
}

/// Adds this file's functions to the module (`tempo.rl` re-exports them).
pub(super) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(discounted_returns, m)?)?;
    m.add_function(wrap_pyfunction!(gae, m)?)?;
    m.add_function(wrap_pyfunction!(normal, m)?)?;
    m.add_function(wrap_pyfunction!(normal_log_prob, m)?)?;
    Ok(())
}
