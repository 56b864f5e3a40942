//! Reverse mode inside one branch body: the cotangent of one node (a read)
//! from the cotangent of the body's result, through the vector-Jacobian
//! product of every differentiable op.
//!
//! The body being built starts with a copy of the branch's nodes (the
//! forward values the products use; `temporal-dce` removes what they do
//! not), so node numbers of the branch are valid in it.

mod contractions;
mod elementwise;
mod movements;
mod reductions;
pub(super) mod softmax;

use super::body::Body;
use crate::diagnostics::PassDiagnostic;
use crate::program::{BinaryKind, Collective, DYNAMIC, Movement, NodeKind, PointType, ReduceKind, UnaryKind};
use std::collections::HashMap;

/// Whether a gradient passes from node `n` to its operand at position `i`.
pub(super) fn passes(nodes: &[crate::program::Node], n: usize, i: usize, operand: usize) -> bool {
    if !nodes[n].ty.element.is_float() || !nodes[operand].ty.element.is_float() {
        return false;
    }
    match &nodes[n].kind {
        NodeKind::Compare(..)
        | NodeKind::Random { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Position(_)
        | NodeKind::Bound(_)
        | NodeKind::Rank
        | NodeKind::WorldSize => false,
        NodeKind::Reduce(ReduceKind::ArgMax, ..) => false,
        NodeKind::Unary(UnaryKind::StopGradient | UnaryKind::Not, _) => false,
        NodeKind::Binary(BinaryKind::And | BinaryKind::Or, ..) => false,
        NodeKind::Select(..) => i > 0,
        NodeKind::Gather(..) => i == 0,
        _ => true,
    }
}

/// The operands of a body node, in position order.
pub(super) fn operands(kind: &NodeKind) -> Vec<usize> {
    crate::rewrite::operands(kind)
}

/// Nodes on a differentiable path from `from` to `result`.
pub(super) fn on_path(nodes: &[crate::program::Node], from: usize, result: usize) -> Vec<bool> {
    let n = nodes.len();
    let mut reached = vec![false; n];
    reached[from] = true;
    for k in from + 1..n {
        reached[k] = operands(&nodes[k].kind).iter().enumerate().any(|(i, &a)| reached[a] && passes(nodes, k, i, a));
    }
    let reaches = reaching(nodes, result);
    (0..n).map(|k| reached[k] && reaches[k]).collect()
}

/// The nodes with a differentiable path to `result` (one backward sweep):
/// node `k` is in it exactly when `on_path(nodes, k, result)[result]`,
/// for every `k` at once (asking `on_path` per read made the pass
/// quadratic in the branch's size: 49 s for a 16-layer PPO).
pub(super) fn reaching(nodes: &[crate::program::Node], result: usize) -> Vec<bool> {
    let mut reaches = vec![false; nodes.len()];
    reaches[result] = true;
    for k in (0..nodes.len()).rev() {
        if reaches[k] {
            for (i, a) in operands(&nodes[k].kind).into_iter().enumerate() {
                if passes(nodes, k, i, a) {
                    reaches[a] = true;
                }
            }
        }
    }
    reaches
}

/// Builds into `body` the cotangents of the nodes `wanted` given the
/// cotangents `seeds` of some nodes (`(node, cotangent)` pairs; the
/// cotangents of one node add up), nodes `0..forward` of `body` being the
/// branch's, in one sweep: by node, those with a differentiable path from
/// a wanted node to a seed; the softmax units of `units` each as one op
/// (see [`softmax`]).
pub(super) fn backprop_units<'c>(
    body: &mut Body<'c>,
    forward: usize,
    seeds: &[(usize, usize)],
    wanted: &[usize],
    units: softmax::Units<'_>,
) -> Result<HashMap<usize, usize>, PassDiagnostic<'c>> {
    Ok(backprop_with_dots(body, forward, seeds, wanted, units)?.0)
}

