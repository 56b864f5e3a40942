//! `temporal-tile-ranges`: tiles softmax attention over a dynamic range
//! into static blocks. A branch that reads a range whose length changes
//! with the point (`k[0:t+1]`, a KV cache), scores it against a query,
//! takes a softmax along the range and contracts the weights with values
//! over the same range materializes three buffers as long as the range
//! (scores, exponentials, weights), of dynamic size. The pass replaces the
//! whole chain by one `temporal.attention` op, which compiled code runs
//! `block` positions at a time with a running maximum and sum (the online
//! softmax): static buffers of one block, the last block masked by its
//! length, one pass over the keys and values.
//!
//! Recognized chain (the form `Expr::softmax` and `jax.nn.softmax` write),
//! with `n` the one label the final contraction sums:
//!
//! ```text
//! S = contract(q, k)              n in the result, from k (not q)
//! X = S * c  |  c * S  |  S       c a scalar (all sizes 1)
//! M = reshape(reduce_max(X, n))   n kept with size 1 (or no reshape if n is first)
//! E = exp(X - M)
//! P = E / reshape(reduce_sum(E, n))
//! O = contract(P, v) | contract(v, P)   summing only n
//! ```
//!
//! where a contraction is an einsum of two operands or a matmul (as the
//! einsum it is), in either operand order.
//!
//! where `n`'s size is dynamic, every other label static, the element type
//! a float, and no intermediate value is used outside the chain.
//!
//! Not exact bit for bit: the running rescaling `exp(m - m')` rounds
//! differently from one global maximum (the result is equal in real
//! arithmetic, and as accurate). So the pass runs at `-O3` with the other
//! rewrites that change float rounding, and alone in `tempo-opt`.
//!
//! Assumes a program accepted by `temporal-verify`; run it after
//! `temporal-vectorize`, which does not batch the op it makes.

use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::program::{
    Attention, BinaryKind, Branch, DYNAMIC, Einsum, Movement, NodeKind, PointType, Program, ReduceKind, UnaryKind,
};
use crate::rewrite::operands;
use crate::rewrite::{compact_branch, live_nodes};
use melior::ir::Location;

/// The `temporal-tile-ranges` pass.
pub struct TemporalTileRanges;

/// The block size when the option is not given.
pub const DEFAULT_BLOCK: i64 = 64;

impl TempoPass for TemporalTileRanges {
    fn name(&self) -> &'static str {
        "temporal-tile-ranges"
    }
    fn summary(&self) -> &'static str {
        "Tile softmax attention over dynamic ranges into static blocks with a running maximum and sum (changes float rounding)"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] = &[
            PassOption::unsigned("block", "Positions of the range per block (default 64)"),
            PassOption::unsigned(
                "memory-budget",
                "Bytes: tile only chains whose range-long temporaries (scores, exponentials, weights) could exceed it at the bounds given (default: tile all)",
            ),
            PassOption::bounds(
                "bounds",
                "Bound values for memory-budget, NAME=VALUE separated by commas (a range over a dimension without one counts as exceeding the budget)",
            ),
        ];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalTileRanges {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        let block = match options.unsigned("block") {
            None => DEFAULT_BLOCK,
            Some(b) if (1..=Attention::MAX_BLOCK as u64).contains(&b) => b as i64,
            Some(b) => {
                return Err(vec![PassDiagnostic::new(
                    at,
                    format!("block must be an integer from 1 to {}, got '{b}'", Attention::MAX_BLOCK),
                )]);
            }
        };
        let budget = match options.unsigned("memory-budget") {
            None => None,
            Some(bytes) => Some(MemoryBudget { bytes, bounds: options.bound_values(program) }),
        };
        Ok(tile_ranges_over_budget(program, block, budget.as_ref()))
    }
}

/// Tile only the chains whose temporaries could take more than `bytes`,
/// at the bound values `bounds` (by dimension).
pub struct MemoryBudget {
    pub bytes: u64,
    pub bounds: Vec<Option<i64>>,
}

/// Rewrites every recognized attention chain; returns whether any was.
pub fn tile_ranges(program: &mut Program, block: i64) -> bool {
    tile_ranges_over_budget(program, block, None)
}

