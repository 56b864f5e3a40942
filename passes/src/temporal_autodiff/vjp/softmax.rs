//! The softmax as one unit of differentiation.
//!
//! `P = E / keep(sum(E, a))` with `E = exp(X - keep(max(X, a)))` (the form
//! `Expr::softmax`, `jax.nn.softmax` and the attention's decomposition
//! write; the maximum may be under `stop_gradient`; `keep` reinserts the
//! reduced axis with size 1, or is absent when `a` is the first axis).
//! Taken op by op, its vector-Jacobian product goes through the sum, the
//! exponential, the subtraction and the maximum (whose cotangents cancel
//! in real arithmetic: the softmax does not change when `X` is shifted),
//! and over a range read (`softmax(q k[0:t+1]^T)`) every one of them is a
//! `T x T` value in the backward pass. As a unit it is
//! `dX = P * (dP - keep(sum(P * dP, a)))`, what PyTorch's softmax backward
//! and FlashAttention's (with `D = rowsum(dO * O)`) compute.
//!
//! The unit's product replaces the contributions of `P` to `E` and to the
//! sum (they reach `X` through it). Other consumers of the chain's inner
//! values (a `log` of the sum: a log-softmax) pass their cotangents the
//! usual way, so the rule needs no condition on uses; it applies wherever
//! the chain's structure is found. Both frames of a range read apply it to
//! the same units (`ranges.rs`), so their halves of one gradient agree.

use crate::program::{BinaryKind, Movement, Node, NodeKind, ReduceKind, UnaryKind};
use crate::temporal_autodiff::body::Body;

/// A softmax found in a branch: its result `p` and input `x` (node
/// numbers), the axis, and its inner nodes (the maximum, the subtraction,
/// the exponential, the sum and the reshapes keeping their axes).
#[derive(Clone, Debug, PartialEq)]
pub(in crate::temporal_autodiff) struct Softmax {
    pub p: usize,
    pub x: usize,
    pub axis: usize,
    pub inner: Vec<usize>,
}

/// How the backward sweep finds softmax units.
pub(in crate::temporal_autodiff) enum Units<'a> {
    /// By their structure among the forward nodes (a copy of a branch).
    Found,
    /// These, in nodes of the body under construction: `(p, x, axis, dot)`
    /// where `dot`, when given, is `sum(P * dP, axis)` computed elsewhere,
    /// shaped to broadcast against `p` (the element frame of a range read,
    /// where the axis is the range's and the sum a row value).
    Given(&'a [Given]),
}

/// A unit given to the sweep (see [`Units::Given`]).
#[derive(Clone, Copy, Debug)]
pub(in crate::temporal_autodiff) struct Given {
    pub p: usize,
    pub x: usize,
    pub axis: usize,
    pub dot: Option<usize>,
}

/// The node `keep` reinserting `axis` into `reduced` for a value of
/// `shape`: a reshape to `shape` with 1 at `axis`, or nothing at axis 0
/// (broadcasting aligns from the right).
fn kept(nodes: &[Node], keep: usize, shape: &[i64], axis: usize) -> Option<usize> {
    let mut with_one = shape.to_vec();
    with_one[axis] = 1;
    match &nodes[keep].kind {
        NodeKind::Move(Movement::Reshape, ops) if nodes[keep].ty.shape == with_one => Some(ops[0]),
        NodeKind::Reduce(..) if axis == 0 => Some(keep),
        _ => None,
    }
}

/// The softmax whose result is node `p`, if `p` is one.
pub(in crate::temporal_autodiff) fn find(nodes: &[Node], p: usize) -> Option<Softmax> {
    let NodeKind::Binary(BinaryKind::Div, e, lk) = nodes[p].kind else { return None };
    let NodeKind::Unary(UnaryKind::Exp, s) = nodes[e].kind else { return None };
    let NodeKind::Binary(BinaryKind::Sub, x, mk) = nodes[s].kind else { return None };
    let shape = &nodes[x].ty.shape;
    if !nodes[x].ty.element.is_float()
        || shape.is_empty()
        || nodes[s].ty.shape != *shape
        || nodes[e].ty.shape != *shape
        || nodes[p].ty.shape != *shape
    {
        return None;
    }
    // The sum of E along the axis, kept.
    let l = match &nodes[lk].kind {
        NodeKind::Move(Movement::Reshape, ops) => ops[0],
        _ => lk,
    };
    let NodeKind::Reduce(ReduceKind::Sum, summed, axis) = nodes[l].kind else { return None };
    if summed != e || kept(nodes, lk, shape, axis) != Some(l) {
        return None;
    }
    // The maximum of X along the same axis, kept (under stop_gradient or not).
    let m_top = kept(nodes, mk, shape, axis)?;
    let (m, stop) = match nodes[m_top].kind {
        NodeKind::Unary(UnaryKind::StopGradient, m) => (m, Some(m_top)),
        _ => (m_top, None),
    };
    let NodeKind::Reduce(ReduceKind::Max, maxed, max_axis) = nodes[m].kind else { return None };
    if maxed != x || max_axis != axis {
        return None;
    }
    let mut inner = vec![s, e, l, m];
    inner.extend(stop);
    inner.extend([lk, mk].into_iter().filter(|&k| k != l && k != m_top));
    inner.sort_unstable();
    inner.dedup();
    Some(Softmax { p, x, axis, inner })
}

/// Every softmax among `nodes`, by result.
pub(in crate::temporal_autodiff) fn all(nodes: &[Node]) -> Vec<Softmax> {
    (0..nodes.len()).filter_map(|p| find(nodes, p)).collect()
}

/// Whether the unit's inner values are read by nothing outside it (so
/// that where the unit is applied they get no cotangent at all).
pub(in crate::temporal_autodiff) fn closed(nodes: &[Node], unit: &Softmax) -> bool {
    nodes.iter().enumerate().all(|(n, node)| {
        n == unit.p
            || unit.inner.contains(&n)
            || crate::rewrite::operands(&node.kind).iter().all(|a| !unit.inner.contains(a))
    })
}

/// `dX = P * (c - keep(sum(P * c, axis)))` for the unit of result `p`
/// (cotangent `c`), with the sum given as `dot` (already shaped to
/// broadcast against `p`) or computed here; with the sum it computed
/// (along `axis`, not kept), for the stash that needs it too.
pub(in crate::temporal_autodiff) fn product(
    body: &mut Body<'_>,
    p: usize,
    axis: usize,
    dot: Option<usize>,
    c: usize,
) -> (usize, Option<usize>) {
    let (kept, sum) = match dot {
        Some(d) => (d, None),
        None => {
            let pc = body.mul(p, c);
            let d = body.reduce(ReduceKind::Sum, pc, axis);
            let mut shape = body.ty(p).shape.clone();
            shape[axis] = 1;
            (body.reshape(d, &shape), Some(d))
        }
    };
    let diff = body.binary(BinaryKind::Sub, c, kept);
    (body.mul(p, diff), sum)
}
