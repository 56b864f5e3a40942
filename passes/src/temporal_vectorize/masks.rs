//! Vectorization through range reads: a tensor of the group that reads a
//! range along the vectorized dimension `d` whose bounds depend on its own
//! point (a prefix `k[0:t+1]`, a window `k[max(0, t-w+1):t+1]`, a suffix
//! `f[t:T]`) is batched by reading the source whole (`k[0:T]`, one value
//! shared by every point) and masking: the range's axis holds all `D`
//! points, and the points outside `[lower(t), upper(t))` are set to the
//! identity of whatever combines them, where they are combined.
//!
//! The mask rides along the values that carry the range's axis
//! (elementwise ops, casts, comparisons, selects, permutations, a
//! reshape that keeps the axis leading, reductions and einsum labels along
//! other axes) and is applied where the axis is combined away: a sum or a
//! maximum along it (the points outside become `0` or `-inf`), an einsum
//! that contracts its label (one operand carrying it, a batched one where
//! there is one, is zeroed outside). Causal attention over `k[0:t+1]`
//! becomes one product of all queries by all keys, masked to the lower
//! triangle before its softmax's sums and its product with the values.
//!
//! Exact where the values outside the range are finite (they are real
//! points of the source, computed anyway): each kept element is computed
//! by the same ops in the same order, the masked ones add `0` (a sum, or
//! a contraction that multiplies by the zeroed operand) or take the
//! maximum with `-inf`. Anything else on a value carrying the axis (a
//! mean, a running sum, a slice, a matmul, a second range along another
//! axis or of other bounds) leaves the tensor to its loop.

use crate::affine::{AffineExpr, AffineMap};
use crate::program::{
    Band, BinaryKind, Branch, DYNAMIC, Einsum, ElementType, FlashPart, Movement, Node, NodeKind, PointType, Predicate,
    Program, ReduceKind,
};

use super::{MAX_BATCHED_BYTES, uses_dim};

/// The most bytes the batched values carrying a masked range may take in
/// one branch at once (each `[D, ..., D, ...]`, live from its node to its
/// last reader: the lowering's scratch buffers are reused after their last
/// use): past it the tensor keeps its loop. A GPT block's attention
/// backward at 64 rows of heads holds about 40 such values, 1 MiB each at
/// `T = 64`, 16 MiB at `T = 256`; when each had a buffer of its own for
/// the whole run, the step at `T = 256` took 1.4 GiB of resident memory.
pub(super) const MAX_MASKED_BRANCH_BYTES: u64 = 4 * MAX_BATCHED_BYTES;

/// The most bytes one batched value carrying a masked range may take
/// (`[D, ..., D, ...]`): past it the tensor keeps its loop. Measured on the
/// GPT training step (64 rows of heads): at `T = 128` (4 MiB values) 4.1x
/// faster than the loop; at `T = 256` (16 MiB values) 2.6x faster but 1.4
/// GiB resident when every value had a buffer of its own for the whole
/// run; with the lowering's scratch buffers reused after their last use,
/// 5x faster than the loop (393 against about 2,000 ms per iteration) in
/// 450 MiB (PyTorch's process: 921). 32 MiB: `T` up to 362 at 64 rows.
pub(super) const MAX_MASKED_VALUE_BYTES: u64 = 32 << 20;

/// The bounds of a masked range, in the reader's domain (dimension
/// positions) and bounds (symbols): points `[max(lower), min(upper))`.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct RangeMask {
    pub lower: Vec<AffineExpr>,
    pub upper: Vec<AffineExpr>,
}

/// How a branch's values carry a masked range: per node, the axis of its
/// (unbatched) value that is the range's (`None`: no such axis), and the
/// mask (`None`: the branch has no masked range read).
#[derive(Clone, Debug)]
pub(super) struct Flow {
    pub mask: Option<RangeMask>,
    pub axis: Vec<Option<usize>>,
}

/// Whether `e` can be computed from positions, bounds and constants by the
/// ops the mask is built with.
fn computable(e: &AffineExpr) -> bool {
    match e {
        AffineExpr::Dim(_) | AffineExpr::Symbol(_) | AffineExpr::Constant(_) => true,
        AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => computable(a) && computable(b),
        AffineExpr::Mod(..) | AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) => false,
    }
}

