//! Optimizers written as recurrences over an iteration dimension, so that a
//! whole training run is one program.
//!
//! A parameter is a recurrent tensor over an iteration dimension `i` (and
//! possibly others): its point at `i = 0` is an initial value, and each
//! later point is the previous one updated from the gradient of the
//! previous iteration's loss, read through [`Expr::stop_gradient`]. The
//! gradient is declared with [`Program::grad`] before the update is
//! defined (a branch may read a tensor declared after it):
//!
//! ```
//! use tempo::{Program, f64s, optim};
//! let mut p = Program::new();
//! let i = p.dim("i", "I");
//! let t = p.dim("t", "T");
//! let w0 = p.input("w0", &[], f64s(&[3]));
//! let x = p.input("x", &[&t], f64s(&[3]));
//! let w = p.tensor("w", &[&i], f64s(&[3]));
//! let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
//! // A linear model fitted to targets from the weights [1, -2, 0.5].
//! let truth = tempo::Expr::constant(vec![1.0, -2.0, 0.5], f64s(&[3]));
//! let error = (w.here() - truth) * x.here();
//! p.otherwise(&loss, error.sum(0) * error.sum(0));
//! let g = p.grad("g", &loss, &w);
//! optim::sgd(&mut p, &w, &g, &i, w0.here(), 0.05);
//! p.output(&loss);
//! let out = p.runner().bound("I", 40).bound("T", 8).seed(1).interpret().unwrap();
//! let total = |k: usize| (0..8).map(|s| out[0].data.get_f64(k * 8 + s)).sum::<f64>();
//! assert!(total(39) < 1e-3 * total(0));
//! ```
//!
//! Each helper defines the parameter's branches (it must have none yet)
//! and declares the optimizer's state, named after the parameter
//! (`w_velocity`, `w_m`, ...), over the parameter's domain. The points of
//! the gradient are read at `i - 1`: `g[i]` is the gradient of iteration
//! `i`'s loss with respect to the parameter's point `i`, since the update
//! passes no gradient through the parameter's own recurrence (see
//! [`Program::grad`]). Learning rates and coefficients are constants of
//! the program.
//!
//! [`adam_epochs`] makes several updates per iteration (the epochs of PPO
//! on one rollout), each epoch's parameters a tensor over the iteration,
//! the state carried from epoch to epoch and from the last epoch of one
//! iteration to the first of the next.

use crate::expr::Expr;
use crate::program::{Dim, Program, Tensor};
use tempo_passes::program::PointType;

/// The point of `tensor` at the previous iteration (`i - 1`); its other
/// dimensions are the reader's.
#[track_caller]
fn previous(tensor: &Tensor, iteration: &Dim) -> Expr {
    tensor.at_dims([(iteration, iteration - 1)])
}

/// A scalar of `param`'s element type.
fn scalar(param: &Tensor) -> PointType {
    PointType { shape: vec![], element: param.point_type().element }
}

/// Plain gradient descent:
/// `param[0] = init`, `param[i] = param[i-1] - lr * stop_gradient(grad[i-1])`.
#[track_caller]
pub fn sgd(p: &mut Program, param: &Tensor, grad: &Tensor, iteration: &Dim, init: Expr, lr: f64) {
    p.define(param, iteration.eq(0), init);
    let step = previous(grad, iteration).stop_gradient() * lr;
    p.otherwise(param, previous(param, iteration) - step);
}

/// Gradient descent with momentum, as PyTorch's `SGD(momentum=mu)` does it
/// (no dampening): the velocity `v[0] = g[0]`,
/// `v[i] = mu * v[i-1] + g[i]` (`g` read through `stop_gradient`), and
/// `param[0] = init`, `param[i] = param[i-1] - lr * v[i-1]`. Returns the
/// velocity, `{param}_velocity`.
#[track_caller]
pub fn sgd_momentum(
    p: &mut Program,
    param: &Tensor,
    grad: &Tensor,
    iteration: &Dim,
    init: Expr,
    lr: f64,
    momentum: f64,
) -> Tensor {
    let domain = domain_of(p, param);
    let domain: Vec<&Dim> = domain.iter().collect();
    let velocity = p.tensor(&format!("{}_velocity", param.name()), &domain, param.point_type().clone());
    p.define(&velocity, iteration.eq(0), grad.here().stop_gradient());
    p.otherwise(&velocity, previous(&velocity, iteration) * momentum + grad.here().stop_gradient());
    p.define(param, iteration.eq(0), init);
    p.otherwise(param, previous(param, iteration) - previous(&velocity, iteration) * lr);
    velocity
}

/// Settings of [`adam`]; `Adam::default()` is PyTorch's (`lr = 1e-3`,
/// `betas = (0.9, 0.999)`, `eps = 1e-8`, no weight decay).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adam {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    /// Decoupled weight decay (AdamW): each update also subtracts
    /// `lr * weight_decay * param[i-1]`. Zero is plain Adam.
    pub weight_decay: f64,
}

impl Default for Adam {
    fn default() -> Self {
        Adam { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.0 }
    }
}

