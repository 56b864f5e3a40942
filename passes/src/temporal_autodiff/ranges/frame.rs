//! The element frame of a range read: at the source's point `q`, the
//! branch's element-level values recomputed from `X[q]`, the row values
//! read from the stash over the reader points reading `q`, the collapsing
//! nodes' vector-Jacobian products as seeds, and the sweep back to `X[q]`
//! (softmax units as one op, as in the reader's sweep).

use super::analysis::{Carry, contraction_labels};
use crate::affine::{AffineExpr, AffineMap};
use crate::diagnostics::PassDiagnostic;
use crate::program::{Branch, DYNAMIC, Movement, NodeKind, PointType, Predicate, ReduceKind};
use crate::temporal_autodiff::body::Body;
use crate::temporal_autodiff::pullback;
use crate::temporal_autodiff::vjp::{
    self,
    softmax::{self, Softmax},
};
use std::collections::HashMap;

/// A row value the element frame takes from the reader's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(in crate::temporal_autodiff) enum Stash {
    /// A forward value of the branch.
    Forward(usize),
    /// The cotangent of a collapsing node.
    Cotangent(usize),
    /// The length of the range a mean collapses.
    Count(usize),
    /// `sum(P * dP)` along the range of the softmax of result `P` whose
    /// axis is the range's (its unit's product needs it at every element).
    SoftmaxDot(usize),
}

/// The element frame under construction: at `X`'s point `q`, the
/// cotangent of `X[q]` summed over the reader points that read it. Values
/// that depend on the reader point (stashed row values) are *batched*:
/// they have one more, leading, dimension of dynamic size, the reader
/// points; the others do not, and broadcasting and the backward sweep's
/// sums over broadcast dimensions do the rest.
pub(super) struct Frame<'a, 'c> {
    pub(super) branch: &'a Branch<'c>,
    pub(super) carry: &'a [Carry],
    /// The softmax units on the gradient's path whose result carries the
    /// range, differentiated as units here as in the reader's frame.
    pub(super) units: &'a [Softmax],
    /// The pivot and its source's point type and number of dimensions.
    pub(super) k: usize,
    pub(super) x_point: PointType,
    pub(super) x_dims: usize,
    /// The pivot's range dimension in its source.
    pub(super) range_dim: usize,
    /// The reader's point as expressions of `q`, `Dim(x_dims)` standing
    /// for the reader dimension that varies (when one does).
    pub(super) point: Vec<AffineExpr>,
    pub(super) num_symbols: usize,
    pub(super) body: Body<'c>,
    pub(super) elem: HashMap<usize, usize>,
    pub(super) row: HashMap<usize, usize>,
    /// Requested in the first build; supplied in the second.
    pub(super) requests: Vec<Stash>,
    pub(super) values: HashMap<Stash, usize>,
    /// Whether stashed values are batched (a reader dimension varies).
    pub(super) batched: bool,
    /// The diagnostic's subject (the pivot's source's name).
    pub(super) what: String,
}

