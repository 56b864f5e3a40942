//! Gradients through reads of ranges (`x[0:t+1]`, windows
//! `x[max(0, t-w+1):t+1]`, future ranges `x[t:T]`, whole dimensions
//! `x[0:T]`), one range dimension per read.
//!
//! A read `V = X[lo(p):hi(p), ...]` at a reader point `p` has a dynamic
//! length, so its cotangent cannot live in a tensor over the reader's
//! domain. But everything the reader's branch does with `V` before it
//! collapses the range (a sum, mean or maximum along it, a contraction of
//! its label: softmax attention is all of these) is elementwise along the
//! range: element `s` of every such value depends on `V[s]` and on values
//! without the range (*row* values). So the gradient is computed where it
//! is needed, at the source point `q` (the *element frame*): a tensor over
//! `X`'s domain recomputes the branch's element-level nodes at `q` from
//! `X[q]` (and the same element of other reads of the same range), with
//! the row values they need and the cotangents of the collapsing nodes
//! read, as a range over the reader points that read `q` (`t >= q` for
//! `x[0:t+1]`), from tensors over the reader's domain (the *stash*: the
//! reader's own backward sweep computes it beside its point reads'
//! cotangents, `cotangents` in `temporal_autodiff.rs`); seeds each
//! collapsing node's operands with its vector-Jacobian product and sweeps
//! back to `X[q]`. Reads of one range whose sources share a domain (an
//! attention's keys and values) are differentiated in one frame, and a
//! softmax along the range as one unit (`vjp/softmax.rs`): with both,
//! the backward pass of causal attention is FlashAttention-2's (`P` again
//! from the stashed maximum and sum, `dS = P * (dP - D)`, dK and dV from
//! one sweep). Values that depend
//! on the reader point carry a leading dimension of dynamic size, so the
//! sum over reader points is the sweep's own sum over broadcast
//! dimensions. Where branch conditions cut the reader points, the points
//! where the branch defines the reader are split into disjoint intervals,
//! one tensor each.
//!
//! Refused with the read's location: boxes over several range dimensions,
//! bounds other than `r + c`, `c - r` or constants, a reader dimension in
//! several coordinates or several varying ones, clamped point coordinates
//! beside the range, and element-level uses of the range this frame cannot
//! follow (a running sum, flip or slice along it, a reshape moving it, a
//! gather from it, another range of a different extent combined with it).

use super::body::Body;
use super::pullback::{self, Case, Coordinate};
use super::vjp::softmax::{self, Softmax};
use super::{Contribution, live_nodes, vjp};
use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::program::{Branch, DYNAMIC, Movement, NodeKind, PointType, Predicate, Program, ReduceKind, reshape_fits};
use std::collections::HashMap;

/// How a node of the reader's branch relates to the range of the read
/// being differentiated (the *pivot*).
#[derive(Clone, Debug, PartialEq)]
enum Carry {
    /// No range axis of the pivot's (a row value).
    Row,
    /// The range's axis at this position; elementwise along it.
    Axis(usize),
    /// Removes the range's axis (a row value computed from range values).
    Collapse,
    /// Has the range's axis in a way the element frame cannot follow.
    Unsupported(String),
}

/// The labels of a matmul's operands and result (`None`: broadcast batch
/// dimensions of different sizes, which an einsum cannot say).
fn matmul_labels(x: &[i64], y: &[i64]) -> Option<(Vec<char>, Vec<char>, Vec<char>)> {
    match (x.len(), y.len()) {
        (1, 2) => Some((vec!['k'], vec!['k', 'n'], vec!['n'])),
        (2, 1) => Some((vec!['m', 'k'], vec!['k'], vec!['m'])),
        (rx, ry) if rx >= 2 && ry >= 2 => {
            let batch = rx.max(ry) - 2;
            let letters: Vec<char> = (0..batch).map(|k| (b'A' + k as u8) as char).collect();
            let (bx, by) = (&x[..rx - 2], &y[..ry - 2]);
            for k in 0..bx.len().min(by.len()) {
                if bx[bx.len() - 1 - k] != by[by.len() - 1 - k] {
                    return None;
                }
            }
            let mut a = letters[batch - (rx - 2)..].to_vec();
            a.extend(['m', 'k']);
            let mut b = letters[batch - (ry - 2)..].to_vec();
            b.extend(['k', 'n']);
            let mut r = letters;
            r.extend(['m', 'n']);
            Some((a, b, r))
        }
        _ => None,
    }
}

/// The operands' labels and the result's of a contraction node.
/// A contraction's operands, their labels and the result's labels.
type Labels = (Vec<usize>, Vec<Vec<char>>, Vec<char>);