impl Adam {
    /// The defaults with learning rate `lr`.
    pub fn with_lr(lr: f64) -> Self {
        Adam { lr, ..Adam::default() }
    }
}

/// The state [`adam`] declares.
#[derive(Clone, Debug)]
pub struct AdamState {
    /// First moments, `{param}_m`: `m[0] = (1 - beta1) g[0]`,
    /// `m[i] = beta1 m[i-1] + (1 - beta1) g[i]`.
    pub m: Tensor,
    /// Second moments, `{param}_v`: `v[0] = (1 - beta2) g[0]^2`,
    /// `v[i] = beta2 v[i-1] + (1 - beta2) g[i]^2`.
    pub v: Tensor,
    /// `{param}_beta1_power[i] = beta1^(i+1)` (scalars over the iteration
    /// dimension), for the bias correction.
    pub beta1_power: Tensor,
    /// `{param}_beta2_power[i] = beta2^(i+1)`.
    pub beta2_power: Tensor,
}

/// Adam (AdamW with `weight_decay`), as PyTorch computes it:
/// `param[0] = init` and, with `k = i` gradients seen,
/// `param[i] = param[i-1] - lr * (m̂ / (sqrt(v̂) + eps) + weight_decay * param[i-1])`
/// where `m̂ = m[i-1] / (1 - beta1^k)` and `v̂ = v[i-1] / (1 - beta2^k)`
/// (bias correction). The moments read the gradient through
/// `stop_gradient`; the powers `beta^k` are recurrences of their own
/// (`b[0] = beta`, `b[i] = b[i-1] * beta`).
#[track_caller]
pub fn adam(p: &mut Program, param: &Tensor, grad: &Tensor, iteration: &Dim, init: Expr, config: &Adam) -> AdamState {
    let Adam { beta1, beta2, .. } = *config;
    let name = param.name().to_string();
    let domain = domain_of(p, param);
    let domain: Vec<&Dim> = domain.iter().collect();
    let point = param.point_type().clone();
    let g = grad.here().stop_gradient();

    let m = p.tensor(&format!("{name}_m"), &domain, point.clone());
    p.define(&m, iteration.eq(0), &g * (1.0 - beta1));
    p.otherwise(&m, moment(previous(&m, iteration), &g, beta1));
    let v = p.tensor(&format!("{name}_v"), &domain, point);
    p.define(&v, iteration.eq(0), &g * &g * (1.0 - beta2));
    p.otherwise(&v, moment(previous(&v, iteration), &(&g * &g), beta2));

    let beta1_power = power(p, &format!("{name}_beta1_power"), param, iteration, beta1);
    let beta2_power = power(p, &format!("{name}_beta2_power"), param, iteration, beta2);

    let state = AdamState { m, v, beta1_power, beta2_power };
    let update = adam_update(param, previous(param, iteration), &state, &|x| previous(x, iteration), config);
    p.define(param, iteration.eq(0), init);
    p.otherwise(param, update);
    state
}