impl<'c> Frame<'_, 'c> {
    /// `map` at the reader's point, or `None` where it depends on the
    /// varying reader dimension.
    fn compose(&self, map: &AffineMap) -> Option<AffineMap> {
        let results: Vec<AffineExpr> = map.results.iter().map(|e| pullback::substitute(e, &self.point)).collect();
        let varies = |e: &AffineExpr| e.linear().is_none_or(|(d, ..)| d.get(self.x_dims).is_some_and(|&k| k != 0));
        if self.batched && results.iter().any(varies) {
            return None;
        }
        Some(AffineMap { num_dims: self.x_dims, num_symbols: self.num_symbols, results })
    }

    fn error(&self, n: usize, why: &str) -> PassDiagnostic<'c> {
        PassDiagnostic::new(
            self.branch.nodes[n].location,
            format!("temporal-autodiff: no gradient through this read of a range of '{}' yet: {why}", self.what),
        )
    }

    /// The shape a stashed value of `shape` has here.
    fn stashed_shape(&self, shape: &[i64]) -> Vec<i64> {
        let mut out = if self.batched { vec![DYNAMIC] } else { Vec::new() };
        out.extend(shape);
        out
    }

    fn stashed(&mut self, item: Stash, ty: &PointType) -> usize {
        if let Some(&v) = self.values.get(&item) {
            return v;
        }
        if !self.requests.contains(&item) {
            self.requests.push(item);
        }
        let shape = self.stashed_shape(&ty.shape);
        // A placeholder of the right type (the first build is discarded).
        let ty = PointType { shape, element: ty.element };
        self.body.push(NodeKind::Constant { text: "".into(), values: [].into(), integers: [].into() }, ty)
    }

    /// Whether body node `v` is batched, given its element shape's rank.
    fn is_batched(&self, v: usize, rank: usize) -> bool {
        self.body.ty(v).shape.len() > rank
    }

    /// A row value: recomputed where it is a constant or a read that does
    /// not depend on the varying reader dimension, else stashed.
    fn row(&mut self, n: usize) -> Result<usize, PassDiagnostic<'c>> {
        if let Some(&v) = self.row.get(&n) {
            return Ok(v);
        }
        let node = &self.branch.nodes[n];
        if node.ty.shape.contains(&DYNAMIC) {
            return Err(self.error(n, "a range of another extent is combined with it"));
        }
        let recomputed = match &node.kind {
            NodeKind::Constant { .. } => Some(node.kind.clone()),
            NodeKind::Read { source, index } => {
                self.compose(index).map(|index| NodeKind::Read { source: *source, index })
            }
            NodeKind::ReadRange { source, lower, upper, caps } => {
                let all = |maps: &[AffineMap]| maps.iter().map(|m| self.compose(m)).collect::<Option<Vec<_>>>();
                match (all(lower), all(upper), all(caps)) {
                    (Some(lower), Some(upper), Some(caps)) => {
                        Some(NodeKind::ReadRange { source: *source, lower, upper, caps })
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let ty = node.ty.clone();
        let v = match recomputed {
            Some(kind) => self.body.push(kind, ty),
            None => self.stashed(Stash::Forward(n), &ty),
        };
        self.row.insert(n, v);
        Ok(v)
    }

    /// The element shape of a node carrying the range (its shape without
    /// the range's axis).
    fn element_shape(&self, n: usize) -> Vec<i64> {
        let mut shape = self.branch.nodes[n].ty.shape.clone();
        if let Carry::Axis(p) = self.carry[n] {
            shape.remove(p);
        }
        shape
    }

    /// `v` (element shape of rank `rank`) with size-1 dimensions inserted
    /// after the batch dimension up to rank `to`, so that it broadcasts
    /// from the right with values of that rank.
    fn align(&mut self, v: usize, rank: usize, to: usize) -> usize {
        if !self.is_batched(v, rank) || rank >= to {
            return v;
        }
        let shape = self.body.ty(v).shape.clone();
        let mut aligned = vec![DYNAMIC];
        aligned.extend(std::iter::repeat_n(1, to - rank));
        aligned.extend(&shape[1..]);
        self.body.reshape(v, &aligned)
    }

    /// An operand of a node carrying the range, in element shape.
    fn operand(&mut self, a: usize) -> Result<(usize, usize), PassDiagnostic<'c>> {
        match self.carry[a] {
            Carry::Axis(_) => Ok((self.elem(a)?, self.element_shape(a).len())),
            _ => Ok((self.row(a)?, self.branch.nodes[a].ty.shape.len())),
        }
    }

    /// A label not among `labels`, for the batch dimension.
    fn batch_label(labels: &[Vec<char>]) -> char {
        "RZYXWVUTSQPONMLKJIHGFEDCBA".chars().find(|c| !labels.iter().flatten().any(|x| x == c)).expect("a free label")
    }

    /// The element of a node carrying the range, at `q`.
    fn elem(&mut self, n: usize) -> Result<usize, PassDiagnostic<'c>> {
        if let Some(&v) = self.elem.get(&n) {
            return Ok(v);
        }
        let p = match &self.carry[n] {
            Carry::Axis(p) => *p,
            Carry::Unsupported(why) => return Err(self.error(n, why)),
            Carry::Row | Carry::Collapse => unreachable!("elements of range values only"),
        };
        let node = self.branch.nodes[n].clone();
        let shape = self.element_shape(n);
        let element = node.ty.element;
        let shift = |axis: usize| if axis > p { axis - 1 } else { axis };
        let v = match &node.kind {
            _ if n == self.k => {
                let index = AffineMap {
                    num_dims: self.x_dims,
                    num_symbols: self.num_symbols,
                    results: (0..self.x_dims).map(AffineExpr::Dim).collect(),
                };
                let source = crate::rewrite::source(&node.kind).expect("a read");
                self.body.push(NodeKind::Read { source, index }, self.x_point.clone())
            }
            NodeKind::ReadRange { source, lower, upper, caps } => {
                self.range_elem(n, *source, [lower, upper, caps], PointType { shape, element })?
            }
            NodeKind::Unary(kind, a) => {
                let a = self.elem(*a)?;
                self.body.unary(*kind, a)
            }
            NodeKind::Cast(a) => {
                let a = self.elem(*a)?;
                let ty = PointType { shape: self.body.ty(a).shape.clone(), element };
                self.body.push(NodeKind::Cast(a), ty)
            }
            NodeKind::Binary(..) | NodeKind::Compare(..) | NodeKind::Select(..) => {
                let rank = node.ty.shape.len();
                let operands = crate::rewrite::operands(&node.kind);
                let mut mapped = Vec::new();
                for &a in &operands {
                    let (mut v, mut r) = self.operand(a)?;
                    let offset = rank - self.branch.nodes[a].ty.shape.len();
                    if !matches!(self.carry[a], Carry::Axis(_)) && p >= offset {
                        // A row value with size 1 where the range is.
                        let batched = self.is_batched(v, r);
                        let mut fewer = self.body.ty(v).shape.clone();
                        fewer.remove(p - offset + batched as usize);
                        v = self.body.reshape(v, &fewer);
                        r -= 1;
                    }
                    mapped.push(self.align(v, r, shape.len()));
                }
                let shapes: Vec<&[i64]> = mapped.iter().map(|&v| self.body.ty(v).shape.as_slice()).collect();
                let out = PointType::broadcast_shape(&shapes).expect("broadcast operands");
                let kind = crate::rewrite::map_operands(&node.kind, |a| {
                    mapped[operands.iter().position(|&o| o == a).expect("an operand")]
                });
                self.body.push(kind, PointType { shape: out, element })
            }
            NodeKind::Reduce(kind, a, along) => {
                let rank = self.element_shape(*a).len();
                let a = self.elem(*a)?;
                let axis = shift(*along) + self.is_batched(a, rank) as usize;
                self.body.reduce(*kind, a, axis)
            }
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => self.contraction_elem(n)?,
            NodeKind::Move(movement, ops) => self.move_elem(n, movement, ops, p, PointType { shape, element })?,
            NodeKind::Gather(table, indices) => {
                let (t, r) = self.operand(*table)?;
                if self.is_batched(t, r) {
                    return Err(self.error(n, "a gather from a table that depends on the reader's point"));
                }
                let rank = self.element_shape(*indices).len();
                let i = self.elem(*indices)?;
                let mut out = self.body.ty(i).shape.clone();
                out.extend(&self.body.ty(t).shape[1..]);
                let _ = rank;
                self.body.push(NodeKind::Gather(t, i), PointType { shape: out, element })
            }
            _ => unreachable!("analysed as unsupported"),
        };
        self.elem.insert(n, v);
        Ok(v)
    }

    /// [`Self::elem`] of a range read of `source` (its lower and upper
    /// bounds and caps) other than the pivot: the same element of another
    /// read of the pivot's range, of type `ty`.
    fn range_elem(
        &mut self,
        n: usize,
        source: usize,
        maps: [&[AffineMap]; 3],
        ty: PointType,
    ) -> Result<usize, PassDiagnostic<'c>> {
        let [lower, upper, caps] = maps;
        let empty = AffineMap { num_dims: self.x_dims, num_symbols: self.num_symbols, results: Vec::new() };
        let mut l = Vec::new();
        let mut c = Vec::new();
        for j in 0..lower.len() {
            if upper[j].results.is_empty() {
                match (self.compose(&lower[j]), self.compose(&caps[j])) {
                    (Some(lo), Some(cap)) => {
                        l.push(lo);
                        c.push(cap);
                    }
                    _ => return Err(self.error(n, "a read of the same range at a point that varies with it")),
                }
            } else {
                l.push(AffineMap { results: vec![AffineExpr::Dim(self.range_dim)], ..empty.clone() });
                c.push(empty.clone());
            }
        }
        let kind = NodeKind::ReadRange { source, lower: l, upper: vec![empty; upper.len()], caps: c };
        Ok(self.body.push(kind, ty))
    }

    /// [`Self::elem`] of a contraction (a matmul or an einsum) of node `n`.
    fn contraction_elem(&mut self, n: usize) -> Result<usize, PassDiagnostic<'c>> {
        let (ops, labels, result) = contraction_labels(self.branch, n).expect("analysed");
        let label = node_label(self.carry, &ops, &labels);
        let batch = Self::batch_label(&labels);
        let mut pairs = Vec::new();
        let mut sizes: Vec<(char, i64)> = vec![(batch, DYNAMIC)];
        let mut any = false;
        for (&a, l) in ops.iter().zip(&labels) {
            let (v, r) = self.operand(a)?;
            let mut l: Vec<char> = l.iter().copied().filter(|&c| c != label).collect();
            if self.is_batched(v, r) {
                l.insert(0, batch);
                any = true;
            }
            sizes.extend(l.iter().copied().zip(self.body.ty(v).shape.iter().copied()));
            pairs.push((v, l));
        }
        let mut result: Vec<char> = result.into_iter().filter(|&c| c != label).collect();
        if any {
            result.insert(0, batch);
        }
        Ok(self.body.contract(&pairs, &result, &sizes))
    }

    /// [`Self::elem`] of a movement of node `n` carrying the range along
    /// axis `p`, of element type `ty`.
    fn move_elem(
        &mut self,
        n: usize,
        movement: &Movement,
        ops: &[usize],
        p: usize,
        ty: PointType,
    ) -> Result<usize, PassDiagnostic<'c>> {
        let (shape, element) = (ty.shape, ty.element);
        let shift = |axis: usize| if axis > p { axis - 1 } else { axis };
        let rank = self.element_shape(ops[0]).len();
        let a = self.elem(ops[0])?;
        let batched = self.is_batched(a, rank);
        let b = batched as usize;
        if batched && matches!(movement, Movement::Slice(_) | Movement::Concat(_)) {
            return Err(self.error(n, "a slice or concatenation of values that depend on the reader's point"));
        }
        Ok(match movement {
            Movement::Permute(permutation) => {
                let Carry::Axis(from) = self.carry[ops[0]] else { unreachable!("carries") };
                let mut out: Vec<usize> = if batched { vec![0] } else { Vec::new() };
                out.extend(permutation.iter().filter(|&&x| x != from).map(|&x| if x > from { x - 1 } else { x } + b));
                self.body.permute(a, &out)
            }
            Movement::Flip(along) => self.body.flip(a, shift(*along) + b),
            Movement::Slice(offsets) => {
                let mut offsets = offsets.clone();
                offsets.remove(p);
                self.body.slice(a, &offsets, &shape)
            }
            Movement::Reshape => {
                let target = self.stashed_shape(&shape);
                self.body.reshape(a, if batched { &target } else { &shape })
            }
            Movement::Expand if batched => {
                let aligned = self.align(a, rank, shape.len());
                let zeros = self.body.zeros(&PointType { shape: shape.clone(), element });
                self.body.add(aligned, zeros)
            }
            Movement::Expand => self.body.expand(a, &shape),
            Movement::Concat(along) => {
                let c = self.elem(ops[1])?;
                self.body.concat(a, c, shift(*along))
            }
            Movement::Arange => unreachable!("no operands"),
        })
    }

    /// The cotangents a collapsing node `c` gives the elements of its
    /// operands that carry the range (those on the gradient's path),
    /// summed over reader points where the element is not batched.
    fn seeds(&mut self, c: usize, on: &[bool]) -> Result<Vec<(usize, usize)>, PassDiagnostic<'c>> {
        let node = self.branch.nodes[c].clone();
        let targets: Vec<usize> = crate::rewrite::operands(&node.kind)
            .into_iter()
            .enumerate()
            .filter(|&(i, a)| {
                on[a] && matches!(self.carry[a], Carry::Axis(_)) && vjp::passes(&self.branch.nodes, c, i, a)
            })
            .map(|(i, _)| i)
            .collect();
        if targets.is_empty() {
            return Ok(Vec::new());
        }
        let g = self.stashed(Stash::Cotangent(c), &node.ty);
        let rank = node.ty.shape.len();
        let mut out = Vec::new();
        match &node.kind {
            NodeKind::Reduce(kind, a, _) => {
                let e = self.elem(*a)?;
                let ct = match kind {
                    ReduceKind::Sum => g,
                    ReduceKind::Mean => {
                        let count = self.stashed(Stash::Count(c), &node.ty);
                        self.body.div(g, count)
                    }
                    ReduceKind::Max => {
                        let m = self.row(c)?;
                        let m = self.align(m, rank, rank);
                        let at = self.body.compare(Predicate::Eq, e, m);
                        self.body.mask(at, g)
                    }
                    ReduceKind::ArgMax | ReduceKind::CumSum => unreachable!("no gradient / not a collapse"),
                };
                let target = self.body.ty(e).shape.clone();
                let ct = self.body.unbroadcast(ct, &target);
                out.push((e, ct));
            }
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => {
                let (ops, labels, result) = contraction_labels(self.branch, c).expect("analysed");
                let label = node_label(self.carry, &ops, &labels);
                let batch = Self::batch_label(&labels);
                let strip = |l: &Vec<char>| -> Vec<char> { l.iter().copied().filter(|&x| x != label).collect() };
                for i in targets {
                    let rank_i = self.element_shape(ops[i]).len();
                    let e = self.elem(ops[i])?;
                    let mut own = strip(&labels[i]);
                    if self.is_batched(e, rank_i) {
                        own.insert(0, batch);
                    }
                    let mut g_labels = result.clone();
                    if self.is_batched(g, rank) {
                        g_labels.insert(0, batch);
                    }
                    let mut pairs = vec![(g, g_labels)];
                    for (j, &a) in ops.iter().enumerate() {
                        if j != i {
                            let (v, r) = self.operand(a)?;
                            let mut l = if matches!(self.carry[a], Carry::Axis(_)) {
                                strip(&labels[j])
                            } else {
                                labels[j].clone()
                            };
                            if self.is_batched(v, r) {
                                l.insert(0, batch);
                            }
                            pairs.push((v, l));
                        }
                    }
                    let sizes: Vec<(char, i64)> =
                        own.iter().copied().zip(self.body.ty(e).shape.iter().copied()).collect();
                    let ct = self.body.contract(&pairs, &own, &sizes);
                    out.push((e, ct));
                }
            }
            _ => unreachable!("collapsing nodes are reductions and contractions"),
        }
        Ok(out)
    }

    /// The whole element frame: forward elements, seeds, the sweep back to
    /// the pivot's element; its cotangent.
    pub(super) fn build(&mut self, on: &[bool], collapses: &[usize]) -> Result<usize, PassDiagnostic<'c>> {
        let point = self.x_point.clone();
        Ok(self.build_all(on, collapses, &[(self.k, point)])?[0])
    }

    /// [`Frame::build`] for several reads of the pivot's range at once (the
    /// pivot first; `(read node, its source's point type)`), whose sources
    /// share the pivot's domain: one sweep, the forward elements computed
    /// once; their cotangents in order.
    pub(super) fn build_all(
        &mut self,
        on: &[bool],
        collapses: &[usize],
        reads: &[(usize, PointType)],
    ) -> Result<Vec<usize>, PassDiagnostic<'c>> {
        let mut pivots = Vec::new();
        for (k, _) in reads {
            pivots.push(self.elem(*k)?);
        }
        // Every element the seeds start from, before the backward nodes.
        for &c in collapses {
            for a in crate::rewrite::operands(&self.branch.nodes[c].kind) {
                if on[a] && matches!(self.carry[a], Carry::Axis(_)) {
                    self.elem(a)?;
                }
            }
        }
        let mut given = Vec::new();
        for unit in self.units {
            let Carry::Axis(at) = self.carry[unit.p] else { unreachable!("units carry the range") };
            let (p, x) = (self.elem(unit.p)?, self.elem(unit.x)?);
            let rank = self.element_shape(unit.p).len();
            let batched = self.is_batched(p, rank) as usize;
            let (axis, dot) = if unit.axis == at {
                // A row value: the sum along the range at the reader.
                let ty = self.branch.nodes[unit.p].ty.clone();
                let mut shape = ty.shape.clone();
                shape.remove(at);
                let d = self.stashed(Stash::SoftmaxDot(unit.p), &PointType { shape, element: ty.element });
                (at, Some(self.align(d, rank, rank)))
            } else {
                (if unit.axis > at { unit.axis - 1 } else { unit.axis } + batched, None)
            };
            given.push(softmax::Given { p, x, axis, dot });
        }
        let forward = self.body.nodes.len();
        let mut seeds = Vec::new();
        for &c in collapses {
            seeds.extend(self.seeds(c, on)?);
        }
        let found = vjp::backprop_units(&mut self.body, forward, &seeds, &pivots, softmax::Units::Given(&given))?;
        let mut out = Vec::new();
        for (pivot, (_, point)) in pivots.into_iter().zip(reads) {
            let ct = match found.get(&pivot) {
                Some(&ct) => ct,
                None => self.body.zeros(point),
            };
            out.push(self.body.unbroadcast(ct, &point.shape));
        }
        Ok(out)
    }
}

/// The range label of a contraction (that of its operands carrying it).
fn node_label(carry: &[Carry], ops: &[usize], labels: &[Vec<char>]) -> char {
    ops.iter()
        .zip(labels)
        .find_map(|(&a, l)| match carry[a] {
            Carry::Axis(p) => Some(l[p]),
            _ => None,
        })
        .expect("a contraction of the range")
}