fn contraction_labels(branch: &Branch, n: usize) -> Option<Labels> {
    let ty = |k: usize| branch.nodes[k].ty.shape.clone();
    match &branch.nodes[n].kind {
        NodeKind::Matmul(a, b) => {
            let (la, lb, lr) = matmul_labels(&ty(*a), &ty(*b))?;
            Some((vec![*a, *b], vec![la, lb], lr))
        }
        NodeKind::Einsum(spec, ops) => Some((ops.clone(), spec.operands.clone(), spec.result.clone())),
        _ => None,
    }
}

/// Whether range read `n` reads the same range as the pivot `k` (its
/// elements are the pivot's, position by position).
fn same_range(branch: &Branch, n: usize, k: usize) -> bool {
    let range = |n: usize| match &branch.nodes[n].kind {
        NodeKind::ReadRange { lower, upper, .. } => {
            let dims: Vec<usize> = (0..upper.len()).filter(|&j| !upper[j].results.is_empty()).collect();
            match dims[..] {
                [j] => Some((lower[j].clone(), upper[j].clone())),
                _ => None,
            }
        }
        _ => None,
    };
    range(n).is_some() && range(n) == range(k)
}

/// The carry of every node of `branch` for the pivot `k`.
fn analyse(branch: &Branch, k: usize) -> Vec<Carry> {
    let nodes = &branch.nodes;
    let mut carry: Vec<Carry> = Vec::with_capacity(nodes.len());
    for (n, node) in nodes.iter().enumerate() {
        let ops = crate::rewrite::operands(&node.kind);
        if let Some(why) = ops.iter().find_map(|&a| match &carry[a] {
            Carry::Unsupported(why) => Some(why.clone()),
            _ => None,
        }) {
            carry.push(Carry::Unsupported(why));
            continue;
        }
        let axis = |a: usize| match carry[a] {
            Carry::Axis(p) => Some(p),
            _ => None,
        };
        if let NodeKind::ReadRange { .. } = node.kind {
            carry.push(if n == k || same_range(branch, n, k) { Carry::Axis(0) } else { Carry::Row });
            continue;
        }
        if !ops.iter().any(|&a| axis(a).is_some()) {
            carry.push(Carry::Row);
            continue;
        }
        let rank = node.ty.shape.len();
        let unsupported = |why: &str| Carry::Unsupported(why.to_string());
        let next = match &node.kind {
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => Carry::Axis(axis(*a).expect("carries")),
            NodeKind::Binary(..) | NodeKind::Compare(..) | NodeKind::Select(..) => {
                // Aligned from the right, as broadcasting aligns them.
                let mut at: Option<usize> = None;
                let mut fits = true;
                for &a in &ops {
                    let offset = rank - nodes[a].ty.shape.len();
                    if let Some(p) = axis(a) {
                        fits &= at.is_none_or(|q| q == p + offset);
                        at = Some(p + offset);
                    }
                }
                let at = at.expect("carries");
                for &a in &ops {
                    let offset = rank - nodes[a].ty.shape.len();
                    if axis(a).is_none() && at >= offset && nodes[a].ty.shape[at - offset] != 1 {
                        fits = false;
                    }
                }
                if fits { Carry::Axis(at) } else { unsupported("operands with the range at different axes") }
            }
            NodeKind::Reduce(kind, a, along) => {
                let p = axis(*a).expect("carries");
                match (*along == p, kind) {
                    (true, ReduceKind::CumSum) => unsupported("a running sum along the range"),
                    (true, _) => Carry::Collapse,
                    (false, ReduceKind::CumSum) => Carry::Axis(p),
                    (false, _) => Carry::Axis(if *along < p { p - 1 } else { p }),
                }
            }
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => match contraction_labels(branch, n) {
                None => unsupported("a batched product broadcasting its batch dimensions"),
                Some((ops, labels, result)) => {
                    let mut label: Option<char> = None;
                    let mut fits = true;
                    for (&a, l) in ops.iter().zip(&labels) {
                        if let Some(p) = axis(a) {
                            fits &= label.is_none_or(|c| c == l[p]);
                            label = Some(l[p]);
                        }
                    }
                    let label = label.expect("carries");
                    for (&a, l) in ops.iter().zip(&labels) {
                        fits &= axis(a).is_some() || !l.contains(&label);
                    }
                    match (fits, result.iter().position(|&c| c == label)) {
                        (false, _) => unsupported("a contraction of the range with another range"),
                        (true, Some(p)) => Carry::Axis(p),
                        (true, None) => Carry::Collapse,
                    }
                }
            },
            NodeKind::Move(movement, _) => {
                let a = ops[0];
                let p = axis(a).expect("a first operand carries");
                match movement {
                    Movement::Permute(permutation) => {
                        Carry::Axis(permutation.iter().position(|&x| x == p).expect("a permutation"))
                    }
                    Movement::Flip(along) if *along == p => unsupported("a flip along the range"),
                    Movement::Flip(_) => Carry::Axis(p),
                    Movement::Slice(offsets) => {
                        if offsets[p] != 0 || node.ty.shape[p] != DYNAMIC {
                            unsupported("a slice of the range")
                        } else {
                            Carry::Axis(p)
                        }
                    }
                    Movement::Reshape => {
                        let input = &nodes[a].ty.shape;
                        let dynamic = |s: &[i64]| s.iter().filter(|&&d| d == DYNAMIC).count();
                        match node.ty.shape.iter().position(|&d| d == DYNAMIC) {
                            Some(o) if dynamic(input) == 1 && reshape_fits(input, &node.ty.shape) => Carry::Axis(o),
                            _ => unsupported("a reshape moving the range"),
                        }
                    }
                    Movement::Expand => Carry::Axis(p + rank - nodes[a].ty.shape.len()),
                    Movement::Concat(along) => {
                        if *along != p && ops.iter().all(|&o| axis(o) == Some(p)) {
                            Carry::Axis(p)
                        } else {
                            unsupported("a concatenation with the range")
                        }
                    }
                    Movement::Arange => Carry::Row,
                }
            }
            NodeKind::Gather(table, indices) => match (axis(*table), axis(*indices)) {
                (None, Some(p)) => Carry::Axis(p),
                _ => unsupported("a gather from the range"),
            },
            NodeKind::DynamicSlice(..) => unsupported("a dynamic_slice of the range"),
            NodeKind::Attention(..) => unsupported("an attention inside an attention"),
            NodeKind::Call { .. } => unsupported("an external call on the range"),
            NodeKind::AllReduce(..) => unsupported("an all_reduce of values along the range"),
            NodeKind::ReadAt { .. } => unsupported("a read through data at coordinates from the range"),
            NodeKind::Read { .. }
            | NodeKind::ReadRange { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Position(_)
            | NodeKind::Bound(_)
            | NodeKind::Rank
            | NodeKind::WorldSize
            | NodeKind::Random { .. } => Carry::Row,
        };
        carry.push(next);
    }
    carry
}

/// A row value the element frame takes from the reader's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Stash {
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
struct Frame<'a, 'c> {
    branch: &'a Branch<'c>,
    carry: &'a [Carry],
    /// The softmax units on the gradient's path whose result carries the
    /// range, differentiated as units here as in the reader's frame.
    units: &'a [Softmax],
    /// The pivot and its source's point type and number of dimensions.
    k: usize,
    x_point: PointType,
    x_dims: usize,
    /// The pivot's range dimension in its source.
    range_dim: usize,
    /// The reader's point as expressions of `q`, `Dim(x_dims)` standing
    /// for the reader dimension that varies (when one does).
    point: Vec<AffineExpr>,
    num_symbols: usize,
    body: Body<'c>,
    elem: HashMap<usize, usize>,
    row: HashMap<usize, usize>,
    /// Requested in the first build; supplied in the second.
    requests: Vec<Stash>,
    values: HashMap<Stash, usize>,
    /// Whether stashed values are batched (a reader dimension varies).
    batched: bool,
    /// The diagnostic's subject (the pivot's source's name).
    what: String,
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
        self.body.push(NodeKind::Constant { text: String::new(), values: Vec::new(), integers: Vec::new() }, ty)
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
                // The same element of another read of the pivot's range.
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
                let kind = NodeKind::ReadRange { source: *source, lower: l, upper: vec![empty; upper.len()], caps: c };
                self.body.push(kind, PointType { shape, element })
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
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => {
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
                self.body.contract(&pairs, &result, &sizes)
            }
            NodeKind::Move(movement, ops) => {
                let rank = self.element_shape(ops[0]).len();
                let a = self.elem(ops[0])?;
                let batched = self.is_batched(a, rank);
                let b = batched as usize;
                if batched && matches!(movement, Movement::Slice(_) | Movement::Concat(_)) {
                    return Err(self.error(n, "a slice or concatenation of values that depend on the reader's point"));
                }
                match movement {
                    Movement::Permute(permutation) => {
                        let Carry::Axis(from) = self.carry[ops[0]] else { unreachable!("carries") };
                        let mut out: Vec<usize> = if batched { vec![0] } else { Vec::new() };
                        out.extend(
                            permutation.iter().filter(|&&x| x != from).map(|&x| if x > from { x - 1 } else { x } + b),
                        );
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
                }
            }
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
    fn build(&mut self, on: &[bool], collapses: &[usize]) -> Result<usize, PassDiagnostic<'c>> {
        let point = self.x_point.clone();
        Ok(self.build_all(on, collapses, &[(self.k, point)])?[0])
    }

    /// [`Frame::build`] for several reads of the pivot's range at once (the
    /// pivot first; `(read node, its source's point type)`), whose sources
    /// share the pivot's domain: one sweep, the forward elements computed
    /// once; their cotangents in order.
    fn build_all(
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

fn add(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    AffineExpr::Add(Box::new(a), Box::new(b))
}

fn sub(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    super::sub(a, b)
}

fn neg(a: AffineExpr) -> AffineExpr {
    AffineExpr::Mul(Box::new(a), Box::new(AffineExpr::Constant(-1)))
}

/// One piece of the reader points where a branch defines the reader: the
/// conditions on `q`, and the bounds the varying reader dimension
/// (`Dim(var)`) must keep (lower bounds, exclusive upper bounds).
#[derive(Clone, Debug, Default, PartialEq)]
struct Piece {
    conditions: Vec<Constraint>,
    los: Vec<AffineExpr>,
    his: Vec<AffineExpr>,
}

impl Piece {
    /// Adds `c` (over `q` and `Dim(var)`); an error where the varying
    /// dimension enters with a coefficient other than 1 or -1 or through a
    /// division.
    fn and(mut self, c: &Constraint, var: usize) -> Result<Piece, String> {
        let (coefficient, rest) = match c.expr.linear() {
            // rest = e - a * r, rebuilt from its coefficients.
            Some((dims, symbols, constant)) => {
                let mut rest = AffineExpr::Constant(constant);
                for (d, &k) in dims.iter().enumerate() {
                    if k != 0 && d != var {
                        rest =
                            add(rest, AffineExpr::Mul(Box::new(AffineExpr::Dim(d)), Box::new(AffineExpr::Constant(k))));
                    }
                }
                for (j, &k) in symbols.iter().enumerate() {
                    if k != 0 {
                        rest = add(
                            rest,
                            AffineExpr::Mul(Box::new(AffineExpr::Symbol(j)), Box::new(AffineExpr::Constant(k))),
                        );
                    }
                }
                (dims.get(var).copied().unwrap_or(0), rest)
            }
            None if !mentions(&c.expr, var) => (0, c.expr.clone()),
            None => return Err("a branch condition with mod or division of the reader's varying dimension".into()),
        };
        match (coefficient, c.is_equality) {
            (0, _) => self.conditions.push(c.clone()),
            // r + rest >= 0: r >= -rest.
            (1, false) => self.los.push(neg(rest)),
            // rest - r >= 0: r < rest + 1.
            (-1, false) => self.his.push(add(rest, AffineExpr::Constant(1))),
            (1, true) => {
                self.los.push(neg(rest.clone()));
                self.his.push(add(neg(rest), AffineExpr::Constant(1)));
            }
            (-1, true) => {
                self.los.push(rest.clone());
                self.his.push(add(rest, AffineExpr::Constant(1)));
            }
            _ => {
                return Err(
                    "a branch condition with a coefficient other than 1 or -1 on the reader's varying dimension".into(),
                );
            }
        }
        Ok(self)
    }
}

/// Whether `e` names `Dim(var)`.
fn mentions(e: &AffineExpr, var: usize) -> bool {
    match e {
        AffineExpr::Dim(d) => *d == var,
        AffineExpr::Symbol(_) | AffineExpr::Constant(_) => false,
        AffineExpr::Add(a, b)
        | AffineExpr::Mul(a, b)
        | AffineExpr::Mod(a, b)
        | AffineExpr::FloorDiv(a, b)
        | AffineExpr::CeilDiv(a, b) => mentions(a, var) || mentions(b, var),
    }
}

/// `not c` as disjoint constraints.
fn negate(c: &Constraint) -> Vec<Constraint> {
    let minus_one = |e: AffineExpr| add(e, AffineExpr::Constant(-1));
    if c.is_equality {
        vec![ge0(minus_one(c.expr.clone())), ge0(minus_one(neg(c.expr.clone())))]
    } else {
        vec![ge0(minus_one(neg(c.expr.clone())))]
    }
}

fn ge0(e: AffineExpr) -> Constraint {
    pullback::ge0(e)
}

/// The reader points (as pieces) where branch `b` of `branches` defines
/// the reader, their conditions substituted with `point` (over `q` and
/// `Dim(var)`): `b`'s condition and no earlier one's, as disjoint pieces.
fn active_pieces(branches: &[Branch], b: usize, point: &[AffineExpr], var: usize) -> Result<Vec<Piece>, String> {
    let subst = |c: &Constraint| Constraint { expr: pullback::substitute(&c.expr, point), is_equality: c.is_equality };
    let mut pieces = vec![Piece::default()];
    for c in &branches[b].when.constraints {
        pieces = pieces.into_iter().map(|p| p.and(&subst(c), var)).collect::<Result<_, _>>()?;
    }
    for earlier in &branches[..b] {
        // not (c1 and ... and cm) = (not c1) or (c1 and not c2) or ...
        let constraints: Vec<Constraint> = earlier.when.constraints.iter().map(subst).collect();
        let mut next = Vec::new();
        for piece in &pieces {
            for i in 0..constraints.len() {
                for negated in negate(&constraints[i]) {
                    let mut p = piece.clone();
                    for c in &constraints[..i] {
                        p = p.and(c, var)?;
                    }
                    next.push(p.and(&negated, var)?);
                }
            }
        }
        pieces = next;
        if pieces.len() > 16 {
            return Err("branch conditions that split the reader points into more than 16 pieces".into());
        }
    }
    Ok(pieces)
}

/// What one range read's gradient needs, found before the stash is built.
struct Plan<'c> {
    k: usize,
    read: crate::program::Node<'c>,
    x: usize,
    what: String,
    range_dim: usize,
    carry: Vec<Carry>,
    on: Vec<bool>,
    collapses: Vec<usize>,
    units: Vec<Softmax>,
    /// Conditions on q from the point coordinates.
    constraints: Vec<Constraint>,
    /// The reader's point over q (`Dim(x_dims)`: the varying dimension).
    point: Vec<AffineExpr>,
    /// The varying dimension's bounds, if one varies.
    varying: Option<(Vec<AffineExpr>, Vec<AffineExpr>)>,
    pieces: Vec<Piece>,
    requests: Vec<Stash>,
    /// Other reads of the same range whose sources share the pivot's
    /// domain and element type, differentiated in the pivot's frame (one
    /// sweep: the scores and weights of an attention computed once for the
    /// keys' and the values' cotangents): `(read node, source)`.
    others: Vec<(usize, usize)>,
}

impl<'c> Plan<'c> {
    /// An element frame for this read (empty body).
    fn frame<'a>(&'a self, branch: &'a Branch<'c>, program: &Program<'c>) -> Frame<'a, 'c> {
        Frame {
            branch,
            carry: &self.carry,
            units: &self.units,
            k: self.k,
            x_point: program.tensors[self.x].point.clone(),
            x_dims: program.tensors[self.x].domain.len(),
            range_dim: self.range_dim,
            point: self.point.clone(),
            num_symbols: program.dims.len(),
            body: Body::new(self.read.location),
            elem: HashMap::new(),
            row: HashMap::new(),
            requests: Vec::new(),
            values: HashMap::new(),
            batched: self.varying.is_some(),
            what: self.what.clone(),
        }
    }
}

/// Plans the gradient of range read `k` of `branch` (branch `b` of reader
/// `r`): which reader points read each source point, the pieces where the
/// branch defines them, and the row values the element frame requests.
fn plan<'c>(
    program: &Program<'c>,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    k: usize,
) -> Result<Plan<'c>, PassDiagnostic<'c>> {
    let reader = program.tensors[r].clone();
    let read = branch.nodes[k].clone();
    let NodeKind::ReadRange { source: x, lower, upper, caps } = &read.kind else { unreachable!("a range read") };
    let x = *x;
    let (lower, upper, caps) = (lower.clone(), upper.clone(), caps.clone());
    let what = program.tensors[x].name.clone();
    let refuse = |why: &str| {
        PassDiagnostic::new(
            read.location,
            format!("temporal-autodiff: no gradient through this read of a range of '{what}' yet: {why}"),
        )
    };
    let range_dims: Vec<usize> = (0..upper.len()).filter(|&j| !upper[j].results.is_empty()).collect();
    let [range_dim] = range_dims[..] else {
        return Err(refuse("a box over several range dimensions"));
    };
    let carry = analyse(branch, k);
    let on = vjp::on_path(&branch.nodes, k, branch.result);
    // Softmax units are differentiated whole (as the reader's frame does):
    // the inner collapses (maximum and sum) of one that nothing else reads
    // then pass no cotangent.
    let units: Vec<Softmax> =
        softmax::all(&branch.nodes).into_iter().filter(|u| on[u.p] && matches!(carry[u.p], Carry::Axis(_))).collect();
    let silent: Vec<usize> =
        units.iter().filter(|u| softmax::closed(&branch.nodes, u)).flat_map(|u| u.inner.iter().copied()).collect();
    let collapses: Vec<usize> =
        (0..branch.nodes.len()).filter(|&c| on[c] && carry[c] == Carry::Collapse && !silent.contains(&c)).collect();
    if let Some(n) = (0..branch.nodes.len()).find(|&n| on[n] && matches!(carry[n], Carry::Unsupported(_))) {
        let Carry::Unsupported(why) = &carry[n] else { unreachable!("unsupported") };
        return Err(PassDiagnostic::new(
            branch.nodes[n].location,
            format!("temporal-autodiff: no gradient through this read of a range of '{what}' yet: {why}"),
        ));
    }
    // Which reader points read q: per source dimension.
    let source_domain = program.tensors[x].domain.clone();
    let x_dims = source_domain.len();
    let bounds = reader.domain.clone();
    let dims = bounds.len();
    let mut constraints: Vec<Constraint> = Vec::new();
    let mut coords: Vec<Option<Coordinate>> = vec![None; dims];
    for j in 0..x_dims {
        let case = if j == range_dim {
            let (constraints, assign) =
                pullback::range_case(j, source_domain[j], &lower[j].results, &upper[j].results, &bounds)
                    .map_err(|why| refuse(&why))?;
            Case { constraints, assign: assign.map(|(rd, los, his)| (rd, Coordinate::Box(los, his))) }
        } else {
            match &pullback::cases(j, source_domain[j], &lower[j].results, &caps[j].results, &bounds)
                .map_err(|why| refuse(&why))?[..]
            {
                [case] => case.clone(),
                _ => return Err(refuse("a clamped point coordinate beside the range")),
            }
        };
        constraints.extend(case.constraints);
        if let Some((rd, coordinate)) = case.assign {
            if coords[rd].is_some() {
                return Err(refuse("one reader dimension in several coordinates"));
            }
            coords[rd] = Some(coordinate);
        }
    }
    // The reader's point: expressions of q, and at most one dimension that
    // varies (over an interval).
    let mut point: Vec<AffineExpr> = Vec::new();
    let mut varying: Option<(Vec<AffineExpr>, Vec<AffineExpr>)> = None;
    for (rd, coordinate) in coords.into_iter().enumerate() {
        let extent = AffineExpr::Symbol(bounds[rd]);
        let (los, his) = match coordinate {
            Some(Coordinate::Point(e)) => {
                point.push(e);
                continue;
            }
            Some(Coordinate::Box(los, his)) => (los, his),
            Some(Coordinate::Range(..) | Coordinate::Strided(..)) => {
                return Err(refuse("a coordinate with floordiv or mod beside the range"));
            }
            None => (vec![AffineExpr::Constant(0)], vec![extent]),
        };
        if varying.is_some() {
            return Err(refuse("several reader dimensions reading one point (not yet)"));
        }
        point.push(AffineExpr::Dim(x_dims));
        varying = Some((los, his));
    }
    let pieces = active_pieces(&reader.branches, b, &point, x_dims).map_err(|why| refuse(&why))?;
    let mut plan = Plan {
        k,
        read: read.clone(),
        x,
        what: what.clone(),
        range_dim,
        carry,
        on,
        collapses,
        units,
        constraints,
        point,
        varying,
        pieces,
        requests: Vec::new(),
        others: Vec::new(),
    };
    let mut frame = plan.frame(branch, program);
    frame.build(&plan.on, &plan.collapses)?;
    let requests = std::mem::take(&mut frame.requests);
    plan.requests = requests;
    Ok(plan)
}

