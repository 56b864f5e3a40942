//! `temporal-split-products{inexact=true}`: a weight gradient as one
//! product over all the steps' rows. Back-propagation through time sums a
//! weight's per-step gradients `x[t]^T dz[t]` along `t` in a running sum
//! `S[t] = S[t+1] + x[t]^T dz[t]` (`ring<2>`, a rank-`B` update per step)
//! whose last point is the gradient. Where both operands of the per-step
//! product can be computed for every step at once, the gradient is one
//! product of `T * B` rows, `X^T DZ` with `X = x[0:T]` and `DZ =
//! dz[0:T]`: the reader of the sum's last point computes it from the whole
//! ranges, the per-step product leaves its packed point (no other reader
//! reads that part; the others' slices move), and the running sum is left
//! without readers for `temporal-dce`.
//!
//! An operand can be computed for all steps when it is built from reads
//! at the step or at a constant offset from it (`h[t-1]`), values that do
//! not vary along `t` (constants, weights), and elementwise ops,
//! movements, reductions, gathers (a table that does not vary) and
//! products of those ([`lift`]): after the split, the rows of
//! `NAME$part`, which `temporal-vectorize` batches; in a recurrence (an
//! LSTM's backward, where `dz[t]` is an elementwise function of the
//! adjoint at `t` and the stored gates), the adjoint is then kept for
//! every step and `dz` computed again for all of them after the loop. The
//! packed tensor may compute the product on an interval of steps and be
//! zeros at the others (the contribution of a branch defined from `t = 1`
//! on): the product then runs over that interval's steps.
//!
//! Memory: the product reads its operands for all the steps at once, and
//! what they are computed from is then kept for every step (the LSTM's
//! adjoint, `4 B H` floats a step, where the running sum kept two). Under
//! a memory budget (option `memory-budget`, which `--memory-budget` sets),
//! a running sum whose operands' rows and row sources (each counted whole
//! over the steps, whether or not it was kept already) exceed it keeps its
//! per-step products: `--stats` and `temporal-print-schedule` then show
//! its `ring<2>` store, where the one product leaves none.
//!
//! The product sums `T * B` terms in another order than the running sum
//! (which rounds after each step), so this is one of the rewrites that may
//! change float rounding: `-O3` and `--fast-math` run it.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{BinaryKind, Movement, Node, NodeKind, PointType, Program};
use std::collections::HashMap;

/// A running sum along `d` of one per-step matrix product, read at its last
/// point: what [`apply`] rewrites.
struct Plan {
    /// The running sum.
    sum: usize,
    /// The tensor whose packed point holds the per-step product, the
    /// branch computing it, and the product's place there.
    packed: usize,
    body: usize,
    offset: i64,
    length: i64,
    /// The steps `[lo, hi)` where the body computes the product (zeros at
    /// the others), of `size` (the bound value along `d`).
    steps: (i64, i64),
    size: i64,
    /// The product's operands (nodes of the body) and how each node they
    /// are computed from is computed over all those steps.
    operands: [usize; 2],
    lifted: Vec<Option<Lifted>>,
    /// Reads of the sum's last point: (tensor, branch, node).
    readers: Vec<(usize, usize, usize)>,
}

