//! `temporal-vectorize{bounds=B=8}`: turns a dimension whose points do not
//! depend on each other into a leading spatial dimension. A decode written
//! over `(b, t)` then computes the whole batch at each step as one batched
//! value `[B, ...]` (one matmul of `B` rows instead of `B` matmuls of one),
//! as if the batch had been written in the point shape.
//!
//! A dimension `d` (with a bound value given) is vectorized when, for every
//! computed tensor over `d`:
//! - its branch conditions do not mention `d` (all points of a slice take
//!   the same branch);
//! - every read it makes of a tensor over `d` is at its own `d` (so no
//!   point reads another point of `d`), and no other coordinate, range
//!   bound or slice offset mentions `d`;
//! - its ops are ones with a batched form: elementwise ops, comparisons,
//!   selects, casts, reductions, movements, `matmul`, `einsum`, slices
//!   and external calls marked `batched`, whose function takes the batch
//!   (not seeded random values, whose bits depend on `d`'s coordinate, nor
//!   other external calls or gathers);
//!
//! and when tensors without `d` do not read tensors over `d` (outputs over
//! `d` are read by the caller, which gets them as written).
//!
//! Each such tensor loses `d` from its domain and gains a leading dimension
//! of size `D` in its point; inputs over `d` are read as the range `0:D`
//! along it; every op works on the batched values (a reduction's axis moves
//! by one, a matmul of a batched matrix by a weight is one matmul of
//! `D * M` rows, and so on). An output over `d` keeps its domain: it is
//! copied out of its batched version point by point.
//!
//! Where a dimension does not qualify as a whole because some tensors over
//! it are recurrent along it (`h[t]` reads `h[t-1]`), it is vectorized for
//! the group of the others, the time-parallel ones (`groups`): an RNN's
//! input projection, output layer and loss at every step, computed for all
//! steps as one batched value before or after the loop. Group members may
//! read ranges bounded by their own point (causal attention's `k[0:t+1]`):
//! the source is read whole and masked per point (`masks`), and an einsum
//! of one batched operand by a shared one becomes one batched matrix
//! product (`products`).
//!
//! Exact: every element is computed by the same ops in the same order (a
//! matmul's row does not depend on the other rows). Assumes a program
//! accepted by `temporal-verify`; the bound value must be the one the
//! program runs with (`tempo-run` passes its own).

use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::program::{Branch, DYNAMIC, Einsum, Movement, Node, NodeKind, PointType, Program, matmul_shape};
use melior::ir::Location;

mod groups;
mod masks;
mod products;
pub(crate) use groups::{batchable, cyclic_along, keeps_points_along};

/// The `temporal-vectorize` pass.
pub struct TemporalVectorize;

/// The largest batched point, in bytes: beyond it a dimension stays a loop.
pub const MAX_BATCHED_BYTES: u64 = 64 << 20;

impl TempoPass for TemporalVectorize {
    fn name(&self) -> &'static str {
        "temporal-vectorize"
    }
    fn summary(&self) -> &'static str {
        "Turn a dimension whose points are independent (a batch) into a leading spatial dimension of batched values"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] = &[
            PassOption::bounds(
                "bounds",
                "bound values the program runs with, NAME=VALUE separated by commas (dimensions without one stay loops)",
            ),
            PassOption::flag(
                "groups",
                true,
                "on by default: a dimension that is a loop for recurrent tensors is vectorized for the time-parallel others; false: whole dimensions only",
            ),
            PassOption::flag(
                "inexact",
                false,
                "also batch a range contracted with a second operand carrying it (causal attention's product by the values): exact only where the source's points outside each range are finite (-O3 and --fast-math)",
            ),
        ];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalVectorize {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        _at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        let values = options.bound_values(program);
        Ok(vectorize_with(program, &values, options.flag("groups"), !options.flag("inexact")))
    }
}

/// Vectorizes every dimension that qualifies, and the groups of the
/// others; returns whether any did. Exact (see [`vectorize_with`]).
pub fn vectorize(program: &mut Program, bound_values: &[Option<i64>]) -> bool {
    vectorize_with(program, bound_values, true, true)
}

/// [`vectorize`], groups only where `groups`; with `exact`, no masked
/// range contracted with a second operand carrying it (see
/// [`masks::flow`]).
pub fn vectorize_with(program: &mut Program, bound_values: &[Option<i64>], groups: bool, exact: bool) -> bool {
    let mut changed = false;
    for d in 0..program.dims.len() {
        let Some(size) = bound_values.get(d).copied().flatten() else { continue };
        if size >= 1 && vectorizable(program, d, size) {
            apply(program, d, size);
            changed = true;
        } else if groups && size >= 1 && groups::vectorize_group(program, d, size, exact) {
            changed = true;
        }
    }
    changed
}