/// The mask of a range read of a tensor over `d` (its dimension `q`) by a
/// reader whose own point along `d` is at position `p`, where the read
/// batches by masking: the range along `d` is the only ranged dimension
/// and depends on `p`, its bounds are computable, nothing else mentions
/// `p`.
pub(super) fn masked_range(
    lower: &[AffineMap],
    upper: &[AffineMap],
    caps: &[AffineMap],
    q: usize,
    p: usize,
) -> Option<RangeMask> {
    let ranged = upper.iter().filter(|m| !m.results.is_empty()).count();
    if upper[q].results.is_empty() || ranged != 1 || !caps[q].results.is_empty() {
        return None;
    }
    let bounds = lower[q].results.iter().chain(&upper[q].results);
    if !bounds.clone().any(|e| uses_dim(e, p)) || !bounds.clone().all(computable) {
        return None;
    }
    let others = (0..lower.len()).filter(|&i| i != q).flat_map(|i| [&lower[i], &upper[i], &caps[i]]);
    if others.flat_map(|m| &m.results).any(|e| uses_dim(e, p)) {
        return None;
    }
    Some(RangeMask { lower: lower[q].results.clone(), upper: upper[q].results.clone() })
}

/// The flow of a masked range through `nodes` (see [`Flow`]); `None` when
/// some op cannot carry or apply it, two ranges of other bounds meet, a
/// dynamic size does not come from the range, or a masked value batched
/// along `D` would exceed [`MAX_MASKED_VALUE_BYTES`] (all of them
/// together [`MAX_MASKED_BRANCH_BYTES`]). `range_of(k)` says whether
/// node `k` is a range read along `d` and its mask (`Some(None)`: a range
/// read along `d` that is not masked, which the caller handles).
pub(super) fn flow(
    nodes: &[Node],
    result: usize,
    size: i64,
    range_of: impl Fn(usize) -> Option<Option<RangeMask>>,
    exact: bool,
) -> Option<Flow> {
    let mut mask: Option<RangeMask> = None;
    let mut axis: Vec<Option<usize>> = Vec::with_capacity(nodes.len());
    // Whether a value carrying the range is the range read itself (or a
    // view of it): one value shared by every point, not batched.
    let mut shared: Vec<bool> = Vec::with_capacity(nodes.len());
    // The masked values live at once: each from its node to its last
    // reader (the lowering gives a value's buffer back after its last use
    // and reuses it), so the peak, not the sum, bounds the memory.
    let mut last_use: Vec<usize> = (0..nodes.len()).collect();
    for (k, node) in nodes.iter().enumerate() {
        for o in crate::rewrite::operands(&node.kind) {
            last_use[o] = last_use[o].max(k);
        }
    }
    last_use[result] = nodes.len();
    let mut freed_after: Vec<u64> = vec![0; nodes.len() + 1];
    let mut live: u64 = 0;
    for (k, node) in nodes.iter().enumerate() {
        if k > 0 {
            live -= freed_after[k - 1];
        }
        shared.push(match &node.kind {
            NodeKind::ReadRange { .. } => true,
            NodeKind::Move(Movement::Permute(_) | Movement::Reshape, operands) => shared[operands[0]],
            _ => false,
        });
        let rank = node.ty.shape.len();
        // An operand's axis in a broadcast result of rank `rank`.
        let aligned = |o: usize| axis[o].map(|a| a + rank - nodes[o].ty.shape.len());
        let agree = |operands: &[usize]| -> Option<Option<usize>> {
            let mut found = None;
            for &o in operands {
                if let Some(a) = aligned(o) {
                    if found.is_some_and(|f| f != a) {
                        return None;
                    }
                    found = Some(a);
                }
            }
            Some(found)
        };
        let here: Option<usize> = match &node.kind {
            NodeKind::ReadRange { .. } => match range_of(k) {
                Some(Some(m)) => {
                    if mask.as_ref().is_some_and(|x| *x != m) {
                        return None;
                    }
                    mask = Some(m);
                    Some(0)
                }
                _ => None,
            },
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => axis[*a],
            NodeKind::Binary(_, x, y) | NodeKind::Compare(_, x, y) => agree(&[*x, *y])?,
            NodeKind::Select(c, x, y) => agree(&[*c, *x, *y])?,
            NodeKind::Reduce(kind, a, r) => match axis[*a] {
                Some(m) if m == *r => {
                    if !matches!(kind, ReduceKind::Sum | ReduceKind::Max) {
                        return None;
                    }
                    None
                }
                Some(m) if *kind == ReduceKind::CumSum => Some(m),
                Some(m) => Some(if *r < m { m - 1 } else { m }),
                None => None,
            },
            NodeKind::Move(Movement::Permute(order), operands) => {
                axis[operands[0]].map(|m| order.iter().position(|&x| x == m).expect("a permutation"))
            }
            NodeKind::Move(Movement::Reshape, operands) => match axis[operands[0]] {
                Some(0) if node.ty.shape.first() == Some(&DYNAMIC) => Some(0),
                Some(_) => return None,
                None => None,
            },
            // Fused attention combines the range away: its ranged
            // operands carry it first, the others not at all.
            NodeKind::FlashAttention(flash, operands) => {
                let ranged = flash.part.range_operands();
                let carried = |i: usize| axis[operands[i]];
                if (0..operands.len()).any(|i| carried(i).is_some()) {
                    let fits = (0..operands.len())
                        .all(|i| if ranged.contains(&i) { carried(i) == Some(0) } else { carried(i).is_none() });
                    if !fits {
                        return None;
                    }
                }
                None
            }
            NodeKind::Einsum(spec, operands) => einsum_axis(spec, operands, &axis, exact)?,
            other => {
                if crate::rewrite::operands(other).iter().any(|&o| axis[o].is_some()) {
                    return None;
                }
                None
            }
        };
        // Every dynamic size is the range's, at its axis.
        for (i, &s) in node.ty.shape.iter().enumerate() {
            if s == DYNAMIC && here != Some(i) {
                return None;
            }
        }
        if let Some(m) = here {
            if node.ty.shape[m] != DYNAMIC {
                return None;
            }
            let elements: u64 =
                node.ty.shape.iter().map(|&s| if s == DYNAMIC { size } else { s }).product::<i64>() as u64;
            let points = if shared[k] { 1 } else { size as u64 };
            let bytes = elements.saturating_mul(points).saturating_mul(node.ty.element.byte_size() as u64);
            if !shared[k] {
                live = live.saturating_add(bytes);
                freed_after[last_use[k]] = freed_after[last_use[k]].saturating_add(bytes);
            }
            if bytes > MAX_MASKED_VALUE_BYTES || live > MAX_MASKED_BRANCH_BYTES {
                return None;
            }
        }
        axis.push(here);
    }
    if axis[result].is_some() {
        return None;
    }
    Some(Flow { mask, axis })
}