/// Adam with several updates per iteration (the epochs of PPO on one
/// rollout), each epoch's parameters a tensor of its own: `params[k]` (the
/// parameters of epoch `k`, `K = params.len()` of them, all over one
/// domain with `iteration`) and `grads[k]` the gradient of epoch `k`'s
/// loss with respect to them ([`Program::grad`]). The run's updates are
/// those of [`adam`] in the order `(0, 0), (0, 1), ..., (0, K-1), (1, 0),
/// ...` (iteration, epoch), the `n`-th (from 1) made from the gradient at
/// the `n`-th point of that order, `n = i K + k + 1`:
/// - `params[0][0] = init`, and `params[0][i]` is the update of
///   `params[K-1][i-1]` from `grads[K-1][i-1]`: the parameters at the
///   start of iteration `i` (those a rollout reads) are those after the
///   previous iteration's last epoch;
/// - `params[k][i]` (`k >= 1`) is the update of `params[k-1][i]` from
///   `grads[k-1][i]`.
///
/// Each epoch's state is named after its parameters and holds the moments
/// after its gradient: `m_0[0] = (1 - beta1) g_0[0]`,
/// `m_0[i] = beta1 m_{K-1}[i-1] + (1 - beta1) g_0[i]`,
/// `m_k[i] = beta1 m_{k-1}[i] + (1 - beta1) g_k[i]` (likewise `v`), and
/// the powers `beta1_power_k[i] = beta1^(i K + k + 1)`.
///
/// Each update reads the parameters it starts from through
/// `stop_gradient`, so that `grads[k][i]` is the gradient of epoch `k`'s
/// loss through `params[k][i]` alone (as [`adam`]'s is, where the
/// parameter's reads of its own points pass none). With one epoch this is
/// [`adam`].
///
/// (An epoch dimension `e`, parameters over `(i, e)`, is the compact
/// form, but its training loop is a cycle through tensors over `(i, t)`
/// (the rollout) and over `(i, e)` (the parameters), whose domains do not
/// nest: the scheduler refuses such a cycle before trying to carry it by
/// `i`. With a tensor per epoch every domain is `[i]` or `[i, t]`, and each
/// iteration runs the rollout and then each epoch's forward and backward
/// loops over `t` in turn.)
#[track_caller]
pub fn adam_epochs(
    p: &mut Program,
    params: &[Tensor],
    grads: &[Tensor],
    iteration: &Dim,
    init: Expr,
    config: &Adam,
) -> Vec<AdamState> {
    let Adam { beta1, beta2, .. } = *config;
    assert!(!params.is_empty() && params.len() == grads.len(), "adam_epochs: one gradient per epoch's parameters");
    for param in params {
        assert!(
            param.domain() == params[0].domain() && param.point_type() == params[0].point_type(),
            "adam_epochs: '{}' must have the domain and point type of '{}'",
            param.name(),
            params[0].name()
        );
    }
    let last = params.len() - 1;
    let domain = domain_of(p, &params[0]);
    let domain: Vec<&Dim> = domain.iter().collect();
    let point = params[0].point_type().clone();
    let current = |x: &Tensor| x.here();
    let last_iteration = |x: &Tensor| previous(x, iteration);
    // Every epoch's state first (epoch 0's reads the last epoch's), with
    // the first update's branches; then each epoch's updates, reading the
    // previous epoch's state and parameters (the last epoch's at the
    // previous iteration for epoch 0).
    let mut states: Vec<AdamState> = Vec::new();
    for (k, (param, grad)) in params.iter().zip(grads).enumerate() {
        let name = param.name();
        let m = p.tensor(&format!("{name}_m"), &domain, point.clone());
        let v = p.tensor(&format!("{name}_v"), &domain, point.clone());
        let beta1_power = p.tensor(&format!("{name}_beta1_power"), &[iteration], scalar(param));
        let beta2_power = p.tensor(&format!("{name}_beta2_power"), &[iteration], scalar(param));
        if k == 0 {
            let g = grad.here().stop_gradient();
            p.define(&m, iteration.eq(0), &g * (1.0 - beta1));
            p.define(&v, iteration.eq(0), &g * &g * (1.0 - beta2));
            p.define(&beta1_power, iteration.eq(0), Expr::splat(beta1, scalar(param)));
            p.define(&beta2_power, iteration.eq(0), Expr::splat(beta2, scalar(param)));
        }
        states.push(AdamState { m, v, beta1_power, beta2_power });
    }
    for k in 0..params.len() {
        let (from, read): (usize, &dyn Fn(&Tensor) -> Expr) =
            if k == 0 { (last, &last_iteration) } else { (k - 1, &current) };
        let state = states[k].clone();
        let before = states[from].clone();
        let g = grads[k].here().stop_gradient();
        p.otherwise(&state.m, moment(read(&before.m), &g, beta1));
        p.otherwise(&state.v, moment(read(&before.v), &(&g * &g), beta2));
        p.otherwise(&state.beta1_power, read(&before.beta1_power) * beta1);
        p.otherwise(&state.beta2_power, read(&before.beta2_power) * beta2);
        let update = adam_update(&params[from], read(&params[from]).stop_gradient(), &before, read, config);
        if k == 0 {
            p.define(&params[0], iteration.eq(0), init.clone());
        }
        p.otherwise(&params[k], update);
    }
    states
}

/// A moment's next value, `previous * beta + x * (1 - beta)`.
fn moment(previous: Expr, x: &Expr, beta: f64) -> Expr {
    previous * beta + x * (1.0 - beta)
}

/// Adam's update of `before`, with the state read by `previous` (the
/// point of the gradient the update is made from):
/// `before - lr * (m̂ / (sqrt(v̂) + eps) + weight_decay * before)`.
fn adam_update(
    param: &Tensor,
    before: Expr,
    state: &AdamState,
    previous: &dyn Fn(&Tensor) -> Expr,
    config: &Adam,
) -> Expr {
    let Adam { lr, eps, weight_decay, .. } = *config;
    let one = Expr::splat(1.0, scalar(param));
    let m_hat = previous(&state.m) / (&one - previous(&state.beta1_power));
    let v_hat = previous(&state.v) / (&one - previous(&state.beta2_power));
    let mut update = m_hat / (v_hat.sqrt() + eps);
    if weight_decay != 0.0 {
        update = update + &before * weight_decay;
    }
    &before - update * lr
}

/// `name[i] = beta^(i+1)`, scalars of `param`'s element type over `iteration`.
#[track_caller]
fn power(p: &mut Program, name: &str, param: &Tensor, iteration: &Dim, beta: f64) -> Tensor {
    let t = p.tensor(name, &[iteration], scalar(param));
    p.define(&t, iteration.eq(0), Expr::splat(beta, scalar(param)));
    p.otherwise(&t, previous(&t, iteration) * beta);
    t
}

/// The dimensions of `param`'s domain, as the program declared them.
fn domain_of(p: &Program, param: &Tensor) -> Vec<Dim> {
    param.domain().iter().map(|name| p.dim_named(name).expect("a declared dimension")).collect()
}