/// Whether `node` (of a tensor whose own point along `d` is at position
/// `p` of its domain) reads a range along `d` bounded by that point, which
/// a group batches as the source read whole and masked ([`masks`]).
pub(crate) fn masked_range_read(program: &Program, node: &Node, d: usize, p: usize) -> bool {
    masks::range_of(program, node, d, p).flatten().is_some()
}

/// Whether `e` uses dimension `k`.
pub(crate) fn uses_dim(e: &AffineExpr, k: usize) -> bool {
    match e {
        AffineExpr::Dim(i) => *i == k,
        AffineExpr::Symbol(_) | AffineExpr::Constant(_) => false,
        AffineExpr::Add(a, b)
        | AffineExpr::Mul(a, b)
        | AffineExpr::Mod(a, b)
        | AffineExpr::FloorDiv(a, b)
        | AffineExpr::CeilDiv(a, b) => uses_dim(a, k) || uses_dim(b, k),
    }
}

/// `e` without dim `k` (which it does not use): later dims move down.
fn drop_dim(e: &AffineExpr, k: usize) -> AffineExpr {
    let d = |x: &AffineExpr| Box::new(drop_dim(x, k));
    match e {
        AffineExpr::Dim(i) => AffineExpr::Dim(if *i > k { i - 1 } else { *i }),
        AffineExpr::Symbol(_) | AffineExpr::Constant(_) => e.clone(),
        AffineExpr::Add(a, b) => AffineExpr::Add(d(a), d(b)),
        AffineExpr::Mul(a, b) => AffineExpr::Mul(d(a), d(b)),
        AffineExpr::Mod(a, b) => AffineExpr::Mod(d(a), d(b)),
        AffineExpr::FloorDiv(a, b) => AffineExpr::FloorDiv(d(a), d(b)),
        AffineExpr::CeilDiv(a, b) => AffineExpr::CeilDiv(d(a), d(b)),
    }
}

fn map_drop(map: &AffineMap, k: usize) -> AffineMap {
    AffineMap {
        num_dims: map.num_dims - 1,
        num_symbols: map.num_symbols,
        results: map.results.iter().map(|e| drop_dim(e, k)).collect(),
    }
}

fn is_dim(map: &AffineMap, k: usize) -> bool {
    matches!(map.results.as_slice(), [AffineExpr::Dim(i)] if *i == k)
}

/// Whether dimension `d` (bound value `size`) can be vectorized.
fn vectorizable(program: &Program, d: usize, size: i64) -> bool {
    let over = |t: usize| program.tensors[t].domain.contains(&d);
    let computed: Vec<usize> =
        (0..program.tensors.len()).filter(|&t| over(t) && !program.tensors[t].is_input).collect();
    // A stop's dimensions stay loops (a ragged batch: each of its points
    // stops on its own).
    if computed.is_empty() || program.stops.iter().any(|s| over(s.done)) {
        return false;
    }
    for (t, tensor) in program.tensors.iter().enumerate() {
        if tensor.is_input {
            continue;
        }
        let inside = over(t);
        let position = tensor.domain.iter().position(|&x| x == d);
        let mentions = |maps: &[&AffineMap]| {
            position.is_some_and(|p| maps.iter().any(|m| m.results.iter().any(|e| uses_dim(e, p))))
        };
        if inside {
            let bytes = tensor.point.num_elements() as u64 * tensor.point.element.byte_size() as u64;
            if bytes.saturating_mul(size as u64) > MAX_BATCHED_BYTES {
                return false;
            }
        }
        for branch in &tensor.branches {
            if inside {
                let p = position.expect("inside");
                if branch.when.constraints.iter().any(|c| uses_dim(&c.expr, p)) {
                    return false;
                }
            }
            for node in &branch.nodes {
                match &node.kind {
                    // A read through data may be of any point along `d`.
                    NodeKind::ReadAt { source, .. } if over(*source) => return false,
                    NodeKind::Read { source, index } => {
                        let src = &program.tensors[*source];
                        let along = src.domain.iter().position(|&x| x == d);
                        match (inside, along) {
                            (true, Some(q)) => {
                                let p = position.expect("inside");
                                if !matches!(&index.results[q], AffineExpr::Dim(i) if *i == p) {
                                    return false;
                                }
                                if index.results.iter().enumerate().any(|(i, e)| i != q && uses_dim(e, p)) {
                                    return false;
                                }
                            }
                            (true, None) => {
                                if mentions(&[index]) {
                                    return false;
                                }
                            }
                            // Outside: a point of a batched tensor is not read.
                            (false, Some(_)) if !src.is_input => return false,
                            (false, _) => {}
                        }
                    }
                    NodeKind::ReadRange { source, lower, upper, caps } => {
                        let src = &program.tensors[*source];
                        let along = src.domain.iter().position(|&x| x == d);
                        match (inside, along) {
                            (true, Some(q)) => {
                                let p = position.expect("inside");
                                if !is_dim(&lower[q], p) || !upper[q].results.is_empty() || !caps[q].results.is_empty()
                                {
                                    return false;
                                }
                                let others: Vec<&AffineMap> = (0..lower.len())
                                    .filter(|&i| i != q)
                                    .flat_map(|i| [&lower[i], &upper[i], &caps[i]])
                                    .collect();
                                if mentions(&others) {
                                    return false;
                                }
                            }
                            (true, None) => {
                                let all: Vec<&AffineMap> = lower.iter().chain(upper).chain(caps).collect();
                                if mentions(&all) {
                                    return false;
                                }
                            }
                            // Outside: batched points are not read (their
                            // values would change type under the reader).
                            (false, Some(_)) if !src.is_input => return false,
                            (false, _) => {}
                        }
                    }
                    NodeKind::DynamicSlice(_, offsets) if inside && mentions(&[offsets]) => return false,
                    // Attention is made after vectorization (`temporal-tile-ranges`
                    // runs later in the pipeline); it is not batched here.
                    // Collectives run once per point, like calls; a call
                    // marked batched takes the whole batch (its function
                    // computes each row as the point alone).
                    NodeKind::Random { .. }
                    | NodeKind::Call { batched: false, .. }
                    | NodeKind::AllReduce(..)
                    | NodeKind::ReadAt { .. }
                    | NodeKind::Gather(..)
                    | NodeKind::Attention(..)
                    | NodeKind::FlashAttention(..)
                    | NodeKind::Position(_)
                    | NodeKind::Bound(_)
                    | NodeKind::Rank
                    | NodeKind::WorldSize
                        if inside =>
                    {
                        return false;
                    }
                    NodeKind::Matmul(a, b) if inside => {
                        // Batched forms exist for these ranks.
                        let ranks = (branch.nodes[*a].ty.shape.len(), branch.nodes[*b].ty.shape.len());
                        if !matches!(ranks, (2, 2) | (1, 2) | (2, 1)) {
                            return false;
                        }
                    }
                    NodeKind::Move(Movement::Arange, _) => {}
                    _ => {}
                }
            }
        }
    }
    true
}