/// The axis of the range in an einsum's result, given its operands'
/// (`axis`): `Some(None)` when it is contracted away or no operand carries
/// it, `None` when the einsum cannot carry it (operands carry it at
/// different labels, or, in the exact pipeline, a contraction of it with
/// two carriers).
fn einsum_axis(spec: &Einsum, operands: &[usize], axis: &[Option<usize>], exact: bool) -> Option<Option<usize>> {
    let mut label = None;
    let mut carriers = 0;
    for (i, &o) in operands.iter().enumerate() {
        if let Some(m) = axis[o] {
            let l = spec.operands[i][m];
            if label.is_some_and(|x| x != l) {
                return None;
            }
            label = Some(l);
            carriers += 1;
        }
    }
    let kept = label.and_then(|l| spec.result.iter().position(|&x| x == l));
    // Contracted with a second operand carrying the range: only one
    // operand is zeroed outside it, and the other's points there (real
    // points of the source) may be infinite or NaN, which a zero does not
    // cancel. Exact only when they are finite: not in the exact pipeline.
    if exact && label.is_some() && kept.is_none() && carriers > 1 {
        return None;
    }
    Some(kept)
}

impl<'c> super::Batcher<'_, 'c> {
    /// One bound of the mask, an `i64` per point (`[D]`, batched) or a
    /// scalar: the reader's own position along `d` (`p`) is the batch's
    /// positions, other positions and bounds are the loop's.
    fn bound_value(&mut self, e: &AffineExpr, p: usize, domain: &[usize], location: melior::ir::Location<'c>) -> usize {
        let scalar = PointType { shape: vec![], element: ElementType::I64 };
        match e {
            AffineExpr::Dim(i) if *i == p => {
                let ty = PointType { shape: vec![self.size], element: ElementType::I64 };
                self.push(NodeKind::Move(Movement::Arange, vec![]), ty, true, location)
            }
            AffineExpr::Dim(i) => self.push(NodeKind::Position(domain[*i]), scalar, false, location),
            AffineExpr::Symbol(s) => self.push(NodeKind::Bound(*s), scalar, false, location),
            AffineExpr::Constant(c) => {
                let kind = NodeKind::Constant {
                    text: crate::print::dense(&[*c as f64], &scalar).into(),
                    values: [*c as f64].into(),
                    integers: [*c].into(),
                };
                self.push(kind, scalar, false, location)
            }
            AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => {
                let kind = if matches!(e, AffineExpr::Add(..)) { BinaryKind::Add } else { BinaryKind::Mul };
                let (x, y) = (self.bound_value(a, p, domain, location), self.bound_value(b, p, domain, location));
                self.combine(kind, x, y, location)
            }
            _ => unreachable!("checked by masked_range"),
        }
    }

    /// `x kind y` of two bound values.
    fn combine(&mut self, kind: BinaryKind, x: usize, y: usize, location: melior::ir::Location<'c>) -> usize {
        let batched = self.batched[x] || self.batched[y];
        let shape = if batched { vec![self.size] } else { vec![] };
        self.push(NodeKind::Binary(kind, x, y), PointType { shape, element: ElementType::I64 }, batched, location)
    }

    /// `x` (its unbatched value of rank `rank` carries the range at `axis`)
    /// with the points outside the range set to `identity`: a batched
    /// value.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn masked(
        &mut self,
        x: usize,
        rank: usize,
        axis: usize,
        identity: f64,
        mask: &RangeMask,
        p: usize,
        domain: &[usize],
        location: melior::ir::Location<'c>,
    ) -> usize {
        let fold = |this: &mut Self, exprs: &[AffineExpr], kind: BinaryKind| {
            let mut value = this.bound_value(&exprs[0], p, domain, location);
            for e in &exprs[1..] {
                let next = this.bound_value(e, p, domain, location);
                value = this.combine(kind, value, next, location);
            }
            value
        };
        let lower = fold(self, &mask.lower, BinaryKind::Max);
        let upper = fold(self, &mask.upper, BinaryKind::Min);
        // The bounds as [D, 1, ..., 1] (rank + 1), the range's positions
        // as [1, ..., D, ..., 1] (rank, the range at `axis`).
        let column = |this: &mut Self, v: usize| {
            if !this.batched[v] {
                return v;
            }
            let shape = std::iter::once(this.size).chain(std::iter::repeat_n(1, rank)).collect();
            let ty = PointType { shape, element: ElementType::I64 };
            this.push(NodeKind::Move(Movement::Reshape, vec![v]), ty, true, location)
        };
        let (lower, upper) = (column(self, lower), column(self, upper));
        let ty = PointType { shape: vec![self.size], element: ElementType::I64 };
        let positions = self.push(NodeKind::Move(Movement::Arange, vec![]), ty, false, location);
        let mut shape = vec![1; rank];
        shape[axis] = self.size;
        let positions = self.push(
            NodeKind::Move(Movement::Reshape, vec![positions]),
            PointType { shape: shape.clone(), element: ElementType::I64 },
            false,
            location,
        );
        // Booleans over the range, batched where a bound is.
        let boolean = |this: &Self, batched: bool| PointType {
            shape: if batched {
                std::iter::once(this.size).chain(shape.iter().copied()).collect()
            } else {
                shape.clone()
            },
            element: ElementType::I1,
        };
        let compare = |this: &mut Self, predicate: Predicate, bound: usize| {
            let batched = this.batched[bound];
            let ty = boolean(this, batched);
            this.push(NodeKind::Compare(predicate, positions, bound), ty, batched, location)
        };
        let above = compare(self, Predicate::Ge, lower);
        let below = compare(self, Predicate::Lt, upper);
        let batched = self.batched[above] || self.batched[below];
        let ty = boolean(self, batched);
        let inside = self.push(NodeKind::Binary(BinaryKind::And, above, below), ty, batched, location);
        let element = self.nodes[x].ty.element;
        let scalar = PointType { shape: vec![], element };
        let kind = NodeKind::Constant {
            text: crate::print::dense(&[identity], &scalar).into(),
            values: [identity].into(),
            integers: crate::program::integers_of(&[identity], element).into(),
        };
        let identity = self.push(kind, scalar, false, location);
        let mut shape = self.nodes[x].ty.shape.clone();
        if !self.batched[x] {
            shape.insert(0, self.size);
        }
        self.push(NodeKind::Select(inside, x, identity), PointType { shape, element }, true, location)
    }
}