/// Rewrites the recognized attention chains whose temporaries could exceed
/// `budget` (all of them without one); returns whether any was.
pub fn tile_ranges_over_budget(program: &mut Program, block: i64, budget: Option<&MemoryBudget>) -> bool {
    let mut changed = false;
    for t in 0..program.tensors.len() {
        for b in 0..program.tensors[t].branches.len() {
            loop {
                let branch = &program.tensors[t].branches[b];
                let over = |found: &Found| budget.is_none_or(|budget| over_budget(program, branch, found, budget));
                let Some(found) = find_attention(branch, block, &over) else { break };
                apply(&mut program.tensors[t].branches[b], found);
                changed = true;
            }
        }
    }
    changed
}

/// Whether the untiled chain's temporaries as long as the range (scores,
/// exponentials and weights: three buffers of the scores' shape) could
/// take more than the budget: the range at its longest, the bound of its
/// source's ranged dimension (a range stays inside it); unknown bounds
/// count as exceeding.
fn over_budget(program: &Program, branch: &Branch, found: &Found, budget: &MemoryBudget) -> bool {
    let scores = &branch.nodes[found.scores].ty;
    let mut longest: Option<i64> = Some(0);
    for node in &branch.nodes {
        if let NodeKind::ReadRange { source, upper, .. } = &node.kind {
            for (d, upper) in program.tensors[*source].domain.iter().zip(upper) {
                if !upper.results.is_empty() {
                    longest = longest.zip(budget.bounds[*d]).map(|(a, b)| a.max(b));
                }
            }
        }
    }
    let Some(longest) = longest else { return true };
    let elements = scores.shape.iter().map(|&d| if d == DYNAMIC { longest } else { d }).product::<i64>().max(0);
    let bytes = 3u128 * elements as u128 * scores.element.byte_size() as u128;
    bytes > budget.bytes as u128
}

/// A recognized chain: the final contraction, its replacement, and the node
/// that becomes the constant scale of 1 when the chain has no scaling.
struct Found {
    combine: usize,
    /// The scores (the first contraction).
    scores: usize,
    kind: NodeKind,
    unit_scale: Option<usize>,
}

fn find_attention(branch: &Branch, block: i64, wanted: &dyn Fn(&Found) -> bool) -> Option<Found> {
    let nodes = &branch.nodes;
    let mut uses = vec![0usize; nodes.len()];
    for node in nodes {
        for a in operands(&node.kind) {
            uses[a] += 1;
        }
    }
    uses[branch.result] += 1;
    (0..nodes.len()).find_map(|o| match_chain(branch, &uses, o, block).filter(|found| wanted(found)))
}

/// The contraction node `k` as an einsum: itself, or a matmul of ranks
/// `(2, 2)`, `(2, 1)`, `(1, 2)` or of equal ranks with equal batch sizes.
pub(crate) fn contraction(branch: &Branch, k: usize) -> Option<(Einsum, [usize; 2])> {
    let nodes = &branch.nodes;
    match &nodes[k].kind {
        NodeKind::Einsum(spec, list) if list.len() == 2 => Some((spec.clone(), [list[0], list[1]])),
        NodeKind::Matmul(a, b) => {
            let (sa, sb) = (&nodes[*a].ty.shape, &nodes[*b].ty.shape);
            let labels = |text: &str| text.chars().collect::<Vec<char>>();
            let spec = match (sa.len(), sb.len()) {
                (1, 2) => Einsum { operands: vec![labels("k"), labels("kn")], result: labels("n") },
                (2, 1) => Einsum { operands: vec![labels("mk"), labels("k")], result: labels("m") },
                (ra, rb) if ra == rb && ra >= 2 && sa[..ra - 2] == sb[..rb - 2] => {
                    let batch: Vec<char> = ('a'..='z').filter(|c| !"kmn".contains(*c)).take(ra - 2).collect();
                    let with = |tail: &str| batch.iter().copied().chain(tail.chars()).collect::<Vec<char>>();
                    Einsum { operands: vec![with("mk"), with("kn")], result: with("mn") }
                }
                _ => return None,
            };
            Some((spec, [*a, *b]))
        }
        _ => None,
    }
}

