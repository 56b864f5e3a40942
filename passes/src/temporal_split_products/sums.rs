//! `temporal-split-products{inexact=true}`: a weight gradient as one
//! product over all the steps' rows. Back-propagation through time sums a
//! weight's per-step gradients `x[t]^T dz[t]` along `t` in a running sum
//! `S[t] = S[t+1] + x[t]^T dz[t]` (`ring<2>`, a rank-`B` update per step)
//! whose last point is the gradient. Where every operand of the per-step
//! product is a row of values the program has for every step (a read at
//! the step, sliced, reshaped or permuted: after the split, the rows of
//! `NAME$part`, which `temporal-vectorize` batches), the gradient is one
//! product of `T * B` rows, `X^T DZ` with `X = x[0:T]` and `DZ =
//! dz[0:T]`: the reader of the sum's last point computes it from the whole
//! ranges, the per-step product leaves its packed point (no other reader
//! reads that part; the others' slices move), and the running sum is left
//! without readers for `temporal-dce`.
//!
//! The product sums `T * B` terms in another order than the running sum
//! (which rounds after each step), so this is one of the rewrites that may
//! change float rounding: `-O3` and `--fast-math` run it.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{BinaryKind, Movement, Node, NodeKind, PointType, Program};

/// A running sum along `d` of one per-step matrix product, read at its last
/// point: what [`apply`] rewrites.
struct Plan {
    /// The running sum.
    sum: usize,
    /// The tensor whose packed point holds the per-step product, and the
    /// product's place there.
    packed: usize,
    offset: i64,
    length: i64,
    /// The product's operands over all steps (`[D, m, k]`, `[D, k, n]`).
    operands: [Lifted; 2],
    /// Reads of the sum's last point: (tensor, branch, node).
    readers: Vec<(usize, usize, usize)>,
}

/// A value of a branch over `d` as the whole range of its rows: a read at
/// the step, then movements.
#[derive(Clone, Debug)]
enum Lifted {
    /// `source` read at `index` (in the sum's domain) but along `d`,
    /// whose whole range is read; its point type.
    Read {
        source: usize,
        index: AffineMap,
        point: PointType,
    },
    Move(Movement, Box<Lifted>, PointType),
}

/// Rewrites every running sum along `d` (bound value `size`) of a per-step
/// product whose operands are rows of values kept for every step; returns
/// whether any was.
pub(super) fn sum_products(program: &mut Program, d: usize, size: i64) -> bool {
    let mut changed = false;
    for s in 0..program.tensors.len() {
        if let Some(plan) = plan(program, s, d, size) {
            apply(program, plan, d, size);
            changed = true;
        }
    }
    changed
}

/// Whether `set` (over a domain whose position `p` is along `d`) holds at
/// step `t`, where it mentions only that position and `d`'s bound.
fn holds_at(set: &IntegerSet, p: usize, d: usize, size: i64, t: i64) -> Option<bool> {
    let mut dims = vec![0; set.num_dims];
    dims[p] = t;
    let mut symbols = vec![0; set.num_symbols];
    symbols[d] = size;
    let only = set.constraints.iter().all(|c| match c.expr.linear() {
        Some((coefficients, symbol_coefficients, _)) => {
            coefficients.iter().enumerate().all(|(i, &k)| k == 0 || i == p)
                && symbol_coefficients.iter().enumerate().all(|(j, &k)| k == 0 || j == d)
        }
        None => false,
    });
    if !only {
        return None;
    }
    set.contains(&dims, &symbols).ok()
}

/// The increment of a running sum: a reshaped slice of the point of a
/// tensor read at the sum's own point: (tensor, offset, length).
fn increment(program: &Program, nodes: &[Node], k: usize, domain: &[usize]) -> Option<(usize, i64, i64)> {
    let mut k = k;
    if let NodeKind::Move(Movement::Reshape, operands) = &nodes[k].kind {
        k = operands[0];
    }
    let (slice, offset) = match &nodes[k].kind {
        NodeKind::Move(Movement::Slice(offsets), operands) if offsets.len() == 1 => (operands[0], offsets[0]),
        _ => (k, 0),
    };
    let NodeKind::Read { source, index } = &nodes[slice].kind else { return None };
    let own = index.results.len() == domain.len()
        && index.results.iter().enumerate().all(|(i, e)| matches!(e, AffineExpr::Dim(j) if *j == i));
    // A slice of a packed (1-D) point, or the whole point.
    let whole = slice == k && nodes[slice].ty == program.tensors[*source].point;
    if !own || program.tensors[*source].domain != domain || (nodes[slice].ty.shape.len() != 1 && !whole) {
        return None;
    }
    Some((*source, offset, nodes[k].ty.num_elements() as i64))
}