/// How a node of the packed tensor's body is computed for all the steps
/// of a plan at once.
#[derive(Clone, Debug)]
enum Lifted {
    /// `source` read at the step plus `shift` (`x[t - 1]`: -1), the other
    /// coordinates free of the step: its rows over the steps, a range.
    Read { source: usize, index: AffineMap, shift: i64 },
    /// The same at every step: a constant, a read not along `d`, what is
    /// computed from those only.
    Invariant,
    /// An op of which some operands vary: one value with the steps as a
    /// new leading dimension.
    Varying,
}
/// Rewrites every running sum along `d` (bound value `size`) of a per-step
/// product whose operands are rows of values kept for every step; returns
/// whether any was.
pub(super) fn sum_products(program: &mut Program, d: usize, size: i64, budget: Option<u64>) -> bool {
    let mut changed = false;
    for s in 0..program.tensors.len() {
        if let Some(plan) = plan(program, s, d, size).filter(|plan| budget.is_none_or(|b| held(program, plan) <= b)) {
            apply(program, plan, d);
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

/// How node `k` of `nodes` (a branch of a tensor over `d`, at position
/// `p` of its domain) is computed for all the steps at once, memoized in
/// `lifted`: reads at the step (shifted by a constant, other coordinates
/// free of it), what does not vary, and elementwise ops, movements,
/// reductions, gathers and products of those with the steps as a leading
/// dimension. `None` for anything else (ranges, random values, external
/// calls, positions), or where broadcasting with the new dimension would
/// not line up.
fn lift(
    program: &Program,
    nodes: &[Node],
    k: usize,
    d: usize,
    p: usize,
    lifted: &mut Vec<Option<Lifted>>,
) -> Option<()> {
    if lifted[k].is_some() {
        return Some(());
    }
    let node = &nodes[k];
    if !node.ty.is_static() {
        return None;
    }
    let operands = crate::rewrite::operands(&node.kind);
    for &o in &operands {
        lift(program, nodes, o, d, p, lifted)?;
    }
    let varies = |o: usize, lifted: &[Option<Lifted>]| !matches!(lifted[o], Some(Lifted::Invariant));
    let any = operands.iter().any(|&o| varies(o, lifted));
    // A varying operand of an elementwise op has the op's rank (so that
    // the leading dimension lines up under broadcasting).
    let full = |lifted: &[Option<Lifted>]| {
        operands.iter().all(|&o| !varies(o, lifted) || nodes[o].ty.shape.len() == node.ty.shape.len())
    };
    let result = match &node.kind {
        NodeKind::Read { source, index } => {
            let others = |q: usize| {
                index.results.iter().enumerate().all(|(i, e)| i == q || !crate::temporal_vectorize::uses_dim(e, p))
            };
            match program.tensors[*source].domain.iter().position(|&x| x == d) {
                Some(q) => {
                    let shift = index.results[q].offset_from_dim(p)?;
                    others(q).then(|| Lifted::Read { source: *source, index: index.clone(), shift })?
                }
                None if index.results.iter().all(|e| !crate::temporal_vectorize::uses_dim(e, p)) => Lifted::Invariant,
                None => return None,
            }
        }
        NodeKind::Constant { .. } | NodeKind::Rank | NodeKind::WorldSize => Lifted::Invariant,
        // (Values depending on the point other than through reads, and
        // data-dependent or effectful ones.)
        NodeKind::Random { .. }
        | NodeKind::Call { .. }
        | NodeKind::AllReduce(..)
        | NodeKind::ReadAt { .. }
        | NodeKind::ReadRange { .. }
        | NodeKind::DynamicSlice(..)
        | NodeKind::Position(_)
        | NodeKind::Bound(_)
        | NodeKind::Attention(..) => return None,
        _ if !any => Lifted::Invariant,
        NodeKind::Unary(..)
        | NodeKind::Binary(..)
        | NodeKind::Compare(..)
        | NodeKind::Select(..)
        | NodeKind::Cast(_)
            if full(lifted) =>
        {
            Lifted::Varying
        }
        NodeKind::Move(Movement::Slice(_) | Movement::Reshape | Movement::Permute(_), _) => Lifted::Varying,
        NodeKind::Move(Movement::Concat(_), parts) if parts.iter().all(|&o| varies(o, lifted)) => Lifted::Varying,
        NodeKind::Reduce(..) => Lifted::Varying,
        NodeKind::Gather(table, _) if !varies(*table, lifted) => Lifted::Varying,
        // [n, m, k] x [k, c], [k] as [n, k] x [k, c], [m, k] x [n, k, c]:
        // products of the steps' rows, batched by the leading dimension.
        NodeKind::Matmul(a, b) => {
            let rank = |o: usize| nodes[o].ty.shape.len();
            let fits = (!varies(*a, lifted) || rank(*a) >= 1)
                && (!varies(*b, lifted) || rank(*b) >= 2)
                && (!varies(*a, lifted) || !varies(*b, lifted) || rank(*a) >= 2);
            if !fits {
                return None;
            }
            Lifted::Varying
        }
        _ => return None,
    };
    lifted[k] = Some(result);
    Some(())
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
    // The per-step product in the packed tensor, read there by the sum
    // only: computed by one branch on an interval of steps, zeros at the
    // others (the contribution of a branch defined from the second step on).
    let x = &program.tensors[packed];
    let q = x.domain.iter().position(|&y| y == d)?;
    let mut used = Vec::with_capacity(size as usize);
    for t in 0..size {
        let mut found = None;
        for (bi, branch) in x.branches.iter().enumerate() {
            if holds_at(&branch.when, q, d, size, t)? {
                found = Some(bi);
                break;
            }
        }
        used.push(found?);
    }
    // (Every other branch yields zeros, so the point can lose the piece.)
    let computing: Vec<usize> = (0..x.branches.len()).filter(|&bi| !zeros(&x.branches[bi])).collect();
    let [body] = computing.as_slice() else { return None };
    let body = *body;
    let lo = used.iter().position(|&bi| bi == body)? as i64;
    let hi = size - used.iter().rev().position(|&bi| bi == body)? as i64;
    if hi - lo < 2 || (lo..hi).any(|t| used[t as usize] != body) {
        return None;
    }
    let branch = &x.branches[body];
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
    let mut lifted = vec![None; branch.nodes.len()];
    lift(program, &branch.nodes, left, d, q, &mut lifted)?;
    lift(program, &branch.nodes, right, d, q, &mut lifted)?;
    // Both operands vary (else it is no per-step product), and every range
    // read stays inside the steps.
    let varying = |k: usize| !matches!(lifted[k], Some(Lifted::Invariant));
    let inside = lifted.iter().all(|l| match l {
        Some(Lifted::Read { shift, .. }) => lo + shift >= 0 && hi + shift <= size,
        _ => true,
    });
    if !varying(left) || !varying(right) || !inside {
        return None;
    }
    Some(Plan { sum: s, packed, body, offset, length, steps: (lo, hi), size, operands: [left, right], lifted, readers })
}

/// Bytes the one product of `plan` reads for all its steps: its two
/// operands' rows, and every tensor read as rows, whole over the steps
/// (the dimension's bound value times its point).
fn held(program: &Program, plan: &Plan) -> u64 {
    let bytes =
        |ty: &PointType| ty.shape.iter().map(|&n| n.max(0) as u64).product::<u64>() * ty.element.byte_size() as u64;
    let nodes = &program.tensors[plan.packed].branches[plan.body].nodes;
    let steps = (plan.steps.1 - plan.steps.0) as u64;
    let operands: u64 = plan.operands.iter().map(|&k| bytes(&nodes[k].ty) * steps).sum();
    let mut sources: Vec<usize> = plan
        .lifted
        .iter()
        .filter_map(|l| match l {
            Some(Lifted::Read { source, .. }) => Some(*source),
            _ => None,
        })
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let rows: u64 = sources.iter().map(|&t| bytes(&program.tensors[t].point) * plan.size as u64).sum();
    operands + rows
}

/// Whether `branch` yields zeros: the constant 0 expanded to the point.
fn zeros(branch: &crate::program::Branch) -> bool {
    match &branch.nodes[branch.result].kind {
        NodeKind::Move(Movement::Expand, operands) => match &branch.nodes[operands[0]].kind {
            NodeKind::Constant { values, integers, .. } => {
                branch.nodes[operands[0]].ty.shape.is_empty()
                    && values.iter().all(|&v| v == 0.0)
                    && integers.iter().all(|&v| v == 0)
            }
            _ => false,
        },
        _ => false,
    }
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

/// Pushes onto `nodes` what computes node `k` of the plan's body for all
/// its steps (memoized in `built`), in a reader whose read of the sum maps
/// the sum's domain to `at`; returns the node.
#[allow(clippy::too_many_arguments)]
fn build<'c>(
    plan: &Plan,
    body: &[Node<'c>],
    k: usize,
    program: &Program<'c>,
    at: &AffineMap,
    d: usize,
    built: &mut HashMap<usize, usize>,
    nodes: &mut Vec<Node<'c>>,
) -> usize {
    if let Some(&b) = built.get(&k) {
        return b;
    }
    let node = &body[k];
    let (lo, hi) = plan.steps;
    let steps = hi - lo;
    let batched = |ty: &PointType| PointType {
        shape: std::iter::once(steps).chain(ty.shape.clone()).collect(),
        element: ty.element,
    };
    let single = |e: AffineExpr| AffineMap { num_dims: at.num_dims, num_symbols: at.num_symbols, results: vec![e] };
    let operands: Vec<usize> = crate::rewrite::operands(&node.kind)
        .into_iter()
        .map(|o| build(plan, body, o, program, at, d, built, nodes))
        .collect();
    let mapped = |kind: &NodeKind| {
        let original = crate::rewrite::operands(kind);
        crate::rewrite::map_operands(kind, |o| operands[original.iter().position(|&x| x == o).expect("an operand")])
    };
    let new = match plan.lifted[k].as_ref().expect("lifted") {
        Lifted::Invariant => match &node.kind {
            NodeKind::Read { source, index } => {
                let results = index.results.iter().map(|e| e.substitute_dims(&at.results)).collect();
                let index = AffineMap { num_dims: at.num_dims, num_symbols: at.num_symbols, results };
                Node { kind: NodeKind::Read { source: *source, index }, ..node.clone() }
            }
            kind => Node { kind: mapped(kind), ..node.clone() },
        },
        Lifted::Read { source, index, shift } => {
            let q = program.tensors[*source].domain.iter().position(|&x| x == d).expect("along d");
            let empty = AffineMap { num_dims: at.num_dims, num_symbols: at.num_symbols, results: vec![] };
            let (from, to) = (lo + shift, hi + shift);
            let mut lower = Vec::new();
            let mut upper = Vec::new();
            for (i, e) in index.results.iter().enumerate() {
                if i == q {
                    lower.push(single(AffineExpr::Constant(from)));
                    // The whole range as the bound itself (the form the
                    // vectorizer batches); a part of it in numbers (the
                    // program is specialized to the bound's value here).
                    let end = if to == plan.size { AffineExpr::Symbol(d) } else { AffineExpr::Constant(to) };
                    upper.push(single(end));
                } else {
                    lower.push(single(e.substitute_dims(&at.results)));
                    upper.push(empty.clone());
                }
            }
            let caps = vec![empty; index.results.len()];
            Node {
                kind: NodeKind::ReadRange { source: *source, lower, upper, caps },
                ty: batched(&node.ty),
                location: node.location,
            }
        }
        Lifted::Varying => {
            let kind = match mapped(&node.kind) {
                NodeKind::Move(Movement::Slice(offsets), o) => {
                    NodeKind::Move(Movement::Slice(std::iter::once(0).chain(offsets).collect()), o)
                }
                NodeKind::Move(Movement::Permute(order), o) => NodeKind::Move(
                    Movement::Permute(std::iter::once(0).chain(order.iter().map(|&k| k + 1)).collect()),
                    o,
                ),
                NodeKind::Move(Movement::Concat(axis), o) => NodeKind::Move(Movement::Concat(axis + 1), o),
                NodeKind::Reduce(kind, a, axis) => NodeKind::Reduce(kind, a, axis + 1),
                other => other,
            };
            Node { kind, ty: batched(&node.ty), location: node.location }
        }
    };
    nodes.push(new);
    built.insert(k, nodes.len() - 1);
    nodes.len() - 1
}

/// Rewrites the readers of the plan's running sum into one product over
/// all steps, and takes the per-step product out of the packed point.
fn apply(program: &mut Program, plan: Plan, d: usize) {
    let snapshot = program.clone();
    let body = &snapshot.tensors[plan.packed].branches[plan.body].nodes;
    let steps = plan.steps.1 - plan.steps.0;
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
            let [left, right] = plan.operands;
            let transposed = match &body[left].kind {
                NodeKind::Move(Movement::Permute(order), inner)
                    if order == &[1, 0] && !matches!(plan.lifted[inner[0]], Some(Lifted::Invariant)) =>
                {
                    Some(inner[0])
                }
                _ => None,
            };
            let mut built = HashMap::new();
            let x = build(&plan, body, transposed.unwrap_or(left), &snapshot, at, d, &mut built, &mut nodes);
            let y = build(&plan, body, right, &snapshot, at, d, &mut built, &mut nodes);
            let (sx, sy) = (nodes[x].ty.shape.clone(), nodes[y].ty.shape.clone());
            let element = nodes[x].ty.element;
            let (m, kk, n) = if transposed.is_some() { (sx[2], sx[1], sy[2]) } else { (sx[1], sx[2], sy[2]) };
            let mut push = |kind: NodeKind, shape: Vec<i64>| {
                nodes.push(Node { kind, ty: PointType { shape, element }, location });
                nodes.len() - 1
            };
            let rows = if transposed.is_some() {
                let flat = push(NodeKind::Move(Movement::Reshape, vec![x]), vec![steps * kk, m]);
                push(NodeKind::Move(Movement::Permute(vec![1, 0]), vec![flat]), vec![m, steps * kk])
            } else {
                let xt = push(NodeKind::Move(Movement::Permute(vec![1, 0, 2]), vec![x]), vec![m, steps, kk]);
                push(NodeKind::Move(Movement::Reshape, vec![xt]), vec![m, steps * kk])
            };
            let columns = push(NodeKind::Move(Movement::Reshape, vec![y]), vec![steps * kk, n]);
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
    // the sum, now without readers: zeros until `temporal-dce`); the
    // branches of zeros shrink with it.
    let point = &program.tensors[plan.packed].point;
    let total = point.num_elements() as i64;
    let branch = program.tensors[plan.packed].branches[plan.body].clone();
    let mut nodes = branch.nodes.clone();
    if let Some(result) = cut(&mut nodes, branch.result, plan.offset, plan.length) {
        let element = point.element;
        let shrunk = PointType { shape: vec![total - plan.length], element };
        let target = &mut program.tensors[plan.packed];
        target.point = shrunk.clone();
        for (bi, other) in target.branches.iter_mut().enumerate() {
            if bi != plan.body {
                let result = other.result;
                other.nodes[result].ty = shrunk.clone();
            }
        }
        let body = &mut target.branches[plan.body];
        body.nodes = nodes;
        body.result = result;
        let live = crate::rewrite::live_nodes(body);
        crate::rewrite::compact_branch(body, &live);
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
    let zero = NodeKind::Constant {
        text: crate::print::dense(&[0.0], &scalar).into(),
        values: [0.0].into(),
        integers: [].into(),
    };
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
