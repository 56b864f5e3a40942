//! `temporal-split-products`: takes the time-parallel work out of a tensor
//! that also multiplies two values varying along a dimension. In back-
//! propagation through time a layer's contribution tensor computes, per
//! step, the cotangents of its inputs (the attention's backward over
//! `k[0:t+1]`, the MLP's) and the step's weight gradients, products of two
//! varying values (`x[t]^T dz[t]`) packed with them into one point.
//! `temporal-vectorize` batches only tensors without such per-step
//! products (batched, they are `D` small products and a store of them
//! all), so the whole contribution stayed in the loop, one step (`B` rows)
//! at a time.
//!
//! The pass cuts such a tensor `X` (on no dependence cycle along the
//! dimension `d`) in two at its per-step products: the nodes that are
//! neither a per-step product nor computed from one move into a tensor
//! `X$part` over the same domain, whose point packs (flattened, one after
//! another) the values the rest of `X` reads from them; `X` reads its
//! point and keeps the per-step products and what follows them (the
//! packing of its point). Cheap leaves (reads, constants and movements of
//! them) are not packed: `X` computes them again. `X$part` has no per-step
//! product, so `temporal-vectorize` (which runs next) computes it for all
//! steps at once, and `X`'s loop takes its rows.
//!
//! Only where it pays: `X` has one branch defined everywhere, `d` has a
//! bound value (option `bounds`) and the program keeps points along it
//! anyway (see `temporal_vectorize::keeps_points_along`), the moved part
//! holds a product (`matmul`, `einsum`) or a range read and no op without
//! a batched form (random values, external calls, reads through data,
//! positions, fused attention), and the packed values have static shapes
//! and one element type.
//!
//! Exact: every value is computed by the same ops on the same values.
//! Assumes a program accepted by `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::program::{Branch, Movement, Node, NodeKind, PointType, Program, Tensor};
use crate::temporal_vectorize::{batchable, cyclic_along, keeps_points_along, masked_range_read};
use melior::ir::Location;

mod sums;

/// The `temporal-split-products` pass.
pub struct TemporalSplitProducts;

impl TempoPass for TemporalSplitProducts {
    fn name(&self) -> &'static str {
        "temporal-split-products"
    }
    fn summary(&self) -> &'static str {
        "Move the time-parallel work of a tensor that multiplies two varying values per step (a contribution of back-propagation through time with its weight gradients) into a tensor of its own that temporal-vectorize then computes for all steps at once"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] = &[
            PassOption::bounds(
                "bounds",
                "bound values the program runs with, NAME=VALUE separated by commas: only tensors over a dimension with one are split (temporal-vectorize batches only those)",
            ),
            PassOption::flag(
                "inexact",
                false,
                "also sum a running sum of per-step products (a weight gradient) as one product over all the steps' rows (changes float rounding; -O3 and --fast-math)",
            ),
            PassOption::unsigned(
                "memory-budget",
                "Bytes: with inexact, keep a weight gradient's per-step products where the values the one product reads for all the steps (its operands' rows and the tensors they come from, kept for every step) would exceed it (default: no limit)",
            ),
        ];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalSplitProducts {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        _at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        let budget = options.unsigned("memory-budget");
        let values = options.bound_values(program);
        Ok(split_products_within(program, &values, options.flag("inexact"), budget))
    }
}

/// Rows per step (the contracted size of a per-step product `x[t]^T
/// dz[t]`) below which the product is a thin update worth splitting around.
pub(crate) const MAX_THIN_ROWS: i64 = 128;

/// Splits every tensor with per-step products over a dimension with a
/// bound value (`bound_values`, per dimension); returns whether any was.
pub fn split_products(program: &mut Program, bound_values: &[Option<i64>]) -> bool {
    split_products_with(program, bound_values, false)
}

/// [`split_products`], and where `inexact`, the running sums of per-step
/// products as one product over all steps (see [`sums`]).
pub fn split_products_with(program: &mut Program, bound_values: &[Option<i64>], inexact: bool) -> bool {
    split_products_within(program, bound_values, inexact, None)
}

