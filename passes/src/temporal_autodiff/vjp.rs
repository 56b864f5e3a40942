//! Reverse mode inside one branch body: the cotangent of one node (a read)
//! from the cotangent of the body's result, through the vector-Jacobian
//! product of every differentiable op.
//!
//! The body being built starts with a copy of the branch's nodes (the
//! forward values the products use; `temporal-dce` removes what they do
//! not), so node numbers of the branch are valid in it.

use super::body::Body;
use crate::diagnostics::PassDiagnostic;
use crate::program::{
    BinaryKind, Collective, DYNAMIC, Movement, NodeKind, PointType, Predicate, ReduceKind, UnaryKind,
};
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
/// cotangent `seed` of node `result` (nodes `0..forward` of `body` are the
/// branch's), in one sweep: by node, those with a differentiable path to
/// the result.
pub(super) fn backprop_all<'c>(
    body: &mut Body<'c>,
    forward: usize,
    result: usize,
    seed: usize,
    wanted: &[usize],
) -> Result<HashMap<usize, usize>, PassDiagnostic<'c>> {
    backprop_seeds(body, forward, &[(result, seed)], wanted)
}

/// [`backprop_all`] from several seeds: `(node, cotangent)` pairs (the
/// cotangents of one node add up).
pub(super) fn backprop_seeds<'c>(
    body: &mut Body<'c>,
    forward: usize,
    seeds: &[(usize, usize)],
    wanted: &[usize],
) -> Result<HashMap<usize, usize>, PassDiagnostic<'c>> {
    let mut ct: HashMap<usize, Vec<Part>> = HashMap::new();
    let (Some(&lowest), Some(highest)) = (wanted.iter().min(), seeds.iter().map(|&(n, _)| n).max()) else {
        return Ok(HashMap::new());
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
    Ok(result)
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
fn pad(body: &mut Body<'_>, c: usize, offsets: &[i64], full: &[i64]) -> usize {
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

fn unsupported<'c>(body: &Body<'c>, n: usize, what: &str) -> PassDiagnostic<'c> {
    PassDiagnostic::new(
        body.nodes[n].location,
        format!("temporal-autodiff: no gradient through {what} (on a path the gradient needs)"),
    )
}