/// Builds the batched body of one branch.
struct Batcher<'a, 'c> {
    nodes: Vec<Node<'c>>,
    /// Whether each new node carries the leading batch dimension.
    batched: Vec<bool>,
    size: i64,
    program: &'a Program<'c>,
    /// How the branch's values carry a masked range read along the
    /// dimension ([`masks`]), where it has one.
    flow: Option<masks::Flow>,
    /// The domain of the tensor being batched (before the dimension left it).
    domain: Vec<usize>,
}

impl<'c> Batcher<'_, 'c> {
    fn push(&mut self, kind: NodeKind, ty: PointType, batched: bool, location: melior::ir::Location<'c>) -> usize {
        self.nodes.push(Node { kind, ty, location });
        self.batched.push(batched);
        self.nodes.len() - 1
    }

    fn batched_type(&self, ty: &PointType) -> PointType {
        PointType { shape: std::iter::once(self.size).chain(ty.shape.iter().copied()).collect(), element: ty.element }
    }

    /// Node `a` (batched) with `extra` size-1 dimensions after the batch
    /// dimension, so that it aligns with operands of higher rank.
    fn padded(&mut self, a: usize, rank: usize, location: melior::ir::Location<'c>) -> usize {
        if !self.batched[a] {
            return a;
        }
        let own = self.nodes[a].ty.shape.len() - 1;
        if own >= rank {
            return a;
        }
        let mut shape = vec![self.size];
        shape.extend(std::iter::repeat_n(1, rank - own));
        shape.extend(self.nodes[a].ty.shape[1..].iter().copied());
        let ty = PointType { shape, element: self.nodes[a].ty.element };
        self.push(NodeKind::Move(Movement::Reshape, vec![a]), ty, true, location)
    }

    /// A batched copy of an unbatched node `a` (expanded along the batch).
    fn expanded(&mut self, a: usize, location: melior::ir::Location<'c>) -> usize {
        if self.batched[a] {
            return a;
        }
        let ty = self.batched_type(&self.nodes[a].ty.clone());
        self.push(NodeKind::Move(Movement::Expand, vec![a]), ty, true, location)
    }

    /// Node `from` with its axis `axis` moved to the front (a permutation;
    /// `from` itself when the axis already leads).
    fn moved_to_front(&mut self, from: usize, axis: usize, location: melior::ir::Location<'c>) -> usize {
        if axis == 0 {
            return from;
        }
        let rank = self.nodes[from].ty.shape.len();
        let mut permutation: Vec<usize> = vec![axis];
        permutation.extend((0..rank).filter(|&k| k != axis));
        let shape: Vec<i64> = permutation.iter().map(|&k| self.nodes[from].ty.shape[k]).collect();
        let ty = PointType { shape, element: self.nodes[from].ty.element };
        self.push(NodeKind::Move(Movement::Permute(permutation), vec![from]), ty, true, location)
    }

    /// A range read whose value (of type `ty` without the batch) holds the
    /// batch at axis `axis`, then that axis moved to the front.
    fn batched_range(
        &mut self,
        read: NodeKind,
        ty: &PointType,
        axis: usize,
        location: melior::ir::Location<'c>,
    ) -> usize {
        let mut shape = ty.shape.clone();
        shape.insert(axis, self.size);
        let read = self.push(read, PointType { shape, element: ty.element }, true, location);
        self.moved_to_front(read, axis, location)
    }

    /// The batched form of node `node` of the original branch of a tensor
    /// over the batch (`new` maps old node indices to new ones).
    fn node(&mut self, node: &Node<'c>, new: &[usize], d: usize, position: usize, vectorized: &[bool]) -> usize {
        match self.flow.take() {
            Some(flow) => {
                let k = self.masked_node(&flow, node, new, d, position, vectorized);
                self.flow = Some(flow);
                k
            }
            None => self.plain_node(node, new, d, position, vectorized),
        }
    }

    /// [`Batcher::node`] of a node no masked range reaches (or whose masks
    /// [`Batcher::masked_node`] has applied).
    fn plain_node(&mut self, node: &Node<'c>, new: &[usize], d: usize, position: usize, vectorized: &[bool]) -> usize {
        let location = node.location;
        let ty = node.ty.clone();
        let b = |this: &Self, k: usize| this.batched[new[k]];
        match &node.kind {
            NodeKind::Read { source, index } => self.read_node(*source, index, &ty, d, position, vectorized, location),
            NodeKind::ReadRange { source, lower, upper, caps } => {
                self.range_node(*source, [lower, upper, caps], &ty, d, position, vectorized, location)
            }
            NodeKind::Constant { .. } | NodeKind::Move(Movement::Arange, _) => {
                self.push(node.kind.clone(), ty, false, location)
            }
            NodeKind::Unary(kind, a) => self.same(NodeKind::Unary(*kind, new[*a]), &ty, b(self, *a), location),
            NodeKind::Cast(a) => self.same(NodeKind::Cast(new[*a]), &ty, b(self, *a), location),
            NodeKind::Reduce(kind, a, axis) => {
                if b(self, *a) {
                    self.same(NodeKind::Reduce(*kind, new[*a], axis + 1), &ty, true, location)
                } else {
                    self.push(NodeKind::Reduce(*kind, new[*a], *axis), ty, false, location)
                }
            }
            NodeKind::Binary(kind, x, y) => {
                let x = self.aligned(&[new[*x], new[*y]], ty.shape.len(), location);
                let any = x.iter().any(|&k| self.batched[k]);
                self.same(NodeKind::Binary(*kind, x[0], x[1]), &ty, any, location)
            }
            NodeKind::Compare(p, x, y) => {
                let x = self.aligned(&[new[*x], new[*y]], ty.shape.len(), location);
                let any = x.iter().any(|&k| self.batched[k]);
                self.same(NodeKind::Compare(*p, x[0], x[1]), &ty, any, location)
            }
            NodeKind::Select(c, x, y) => {
                let x = self.aligned(&[new[*c], new[*x], new[*y]], ty.shape.len(), location);
                let any = x.iter().any(|&k| self.batched[k]);
                self.same(NodeKind::Select(x[0], x[1], x[2]), &ty, any, location)
            }
            NodeKind::Move(movement, operands) => self.movement(movement, operands, new, &ty, location),
            NodeKind::DynamicSlice(a, offsets) => {
                let offsets = map_drop(offsets, position);
                if b(self, *a) {
                    let mut offsets = offsets;
                    offsets.results.insert(0, AffineExpr::Constant(0));
                    self.same(NodeKind::DynamicSlice(new[*a], offsets), &ty, true, location)
                } else {
                    self.push(NodeKind::DynamicSlice(new[*a], offsets), ty, false, location)
                }
            }
            NodeKind::Einsum(spec, operands) => self.einsum_node(spec, operands, new, &ty, location),
            NodeKind::Matmul(x, y) => self.matmul(new[*x], new[*y], &ty, location),
            // Only in batches of data groups ([`batched_branch`]): the
            // lowering gathers the points and positions of the batch.
            NodeKind::ReadAt { source, index, data } => {
                let data = data.iter().map(|&a| new[a]).collect();
                let kind = NodeKind::ReadAt { source: *source, index: index.clone(), data };
                self.same(kind, &ty, true, location)
            }
            NodeKind::Position(p) if *p == d => self.same(NodeKind::Position(d), &ty, true, location),
            NodeKind::Bound(_) | NodeKind::Rank | NodeKind::WorldSize => {
                self.push(node.kind.clone(), ty, false, location)
            }
            // Rows of a shared table at batched indices (groups check that
            // the table does not vary).
            NodeKind::Gather(table, indices) if !b(self, *table) => {
                self.same(NodeKind::Gather(new[*table], new[*indices]), &ty, b(self, *indices), location)
            }
            // One call for the batch: every argument batched (a shared one
            // repeated for each point), the result batched.
            NodeKind::Call { callee, site, args, batched: true } => {
                let args = args.iter().map(|&a| self.expanded(new[a], location)).collect();
                let kind = NodeKind::Call { callee: callee.clone(), site: *site, args, batched: true };
                self.same(kind, &ty, true, location)
            }
            NodeKind::Random { .. }
            | NodeKind::Call { .. }
            | NodeKind::AllReduce(..)
            | NodeKind::Gather(..)
            | NodeKind::Attention(..)
            | NodeKind::FlashAttention(..)
            | NodeKind::Position(_) => {
                unreachable!("refused by vectorizable")
            }
        }
    }

    /// [`Batcher::plain_node`] of a read of `source` at `index`.
    #[allow(clippy::too_many_arguments)]
    fn read_node(
        &mut self,
        source: usize,
        index: &AffineMap,
        ty: &PointType,
        d: usize,
        position: usize,
        vectorized: &[bool],
        location: melior::ir::Location<'c>,
    ) -> usize {
        let src = &self.program.tensors[source];
        let index = map_drop(index, position);
        match src.domain.iter().position(|&x| x == d) {
            Some(q) if vectorized[source] => {
                let mut index = index;
                index.results.remove(q);
                let ty = self.batched_type(ty);
                self.push(NodeKind::Read { source, index }, ty, true, location)
            }
            Some(q) => {
                // An input over the batch: the whole range along it.
                let n = index.num_dims;
                let symbols = index.num_symbols;
                let empty = AffineMap { num_dims: n, num_symbols: symbols, results: vec![] };
                let single = |e: AffineExpr| AffineMap { num_dims: n, num_symbols: symbols, results: vec![e] };
                let lower: Vec<AffineMap> = index
                    .results
                    .iter()
                    .enumerate()
                    .map(|(i, e)| single(if i == q { AffineExpr::Constant(0) } else { e.clone() }))
                    .collect();
                let upper: Vec<AffineMap> = (0..index.results.len())
                    .map(|i| if i == q { single(AffineExpr::Symbol(d)) } else { empty.clone() })
                    .collect();
                let caps = vec![empty; index.results.len()];
                let ty = self.batched_type(ty);
                self.push(NodeKind::ReadRange { source, lower, upper, caps }, ty, true, location)
            }
            None => self.push(NodeKind::Read { source, index }, ty.clone(), false, location),
        }
    }

    /// [`Batcher::plain_node`] of a range read of `source` (its lower and
    /// upper bounds and caps).
    #[allow(clippy::too_many_arguments)]
    fn range_node(
        &mut self,
        source: usize,
        maps: [&[AffineMap]; 3],
        ty: &PointType,
        d: usize,
        position: usize,
        vectorized: &[bool],
        location: melior::ir::Location<'c>,
    ) -> usize {
        let src = &self.program.tensors[source];
        let [lower, upper, caps] = maps;
        let (mut lower, mut upper, mut caps): (Vec<AffineMap>, Vec<AffineMap>, Vec<AffineMap>) = (
            lower.iter().map(|m| map_drop(m, position)).collect(),
            upper.iter().map(|m| map_drop(m, position)).collect(),
            caps.iter().map(|m| map_drop(m, position)).collect(),
        );
        let ranged_before = |q: usize, upper: &[AffineMap]| upper[..q].iter().filter(|m| !m.results.is_empty()).count();
        match src.domain.iter().position(|&x| x == d) {
            Some(q) if vectorized[source] => {
                // The batch now leads the point, after the ranged
                // dimensions of the value.
                let ranged = upper.iter().filter(|m| !m.results.is_empty()).count();
                lower.remove(q);
                upper.remove(q);
                caps.remove(q);
                let read = NodeKind::ReadRange { source, lower, upper, caps };
                self.batched_range(read, ty, ranged, location)
            }
            Some(q) => {
                let before = ranged_before(q, &upper);
                let n = lower[q].num_dims;
                let symbols = lower[q].num_symbols;
                lower[q] = AffineMap { num_dims: n, num_symbols: symbols, results: vec![AffineExpr::Constant(0)] };
                upper[q] = AffineMap { num_dims: n, num_symbols: symbols, results: vec![AffineExpr::Symbol(d)] };
                let read = NodeKind::ReadRange { source, lower, upper, caps };
                self.batched_range(read, ty, before, location)
            }
            None => self.push(NodeKind::ReadRange { source, lower, upper, caps }, ty.clone(), false, location),
        }
    }

    /// [`Batcher::plain_node`] of an einsum: a product where it is one
    /// ([`Batcher::einsum_as_product`]), else a label for the batch on
    /// every batched operand and the result.
    fn einsum_node(
        &mut self,
        spec: &Einsum,
        operands: &[usize],
        new: &[usize],
        ty: &PointType,
        location: melior::ir::Location<'c>,
    ) -> usize {
        let news: Vec<usize> = operands.iter().map(|&o| new[o]).collect();
        if let Some(k) = self.einsum_as_product(spec, &news, location) {
            return k;
        }
        // A label for the batch, on every batched operand and the result.
        let label = ('a'..='z')
            .chain('A'..='Z')
            .find(|c| !spec.operands.iter().flatten().any(|x| x == c) && !spec.result.contains(c))
            .expect("an einsum has at most 52 labels... and fewer here");
        let mut labels = spec.operands.clone();
        let mut any = false;
        for (k, &o) in operands.iter().enumerate() {
            if self.batched[new[o]] {
                labels[k].insert(0, label);
                any = true;
            }
        }
        let mut result = spec.result.clone();
        if any {
            result.insert(0, label);
        }
        let spec = Einsum { operands: labels, result };
        let operands = operands.iter().map(|&o| new[o]).collect();
        self.same(NodeKind::Einsum(spec, operands), ty, any, location)
    }

    /// Pushes `kind` with `ty`, batched when `batched`.
    fn same(&mut self, kind: NodeKind, ty: &PointType, batched: bool, location: melior::ir::Location<'c>) -> usize {
        let ty = if batched { self.batched_type(ty) } else { ty.clone() };
        self.push(kind, ty, batched, location)
    }

    /// Operands of an elementwise op of result rank `rank`, the batched
    /// ones padded to align with the others under broadcasting.
    fn aligned(&mut self, operands: &[usize], rank: usize, location: melior::ir::Location<'c>) -> Vec<usize> {
        operands.iter().map(|&a| self.padded(a, rank, location)).collect()
    }

    fn movement(
        &mut self,
        movement: &Movement,
        operands: &[usize],
        new: &[usize],
        ty: &PointType,
        location: melior::ir::Location<'c>,
    ) -> usize {
        let ops: Vec<usize> = operands.iter().map(|&o| new[o]).collect();
        let any = ops.iter().any(|&o| self.batched[o]);
        if !any {
            return self.push(NodeKind::Move(movement.clone(), ops), ty.clone(), false, location);
        }
        let kind = match movement {
            Movement::Permute(p) => Movement::Permute(std::iter::once(0).chain(p.iter().map(|&k| k + 1)).collect()),
            Movement::Flip(axis) => Movement::Flip(axis + 1),
            Movement::Slice(offsets) => Movement::Slice(std::iter::once(0).chain(offsets.iter().copied()).collect()),
            Movement::Reshape => Movement::Reshape,
            Movement::Expand => {
                let a = self.padded(ops[0], ty.shape.len(), location);
                return self.same(NodeKind::Move(Movement::Expand, vec![a]), ty, true, location);
            }
            Movement::Concat(axis) => {
                let both: Vec<usize> = ops.iter().map(|&o| self.expanded(o, location)).collect();
                return self.same(NodeKind::Move(Movement::Concat(axis + 1), both), ty, true, location);
            }
            Movement::Arange => unreachable!("arange has no operands"),
        };
        self.same(NodeKind::Move(kind, ops), ty, true, location)
    }

    /// Batched matmul of ranks `(2, 2)`, `(1, 2)` and `(2, 1)`.
    fn matmul(&mut self, x: usize, y: usize, ty: &PointType, location: melior::ir::Location<'c>) -> usize {
        let (bx, by) = (self.batched[x], self.batched[y]);
        let element = ty.element;
        let n = self.size;
        let shape = |this: &Self, k: usize| this.nodes[k].ty.shape.clone();
        let reshape = |this: &mut Self, a: usize, to: Vec<i64>| {
            let batched = this.batched[a];
            this.push(NodeKind::Move(Movement::Reshape, vec![a]), PointType { shape: to, element }, batched, location)
        };
        match (bx, by) {
            (false, false) => self.push(NodeKind::Matmul(x, y), ty.clone(), false, location),
            // Batched rows by a shared matrix: one matmul of n*m rows.
            (true, false) if shape(self, x).len() == 3 => {
                let (m, k) = (shape(self, x)[1], shape(self, x)[2]);
                let nm = if n == DYNAMIC { DYNAMIC } else { n * m };
                let rows = reshape(self, x, vec![nm, k]);
                let out_shape = matmul_shape(&[nm, k], &shape(self, y)).expect("verified");
                let product =
                    self.push(NodeKind::Matmul(rows, y), PointType { shape: out_shape, element }, true, location);
                let to = self.batched_type(ty).shape;
                reshape(self, product, to)
            }
            // Batched vectors by a shared matrix: a matmul of n rows.
            (true, false) => self.same(NodeKind::Matmul(x, y), ty, true, location),
            // A shared matrix by batched operands: a batched matmul (a
            // vector `[n, k]` becomes `[n, k, 1]`).
            (false, true) | (true, true) => {
                let vector = shape(self, y).len() == 2;
                let y3 = if vector {
                    let s = shape(self, y);
                    reshape(self, y, vec![s[0], s[1], 1])
                } else {
                    y
                };
                let x_ready = match (bx, shape(self, x).len()) {
                    (true, 2) => {
                        let s = shape(self, x);
                        reshape(self, x, vec![s[0], 1, s[1]])
                    }
                    (false, 1) => {
                        let s = shape(self, x);
                        reshape(self, x, vec![1, s[0]])
                    }
                    _ => x,
                };
                let out_shape = matmul_shape(&shape(self, x_ready), &shape(self, y3)).expect("verified");
                let product =
                    self.push(NodeKind::Matmul(x_ready, y3), PointType { shape: out_shape, element }, true, location);
                let to = self.batched_type(ty).shape;
                reshape(self, product, to)
            }
        }
    }
}