/// [`split_products_with`] under a memory budget (bytes): a running sum
/// stays per step where the values its one product would read for all the
/// steps exceed `budget` (see [`sums`]).
pub fn split_products_within(
    program: &mut Program,
    bound_values: &[Option<i64>],
    inexact: bool,
    budget: Option<u64>,
) -> bool {
    let mut changed = false;
    for d in 0..program.dims.len() {
        let Some(size) = bound_values.get(d).copied().flatten() else { continue };
        if size < 1 || !keeps_points_along(program, d) {
            continue;
        }
        let cyclic = cyclic_along(program, d);
        for x in 0..program.tensors.len() {
            if cyclic[x] || !program.tensors[x].domain.contains(&d) || program.tensors[x].is_input {
                continue;
            }
            // Kept only where the part batches (else it is a store more).
            if let Some((part, rebuilt)) = split_tensor(program, x, d) {
                program.tensors.push(part);
                // (Whether it batches at all: `temporal-vectorize` in the
                // exact pipeline may still keep a masked contraction a loop.)
                if batchable(program, program.tensors.len() - 1, d, size, false).0 {
                    program.tensors[x].branches = vec![rebuilt];
                    changed = true;
                } else {
                    program.tensors.pop();
                }
            }
        }
        if inexact {
            changed |= sums::sum_products(program, d, size, budget);
        }
    }
    changed
}

/// Whether node `k` of `nodes` is a cheap leaf: a read at a point, a
/// constant, a position or bound, or a movement of cheap leaves.
fn cheap(nodes: &[Node], k: usize, memo: &mut [Option<bool>]) -> bool {
    if let Some(c) = memo[k] {
        return c;
    }
    let c = match &nodes[k].kind {
        NodeKind::Read { .. } | NodeKind::Constant { .. } | NodeKind::Position(_) | NodeKind::Bound(_) => true,
        NodeKind::Move(Movement::Permute(_) | Movement::Reshape | Movement::Expand | Movement::Slice(_), operands) => {
            operands.iter().all(|&o| cheap(nodes, o, memo))
        }
        _ => false,
    };
    memo[k] = Some(c);
    c
}

/// Tensor `x` split at its per-step products along `d`: the part (to be
/// the program's next tensor) and `x`'s new branch; `None` where it does
/// not split.
fn split_tensor<'c>(program: &Program<'c>, x: usize, d: usize) -> Option<(Tensor<'c>, Branch<'c>)> {
    let tensor = &program.tensors[x];
    let [branch] = tensor.branches.as_slice() else { return None };
    if !branch.when.is_universe() {
        return None;
    }
    let p = tensor.domain.iter().position(|&y| y == d).expect("over d");
    let (varies, tail) = flow(program, branch, d, p)?;
    if !tail.iter().any(|&t| t) || !tail[branch.result] || !thin(branch, &tail) {
        return None;
    }
    let mut memo = vec![None; branch.nodes.len()];
    let packed = packed_values(branch, &tail, &mut memo)?;
    let moved = moved_nodes(branch, &packed);
    if !worth_moving(branch, &moved, &varies)? {
        return None;
    }
    let part = part_tensor(program, tensor, &moved, &packed);
    let rebuilt = rebuilt_branch(program, tensor, &packed, &tail, &mut memo);
    Some((part, rebuilt))
}

/// Whether each node of `branch` (of a tensor over `d`, at position `p` of
/// its domain) varies along `d`, and whether it is a per-step product or
/// computed from one (the tail, which stays); `None` where a read along
/// `d` is not at the reader's own point.
fn flow(program: &Program, branch: &Branch, d: usize, p: usize) -> Option<(Vec<bool>, Vec<bool>)> {
    let n = branch.nodes.len();
    let mut varies = vec![false; n];
    let mut tail = vec![false; n];
    for (k, node) in branch.nodes.iter().enumerate() {
        let operands = crate::rewrite::operands(&node.kind);
        varies[k] = operands.iter().any(|&o| varies[o]);
        tail[k] = operands.iter().any(|&o| tail[o]);
        match &node.kind {
            NodeKind::Read { source, index } | NodeKind::ReadAt { source, index, .. } => {
                if let Some(q) = program.tensors[*source].domain.iter().position(|&y| y == d) {
                    varies[k] = true;
                    let own = matches!(&index.results[q], AffineExpr::Dim(i) if *i == p);
                    if !own {
                        return None;
                    }
                }
            }
            // A range bounded by the point batches as one value shared by
            // every point (masked); a point read as a range varies.
            NodeKind::ReadRange { source, .. } => {
                varies[k] |= program.tensors[*source].domain.contains(&d) && !masked_range_read(program, node, d, p);
            }
            NodeKind::Position(y) => varies[k] = *y == d,
            NodeKind::Matmul(a, b) => tail[k] |= varies[*a] && varies[*b],
            NodeKind::Einsum(_, operands) => tail[k] |= operands.iter().filter(|&&o| varies[o]).count() > 1,
            _ => {}
        }
    }
    Some((varies, tail))
}