/// `e` as `x + c` for the position `x` at `p` (`Some((1, c))`) or a
/// constant `c` (`Some((0, c))`), `Some((2, 0))` for the bound of `d`
/// alone; `None` for anything else.
fn offset(e: &AffineExpr, p: usize, d: usize) -> Option<(u8, i64)> {
    match e {
        AffineExpr::Dim(i) if *i == p => Some((1, 0)),
        AffineExpr::Constant(c) => Some((0, *c)),
        AffineExpr::Symbol(s) if *s == d => Some((2, 0)),
        AffineExpr::Add(a, b) => match (offset(a, p, d)?, offset(b, p, d)?) {
            ((k, x), (0, y)) | ((0, y), (k, x)) if k != 2 || x == 0 => {
                if k == 2 {
                    None
                } else {
                    Some((k, x + y))
                }
            }
            _ => None,
        },
        _ => None,
    }
}

/// The band of a fused attention (`temporal.flash_attention`) batched
/// along `d` whose range reads are masked by `mask`, the reader's own
/// position at `p`: for `forward` and `query` the keys `[lower, upper)`
/// of query position `t`, `t + a` bounds becoming band sides `a`; for
/// `key` the query rows `[n + a, n + b)` that read key `n`, which see it
/// from `t - b + 1` to `t - a` (band `[1 - b, 1 - a)`). A constant lower
/// bound of at most 0 and the bound of `d` as upper bound clip nothing
/// (positions lie in `[0, D)`). `None` for other bounds.
pub(super) fn band(mask: &RangeMask, p: usize, d: usize, part: FlashPart) -> Option<Band> {
    // The sides as offsets from the own position (tightest of each).
    let mut low: Option<i64> = None;
    let mut high: Option<i64> = None;
    for e in &mask.lower {
        match offset(e, p, d)? {
            (1, c) => low = Some(low.map_or(c, |l| l.max(c))),
            (0, c) if c <= 0 => {}
            _ => return None,
        }
    }
    for e in &mask.upper {
        match offset(e, p, d)? {
            (1, c) => high = Some(high.map_or(c, |h| h.min(c))),
            (2, _) => {}
            _ => return None,
        }
    }
    Some(match part {
        FlashPart::Forward | FlashPart::Query => Band { lower: low, upper: high },
        FlashPart::Key => Band { lower: high.map(|b| 1 - b), upper: low.map(|a| 1 - a) },
    })
}