/// `plans` with those of reads of one range whose sources share a domain
/// and an element type (and so the reader points and pieces) joined into
/// the first one's frame: the union of their paths, collapses and units,
/// and the requests of the joined frame.
fn join<'c>(
    plans: Vec<Plan<'c>>,
    branch: &Branch<'c>,
    program: &Program<'c>,
) -> Result<Vec<Plan<'c>>, PassDiagnostic<'c>> {
    let mut out: Vec<Plan<'c>> = Vec::new();
    for plan in plans {
        let fits = |lead: &Plan<'c>| {
            let (a, b) = (&program.tensors[lead.x], &program.tensors[plan.x]);
            same_range(branch, lead.k, plan.k)
                && a.domain == b.domain
                && a.point.element == b.point.element
                && lead.range_dim == plan.range_dim
                && lead.point == plan.point
                && lead.varying == plan.varying
                && lead.constraints == plan.constraints
                && lead.pieces == plan.pieces
        };
        match out.iter_mut().find(|lead| fits(lead)) {
            Some(lead) => {
                for (n, on) in plan.on.iter().enumerate() {
                    lead.on[n] |= *on;
                }
                lead.others.push((plan.k, plan.x));
            }
            None => out.push(plan),
        }
    }
    for lead in out.iter_mut().filter(|p| !p.others.is_empty()) {
        let (on, carry) = (&lead.on, &lead.carry);
        lead.units = softmax::all(&branch.nodes)
            .into_iter()
            .filter(|u| on[u.p] && matches!(carry[u.p], Carry::Axis(_)))
            .collect();
        let silent: Vec<usize> = lead
            .units
            .iter()
            .filter(|u| softmax::closed(&branch.nodes, u))
            .flat_map(|u| u.inner.iter().copied())
            .collect();
        lead.collapses =
            (0..branch.nodes.len()).filter(|&c| on[c] && carry[c] == Carry::Collapse && !silent.contains(&c)).collect();
        let reads = lead.reads(program);
        let mut frame = lead.frame(branch, program);
        frame.build_all(&lead.on, &lead.collapses, &reads)?;
        lead.requests = std::mem::take(&mut frame.requests);
    }
    Ok(out)
}