/// Whether a per-step product of the tail is a thin update (few rows per
/// step, as a batch of 16): products of many rows per step (PPO's 512
/// environments) already run as large products, and batching the rest of
/// the tensor over the steps only adds memory traffic (measured: the PPO
/// base configuration 1.4x slower).
fn thin(branch: &Branch, tail: &[bool]) -> bool {
    branch.nodes.iter().enumerate().any(|(k, node)| match node.kind {
        NodeKind::Matmul(a, _) if tail[k] && !branch.nodes[a].ty.shape.is_empty() => {
            branch.nodes[a].ty.shape.last().is_some_and(|&rows| (1..MAX_THIN_ROWS).contains(&rows))
        }
        _ => false,
    })
}

/// The values the tail reads from the rest, but cheap leaves, in order;
/// `None` where there are none, or they are not all static and of one
/// element type (they are packed side by side in one tensor).
fn packed_values(branch: &Branch, tail: &[bool], memo: &mut [Option<bool>]) -> Option<Vec<usize>> {
    let mut packed: Vec<usize> = Vec::new();
    for (k, node) in branch.nodes.iter().enumerate() {
        if !tail[k] {
            continue;
        }
        for o in crate::rewrite::operands(&node.kind) {
            if !tail[o] && !cheap(&branch.nodes, o, memo) && !packed.contains(&o) {
                packed.push(o);
            }
        }
    }
    packed.sort_unstable();
    let element = branch.nodes[*packed.first()?].ty.element;
    if packed.iter().any(|&k| !branch.nodes[k].ty.is_static() || branch.nodes[k].ty.element != element) {
        return None;
    }
    Some(packed)
}

/// What moves into the part: the packed values' subexpressions.
fn moved_nodes(branch: &Branch, packed: &[usize]) -> Vec<bool> {
    let mut moved = vec![false; branch.nodes.len()];
    for &k in packed {
        moved[k] = true;
    }
    for k in (0..branch.nodes.len()).rev() {
        if moved[k] {
            for o in crate::rewrite::operands(&branch.nodes[k].kind) {
                moved[o] = true;
            }
        }
    }
    moved
}

/// Whether moving is worth it (a product that varies along the dimension,
/// or a range read, moves); `None` where a moved node may not be batched.
fn worth_moving(branch: &Branch, moved: &[bool], varies: &[bool]) -> Option<bool> {
    let mut worth = false;
    for (k, node) in branch.nodes.iter().enumerate().filter(|(k, _)| moved[*k]) {
        match &node.kind {
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => worth |= varies[k],
            NodeKind::ReadRange { .. } => worth = true,
            NodeKind::Random { .. }
            | NodeKind::Call { .. }
            | NodeKind::AllReduce(..)
            | NodeKind::ReadAt { .. }
            | NodeKind::Position(_)
            | NodeKind::Attention(..) => return None,
            _ => {}
        }
    }
    Some(worth)
}