/// The chain ending at the contraction `o`, if it is one.
fn match_chain(branch: &Branch, uses: &[usize], o: usize, block: i64) -> Option<Found> {
    let nodes = &branch.nodes;
    let (combine, [x0, x1]) = contraction(branch, o)?;
    // Which operand is the softmax.
    let (p, v, combine) =
        if is_softmax(branch, x0).is_some() { (x0, x1, combine) } else { (x1, x0, swapped(&combine)) };
    let softmax = is_softmax(branch, p)?;
    let (x, axis) = (softmax.input, softmax.axis);
    let Scores { s, scale, score, q, k } = scores(branch, x, axis)?;
    let n = score.result[axis];
    // The combining contraction names the weights' labels as the scores do.
    let combine = relabel_first(&combine, &score.result)?;
    let attention = Attention::new(score, combine, block).ok()?;
    if attention.axis() != axis || nodes[x].ty.shape[axis] != DYNAMIC || !nodes[o].ty.element.is_float() {
        return None;
    }
    // Every label but the attended one static.
    let labelled =
        [(&attention.score.operands[0], q), (&attention.score.operands[1], k), (&attention.combine.operands[1], v)];
    for (labels, node) in labelled {
        let shape = &nodes[node].ty.shape;
        if labels.iter().zip(shape).any(|(&c, &d)| c != n && d == DYNAMIC) {
            return None;
        }
    }
    // No intermediate used outside the chain (uses counted per operand slot).
    let mut inside = vec![(p, 1), (softmax.exp, 2), (softmax.shifted, 1), (softmax.max, 1), (softmax.sum, 1), (x, 2)];
    if let Some(kept) = softmax.max_kept {
        inside.push((kept, 1));
    }
    if let Some(kept) = softmax.sum_kept {
        inside.push((kept, 1));
    }
    if s != x {
        inside.push((s, 1));
    }
    if inside.iter().any(|&(node, count)| uses[node] != count || node == branch.result) {
        return None;
    }
    let element = nodes[o].ty.element;
    if [q, k, v].iter().chain(scale.as_ref()).any(|&a| nodes[a].ty.element != element) {
        return None;
    }
    let (scale, unit_scale) = match scale {
        Some(c) => (c, None),
        None => (s, Some(s)),
    };
    Some(Found { combine: o, scores: s, kind: NodeKind::Attention(attention, [q, k, v, scale]), unit_scale })
}

/// The scores a softmax along `axis` reads: its input `x` is `S * c`,
/// `c * S` or `S`, with `S` a contraction of the same shape and `c` a
/// scalar; the key is the operand holding the attended label, second in
/// `score`.
pub(crate) struct Scores {
    pub s: usize,
    pub scale: Option<usize>,
    pub score: Einsum,
    pub q: usize,
    pub k: usize,
}

pub(crate) fn scores(branch: &Branch, x: usize, axis: usize) -> Option<Scores> {
    let nodes = &branch.nodes;
    let is_contraction = |k: usize| matches!(nodes[k].kind, NodeKind::Einsum(..) | NodeKind::Matmul(..));
    let (s, scale) = match &nodes[x].kind {
        NodeKind::Binary(BinaryKind::Mul, a, b) => {
            let scalar = |k: usize| nodes[k].ty.shape.iter().all(|&d| d == 1);
            if is_contraction(*a) && scalar(*b) {
                (*a, Some(*b))
            } else if is_contraction(*b) && scalar(*a) {
                (*b, Some(*a))
            } else {
                return None;
            }
        }
        _ => (x, None),
    };
    let (score, [a, b]) = contraction(branch, s)?;
    if nodes[s].ty.shape != nodes[x].ty.shape || axis >= score.result.len() {
        return None;
    }
    let n = score.result[axis];
    let (q, k, score) = if score.operands[1].contains(&n) { (a, b, score) } else { (b, a, swapped(&score)) };
    Some(Scores { s, scale, score, q, k })
}

/// `spec` with its two operands exchanged (the products commute).
pub(crate) fn swapped(spec: &Einsum) -> Einsum {
    Einsum { operands: vec![spec.operands[1].clone(), spec.operands[0].clone()], result: spec.result.clone() }
}