impl<'c> Plan<'c> {
    /// The reads the frame differentiates, with their sources' point types.
    fn reads(&self, program: &Program<'c>) -> Vec<(usize, PointType)> {
        std::iter::once((self.k, self.x))
            .chain(self.others.iter().copied())
            .map(|(k, x)| (k, program.tensors[x].point.clone()))
            .collect()
    }
}

/// The planned gradients of the range reads of one branch: the element
/// frames to build and the row values they read at the reader's points
/// (the *stash*, which the reader's own backward sweep computes beside the
/// cotangents of its point reads: `cotangents` in `temporal_autodiff.rs`).
pub(super) struct Planned<'c> {
    plans: Vec<Plan<'c>>,
    pub requests: Vec<Stash>,
}

/// Plans the gradients of the range reads `pivots` of `branch` (branch
/// `b` of reader `r`).
pub(super) fn prepare<'c>(
    program: &Program<'c>,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    pivots: &[usize],
) -> Result<Planned<'c>, PassDiagnostic<'c>> {
    let plans: Vec<Plan<'c>> = pivots.iter().map(|&k| plan(program, r, b, branch, k)).collect::<Result<_, _>>()?;
    let plans = join(plans, branch, program)?;
    let mut requests: Vec<Stash> = Vec::new();
    for plan in &plans {
        for item in &plan.requests {
            if !requests.contains(item) {
                requests.push(*item);
            }
        }
    }
    Ok(Planned { plans, requests })
}