/// The part of `tensor` (its single branch): the moved nodes, then the
/// packed values flattened and concatenated.
fn part_tensor<'c>(program: &Program<'c>, tensor: &Tensor<'c>, moved: &[bool], packed: &[usize]) -> Tensor<'c> {
    let branch = &tensor.branches[0];
    let location = branch.location;
    let element = branch.nodes[packed[0]].ty.element;
    let mut nodes: Vec<Node> = Vec::new();
    let mut new = vec![usize::MAX; branch.nodes.len()];
    for (k, node) in branch.nodes.iter().enumerate() {
        if moved[k] {
            nodes.push(Node { kind: crate::rewrite::map_operands(&node.kind, |o| new[o]), ..node.clone() });
            new[k] = nodes.len() - 1;
        }
    }
    let mut result: Option<(usize, i64)> = None;
    for &k in packed {
        let ty = &branch.nodes[k].ty;
        let size = ty.shape.iter().product::<i64>();
        let mut value = new[k];
        if ty.shape.len() != 1 {
            let flat_ty = PointType { shape: vec![size], element };
            nodes.push(Node { kind: NodeKind::Move(Movement::Reshape, vec![value]), ty: flat_ty, location });
            value = nodes.len() - 1;
        }
        result = Some(match result {
            None => (value, size),
            Some((acc, total)) => {
                let ty = PointType { shape: vec![total + size], element };
                nodes.push(Node { kind: NodeKind::Move(Movement::Concat(0), vec![acc, value]), ty, location });
                (nodes.len() - 1, total + size)
            }
        });
    }
    let (result, total) = result.expect("a packed value");
    let mut name = format!("{}$part", tensor.name);
    while program.tensors.iter().any(|t| t.name == name) {
        name += "_";
    }
    let when = IntegerSet { num_dims: tensor.domain.len(), num_symbols: program.dims.len(), constraints: Vec::new() };
    Tensor {
        name,
        domain: tensor.domain.clone(),
        point: PointType { shape: vec![total], element },
        is_input: false,
        branches: vec![Branch { when, nodes, result, location }],
        location: tensor.location,
    }
}

/// `tensor`'s new branch: its point of the part (the program's next
/// tensor), the packed values sliced out of it, the cheap leaves and the
/// tail.
fn rebuilt_branch<'c>(
    program: &Program<'c>,
    tensor: &Tensor<'c>,
    packed: &[usize],
    tail: &[bool],
    memo: &mut [Option<bool>],
) -> Branch<'c> {
    let branch = &tensor.branches[0];
    let location = branch.location;
    let element = branch.nodes[packed[0]].ty.element;
    let (dims, symbols) = (tensor.domain.len(), program.dims.len());
    let total: i64 = packed.iter().map(|&k| branch.nodes[k].ty.shape.iter().product::<i64>()).sum();
    let identity =
        AffineMap { num_dims: dims, num_symbols: symbols, results: (0..dims).map(AffineExpr::Dim).collect() };
    let mut nodes: Vec<Node> = vec![Node {
        kind: NodeKind::Read { source: program.tensors.len(), index: identity },
        ty: PointType { shape: vec![total], element },
        location,
    }];
    let n = branch.nodes.len();
    let mut new = vec![usize::MAX; n];
    let mut offset = 0;
    for &k in packed {
        let ty = &branch.nodes[k].ty;
        let size = ty.shape.iter().product::<i64>();
        let piece = PointType { shape: vec![size], element };
        nodes.push(Node { kind: NodeKind::Move(Movement::Slice(vec![offset]), vec![0]), ty: piece, location });
        if ty.shape.len() != 1 {
            let last = nodes.len() - 1;
            nodes.push(Node { kind: NodeKind::Move(Movement::Reshape, vec![last]), ty: ty.clone(), location });
        }
        new[k] = nodes.len() - 1;
        offset += size;
    }
    for (k, node) in branch.nodes.iter().enumerate() {
        if new[k] == usize::MAX && (tail[k] || cheap(&branch.nodes, k, memo)) {
            if crate::rewrite::operands(&node.kind).iter().any(|&o| new[o] == usize::MAX) {
                continue;
            }
            nodes.push(Node { kind: crate::rewrite::map_operands(&node.kind, |o| new[o]), ..node.clone() });
            new[k] = nodes.len() - 1;
        }
    }
    let when = IntegerSet { num_dims: dims, num_symbols: symbols, constraints: Vec::new() };
    let mut rebuilt = Branch { when, nodes, result: new[branch.result], location };
    let live = crate::rewrite::live_nodes(&rebuilt);
    crate::rewrite::compact_branch(&mut rebuilt, &live);
    rebuilt
}
