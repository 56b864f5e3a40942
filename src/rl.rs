//! Reinforcement-learning building blocks, written as recurrent tensors and
//! expressions, so that a rollout, its returns and advantages, the policy's
//! loss and its gradients are one program.
//!
//! Returns read the future: [`discounted_returns`] is the backward
//! recurrence `G[t] = r[t] + gamma * G[t+1]` (episodes that end at `done`
//! restart it), [`n_step_returns`] a window over the future,
//! `r[t:min(t+n, T)]` discounted plus the bootstrapped value `n` steps on,
//! and [`gae`] generalized advantage estimation. Each is defined over the
//! rewards' domain (any dimensions, one of them the step `t`): the
//! scheduler runs them backward after the rollout.
//!
//! Policies sample with the program's seeded generator (`temporal.random`,
//! a pure function of the seed and the point): [`normal`] for continuous
//! actions (reparameterized, the sample cut from the gradient as a policy
//! gradient needs), [`categorical`] for discrete ones (Gumbel-max). Each
//! returns the action, its log-probability and the distribution's entropy,
//! differentiable with respect to the distribution's parameters.
//!
//! ```
//! use tempo::{Program, f64s, rl};
//! let mut p = Program::new();
//! let t = p.dim("t", "T");
//! let r = p.input("r", &[&t], f64s(&[]));
//! let g = rl::discounted_returns(&mut p, "G", &r, &t, 0.5, None);
//! p.output(&g);
//! let rewards = tempo::HostArray { name: "r".into(), shape: vec![3], data: tempo::Data::F64(vec![1.0, 2.0, 4.0]) };
//! let out = p.runner().bound("T", 3).input(rewards).interpret().unwrap();
//! assert_eq!(out[0].data.get_f64(0), 1.0 + 0.5 * (2.0 + 0.5 * 4.0));
//! ```

use crate::expr::{Expr, Predicate};
use crate::index::Cond;
use crate::program::{Dim, Program, Tensor};
use tempo_passes::program::PointType;

/// `ln(2 pi)`.
const LN_TWO_PI: f64 = 1.837_877_066_409_345_5;

/// The point of `tensor` `k` steps along `t` from the reader's.
#[track_caller]
fn ahead(tensor: &Tensor, t: &Dim, k: i64) -> Expr {
    tensor.at_dims([(t, t + k)])
}

/// Discounted returns `G[t] = r[t] + gamma * G[t+1]`, `G[T-1] = r[T-1]`,
/// over `rewards`' domain (which has `t`). With `dones` (floats, 1 where
/// an episode ends at that step), the sum restarts after each end:
/// `G[t] = r[t] + gamma * (1 - done[t]) * G[t+1]`.
#[track_caller]
pub fn discounted_returns(
    p: &mut Program,
    name: &str,
    rewards: &Tensor,
    t: &Dim,
    gamma: f64,
    dones: Option<&Tensor>,
) -> Tensor {
    let dims = domain(p, rewards);
    let g = p.tensor(name, &dims.iter().collect::<Vec<_>>(), rewards.point_type().clone());
    p.define(&g, t.eq(t.bound() - 1), rewards.here());
    let later = ahead(&g, t, 1) * gamma;
    let later = match dones {
        Some(done) => later * (-done.here() + 1.0),
        None => later,
    };
    p.define(&g, Cond::always(), rewards.here() + later);
    g
}