/// The nodes whose cotangents (in the reader's backward sweep) the stash
/// of `requests` needs.
pub(super) fn swept(requests: &[Stash]) -> Vec<usize> {
    requests
        .iter()
        .filter_map(|s| match s {
            Stash::Cotangent(c) | Stash::SoftmaxDot(c) => Some(*c),
            _ => None,
        })
        .collect()
}

/// The value of each of `requests` in `body` (a copy of `branch`'s nodes
/// and its backward sweep, whose cotangents are `found`).
pub(super) fn stash_values(
    body: &mut Body,
    branch: &Branch,
    requests: &[Stash],
    found: &HashMap<usize, usize>,
) -> Vec<usize> {
    let mut values = Vec::new();
    for item in requests {
        values.push(match *item {
            Stash::Forward(n) => n,
            Stash::Cotangent(c) => match found.get(&c) {
                Some(&ct) => ct,
                None => body.zeros(&branch.nodes[c].ty),
            },
            Stash::Count(c) => {
                let NodeKind::Reduce(_, a, axis) = branch.nodes[c].kind else { unreachable!("a mean") };
                let ones = body.like(a, 1.0, branch.nodes[c].ty.element);
                body.reduce(ReduceKind::Sum, ones, axis)
            }
            Stash::SoftmaxDot(p) => {
                let axis = softmax::find(&branch.nodes, p).expect("a softmax unit").axis;
                match found.get(&p) {
                    Some(&dp) => {
                        let product = body.mul(p, dp);
                        body.reduce(ReduceKind::Sum, product, axis)
                    }
                    None => {
                        let mut ty = branch.nodes[p].ty.clone();
                        ty.shape.remove(axis);
                        body.zeros(&ty)
                    }
                }
            }
        });
    }
    values
}