/// The identity of a reduction of `element`s of `kind` (a sum's `0`, a
/// maximum's lowest value).
pub(super) fn identity(kind: ReduceKind, element: ElementType) -> f64 {
    match (kind, element) {
        (ReduceKind::Max, ElementType::F32 | ElementType::F64) => f64::NEG_INFINITY,
        (ReduceKind::Max, ElementType::I32) => i32::MIN as f64,
        (ReduceKind::Max, ElementType::I64) => i64::MIN as f64,
        _ => 0.0,
    }
}

/// Whether node `node` of a branch of a tensor whose own point along `d`
/// is at position `p` is a range read along `d`: `None` if not, else its
/// mask where it is masked ([`masked_range`]; `None` inside: another range
/// read along `d`, e.g. the point `t` itself).
pub(super) fn range_of(program: &Program, node: &Node, d: usize, p: usize) -> Option<Option<RangeMask>> {
    let NodeKind::ReadRange { source, lower, upper, caps } = &node.kind else { return None };
    let q = program.tensors[*source].domain.iter().position(|&x| x == d)?;
    Some(masked_range(lower, upper, caps, q, p))
}

/// The flow of branch `branch` of tensor `t` batched along `d`, where it
/// has a masked range read (`None` where it has none).
pub(super) fn branch_flow(program: &Program, t: usize, branch: &Branch, d: usize, size: i64) -> Option<Flow> {
    let p = program.tensors[t].domain.iter().position(|&x| x == d).expect("over d");
    let masked = |k: usize| range_of(program, &branch.nodes[k], d, p).flatten().is_some();
    if !(0..branch.nodes.len()).any(masked) {
        return None;
    }
    // (The group decided, exact or not; this flow admits what either did.)
    let flow = flow(&branch.nodes, branch.result, size, |k| range_of(program, &branch.nodes[k], d, p), false);
    Some(flow.expect("a branch with masked range reads is batched only where they flow (checked by the group)"))
}