/// n-step returns: `G[t] = sum_{k < m} gamma^k r[t+k] + gamma^n V[t+n]`
/// with `m = min(n, T - t)` and the bootstrap only where `t + n < T`: a
/// window over the future, `r[t:min(t+n, T)]`, weighted by the discounts
/// `gamma^k` (a tensor `{name}_discount` over `t`, which needs `T >= n`
/// steps to hold `n` of them: shorter episodes only read the first `T`).
#[track_caller]
pub fn n_step_returns(
    p: &mut Program,
    name: &str,
    rewards: &Tensor,
    values: &Tensor,
    t: &Dim,
    gamma: f64,
    n: i64,
) -> Tensor {
    assert!(n >= 1, "n-step returns need n >= 1");
    let scalar = rewards.point_type().clone();
    let discount = p.tensor(&format!("{name}_discount"), &[t], scalar.clone());
    p.define(&discount, t.eq(0), Expr::splat(1.0, scalar.clone()));
    p.define(&discount, Cond::always(), discount.at([t - 1]) * gamma);
    let dims = domain(p, rewards);
    let g = p.tensor(name, &dims.iter().collect::<Vec<_>>(), scalar);
    // n rewards and the bootstrap where n steps remain; the rest of the
    // episode's rewards at its end (each window read with bounds whose
    // lengths the verifier sees equal).
    let window = rewards.read_box([(t, crate::Coordinate::range(t.var(), t + n))]);
    let weights = discount.range(0, n);
    p.define(&g, t.lt(t.bound() - n), (window * weights).sum(0) + ahead(values, t, n) * gamma.powi(n as i32));
    let window = rewards.read_box([(t, crate::Coordinate::range(t.var(), t.bound()))]);
    let weights = discount.range(0, t.bound() - t.var());
    p.define(&g, Cond::always(), (window * weights).sum(0));
    g
}

/// Generalized advantage estimation (Schulman et al.): the TD residuals
/// `delta[t] = r[t] + gamma * V[t+1] - V[t]` (`V[T] = 0`; with `dones`,
/// no bootstrap across an episode's end) in `{name}_delta`, and the
/// advantages `A[t] = delta[t] + gamma * lambda * A[t+1]`, `A[T-1] =
/// delta[T-1]`, the backward recurrence of the discounted window
/// `delta[t:T]`.
#[track_caller]
pub fn gae(
    p: &mut Program,
    name: &str,
    rewards: &Tensor,
    values: &Tensor,
    t: &Dim,
    gamma: f64,
    lambda: f64,
    dones: Option<&Tensor>,
) -> Tensor {
    let dims = domain(p, rewards);
    let dom: Vec<&Dim> = dims.iter().collect();
    let scalar = rewards.point_type().clone();
    let delta = p.tensor(&format!("{name}_delta"), &dom, scalar.clone());
    p.define(&delta, t.eq(t.bound() - 1), rewards.here() - values.here());
    let next = ahead(values, t, 1) * gamma;
    let next = match dones {
        Some(done) => next * (-done.here() + 1.0),
        None => next,
    };
    p.define(&delta, Cond::always(), rewards.here() + next - values.here());
    let a = p.tensor(name, &dom, scalar);
    p.define(&a, t.eq(t.bound() - 1), delta.here());
    let later = ahead(&a, t, 1) * (gamma * lambda);
    let later = match dones {
        Some(done) => later * (-done.here() + 1.0),
        None => later,
    };
    p.define(&a, Cond::always(), delta.here() + later);
    a
}

/// A sampled action with its log-probability and the distribution's
/// entropy, per action (per element for independent normals, per row for
/// a categorical): sum them over the axes that make one action.
pub struct Sample {
    pub action: Expr,
    pub log_prob: Expr,
    pub entropy: Expr,
}

/// Sums every axis of `e` (a scalar).
#[track_caller]
pub fn total(e: &Expr) -> Expr {
    let mut s = e.clone();
    while s.rank() > 0 {
        s = s.sum(0);
    }
    s
}

/// The log-density of each element of `action` under independent normals
/// with `mean` and `log_sigma` (broadcast to the action's shape).
#[track_caller]
pub fn normal_log_prob(action: &Expr, mean: &Expr, log_sigma: &Expr) -> Expr {
    let z = (action - mean) * (-log_sigma).exp();
    &z * &z * -0.5 - log_sigma - 0.5 * LN_TWO_PI
}