/// The vector-Jacobian product of node `n` for its operand at position `i`,
/// given the cotangent `c` of `n` (same shape as `n`).
fn product<'c>(body: &mut Body<'c>, n: usize, i: usize, c: usize) -> Result<usize, PassDiagnostic<'c>> {
    let kind = body.nodes[n].kind.clone();
    let operand_shape = |body: &Body, k: usize| body.ty(k).shape.clone();
    Ok(match kind {
        NodeKind::Unary(op, a) => match op {
            UnaryKind::Neg => body.neg(c),
            UnaryKind::Exp => body.mul(c, n),
            UnaryKind::Log => body.div(c, a),
            UnaryKind::Sqrt => {
                let twice = body.mul_scalar(n, 2.0);
                body.div(c, twice)
            }
            UnaryKind::Tanh => {
                let square = body.mul(n, n);
                let d = body.rsub_scalar(1.0, square);
                body.mul(c, d)
            }
            UnaryKind::Sigmoid => {
                let rest = body.rsub_scalar(1.0, n);
                let d = body.mul(n, rest);
                body.mul(c, d)
            }
            UnaryKind::Relu => {
                let positive = body.compare_scalar(Predicate::Gt, a, 0.0);
                body.mask(positive, c)
            }
            UnaryKind::Sin => {
                let cos = body.unary(UnaryKind::Cos, a);
                body.mul(c, cos)
            }
            UnaryKind::Cos => {
                let sin = body.unary(UnaryKind::Sin, a);
                let d = body.mul(c, sin);
                body.neg(d)
            }
            UnaryKind::Abs => {
                let positive = body.compare_scalar(Predicate::Gt, a, 0.0);
                let negative = body.compare_scalar(Predicate::Lt, a, 0.0);
                let minus = body.neg(c);
                let down = body.mask(negative, minus);
                body.select(positive, c, down)
            }
            UnaryKind::Not | UnaryKind::StopGradient => unreachable!("no gradient passes"),
        },
        NodeKind::Binary(op, a, b) => {
            let g = match (op, i) {
                (BinaryKind::Add, _) => c,
                (BinaryKind::Sub, 0) => c,
                (BinaryKind::Sub, _) => body.neg(c),
                (BinaryKind::Mul, 0) => body.mul(c, b),
                (BinaryKind::Mul, _) => body.mul(c, a),
                (BinaryKind::Div, 0) => body.div(c, b),
                (BinaryKind::Div, _) => {
                    // d(a/b)/db = -(a/b)/b
                    let q = body.mul(c, n);
                    let d = body.div(q, b);
                    body.neg(d)
                }
                (BinaryKind::Max | BinaryKind::Min, _) => {
                    // Ties go to the left operand.
                    let predicate = if op == BinaryKind::Max { Predicate::Ge } else { Predicate::Le };
                    let left = body.compare(predicate, a, b);
                    let zero = body.scalar(0.0, body.ty(c).element);
                    if i == 0 { body.select(left, c, zero) } else { body.select(left, zero, c) }
                }
                (BinaryKind::Pow, 0) => {
                    // b * a^(b - 1)
                    let one = body.scalar(1.0, body.ty(b).element);
                    let less = body.binary(BinaryKind::Sub, b, one);
                    let power = body.binary(BinaryKind::Pow, a, less);
                    let d = body.mul(b, power);
                    body.mul(c, d)
                }
                (BinaryKind::Pow, _) => {
                    // a^b * log(a)
                    let log = body.unary(UnaryKind::Log, a);
                    let d = body.mul(n, log);
                    body.mul(c, d)
                }
                (BinaryKind::And | BinaryKind::Or, _) => unreachable!("no gradient passes"),
            };
            let target = operand_shape(body, if i == 0 { a } else { b });
            body.unbroadcast(g, &target)
        }
        NodeKind::Select(condition, a, b) => {
            let zero = body.scalar(0.0, body.ty(c).element);
            let g = if i == 1 { body.select(condition, c, zero) } else { body.select(condition, zero, c) };
            let target = operand_shape(body, if i == 1 { a } else { b });
            body.unbroadcast(g, &target)
        }
        NodeKind::Cast(a) => {
            let element = body.ty(a).element;
            body.cast(c, element)
        }
        NodeKind::Reduce(kind, a, axis) => {
            match kind {
                ReduceKind::Sum => body.restore_axis(c, a, axis),
                ReduceKind::Mean if body.ty(a).shape[axis] == DYNAMIC => {
                    // The length of a range: a sum of ones along it.
                    let element = body.ty(c).element;
                    let ones = body.like(a, 1.0, element);
                    let count = body.reduce(ReduceKind::Sum, ones, axis);
                    let share = body.div(c, count);
                    body.restore_axis(share, a, axis)
                }
                ReduceKind::Mean => {
                    let length = body.ty(a).shape[axis];
                    let spread = body.restore_axis(c, a, axis);
                    body.mul_scalar(spread, 1.0 / length.max(1) as f64)
                }
                ReduceKind::Max => {
                    // To every element equal to the maximum.
                    let maximum = body.restore_axis(n, a, axis);
                    let at = body.compare(Predicate::Eq, a, maximum);
                    let spread = body.restore_axis(c, a, axis);
                    body.mask(at, spread)
                }
                ReduceKind::CumSum => {
                    let flipped = body.flip(c, axis);
                    let sums = body.reduce(ReduceKind::CumSum, flipped, axis);
                    body.flip(sums, axis)
                }
                ReduceKind::ArgMax => unreachable!("no gradient passes"),
            }
        }
        NodeKind::Matmul(a, b) => {
            let (x, y) = (operand_shape(body, a), operand_shape(body, b));
            match (x.len(), y.len(), i) {
                (2, 2, 0) => {
                    let bt = body.transpose_last(b);
                    body.matmul(c, bt)
                }
                (2, 2, _) => {
                    let at = body.transpose_last(a);
                    body.matmul(at, c)
                }
                // a[k] B[k, n]: da = B c, dB = a^T c (an outer product).
                (1, 2, 0) => body.matmul(b, c),
                (1, 2, _) => {
                    let column = body.reshape(a, &[x[0], 1]);
                    let row = body.reshape(c, &[1, y[1]]);
                    body.matmul(column, row)
                }
                // A[m, k] b[k]: dA = c b^T, db = A^T c.
                (2, 1, 0) => {
                    let column = body.reshape(c, &[x[0], 1]);
                    let row = body.reshape(b, &[1, y[0]]);
                    body.matmul(column, row)
                }
                (2, 1, _) => {
                    let at = body.transpose_last(a);
                    body.matmul(at, c)
                }
                (rx, ry, _) if rx >= 2 && ry >= 2 => {
                    let g = if i == 0 {
                        let bt = body.transpose_last(b);
                        body.matmul(c, bt)
                    } else {
                        let at = body.transpose_last(a);
                        body.matmul(at, c)
                    };
                    body.unbroadcast(g, if i == 0 { &x } else { &y })
                }
                _ => return Err(unsupported(body, n, "a batched product of a vector")),
            }
        }
        NodeKind::Einsum(spec, ops) => {
            let own = &spec.operands[i];
            let mut operands = vec![spec.result.clone()];
            let mut values = vec![c];
            for (k, labels) in spec.operands.iter().enumerate() {
                if k != i {
                    operands.push(labels.clone());
                    values.push(ops[k]);
                }
            }
            // Labels of this operand alone (summed in it only) are
            // broadcast back.
            let shape = operand_shape(body, ops[i]);
            let everywhere: Vec<char> = operands.iter().flatten().copied().collect();
            let sizes: Vec<(char, i64)> = own.iter().copied().zip(shape.iter().copied()).collect();
            if own.iter().zip(&shape).any(|(l, &size)| !everywhere.contains(l) && size == DYNAMIC) {
                return Err(unsupported(body, n, "an einsum summing a range's axis in one operand only"));
            }
            let pairs: Vec<(usize, Vec<char>)> = values.into_iter().zip(operands).collect();
            body.contract(&pairs, own, &sizes)
        }
        NodeKind::Move(movement, ops) => {
            let a = ops[i];
            match movement {
                Movement::Permute(p) => {
                    let mut inverse = vec![0; p.len()];
                    for (k, &from) in p.iter().enumerate() {
                        inverse[from] = k;
                    }
                    body.permute(c, &inverse)
                }
                Movement::Flip(axis) => body.flip(c, axis),
                Movement::Reshape => {
                    let shape = operand_shape(body, a);
                    if shape.contains(&DYNAMIC) && !crate::program::reshape_fits(&body.ty(c).shape, &shape) {
                        return Err(unsupported(body, n, "this reshape of a dynamic shape"));
                    }
                    body.reshape(c, &shape)
                }
                Movement::Expand => {
                    let shape = operand_shape(body, a);
                    body.unbroadcast(c, &shape)
                }
                Movement::Slice(offsets) => {
                    let full = operand_shape(body, a);
                    pad(body, c, &offsets, &full)
                }
                Movement::Concat(axis) => {
                    let shape = operand_shape(body, a);
                    let mut offsets = vec![0; shape.len()];
                    if i == 1 {
                        offsets[axis] = operand_shape(body, ops[0])[axis];
                    }
                    body.slice(c, &offsets, &shape)
                }
                Movement::Arange => unreachable!("no operands"),
            }
        }
        NodeKind::Gather(table, indices) => {
            // Scatter-add as a product with the one-hot rows of the indices.
            let t = operand_shape(body, table);
            let rows = t[0];
            let width: i64 = t[1..].iter().product();
            let count: i64 = operand_shape(body, indices).iter().product();
            let index_element = body.ty(indices).element;
            let flat = body.reshape(indices, &[count, 1]);
            let last = body.scalar((rows - 1) as f64, index_element);
            let low = body.binary(BinaryKind::Min, flat, last);
            let zero = body.scalar(0.0, index_element);
            let clamped = body.binary(BinaryKind::Max, low, zero);
            let positions = body.arange(rows, index_element);
            let hits = body.compare(Predicate::Eq, clamped, positions);
            let one_hot = body.cast(hits, body.ty(c).element);
            let by_row = body.transpose_last(one_hot);
            let ct = body.reshape(c, &[count, width]);
            let summed = body.matmul(by_row, ct);
            body.reshape(summed, &t)
        }
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
        NodeKind::DynamicSlice(a, offsets) => {
            // Zeros around the cotangent at the offsets `o`, one dimension
            // at a time: padded with N zeros on each side, the window of
            // the operand's size N starts at N - o (a dynamic slice too).
            let full = operand_shape(body, a);
            let element = body.ty(c).element;
            let mut value = c;
            for axis in 0..full.len() {
                let mut shape = body.ty(value).shape.clone();
                if shape[axis] == full[axis] {
                    continue;
                }
                shape[axis] = full[axis];
                let zeros = body.zeros(&PointType { shape: shape.clone(), element });
                let before = body.concat(zeros, value, axis);
                let padded = body.concat(before, zeros, axis);
                let mut at: Vec<crate::affine::AffineExpr> = vec![crate::affine::AffineExpr::Constant(0); full.len()];
                at[axis] = crate::affine::AffineExpr::Add(
                    Box::new(crate::affine::AffineExpr::Constant(full[axis])),
                    Box::new(crate::affine::AffineExpr::Mul(
                        Box::new(offsets.results[axis].clone()),
                        Box::new(crate::affine::AffineExpr::Constant(-1)),
                    )),
                );
                let map = crate::affine::AffineMap { results: at, ..offsets.clone() };
                value = body.push(NodeKind::DynamicSlice(padded, map), PointType { shape, element });
            }
            value
        }
        NodeKind::Attention(..) => return Err(unsupported(body, n, "temporal.attention (not yet)")),
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