/// The contributions of the planned range reads of `branch` (branch `b`
/// of reader `r`) to their sources' adjoints: per read (or joined reads)
/// and per piece of reader points a tensor over the read's source's
/// domain, reading the row values it needs from the tensors `stash` over
/// the reader's domain (where each request lies in them).
pub(super) fn contributions<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    planned: Planned<'c>,
    stash: Vec<StashTensor>,
) -> Result<Vec<(usize, Contribution<'c>)>, PassDiagnostic<'c>> {
    let num_symbols = program.dims.len();
    let reader = program.tensors[r].clone();
    let plans = planned.plans;
    let location = plans[0].read.location;
    // Each packed value in a tensor of its own (cut from the packed one
    // point by point), so that reads of ranges of it need no slice of a
    // dynamic shape.
    let mut parts_split: HashMap<(usize, Stash), usize> = HashMap::new();
    for (f, parts) in &stash {
        for (item, extract) in parts {
            let Some((offset, part)) = extract else { continue };
            let dims = reader.domain.len();
            let mut body = Body::new(location);
            let ty = program.tensors[*f].point.clone();
            let whole = body.push(NodeKind::Read { source: *f, index: super::identity(dims, num_symbols) }, ty);
            let value = super::unpack(&mut body, whole, Some(&(*offset, part.clone())));
            let name = format!("{g_name}$f${}${}${}", reader.name, b, parts_split.len());
            let t = super::push_tensor(program, name, reader.domain.clone(), part.clone(), location);
            program.tensors[t].branches =
                vec![Branch { when: super::universe(dims, num_symbols), nodes: body.nodes, result: value, location }];
            parts_split.insert((*f, *item), t);
        }
    }
    let mut out = Vec::new();
    for plan in &plans {
        let (k, read, x, point, varying) = (plan.k, &plan.read, plan.x, &plan.point, &plan.varying);
        let source_domain = program.tensors[x].domain.clone();
        let x_dims = source_domain.len();
        let x_point = program.tensors[x].point.clone();
        for (index, piece) in plan.pieces.iter().enumerate() {
            let mut frame = plan.frame(branch, program);
            let mut when = plan.constraints.clone();
            when.extend(piece.conditions.iter().cloned());
            // The stashed values at the reader points reading q.
            let map = |results: Vec<AffineExpr>| AffineMap { num_dims: x_dims, num_symbols, results };
            let (mut l, mut u) = (Vec::new(), Vec::new());
            let mut interval = None;
            for e in point {
                if *e == AffineExpr::Dim(x_dims) {
                    let (mut los, mut his) = varying.clone().expect("a varying dimension");
                    los.extend(piece.los.iter().cloned());
                    his.extend(piece.his.iter().cloned());
                    for lo in &los {
                        for hi in &his {
                            let c = ge0(sub(sub(hi.clone(), lo.clone()), AffineExpr::Constant(1)));
                            if !when.contains(&c) {
                                when.push(c);
                            }
                        }
                    }
                    l.push(map(los.clone()));
                    u.push(map(his.clone()));
                    interval = Some(());
                } else {
                    l.push(map(vec![e.clone()]));
                    u.push(map(Vec::new()));
                }
            }
            for (f, parts) in &stash {
                for (item, extract) in parts {
                    let f = match extract {
                        None => *f,
                        Some(_) => parts_split[&(*f, *item)],
                    };
                    let point_ty = program.tensors[f].point.clone();
                    let value = if interval.is_some() {
                        let mut shape = vec![DYNAMIC];
                        shape.extend(&point_ty.shape);
                        let caps = vec![map(Vec::new()); point.len()];
                        let kind = NodeKind::ReadRange { source: f, lower: l.clone(), upper: u.clone(), caps };
                        frame.body.push(kind, PointType { shape, element: point_ty.element })
                    } else {
                        frame.body.push(NodeKind::Read { source: f, index: map(point.clone()) }, point_ty)
                    };
                    frame.values.insert(*item, value);
                }
            }
            let reads = plan.reads(program);
            let results = frame.build_all(&plan.on, &plan.collapses, &reads)?;
            // Several reads' cotangents side by side, flattened.
            let (result, a_point, extracts) = if let [only] = results[..] {
                (only, x_point.clone(), vec![None])
            } else {
                let mut packed: Option<usize> = None;
                let mut extracts = Vec::new();
                let mut offset = 0;
                for (&v, (_, point)) in results.iter().zip(&reads) {
                    let size = point.num_elements() as i64;
                    let flat = frame.body.reshape(v, &[size]);
                    packed = Some(packed.map_or(flat, |p| frame.body.concat(p, flat, 0)));
                    extracts.push(Some((offset, point.clone())));
                    offset += size;
                }
                let packed = packed.expect("several reads");
                (packed, frame.body.ty(packed).clone(), extracts)
            };
            let mut a_branch = Branch {
                when: IntegerSet { num_dims: x_dims, num_symbols, constraints: when },
                nodes: frame.body.nodes,
                result,
                location: read.location,
            };
            let live = live_nodes(&a_branch);
            let identity: Vec<usize> = (0..a_branch.nodes.len()).collect();
            super::compact(&mut a_branch, &live, &identity);
            let mut branches = vec![a_branch];
            if !branches[0].when.is_universe() {
                branches.push(super::zero_branch(super::universe(x_dims, num_symbols), &a_point, read.location));
            }
            let a_name = format!("{g_name}$a${}${}${}${}", reader.name, b, k, index);
            let a = super::push_tensor(program, a_name, source_domain.clone(), a_point.clone(), read.location);
            program.tensors[a].branches = branches;
            let identity = map((0..x_dims).map(AffineExpr::Dim).collect());
            let sources = std::iter::once(x).chain(plan.others.iter().map(|&(_, x)| x));
            for (source, extract) in sources.zip(extracts) {
                let read_a = NodeKind::Read { source: a, index: identity.clone() };
                out.push((source, (read_a, a_point.clone(), extract, read.location)));
            }
        }
    }
    Ok(out)
}

/// A stash tensor and where each stashed value sits in it.
pub(super) type StashTensor = (usize, Vec<(Stash, Option<(i64, PointType)>)>);