impl<'c> super::Batcher<'_, 'c> {
    /// The unbatched rank of new node `x`.
    fn own_rank(&self, x: usize) -> usize {
        self.nodes[x].ty.shape.len() - usize::from(self.batched[x])
    }

    /// [`super::Batcher::node`] in a branch with a masked range read: the
    /// range's dynamic size becomes `D`; a masked read reads its source
    /// whole; a sum or maximum along the range's axis, and an einsum that
    /// contracts it, take a masked operand.
    pub(super) fn masked_node(
        &mut self,
        flow: &Flow,
        node: &Node<'c>,
        new: &[usize],
        d: usize,
        position: usize,
        vectorized: &[bool],
    ) -> usize {
        let k = new.len();
        let Some(mask) = &flow.mask else { return self.plain_node(node, new, d, position, vectorized) };
        let mut node = node.clone();
        for s in &mut node.ty.shape {
            if *s == DYNAMIC {
                *s = self.size;
            }
        }
        let location = node.location;
        let domain = self.domain.clone();
        match &node.kind {
            NodeKind::ReadRange { source, lower, upper, caps } if flow.axis[k] == Some(0) => {
                let q = self.program.tensors[*source].domain.iter().position(|&x| x == d).expect("along d");
                let drop = |maps: &[AffineMap]| maps.iter().map(|m| super::map_drop(m, position)).collect::<Vec<_>>();
                let (mut lower, mut upper, mut caps) = (drop(lower), drop(upper), drop(caps));
                if vectorized[*source] {
                    // Its batched point holds every point along `d`.
                    lower.remove(q);
                    upper.remove(q);
                    caps.remove(q);
                } else {
                    let (n, symbols) = (lower[q].num_dims, lower[q].num_symbols);
                    let single = |e: AffineExpr| AffineMap { num_dims: n, num_symbols: symbols, results: vec![e] };
                    lower[q] = single(AffineExpr::Constant(0));
                    upper[q] = single(AffineExpr::Symbol(d));
                    caps[q] = AffineMap { num_dims: n, num_symbols: symbols, results: vec![] };
                }
                let read = NodeKind::ReadRange { source: *source, lower, upper, caps };
                self.push(read, node.ty.clone(), false, location)
            }
            NodeKind::Reduce(kind, a, r) if flow.axis[*a] == Some(*r) => {
                let element = self.nodes[new[*a]].ty.element;
                let rank = self.own_rank(new[*a]);
                let x = self.masked(new[*a], rank, *r, identity(*kind, element), mask, position, &domain, location);
                let mut substituted = new.to_vec();
                substituted[*a] = x;
                self.plain_node(&node, &substituted, d, position, vectorized)
            }
            NodeKind::FlashAttention(flash, operands)
                if flash.part.range_operands().iter().any(|&i| flow.axis[operands[i]].is_some()) =>
            {
                let band = band(mask, position, d, flash.part).expect("checked by the group");
                let element = node.ty.element;
                let mut inputs: Vec<usize> = operands.iter().map(|&o| new[o]).collect();
                // The own operands ([1, ...] per step) as [D, ...].
                for &i in flash.part.own_operands() {
                    let x = self.expanded(inputs[i], location);
                    let mut shape = self.nodes[x].ty.shape.clone();
                    shape.remove(1);
                    let ty = PointType { shape, element };
                    inputs[i] = self.push(NodeKind::Move(Movement::Reshape, vec![x]), ty, true, location);
                }
                let mut shape = node.ty.shape.clone();
                shape[0] = self.size;
                let fused = NodeKind::FlashAttention(crate::program::Flash { part: flash.part, band }, inputs);
                let value = self.push(fused, PointType { shape, element }, true, location);
                let ty = self.batched_type(&node.ty);
                self.push(NodeKind::Move(Movement::Reshape, vec![value]), ty, true, location)
            }
            NodeKind::Einsum(spec, operands) => {
                let carriers: Vec<(usize, usize)> =
                    operands.iter().enumerate().filter_map(|(i, &o)| flow.axis[o].map(|m| (i, m))).collect();
                let contracted = carriers.first().is_some_and(|&(i, m)| !spec.result.contains(&spec.operands[i][m]));
                if !contracted {
                    return self.plain_node(&node, new, d, position, vectorized);
                }
                // One carrier zeroed outside the range: a batched one where
                // there is one (no second batched operand).
                let &(i, m) = carriers.iter().find(|&&(i, _)| self.batched[new[operands[i]]]).unwrap_or(&carriers[0]);
                let o = operands[i];
                let rank = self.own_rank(new[o]);
                let x = self.masked(new[o], rank, m, 0.0, mask, position, &domain, location);
                let mut substituted = new.to_vec();
                substituted[o] = x;
                self.plain_node(&node, &substituted, d, position, vectorized)
            }
            _ => self.plain_node(&node, new, d, position, vectorized),
        }
    }
}