/// [`backprop_units`], with the sums `sum(P * dP)` along their axes the
/// sweep computed for its softmax units, by unit result `P`.
pub(super) fn backprop_with_dots<'c>(
    body: &mut Body<'c>,
    forward: usize,
    seeds: &[(usize, usize)],
    wanted: &[usize],
    units: softmax::Units<'_>,
) -> Result<(HashMap<usize, usize>, HashMap<usize, usize>), PassDiagnostic<'c>> {
    let mut dots = HashMap::new();
    let units: HashMap<usize, softmax::Given> = match units {
        softmax::Units::Found => softmax::all(&body.nodes[..forward])
            .into_iter()
            .map(|u| (u.p, softmax::Given { p: u.p, x: u.x, axis: u.axis, dot: None }))
            .collect(),
        softmax::Units::Given(given) => given.iter().map(|g| (g.p, *g)).collect(),
    };
    let mut ct: HashMap<usize, Vec<Part>> = HashMap::new();
    let (Some(&lowest), Some(highest)) = (wanted.iter().min(), seeds.iter().map(|&(n, _)| n).max()) else {
        return Ok((HashMap::new(), dots));
    };
    let nodes = &body.nodes[..forward];
    let mut reached = vec![false; forward];
    for &k in wanted {
        reached[k] = true;
    }
    for k in lowest + 1..forward {
        reached[k] |= operands(&nodes[k].kind).iter().enumerate().any(|(i, &a)| reached[a] && passes(nodes, k, i, a));
    }
    let mut reaches = vec![false; forward];
    for &(n, _) in seeds {
        reaches[n] = true;
    }
    for k in (0..forward).rev() {
        if reaches[k] {
            for (i, a) in operands(&nodes[k].kind).into_iter().enumerate() {
                if passes(nodes, k, i, a) {
                    reaches[a] = true;
                }
            }
        }
    }
    let path: Vec<bool> = (0..forward).map(|k| reached[k] && reaches[k]).collect();
    for &(n, c) in seeds {
        if path[n] {
            ct.entry(n).or_default().push(Part::Dense(c));
        }
    }
    for n in (lowest + 1..=highest).rev() {
        if !path[n] {
            continue;
        }
        let Some(parts) = ct.remove(&n) else { continue };
        let c = assemble(body, n, parts);
        ct.insert(n, vec![Part::Dense(c)]);
        if let Some(unit) = units.get(&n) {
            if path[unit.x] {
                let (dx, dot) = softmax::product(body, n, unit.axis, unit.dot, c);
                if let Some(dot) = dot {
                    dots.insert(n, dot);
                }
                ct.entry(unit.x).or_default().push(Part::Dense(dx));
            }
            continue;
        }
        for (i, a) in operands(&body.nodes[n].kind).into_iter().enumerate() {
            if !path[a] || !passes(&body.nodes[..forward], n, i, a) {
                continue;
            }
            let part = match &body.nodes[n].kind {
                NodeKind::Move(Movement::Slice(offsets), _) => Part::Slice(offsets.clone(), c),
                _ => Part::Dense(product(body, n, i, c)?),
            };
            ct.entry(a).or_default().push(part);
        }
    }
    let mut result = HashMap::new();
    for &k in wanted {
        if let Some(parts) = ct.remove(&k) {
            let c = assemble(body, k, parts);
            result.insert(k, c);
        }
    }
    Ok((result, dots))
}

/// One contribution to a node's cotangent: a value of the node's shape, or
/// the cotangent of a slice of the node (a box at `offsets`, zero outside).
enum Part {
    Dense(usize),
    Slice(Vec<i64>, usize),
}

/// The cotangent of node `n` from its contributions: dense ones added in
/// order; slices that tile one axis without overlapping (the gates of an
/// LSTM cut from one matmul) joined by one chain of concatenations with
/// zeros only in the gaps, instead of each padded to the whole shape and
/// added; any other slices padded and added.
fn assemble(body: &mut Body<'_>, n: usize, parts: Vec<Part>) -> usize {
    let full = body.ty(n).shape.clone();
    let mut dense: Option<usize> = None;
    let mut slices: Vec<(Vec<i64>, usize)> = Vec::new();
    for part in parts {
        match part {
            Part::Dense(v) => dense = Some(dense.map_or(v, |d| body.add(d, v))),
            Part::Slice(offsets, v) => slices.push((offsets, v)),
        }
    }
    if !slices.is_empty() {
        let piecewise = match tile_one_axis(body, &full, &slices) {
            Some(v) => v,
            None => {
                let mut sum: Option<usize> = None;
                for (offsets, v) in &slices {
                    let padded = pad(body, *v, offsets, &full);
                    sum = Some(sum.map_or(padded, |s| body.add(s, padded)));
                }
                sum.expect("at least one slice")
            }
        };
        dense = Some(dense.map_or(piecewise, |d| body.add(d, piecewise)));
    }
    dense.expect("a cotangent has at least one part")
}

/// Slices that differ from the whole only along one axis and do not
/// overlap there: their concatenation in order along that axis, zeros in
/// the gaps. `None` when the slices are not of that form (or a shape is
/// dynamic).
fn tile_one_axis(body: &mut Body<'_>, full: &[i64], slices: &[(Vec<i64>, usize)]) -> Option<usize> {
    if full.contains(&DYNAMIC) {
        return None;
    }
    let mut axis: Option<usize> = None;
    for (offsets, v) in slices {
        let shape = body.ty(*v).shape.clone();
        if shape.contains(&DYNAMIC) {
            return None;
        }
        for (k, (&o, &e)) in offsets.iter().zip(&shape).enumerate() {
            if o != 0 || e != full[k] {
                match axis {
                    None => axis = Some(k),
                    Some(a) if a == k => {}
                    Some(_) => return None,
                }
            }
        }
    }
    let axis = axis.unwrap_or(0);
    let mut order: Vec<(i64, i64, usize)> =
        slices.iter().map(|(offsets, v)| (offsets[axis], body.ty(*v).shape[axis], *v)).collect();
    order.sort_by_key(|&(o, _, _)| o);
    let element = body.ty(order[0].2).element;
    let gap = |body: &mut Body<'_>, width: i64| {
        let mut shape = full.to_vec();
        shape[axis] = width;
        body.zeros(&PointType { shape, element })
    };
    let mut at = 0;
    let mut acc: Option<usize> = None;
    for &(offset, extent, v) in &order {
        if offset < at {
            return None;
        }
        if offset > at {
            let zeros = gap(body, offset - at);
            acc = Some(acc.map_or(zeros, |a| body.concat(a, zeros, axis)));
        }
        acc = Some(acc.map_or(v, |a| body.concat(a, v, axis)));
        at = offset + extent;
    }
    if at < full[axis] {
        let zeros = gap(body, full[axis] - at);
        acc = Some(acc.map_or(zeros, |a| body.concat(a, zeros, axis)));
    }
    acc
}