/// Samples independent normals with `mean` and `log_sigma` (broadcast to
/// `mean`'s shape) from the seeded generator (`seed`, and the reader's
/// point): `action = mean + exp(log_sigma) * eps`, cut from the gradient
/// (a policy gradient differentiates the log-probability, not the sample);
/// each element's log-probability and entropy `log_sigma + (1 + ln 2 pi)/2`.
#[track_caller]
pub fn normal(mean: &Expr, log_sigma: &Expr, seed: i64) -> Sample {
    normal_with_noise(mean, log_sigma, &Expr::random_normal(seed, mean.point_type().clone()))
}

/// [`normal`] with the standard normal noise `eps` given (of `mean`'s
/// type): for noise drawn otherwise, such as a part of a larger draw (the
/// environments of one process of a data-parallel run, keyed by their
/// index in the whole run's batch).
#[track_caller]
pub fn normal_with_noise(mean: &Expr, log_sigma: &Expr, eps: &Expr) -> Sample {
    let action = (mean + log_sigma.exp() * eps).stop_gradient();
    let log_prob = normal_log_prob(&action, mean, log_sigma);
    let per = log_sigma + 0.5 * (1.0 + LN_TWO_PI);
    let shape = &mean.point_type().shape;
    let entropy = if per.point_type().shape == *shape { per } else { per.expand(shape) };
    Sample { action, log_prob, entropy }
}

/// `log softmax(logits)` along the last axis.
#[track_caller]
pub fn log_softmax(logits: &Expr) -> Expr {
    let axis = logits.rank() - 1;
    let shifted = logits - logits.max_keepdims(axis);
    &shifted - shifted.exp().sum_keepdims(axis).log()
}

/// The log-probability of the integer `action` (one per row of `logits`:
/// a scalar for a vector of logits) under `softmax(logits)`, per row.
#[track_caller]
pub fn categorical_log_prob(logits: &Expr, action: &Expr) -> Expr {
    let shape = &logits.point_type().shape;
    let classes = *shape.last().expect("logits have a class axis");
    let element = logits.point_type().element;
    let mut wanted = action.point_type().shape.clone();
    wanted.push(1);
    let positions = Expr::arange(classes, action.point_type().element);
    let one_hot = action.reshape(&wanted).compare(Predicate::Eq, &positions).cast(element);
    (one_hot * log_softmax(logits)).sum(shape.len() - 1)
}

/// Samples from `softmax(logits)` along the last axis by the Gumbel-max
/// trick with the seeded generator: `argmax(logits + g)`, `g = -ln(-ln u)`
/// (an i64 per row); its log-probability and the entropy `-sum(p log p)`
/// per row.
#[track_caller]
pub fn categorical(logits: &Expr, seed: i64) -> Sample {
    categorical_with_noise(logits, &Expr::random_uniform(seed, logits.point_type().clone()))
}

/// [`categorical`] with the uniform noise in [0, 1) `uniform` given (of
/// `logits`' type; see [`normal_with_noise`]).
#[track_caller]
pub fn categorical_with_noise(logits: &Expr, uniform: &Expr) -> Sample {
    let ty = logits.point_type().clone();
    let axis = ty.shape.len().checked_sub(1).expect("logits have a class axis");
    let tiny = Expr::splat(1e-12, PointType { shape: vec![], element: ty.element });
    let u = uniform.max(&tiny);
    let gumbel = -(-u.log()).log();
    let action = (logits.stop_gradient() + gumbel).argmax(axis);
    let log_prob = categorical_log_prob(logits, &action);
    let log_p = log_softmax(logits);
    let entropy = -(log_p.exp() * &log_p).sum(axis);
    Sample { action, log_prob, entropy }
}

/// The dimensions of `tensor`'s domain, as the program's `Dim`s.
fn domain(p: &Program, tensor: &Tensor) -> Vec<Dim> {
    tensor.domain().iter().map(|name| p.dim_named(name).expect("a declared dimension")).collect()
}