/// The node of `nodes` that yields `[offset, offset + length)` of the 1-D
/// value of node `k`, through concatenations and reshapes to 1-D.
fn piece(nodes: &[Node], k: usize, offset: i64, length: i64) -> Option<usize> {
    let node = &nodes[k];
    if offset == 0 && node.ty.num_elements() as i64 == length {
        return match &node.kind {
            NodeKind::Move(Movement::Reshape, operands) if node.ty.shape.len() == 1 => Some(operands[0]),
            _ => Some(k),
        };
    }
    match &node.kind {
        NodeKind::Move(Movement::Concat(0), operands) if node.ty.shape.len() == 1 => {
            let left = nodes[operands[0]].ty.num_elements() as i64;
            if offset + length <= left {
                piece(nodes, operands[0], offset, length)
            } else if offset >= left {
                piece(nodes, operands[1], offset - left, length)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Node `k` of a branch of a tensor over `d` (at position `p` of its
/// domain) as the whole range of its rows, where it is a read at the step
/// (other coordinates free of it) followed by slices, reshapes and
/// permutations.
fn lift(program: &Program, nodes: &[Node], k: usize, d: usize, p: usize) -> Option<Lifted> {
    let node = &nodes[k];
    match &node.kind {
        NodeKind::Read { source, index } => {
            let q = program.tensors[*source].domain.iter().position(|&x| x == d)?;
            let own = matches!(&index.results[q], AffineExpr::Dim(i) if *i == p);
            let others =
                index.results.iter().enumerate().all(|(i, e)| i == q || !crate::temporal_vectorize::uses_dim(e, p));
            (own && others).then(|| Lifted::Read { source: *source, index: index.clone(), point: node.ty.clone() })
        }
        NodeKind::Move(m @ (Movement::Slice(_) | Movement::Reshape | Movement::Permute(_)), operands) => {
            let inner = lift(program, nodes, operands[0], d, p)?;
            Some(Lifted::Move(m.clone(), Box::new(inner), node.ty.clone()))
        }
        _ => None,
    }
}

/// The running sum `s` along `d` of one per-step product, if it is one.
fn plan(program: &Program, s: usize, d: usize, size: i64) -> Option<Plan> {
    let tensor = &program.tensors[s];
    if tensor.is_input || program.outputs.contains(&s) {
        return None;
    }
    let p = tensor.domain.iter().position(|&x| x == d)?;
    // Its branches: the first step's increment, then the increment plus
    // the sum at the step before (either direction), then zeros.
    let (first, rest) = match tensor.branches.as_slice() {
        [first, rest, ..] => (first, rest),
        _ => return None,
    };
    let NodeKind::Binary(BinaryKind::Add, a, b) = rest.nodes[rest.result].kind else { return None };
    let previous = |k: usize| match &rest.nodes[k].kind {
        NodeKind::Read { source, index } if *source == s => {
            let shifted = index.results[p].offset_from_dim(p);
            let others = index.results.iter().enumerate().all(|(i, e)| i == p || *e == AffineExpr::Dim(i));
            shifted.filter(|c| (*c == 1 || *c == -1) && others)
        }
        _ => None,
    };
    let (step, direction) = match (previous(a), previous(b)) {
        (Some(c), None) => (b, c),
        (None, Some(c)) => (a, c),
        _ => return None,
    };
    // The sum's first step and last one (where it is read).
    let (start, last) = if direction == 1 { (size - 1, 0) } else { (0, size - 1) };
    for t in 0..size {
        if holds_at(&first.when, p, d, size, t)? != (t == start) || !holds_at(&rest.when, p, d, size, t)? {
            return None;
        }
    }
    let (packed, offset, length) = increment(program, &rest.nodes, step, &tensor.domain)?;
    if increment(program, &first.nodes, first.result, &tensor.domain)? != (packed, offset, length)
        || first.nodes[first.result].ty != rest.nodes[step].ty
    {
        return None;
    }
    // Every other reader reads the last point.
    let mut readers = Vec::new();
    for (r, reader) in program.tensors.iter().enumerate() {
        for (bi, branch) in reader.branches.iter().enumerate() {
            for (k, node) in branch.nodes.iter().enumerate() {
                match &node.kind {
                    _ if r == s => {}
                    NodeKind::Read { source, index } if *source == s => {
                        let at = &index.results[p];
                        let is_last = at.linear().is_some_and(|(dims, symbols, c)| {
                            dims.iter().all(|&k| k == 0)
                                && symbols.iter().enumerate().all(|(j, &k)| k == 0 || (j == d && k == 1))
                                && c + symbols.get(d).copied().unwrap_or(0) * size == last
                        });
                        if !is_last {
                            return None;
                        }
                        readers.push((r, bi, k));
                    }
                    other if crate::rewrite::source(other) == Some(s) => return None,
                    _ => {}
                }
            }
        }
    }
    if readers.is_empty() {
        return None;
    }
    // The per-step product in the packed tensor, read there by the sum only.
    let x = &program.tensors[packed];
    let [branch] = x.branches.as_slice() else { return None };
    let product = piece(&branch.nodes, branch.result, offset, length)?;
    let NodeKind::Matmul(left, right) = branch.nodes[product].kind else { return None };
    let ranks = (branch.nodes[left].ty.shape.len(), branch.nodes[right].ty.shape.len());
    if ranks != (2, 2) || !branch.nodes[product].ty.element.is_float() {
        return None;
    }
    // Thin per-step updates only (see `MAX_THIN_ROWS`).
    if branch.nodes[left].ty.shape[1] >= super::MAX_THIN_ROWS {
        return None;
    }
    if !only_reader(program, packed, s, offset, length) {
        return None;
    }
    let q = x.domain.iter().position(|&y| y == d)?;
    let operands = [lift(program, &branch.nodes, left, d, q)?, lift(program, &branch.nodes, right, d, q)?];
    Some(Plan { sum: s, packed, offset, length, operands, readers })
}

/// Whether every read of `packed` but `sum`'s takes slices outside
/// `[offset, offset + length)` of its point.
fn only_reader(program: &Program, packed: usize, sum: usize, offset: i64, length: i64) -> bool {
    program.tensors.iter().enumerate().filter(|(r, _)| *r != sum && *r != packed).all(|(_, reader)| {
        reader.branches.iter().all(|branch| {
            let users = crate::rewrite::users(branch);
            branch.nodes.iter().enumerate().all(|(k, node)| match crate::rewrite::source(&node.kind) {
                Some(x) if x == packed => {
                    matches!(node.kind, NodeKind::Read { .. })
                        && users[k].iter().all(|&u| match &branch.nodes[u].kind {
                            NodeKind::Move(Movement::Slice(o), _) if o.len() == 1 => {
                                let n = branch.nodes[u].ty.num_elements() as i64;
                                o[0] + n <= offset || o[0] >= offset + length
                            }
                            _ => false,
                        })
                }
                _ => true,
            })
        })
    })
}

/// Pushes the nodes of `lifted` (read from a reader whose read of the sum
/// maps the sum's domain to `at`) onto `nodes`; returns the last.
fn build<'c>(
    lifted: &Lifted,
    program: &Program<'c>,
    at: &AffineMap,
    d: usize,
    size: i64,
    nodes: &mut Vec<Node<'c>>,
    location: melior::ir::Location<'c>,
) -> usize {
    let batched = |ty: &PointType| PointType {
        shape: std::iter::once(size).chain(ty.shape.clone()).collect(),
        element: ty.element,
    };
    let node = match lifted {
        Lifted::Read { source, index, point } => {
            let q = program.tensors[*source].domain.iter().position(|&x| x == d).expect("along d");
            let single =
                |e: AffineExpr| AffineMap { num_dims: at.num_dims, num_symbols: at.num_symbols, results: vec![e] };
            let empty = AffineMap { num_dims: at.num_dims, num_symbols: at.num_symbols, results: vec![] };
            let mut lower = Vec::new();
            let mut upper = Vec::new();
            for (i, e) in index.results.iter().enumerate() {
                if i == q {
                    lower.push(single(AffineExpr::Constant(0)));
                    upper.push(single(AffineExpr::Symbol(d)));
                } else {
                    lower.push(single(e.substitute_dims(&at.results)));
                    upper.push(empty.clone());
                }
            }
            let caps = vec![empty; index.results.len()];
            Node { kind: NodeKind::ReadRange { source: *source, lower, upper, caps }, ty: batched(point), location }
        }
        Lifted::Move(movement, inner, ty) => {
            let a = build(inner, program, at, d, size, nodes, location);
            let movement = match movement {
                Movement::Slice(offsets) => {
                    Movement::Slice(std::iter::once(0).chain(offsets.iter().copied()).collect())
                }
                Movement::Permute(order) => {
                    Movement::Permute(std::iter::once(0).chain(order.iter().map(|&k| k + 1)).collect())
                }
                other => other.clone(),
            };
            Node { kind: NodeKind::Move(movement, vec![a]), ty: batched(ty), location }
        }
    };
    nodes.push(node);
    nodes.len() - 1
}

/// Rewrites the readers of the plan's running sum into one product over
/// all steps, and zeros the per-step product in the packed point.
fn apply(program: &mut Program, plan: Plan, d: usize, size: i64) {
    let snapshot = program.clone();
    for &(r, b, k) in &plan.readers {
        let branch = &snapshot.tensors[r].branches[b];
        let NodeKind::Read { index: at, .. } = &branch.nodes[k].kind else { unreachable!("a read") };
        let location = branch.nodes[k].location;
        let wanted = branch.nodes[k].ty.clone();
        let mut nodes: Vec<Node> = Vec::with_capacity(branch.nodes.len() + 12);
        let mut new = Vec::with_capacity(branch.nodes.len());
        for (i, node) in branch.nodes.iter().enumerate() {
            if i != k {
                nodes.push(Node { kind: crate::rewrite::map_operands(&node.kind, |o| new[o]), ..node.clone() });
                new.push(nodes.len() - 1);
                continue;
            }
            // [D, m, k] -> [m, D * k]; [D, k, n] -> [D * k, n]. Where the
            // left operand is a transposed row value (x[t]^T: [D, k, m]
            // rows permuted), its rows are reshaped first and the product
            // takes the transposed view (no copy of all the steps' rows).
            let transposed = match &plan.operands[0] {
                Lifted::Move(Movement::Permute(order), inner, _) if order == &[1, 0] => Some(inner.as_ref()),
                _ => None,
            };
            let x = build(transposed.unwrap_or(&plan.operands[0]), &snapshot, at, d, size, &mut nodes, location);
            let y = build(&plan.operands[1], &snapshot, at, d, size, &mut nodes, location);
            let (sx, sy) = (nodes[x].ty.shape.clone(), nodes[y].ty.shape.clone());
            let element = nodes[x].ty.element;
            let (m, kk, n) = if transposed.is_some() { (sx[2], sx[1], sy[2]) } else { (sx[1], sx[2], sy[2]) };
            let mut push = |kind: NodeKind, shape: Vec<i64>| {
                nodes.push(Node { kind, ty: PointType { shape, element }, location });
                nodes.len() - 1
            };
            let rows = if transposed.is_some() {
                let flat = push(NodeKind::Move(Movement::Reshape, vec![x]), vec![size * kk, m]);
                push(NodeKind::Move(Movement::Permute(vec![1, 0]), vec![flat]), vec![m, size * kk])
            } else {
                let xt = push(NodeKind::Move(Movement::Permute(vec![1, 0, 2]), vec![x]), vec![m, size, kk]);
                push(NodeKind::Move(Movement::Reshape, vec![xt]), vec![m, size * kk])
            };
            let columns = push(NodeKind::Move(Movement::Reshape, vec![y]), vec![size * kk, n]);
            let mut product = push(NodeKind::Matmul(rows, columns), vec![m, n]);
            if wanted.shape != vec![m, n] {
                product = push(NodeKind::Move(Movement::Reshape, vec![product]), wanted.shape.clone());
            }
            new.push(product);
        }
        let target = &mut program.tensors[r].branches[b];
        target.nodes = nodes;
        target.result = new[branch.result];
    }
    // The per-step product leaves the packed point (its only reader was
    // the sum, now without readers: zeros until `temporal-dce`).
    let point = &program.tensors[plan.packed].point;
    let total = point.num_elements() as i64;
    let branch = program.tensors[plan.packed].branches[0].clone();
    let mut nodes = branch.nodes.clone();
    if let Some(result) = cut(&mut nodes, branch.result, plan.offset, plan.length) {
        let element = point.element;
        let target = &mut program.tensors[plan.packed];
        target.point = PointType { shape: vec![total - plan.length], element };
        target.branches[0].nodes = nodes;
        target.branches[0].result = result;
        let live = crate::rewrite::live_nodes(&target.branches[0]);
        crate::rewrite::compact_branch(&mut target.branches[0], &live);
        let shrunk = PointType { shape: vec![total - plan.length], element };
        for (r, reader) in program.tensors.iter_mut().enumerate() {
            if r == plan.packed {
                continue;
            }
            for branch in &mut reader.branches {
                for node in &mut branch.nodes {
                    if matches!(node.kind, NodeKind::Read { source, .. } if source == plan.packed) {
                        node.ty = shrunk.clone();
                    }
                }
                let reads: Vec<bool> = branch
                    .nodes
                    .iter()
                    .map(|n| matches!(n.kind, NodeKind::Read { source, .. } if source == plan.packed))
                    .collect();
                for node in &mut branch.nodes {
                    if let NodeKind::Move(Movement::Slice(offsets), operands) = &mut node.kind
                        && reads[operands[0]]
                        && offsets[0] >= plan.offset + plan.length
                    {
                        offsets[0] -= plan.length;
                    }
                }
            }
        }
    }
    let sum = &mut program.tensors[plan.sum];
    let ty = sum.point.clone();
    let location = sum.location;
    let scalar = PointType { shape: vec![], element: ty.element };
    let zero =
        NodeKind::Constant { text: crate::print::dense(&[0.0], &scalar), values: vec![0.0], integers: Vec::new() };
    let nodes = vec![
        Node { kind: zero, ty: scalar, location },
        Node { kind: NodeKind::Move(Movement::Expand, vec![0]), ty, location },
    ];
    let dims = sum.domain.len();
    let when = IntegerSet { num_dims: dims, num_symbols: program.dims.len(), constraints: Vec::new() };
    program.tensors[plan.sum].branches = vec![crate::program::Branch { when, nodes, result: 1, location }];
}

/// The value of node `k` (1-D, a tree of concatenations along 0) without
/// `[offset, offset + length)`: new nodes pushed onto `nodes` for the
/// concatenations on the way; `None` where that is all of it.
fn cut(nodes: &mut Vec<Node>, k: usize, offset: i64, length: i64) -> Option<usize> {
    let size = nodes[k].ty.num_elements() as i64;
    if offset == 0 && length == size {
        return None;
    }
    let NodeKind::Move(Movement::Concat(0), operands) = nodes[k].kind.clone() else {
        unreachable!("the piece was found through concatenations")
    };
    let left = nodes[operands[0]].ty.num_elements() as i64;
    let (x, y) = if offset < left {
        (cut(nodes, operands[0], offset, length), Some(operands[1]))
    } else {
        (Some(operands[0]), cut(nodes, operands[1], offset - left, length))
    };
    match (x, y) {
        (Some(x), Some(y)) => {
            let ty = PointType { shape: vec![size - length], element: nodes[k].ty.element };
            let location = nodes[k].location;
            nodes.push(Node { kind: NodeKind::Move(Movement::Concat(0), vec![x, y]), ty, location });
            Some(nodes.len() - 1)
        }
        (one, None) | (None, one) => one,
    }
}