/// Branch `k` of tensor `t` of a data group over dimension `d` (its only
/// one), computed for a batch of points of `d` at once: every value that
/// varies with the point gets a leading dimension of dynamic size (the
/// batch), as `temporal-vectorize` batches a dimension. The lowering
/// gives the batch's values to the nodes that vary: a read of a tensor
/// over `d` at the point itself (`x[n]`) or through data (`s[left[n]]`)
/// gathers the batch's points, a position is the batch's positions.
///
/// `None` when the branch has an op without a batched form here (range
/// reads, dynamic slices, random values, calls, gathers, attention,
/// matmuls of other ranks), reads a tensor over `d` elsewhere than at the
/// point or through data of the group (`members`), or reads through data
/// a tensor outside the group (whose coordinates are not checked before).
pub fn batched_branch<'c>(
    program: &Program<'c>,
    t: usize,
    k: usize,
    d: usize,
    members: &[usize],
) -> Option<Branch<'c>> {
    let tensor = &program.tensors[t];
    if tensor.domain != [d] {
        return None;
    }
    let branch = &tensor.branches[k];
    for node in &branch.nodes {
        let ok = match &node.kind {
            NodeKind::Read { source, index } => {
                let src = &program.tensors[*source];
                if src.domain.contains(&d) {
                    src.domain == [d] && matches!(index.results[..], [AffineExpr::Dim(0)])
                } else {
                    !index.results.iter().any(|e| uses_dim(e, 0))
                }
            }
            NodeKind::ReadAt { source, index, data } => {
                members.contains(source) && matches!(index.results[..], [AffineExpr::Dim(1)]) && data.len() == 1
            }
            NodeKind::Matmul(a, b) => {
                let ranks = (branch.nodes[*a].ty.shape.len(), branch.nodes[*b].ty.shape.len());
                matches!(ranks, (2, 2) | (1, 2) | (2, 1))
            }
            NodeKind::ReadRange { .. }
            | NodeKind::DynamicSlice(..)
            | NodeKind::Random { .. }
            | NodeKind::Call { .. }
            | NodeKind::AllReduce(..)
            | NodeKind::Gather(..)
            | NodeKind::Attention(..)
            | NodeKind::FlashAttention(..) => false,
            NodeKind::Position(p) => *p == d,
            _ => true,
        };
        if !ok {
            return None;
        }
    }
    let vectorized = vec![true; program.tensors.len()];
    let mut batcher =
        Batcher { nodes: Vec::new(), batched: Vec::new(), size: DYNAMIC, program, flow: None, domain: vec![d] };
    let mut new = Vec::with_capacity(branch.nodes.len());
    for node in &branch.nodes {
        let k = batcher.node(node, &new, d, 0, &vectorized);
        new.push(k);
    }
    let result = batcher.expanded(new[branch.result], branch.location);
    let when = IntegerSet { num_dims: 0, num_symbols: branch.when.num_symbols, constraints: Vec::new() };
    Some(Branch { when, nodes: batcher.nodes, result, location: branch.location })
}