/// The cotangent `c` of a slice at `offsets`, with zeros around it to the
/// operand's shape `full`, one dimension at a time.
pub(super) fn pad(body: &mut Body<'_>, c: usize, offsets: &[i64], full: &[i64]) -> usize {
    let mut value = c;
    for (axis, &offset) in offsets.iter().enumerate() {
        let mut shape = body.ty(value).shape.clone();
        let after = full[axis] - offset - shape[axis];
        if offset > 0 {
            shape[axis] = offset;
            let before = body.zeros(&PointType { shape: shape.clone(), element: body.ty(c).element });
            value = body.concat(before, value, axis);
        }
        if after > 0 {
            let mut shape = body.ty(value).shape.clone();
            shape[axis] = after;
            let rest = body.zeros(&PointType { shape, element: body.ty(c).element });
            value = body.concat(value, rest, axis);
        }
    }
    value
}

pub(super) fn unsupported<'c>(body: &Body<'c>, n: usize, what: &str) -> PassDiagnostic<'c> {
    PassDiagnostic::new(
        body.nodes[n].location,
        format!("temporal-autodiff: no gradient through {what} (on a path the gradient needs)"),
    )
}

/// The shape of node `k`'s value.
fn shape_of(body: &Body, k: usize) -> Vec<i64> {
    body.ty(k).shape.clone()
}

/// The vector-Jacobian product of node `n` for its operand at position `i`,
/// given the cotangent `c` of `n` (same shape as `n`).
fn product<'c>(body: &mut Body<'c>, n: usize, i: usize, c: usize) -> Result<usize, PassDiagnostic<'c>> {
    let kind = body.nodes[n].kind.clone();
    Ok(match kind {
        NodeKind::Unary(op, a) => elementwise::unary(body, n, op, a, c),
        NodeKind::Binary(op, a, b) => elementwise::binary(body, n, i, op, a, b, c),
        NodeKind::Select(condition, a, b) => elementwise::select(body, i, condition, a, b, c),
        NodeKind::Cast(a) => elementwise::cast(body, a, c),
        NodeKind::Reduce(kind, a, axis) => reductions::reduce(body, n, kind, a, axis, c),
        NodeKind::Matmul(a, b) => contractions::matmul(body, n, i, a, b, c)?,
        NodeKind::Einsum(spec, ops) => contractions::einsum(body, n, i, &spec, &ops, c)?,
        NodeKind::Move(movement, ops) => movements::movement(body, n, i, movement, &ops, c)?,
        NodeKind::Gather(table, indices) => movements::gather(body, table, indices, c),
        NodeKind::Call { callee, .. } => {
            return Err(unsupported(body, n, &format!("the external call '{callee}', which has no gradient")));
        }
        // The gradient of a sum over the processes of the sum of their
        // losses: every process's cotangent of the result, summed (the
        // all-reduce of the cotangent); for the mean, divided by their
        // number (the all-reduced mean of the cotangent).
        NodeKind::AllReduce(kind @ (Collective::Sum | Collective::Mean), _) => {
            let ty = body.ty(c).clone();
            body.push(NodeKind::AllReduce(kind, c), ty)
        }
        NodeKind::AllReduce(kind, _) => {
            return Err(unsupported(
                body,
                n,
                &format!("the all_reduce \"{}\" (not yet: only \"sum\" and \"mean\" have gradients)", kind.text()),
            ));
        }
        NodeKind::ReadAt { .. } => {
            return Err(unsupported(body, n, "a read through data (its coordinates are integers)"));
        }
        NodeKind::DynamicSlice(a, offsets) => movements::dynamic_slice(body, a, &offsets, c),
        NodeKind::Attention(..) => return Err(unsupported(body, n, "temporal.attention (not yet)")),
        NodeKind::FlashAttention(..) => {
            return Err(unsupported(
                body,
                n,
                "temporal.flash_attention (made by temporal-fuse-attention after gradients are taken)",
            ));
        }
        NodeKind::Read { .. }
        | NodeKind::ReadRange { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Random { .. }
        | NodeKind::Position(_)
        | NodeKind::Bound(_)
        | NodeKind::Rank
        | NodeKind::WorldSize
        | NodeKind::Compare(..) => unreachable!("leaves and non-differentiable ops pass no gradient"),
    })
}