/// `spec` with the labels of its first operand renamed to `labels`
/// (position by position) and its other labels kept apart from them.
fn relabel_first(spec: &Einsum, labels: &[char]) -> Option<Einsum> {
    if spec.operands[0].len() != labels.len() {
        return None;
    }
    let mut free = ('a'..='z').chain('A'..='Z').filter(|c| !labels.contains(c));
    let mut map: Vec<(char, char)> = spec.operands[0].iter().copied().zip(labels.iter().copied()).collect();
    for &c in spec.operands[1].iter().chain(&spec.result) {
        if !map.iter().any(|(x, _)| *x == c) {
            map.push((c, free.next()?));
        }
    }
    let rename = |list: &[char]| -> Vec<char> {
        list.iter().map(|c| map.iter().find(|(x, _)| x == c).expect("mapped").1).collect()
    };
    Some(Einsum { operands: vec![rename(&spec.operands[0]), rename(&spec.operands[1])], result: rename(&spec.result) })
}

/// The nodes of `E / R(reduce_sum(E))`, `E = exp(X - R(reduce_max(X)))`,
/// where `R` is a reshape keeping the reduced axis with size 1 (`None`:
/// no reshape, which broadcasts the same way when the axis is the first).
pub(crate) struct Softmax {
    pub input: usize,
    pub axis: usize,
    pub max: usize,
    pub max_kept: Option<usize>,
    pub shifted: usize,
    pub exp: usize,
    pub sum: usize,
    pub sum_kept: Option<usize>,
}

pub(crate) fn is_softmax(branch: &Branch, p: usize) -> Option<Softmax> {
    let nodes = &branch.nodes;
    let NodeKind::Binary(BinaryKind::Div, exp, sum_kept) = nodes[p].kind else { return None };
    let NodeKind::Unary(UnaryKind::Exp, shifted) = nodes[exp].kind else { return None };
    let NodeKind::Binary(BinaryKind::Sub, input, max_kept) = nodes[shifted].kind else { return None };
    // (reduction, its axis, the reshape if any)
    let kept = |node: usize, kind: ReduceKind, of: usize| -> Option<(usize, usize, Option<usize>)> {
        let (reduce, reshape) = match &nodes[node].kind {
            NodeKind::Move(Movement::Reshape, list) => (list[0], Some(node)),
            _ => (node, None),
        };
        let NodeKind::Reduce(found, operand, axis) = nodes[reduce].kind else { return None };
        let mut shape = nodes[of].ty.shape.clone();
        let broadcasts = match reshape {
            Some(r) => {
                shape[axis] = 1;
                nodes[r].ty.shape == shape
            }
            None => axis == 0,
        };
        (found == kind && operand == of && broadcasts).then_some((reduce, axis, reshape))
    };
    let (max, axis, max_kept) = kept(max_kept, ReduceKind::Max, input)?;
    let (sum, sum_axis, sum_kept) = kept(sum_kept, ReduceKind::Sum, exp)?;
    let same_shape = [exp, shifted, p].iter().all(|&a| nodes[a].ty.shape == nodes[input].ty.shape);
    (sum_axis == axis && same_shape).then_some(Softmax { input, axis, max, max_kept, shifted, exp, sum, sum_kept })
}

fn apply(branch: &mut Branch, found: Found) {
    let location = branch.nodes[found.combine].location;
    branch.nodes[found.combine].kind = found.kind;
    if let Some(unit) = found.unit_scale {
        // The scores' node is dead after the rewrite: it becomes the scale.
        let element = branch.nodes[unit].ty.element;
        let text = format!("dense<1.0> : tensor<{}>", element.mlir());
        let integers = crate::program::integers_of(&[1.0], element);
        branch.nodes[unit].kind =
            NodeKind::Constant { text: text.into(), values: [1.0].into(), integers: integers.into() };
        branch.nodes[unit].ty = PointType { shape: Vec::new(), element };
        branch.nodes[unit].location = location;
    }
    let live = live_nodes(branch);
    compact_branch(branch, &live);
}