/// Vectorizes dimension `d` of size `size` (checked by [`vectorizable`]).
fn apply(program: &mut Program, d: usize, size: i64) {
    let over: Vec<bool> = program.tensors.iter().map(|t| t.domain.contains(&d) && !t.is_input).collect();
    // Outputs over d keep their domain: the batched tensor is a new one and
    // the output copies out of it.
    let (batched_of, outputs, vectorized) = batched_versions(program, &over);
    let snapshot = program.clone();
    for t in 0..program.tensors.len() {
        if vectorized[t] {
            batch_tensor(program, &snapshot, t, d, size, &vectorized);
        }
    }
    // Each output over d: its point is its slice of the batched point.
    for &o in &outputs {
        let tensor = &program.tensors[o];
        let position = tensor.domain.iter().position(|&x| x == d).expect("over d");
        let n = tensor.domain.len();
        let symbols = program.dims.len();
        let location = tensor.location;
        let point = tensor.point.clone();
        let index = AffineMap {
            num_dims: n,
            num_symbols: symbols,
            results: (0..n).filter(|&i| i != position).map(AffineExpr::Dim).collect(),
        };
        let batched_ty = PointType {
            shape: std::iter::once(size).chain(point.shape.iter().copied()).collect(),
            element: point.element,
        };
        let mut offsets = vec![AffineExpr::Dim(position)];
        offsets.extend(point.shape.iter().map(|_| AffineExpr::Constant(0)));
        let one = PointType {
            shape: std::iter::once(1).chain(point.shape.iter().copied()).collect(),
            element: point.element,
        };
        let node = |kind: NodeKind, ty: PointType| Node { kind, ty, location };
        let nodes = vec![
            node(NodeKind::Read { source: batched_of[o], index }, batched_ty),
            node(NodeKind::DynamicSlice(0, AffineMap { num_dims: n, num_symbols: symbols, results: offsets }), one),
            node(NodeKind::Move(Movement::Reshape, vec![1]), point.clone()),
        ];
        program.tensors[o].branches = vec![Branch {
            when: IntegerSet { num_dims: n, num_symbols: symbols, constraints: vec![] },
            nodes,
            result: 2,
            location,
        }];
    }
}