/// Whether constraint `c` of a branch condition (of a tensor whose own
/// point along `d` is at position `p`) holds at every point along `d`
/// (`0 <= t < size`): a gradient's range contributions come under
/// `t >= 0, T - 1 - t >= 0`, which batching may drop. Only conditions on
/// that position and `d`'s bound are decided (evaluated at each point,
/// up to 2^16 of them); anything else does not hold.
pub(crate) fn holds_everywhere(c: &crate::affine::Constraint, p: usize, d: usize, size: i64) -> bool {
    fn only(e: &AffineExpr, p: usize, d: usize) -> bool {
        match e {
            AffineExpr::Dim(i) => *i == p,
            AffineExpr::Symbol(s) => *s == d,
            AffineExpr::Constant(_) => true,
            AffineExpr::Add(a, b) | AffineExpr::Mul(a, b) => only(a, p, d) && only(b, p, d),
            AffineExpr::Mod(..) | AffineExpr::FloorDiv(..) | AffineExpr::CeilDiv(..) => false,
        }
    }
    if !only(&c.expr, p, d) || !(1..=1 << 16).contains(&size) {
        return false;
    }
    let mut dims = vec![0; p + 1];
    let mut symbols = vec![0; d + 1];
    symbols[d] = size;
    (0..size).all(|t| {
        dims[p] = t;
        c.expr.eval(&dims, &symbols).is_ok_and(|v| if c.is_equality { v == 0 } else { v >= 0 })
    })
}

#[cfg(test)]
mod band_tests {
    use super::*;

    fn at(c: i64) -> AffineExpr {
        AffineExpr::Add(Box::new(AffineExpr::Dim(0)), Box::new(AffineExpr::Constant(c)))
    }

    #[test]
    fn bands_from_masks() {
        let mask = |lower: Vec<AffineExpr>, upper: Vec<AffineExpr>| RangeMask { lower, upper };
        // k[0:t+1], a causal prefix: keys up to the query's own position.
        let prefix = mask(vec![AffineExpr::Constant(0)], vec![at(1)]);
        assert_eq!(band(&prefix, 0, 0, FlashPart::Forward), Some(Band { lower: None, upper: Some(1) }));
        // k[max(0, t-2):t+1], a window of three.
        let window = mask(vec![AffineExpr::Constant(0), at(-2)], vec![at(1)]);
        assert_eq!(band(&window, 0, 0, FlashPart::Query), Some(Band { lower: Some(-2), upper: Some(1) }));
        // f[t:T], a suffix.
        let suffix = mask(vec![AffineExpr::Dim(0)], vec![AffineExpr::Symbol(0)]);
        assert_eq!(band(&suffix, 0, 0, FlashPart::Forward), Some(Band { lower: Some(0), upper: None }));
        // The keys' half reads the query rows t in [n, T) that see key n:
        // the causal band seen from the queries; rows [n, n + 3): a window.
        assert_eq!(band(&suffix, 0, 0, FlashPart::Key), Some(Band { lower: None, upper: Some(1) }));
        let rows = mask(vec![AffineExpr::Dim(0)], vec![at(3)]);
        assert_eq!(band(&rows, 0, 0, FlashPart::Key), Some(Band { lower: Some(-2), upper: Some(1) }));
        // Bounds of another form are refused.
        let scaled = mask(
            vec![AffineExpr::Constant(0)],
            vec![AffineExpr::Mul(Box::new(AffineExpr::Dim(0)), Box::new(AffineExpr::Constant(2)))],
        );
        assert_eq!(band(&scaled, 0, 0, FlashPart::Forward), None);
        assert_eq!(band(&mask(vec![AffineExpr::Constant(3)], vec![at(1)]), 0, 0, FlashPart::Forward), None);
    }
}