/// Tensor `t` of `snapshot` batched along `d` (bound value `size`) into
/// `program`: `d` leaves its domain, its point gains a leading dimension of
/// `size`, each branch is rebuilt by the [`Batcher`] (reads of
/// `vectorized` tensors read their batched points).
fn batch_tensor<'c>(
    program: &mut Program<'c>,
    snapshot: &Program<'c>,
    t: usize,
    d: usize,
    size: i64,
    vectorized: &[bool],
) {
    let tensor = &snapshot.tensors[t];
    let position = tensor.domain.iter().position(|&x| x == d).expect("over d");
    let mut branches = Vec::new();
    for branch in &tensor.branches {
        let flow = masks::branch_flow(snapshot, t, branch, d, size);
        let mut batcher = Batcher {
            nodes: Vec::new(),
            batched: Vec::new(),
            size,
            program: snapshot,
            flow,
            domain: tensor.domain.clone(),
        };
        let mut new = Vec::with_capacity(branch.nodes.len());
        for node in &branch.nodes {
            let k = batcher.node(node, &new, d, position, vectorized);
            new.push(k);
        }
        let result = batcher.expanded(new[branch.result], branch.location);
        let when = IntegerSet {
            num_dims: branch.when.num_dims - 1,
            num_symbols: branch.when.num_symbols,
            // (Conditions on the batched position hold at every point:
            // the group checks it.)
            constraints: branch
                .when
                .constraints
                .iter()
                .filter(|c| !uses_dim(&c.expr, position))
                .map(|c| Constraint { expr: drop_dim(&c.expr, position), is_equality: c.is_equality })
                .collect(),
        };
        branches.push(Branch { when, nodes: batcher.nodes, result, location: branch.location });
    }
    let target = &mut program.tensors[t];
    target.domain.remove(position);
    target.point = PointType {
        shape: std::iter::once(size).chain(tensor.point.shape.iter().copied()).collect(),
        element: tensor.point.element,
    };
    target.branches = branches;
}

/// Prepares the batching of the tensors marked in `members` (computed
/// tensors over the dimension): each output among them gets a copy named
/// `NAME_batched` that is batched instead (the output keeps its domain and
/// reads its rows), and every read of a member, but the outputs' own
/// (their branches are replaced), goes to its batched version. Returns per
/// tensor its batched version, the outputs among the members, and per
/// tensor (copies included) whether it is batched.
fn batched_versions(program: &mut Program, members: &[bool]) -> (Vec<usize>, Vec<usize>, Vec<bool>) {
    let count = program.tensors.len();
    let mut batched_of: Vec<usize> = (0..count).collect();
    let outputs: Vec<usize> = program.outputs.iter().copied().filter(|&t| members[t]).collect();
    for &o in &outputs {
        let mut copy = program.tensors[o].clone();
        copy.name = format!("{}_batched", copy.name);
        while program.tensors.iter().any(|t| t.name == copy.name) {
            copy.name += "_";
        }
        program.tensors.push(copy);
        batched_of[o] = program.tensors.len() - 1;
    }
    let mut vectorized = vec![false; program.tensors.len()];
    for t in 0..count {
        if members[t] {
            vectorized[batched_of[t]] = true;
        }
    }
    for (t, tensor) in program.tensors.iter_mut().enumerate() {
        if t < count && outputs.contains(&t) {
            continue;
        }
        for node in tensor.branches.iter_mut().flat_map(|b| &mut b.nodes) {
            if let Some(source) = crate::rewrite::source_mut(&mut node.kind) {
                *source = batched_of[*source];
            }
        }
    }
    (batched_of, outputs, vectorized)
}
