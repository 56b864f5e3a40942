//! `temporal-lift-recurrences`: turns reductions over growing ranges into
//! recurrences. A branch that reads `x[0:t+1, ...]` and sums it (or takes
//! its maximum) along the range does `t + 1` steps of work at step `t`,
//! `O(T^2)` in all; the pass adds a tensor `P[t, ...] = P[t-1, ...] + x[t, ...]`
//! (`P[0, ...] = 0 + x[0, ...]`) and reads `P[t, ...]` instead: one step of
//! work per point, and a ring of two points instead of a store of growing
//! blocks for `x`'s prefixes.
//!
//! Exact: the recurrence adds the same elements in the same order from the
//! same starting value (`0` for sums, `-inf` or the smallest integer for
//! maxima) as the reduction does, so results are equal bit for bit. Suffix
//! reductions `x[t:T]` in a backward recurrence would add in the other
//! order; they are lifted for integers (wrapping sums and maxima are
//! associative) and, with the option `inexact`, for floats.
//!
//! A sum over a sliding window `x[max(0, t-w+1):t+1]` becomes a difference
//! of prefix sums, `P[t] - P[t-w]` (`P[t]` while `t < w`): one subtraction
//! per point instead of `w` additions. Integer sums wrap, so this is exact
//! for them; for floats (cancellation changes rounding) only with
//! `inexact`.
//!
//! Incrementalization: a sum or maximum over a whole range `x[0:D]` read
//! after `d`'s loop (by a tensor without `d`, e.g. a loss over all steps)
//! becomes the last point `P[D-1]` of the prefix recurrence, with the
//! reader's branch split on `D >= 1` (an empty range keeps its starting
//! value). Exact as above, and `x` no longer needs a store of all its `D`
//! points: the recurrence keeps two.
//!
//! The reduced value may be an elementwise expression of range reads and
//! constants, e.g. a loss `sum(0.5 * (pred[0:T] - target[0:T])^2)`: the
//! recurrence reads the point of each range and computes the expression
//! there, `P[t] = P[t-1] + 0.5 * (pred[t] - target[t])^2`, the same values
//! in the same order (exact), and no source needs a store of all its
//! points. Its range reads must all have the same form along the same
//! dimension (sources over the same dimensions), and its constants (or
//! points of inputs the same everywhere) fewer dimensions than the range
//! (so that they broadcast against a point as against the range).
//!
//! Contractions too: an einsum whose only summed label leads its operands
//! over the range (gradient accumulation, `einsum("ti,tj->ij", x[0:T],
//! g[0:T])`) is the sum over the range of the einsum of the points, which
//! adds the same products from zero in the same order:
//! `P[t] = P[t-1] + einsum("i,j->ij", x[t], g[t])`, exact. Einsums summing
//! other labels too add in another order and stay.
//!
//! Applies to a `reduce_sum` or `reduce_max` along axis 0 of a range read
//! (or of such an expression) with one ranged dimension `d` of its source,
//! whose range is `0 : v + 1` (or `v : D` for suffixes) for the reader's
//! own variable `v` of `d`, and whose other coordinates are the reader's
//! own variables of those dimensions. Assumes a program accepted by
//! `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::print::dense;
use crate::program::{
    BinaryKind, Branch, DYNAMIC, Einsum, ElementType, Node, NodeKind, PointType, Program, ReduceKind, Tensor,
};
use crate::rewrite::{compact_branch, live_nodes};
use melior::ir::Location;
use std::collections::HashMap;

/// The `temporal-lift-recurrences` pass.
pub struct TemporalLiftRecurrences;

impl TempoPass for TemporalLiftRecurrences {
    fn name(&self) -> &'static str {
        "temporal-lift-recurrences"
    }
    fn summary(&self) -> &'static str {
        "Replace sums and maxima over prefixes x[0:t+1] (and integer suffixes, and whole ranges read after their loop), of elementwise expressions of such ranges, and einsums summing only the range, by running recurrences P[t] = P[t-1] + x[t]"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] =
            &[PassOption::flag("inexact", false, "Also lift float suffix reductions (changes rounding)")];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalLiftRecurrences {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        _at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        Ok(lift_recurrences(program, options.flag("inexact")))
    }
}

/// Which range of the ranged dimension a reduction covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Form {
    /// `0 : v + 1`
    Prefix,
    /// `v : D`
    Suffix,
    /// `max(0, v - w + 1) : v + 1`
    Window(i64),
    /// `0 : D`, read by a tensor without the dimension (after its loop).
    Whole,
}

/// A reduction over a range the pass can lift: source, ranged position,
/// kind, range form, the reader's variable position of each source
/// dimension, and the elementwise expression reduced (none: the range).
#[derive(Clone, Debug)]
struct Liftable {
    source: usize,
    ranged: usize,
    kind: ReduceKind,
    form: Form,
    reader_positions: Vec<usize>,
    map: Option<PointMap>,
}

impl Liftable {
    /// What identifies the recurrence (the same for every reader of it).
    fn key(&self) -> String {
        format!("{}|{}|{:?}|{:?}|{:?}", self.source, self.ranged, self.kind, self.form, self.map)
    }
}

/// An elementwise expression over ranges of several tensors (and
/// constants and inputs' points), possibly ending in an einsum, as applied
/// to one point of each range: `nodes` in branch order, operands numbering
/// earlier nodes; a leaf reading a range is a `ReadRange` of its source
/// with no bounds (the recurrence reads the point), a `Read` is a point of
/// an input the same everywhere.
#[derive(Clone, Debug, PartialEq)]
struct PointMap {
    nodes: Vec<(NodeKind, PointType)>,
}

impl PointMap {
    /// The point type of the expression's value.
    fn result_type(&self) -> &PointType {
        &self.nodes.last().expect("a map has nodes").1
    }
}

/// The operands of an elementwise node (`None` for other kinds).
fn elementwise_operands(kind: &NodeKind) -> Option<Vec<usize>> {
    match kind {
        NodeKind::Unary(_, a) | NodeKind::Cast(a) => Some(vec![*a]),
        NodeKind::Binary(_, a, b) | NodeKind::Compare(_, a, b) => Some(vec![*a, *b]),
        NodeKind::Select(c, a, b) => Some(vec![*c, *a, *b]),
        _ => None,
    }
}

/// With an operand numbering map, an elementwise node's kind renumbered.
fn renumbered(kind: &NodeKind, new: impl Fn(usize) -> usize) -> NodeKind {
    match kind.clone() {
        NodeKind::Unary(op, a) => NodeKind::Unary(op, new(a)),
        NodeKind::Cast(a) => NodeKind::Cast(new(a)),
        NodeKind::Binary(op, a, b) => NodeKind::Binary(op, new(a), new(b)),
        NodeKind::Compare(op, a, b) => NodeKind::Compare(op, new(a), new(b)),
        NodeKind::Select(c, a, b) => NodeKind::Select(new(c), new(a), new(b)),
        NodeKind::Einsum(spec, operands) => NodeKind::Einsum(spec, operands.into_iter().map(new).collect()),
        other => other,
    }
}

/// Whether `map` has the single result `Dim(j) + c`.
fn is_dim_plus(map: &AffineMap, j: usize, c: i64) -> bool {
    matches!(map.results.as_slice(), [e] if e.linear().is_some_and(|(dims, symbols, constant)| {
        // (`linear` drops trailing zero coefficients: the coefficient of
        // d_j must be present and 1.)
        constant == c
            && symbols.iter().all(|&s| s == 0)
            && dims.get(j) == Some(&1)
            && dims.iter().enumerate().all(|(i, &k)| k == i64::from(i == j))
    }))
}

fn is_constant(map: &AffineMap, c: i64) -> bool {
    matches!(map.results.as_slice(), [e] if e.as_constant() == Some(c))
}

/// For lower bounds `max(0, d_j - w + 1)` (in either order), `w >= 1`.
fn window_width(map: &AffineMap, j: usize) -> Option<i64> {
    let [a, b] = map.results.as_slice() else { return None };
    let (zero, start) = if a.as_constant() == Some(0) { (a, b) } else { (b, a) };
    if zero.as_constant() != Some(0) {
        return None;
    }
    let single = AffineMap { num_dims: map.num_dims, num_symbols: map.num_symbols, results: vec![start.clone()] };
    let (_, _, c) = start.linear()?;
    (c <= 0 && is_dim_plus(&single, j, c)).then_some(1 - c)
}

fn is_symbol(map: &AffineMap, s: usize) -> bool {
    matches!(map.results.as_slice(), [AffineExpr::Symbol(x)] if *x == s)
}

/// The lift of node `k` of a branch of `reader`, if it is one: a sum or
/// maximum along axis 0 of a range read, or of an elementwise expression
/// whose leaves are range reads of the same form (of sources over the same
/// dimensions), constants and points of inputs the same everywhere; or an
/// einsum summing a single label, which leads each of its operands that
/// are such expressions (its other operands are constants or such input
/// points): the sum over the range of the einsum of the points.
fn liftable(program: &Program, reader: usize, branch: &Branch, k: usize, inexact: bool) -> Option<Liftable> {
    let (kind, roots, contraction) = match &branch.nodes[k].kind {
        NodeKind::Reduce(kind @ (ReduceKind::Sum | ReduceKind::Max), r, 0) => (*kind, vec![*r], None),
        NodeKind::Einsum(spec, operands) => {
            let summed = spec.summed();
            let [label] = summed.as_slice() else { return None };
            if spec.operands.iter().any(|labels| labels.iter().position(|c| c == label).is_some_and(|p| p != 0)) {
                return None;
            }
            (ReduceKind::Sum, operands.clone(), Some((spec.clone(), *label)))
        }
        _ => return None,
    };
    // The nodes of the expressions reduced, in branch order.
    let mut members = roots.clone();
    let mut pending = roots.clone();
    while let Some(n) = pending.pop() {
        if let Some(operands) = elementwise_operands(&branch.nodes[n].kind) {
            for a in operands {
                if !members.contains(&a) {
                    members.push(a);
                    pending.push(a);
                }
            }
        }
    }
    members.sort_unstable();
    members.dedup();
    let mut leaf: Option<Liftable> = None;
    let mut ranged_nodes = vec![false; branch.nodes.len()];
    for &n in &members {
        let node = &branch.nodes[n];
        match &node.kind {
            NodeKind::ReadRange { .. } => {
                let found = range_leaf(program, reader, branch, n, kind)?;
                match &leaf {
                    None => leaf = Some(found),
                    Some(first) => {
                        let same_dims = program.tensors[first.source].domain == program.tensors[found.source].domain;
                        if !same_dims
                            || first.ranged != found.ranged
                            || first.form != found.form
                            || first.reader_positions != found.reader_positions
                        {
                            return None;
                        }
                    }
                }
                ranged_nodes[n] = true;
            }
            NodeKind::Constant { .. } => {}
            NodeKind::Read { source, index } => {
                // The same point of an input wherever it is read from.
                if !program.tensors[*source].is_input || index.results.iter().any(|e| e.uses_dims()) {
                    return None;
                }
            }
            other => {
                let operands = elementwise_operands(other)?;
                ranged_nodes[n] = operands.iter().any(|&a| ranged_nodes[a]);
                // What is combined with a range broadcasts against one of
                // its points as against the range (trailing alignment): it
                // has fewer dimensions than the range.
                if ranged_nodes[n]
                    && operands
                        .iter()
                        .any(|&a| !ranged_nodes[a] && branch.nodes[a].ty.shape.len() >= node.ty.shape.len())
                {
                    return None;
                }
            }
        }
    }
    let mut lift = leaf?;
    // A reduction's operand, and exactly the einsum's operands with the
    // summed label, run over the range.
    match &contraction {
        None => {
            if !ranged_nodes[roots[0]] {
                return None;
            }
        }
        Some((spec, label)) => {
            for (labels, &operand) in spec.operands.iter().zip(&roots) {
                if labels.contains(label) != ranged_nodes[operand] {
                    return None;
                }
            }
        }
    }
    let map = if members.len() == 1 && contraction.is_none() {
        None
    } else {
        let position = |a: usize| members.iter().position(|&m| m == a).expect("operands are members");
        let mut nodes = Vec::new();
        for &n in &members {
            let node = &branch.nodes[n];
            let (kind, shape) = match &node.kind {
                NodeKind::ReadRange { source, .. } => {
                    // (In a map, the point of the range.)
                    let point = NodeKind::ReadRange { source: *source, lower: vec![], upper: vec![], caps: vec![] };
                    (point, node.ty.shape[1..].to_vec())
                }
                NodeKind::Constant { .. } | NodeKind::Read { .. } => (node.kind.clone(), node.ty.shape.clone()),
                other if ranged_nodes[n] => (renumbered(other, position), node.ty.shape[1..].to_vec()),
                other => (renumbered(other, position), node.ty.shape.clone()),
            };
            nodes.push((kind, PointType { shape, element: node.ty.element }));
        }
        if let Some((spec, label)) = &contraction {
            // The einsum of the points: the summed label dropped.
            let operands = spec.operands.iter().map(|labels| labels.iter().filter(|c| *c != label).copied().collect());
            let per_point = Einsum { operands: operands.collect(), result: spec.result.clone() };
            let operands = roots.iter().map(|&a| position(a)).collect();
            nodes.push((NodeKind::Einsum(per_point, operands), branch.nodes[k].ty.clone()));
        }
        Some(PointMap { nodes })
    };
    if let Some(map) = &map {
        // The reduction's result is the expression's point.
        if map.result_type() != &branch.nodes[k].ty {
            return None;
        }
    }
    if !exact_enough(&lift, branch.nodes[k].ty.element.is_float(), inexact) {
        return None;
    }
    lift.map = map;
    Some(lift)
}

/// A reduction of kind `kind` of the range read `r` (node `r` of a branch of
/// `reader`), if its range has a liftable form.
fn range_leaf(program: &Program, reader: usize, branch: &Branch, r: usize, kind: ReduceKind) -> Option<Liftable> {
    let NodeKind::ReadRange { source, lower, upper, caps } = &branch.nodes[r].kind else { return None };
    // A range whose type states a static length is an error at every point
    // where the range holds another number of points (checked there, as in
    // the interpreter): it is not lifted, which would drop the check.
    let ranged_dims = upper.iter().filter(|u| !u.results.is_empty()).count();
    if branch.nodes[r].ty.shape.iter().take(ranged_dims).any(|&d| d != DYNAMIC) {
        return None;
    }
    let reader_domain = &program.tensors[reader].domain;
    let src = &program.tensors[*source];
    let mut reader_positions = Vec::new();
    let mut ranged = None;
    for (p, &d) in src.domain.iter().enumerate() {
        if !caps[p].results.is_empty() {
            return None;
        }
        let Some(j) = reader_domain.iter().position(|&x| x == d) else {
            // A dimension the reader does not have: only its whole range.
            if ranged.is_some() || !is_constant(&lower[p], 0) || !is_symbol(&upper[p], d) {
                return None;
            }
            reader_positions.push(usize::MAX);
            ranged = Some((p, Form::Whole));
            continue;
        };
        reader_positions.push(j);
        if upper[p].results.is_empty() {
            if !is_dim_plus(&lower[p], j, 0) {
                return None;
            }
            continue;
        }
        if ranged.is_some() {
            return None;
        }
        let ends_here = is_dim_plus(&upper[p], j, 1);
        let form = if is_constant(&lower[p], 0) && ends_here {
            Form::Prefix
        } else if is_dim_plus(&lower[p], j, 0) && is_symbol(&upper[p], d) {
            Form::Suffix
        } else if let (Some(w), true) = (window_width(&lower[p], j), ends_here) {
            Form::Window(w)
        } else {
            return None;
        };
        ranged = Some((p, form));
    }
    let (ranged, form) = ranged?;
    Some(Liftable { source: *source, ranged, kind, form, reader_positions, map: None })
}

/// Whether the reductions `lift` describes may be lifted: suffixes of
/// floats and float window sums only with `inexact`, windows only for sums.
fn exact_enough(lift: &Liftable, float: bool, inexact: bool) -> bool {
    match lift.form {
        Form::Suffix => !float || inexact,
        Form::Window(_) => lift.kind == ReduceKind::Sum && (!float || inexact),
        _ => true,
    }
}

/// The identity index of `n` dimensions (and `symbols` bounds) with
/// `shift` added to dimension `p`.
fn shifted_identity(n: usize, symbols: usize, p: usize, shift: i64) -> AffineMap {
    let results = (0..n)
        .map(|i| {
            if i == p && shift != 0 {
                AffineExpr::Add(Box::new(AffineExpr::Dim(i)), Box::new(AffineExpr::Constant(shift)))
            } else {
                AffineExpr::Dim(i)
            }
        })
        .collect();
    AffineMap { num_dims: n, num_symbols: symbols, results }
}

/// The starting value of a reduction, as a constant of `ty`.
fn start(kind: ReduceKind, ty: &PointType) -> NodeKind {
    let value = match (kind, ty.element) {
        (ReduceKind::Sum, _) => 0.0,
        (_, ElementType::F32 | ElementType::F64) => f64::NEG_INFINITY,
        (_, ElementType::I32) => f64::from(i32::MIN),
        (_, _) => i64::MIN as f64,
    };
    let values = vec![value; ty.num_elements()];
    let integers = crate::program::integers_of(&values, ty.element);
    NodeKind::Constant { text: dense(&values, ty).into(), values: values.into(), integers: integers.into() }
}

/// Builds the recurrence tensor for `lift`.
fn recurrence<'c>(
    program: &Program<'c>,
    lift: &Liftable,
    name: String,
    location: melior::ir::Location<'c>,
) -> Tensor<'c> {
    let src = &program.tensors[lift.source];
    let n = src.domain.len();
    let symbols = program.dims.len();
    let p = lift.ranged;
    let identity = |shift: i64| shifted_identity(n, symbols, p, shift);
    let point = lift.map.as_ref().map_or(src.point.clone(), |m| m.result_type().clone());
    let combine = match lift.kind {
        ReduceKind::Sum => BinaryKind::Add,
        _ => BinaryKind::Max,
    };
    let node = |kind: NodeKind| Node { kind, ty: point.clone(), location };
    // The value reduced at the point (numbered from 1, after the start or
    // the previous point): `x[..]`, or the expression of the sources' points.
    let value: Vec<Node> = match &lift.map {
        None => vec![node(NodeKind::Read { source: lift.source, index: identity(0) })],
        Some(map) => map
            .nodes
            .iter()
            .map(|(kind, ty)| {
                let kind = match kind {
                    NodeKind::ReadRange { source, .. } => NodeKind::Read { source: *source, index: identity(0) },
                    // (An input's point, the same everywhere.)
                    NodeKind::Read { source, index } => NodeKind::Read {
                        source: *source,
                        index: AffineMap { num_dims: n, num_symbols: symbols, results: index.results.clone() },
                    },
                    other => renumbered(other, |a| a + 1),
                };
                Node { kind, ty: ty.clone(), location }
            })
            .collect(),
    };
    let last = value.len();
    let with = |first: Node<'c>| -> Vec<Node<'c>> {
        let mut nodes = vec![first];
        nodes.extend(value.iter().cloned());
        nodes.push(node(NodeKind::Binary(combine, 0, last)));
        nodes
    };
    // The first point of the run: the start combined with x there.
    let first = if lift.form == Form::Suffix {
        // v == D - 1: d_p - D + 1 == 0.
        AffineExpr::Add(
            Box::new(AffineExpr::Add(
                Box::new(AffineExpr::Dim(p)),
                Box::new(AffineExpr::Mul(
                    Box::new(AffineExpr::Symbol(src.domain[p])),
                    Box::new(AffineExpr::Constant(-1)),
                )),
            )),
            Box::new(AffineExpr::Constant(1)),
        )
    } else {
        AffineExpr::Dim(p)
    };
    let when = IntegerSet {
        num_dims: n,
        num_symbols: symbols,
        constraints: vec![Constraint { expr: first, is_equality: true }],
    };
    let always = IntegerSet { num_dims: n, num_symbols: symbols, constraints: vec![] };
    let own = program.tensors.len();
    let backward = lift.form == Form::Suffix;
    let previous = node(NodeKind::Read { source: own, index: identity(if backward { 1 } else { -1 }) });
    Tensor {
        name,
        domain: src.domain.clone(),
        point: point.clone(),
        is_input: false,
        branches: vec![
            Branch { when, nodes: with(node(start(lift.kind, &point))), result: last + 1, location },
            Branch { when: always, nodes: with(previous), result: last + 1, location },
        ],
        location,
    }
}

/// The recurrence tensor of `lift` (made once per source, dimension, kind
/// and form).
fn lifted<'c>(
    program: &mut Program<'c>,
    made: &mut HashMap<String, usize>,
    lift: Liftable,
    location: melior::ir::Location<'c>,
) -> usize {
    let key = lift.key();
    if let Some(&p) = made.get(&key) {
        return p;
    }
    let src = &program.tensors[lift.source].name;
    let what = if lift.kind == ReduceKind::Sum { "sum" } else { "max" };
    let side = if lift.form == Form::Suffix { "suffix" } else { "prefix" };
    let mapped = if lift.map.is_some() { "_mapped" } else { "" };
    let name = fresh_name(program, format!("{src}{mapped}_{side}_{what}"));
    let tensor = recurrence(program, &lift, name, location);
    program.tensors.push(tensor);
    made.insert(key, program.tensors.len() - 1);
    program.tensors.len() - 1
}

fn fresh_name(program: &Program, mut name: String) -> String {
    while program.tensors.iter().any(|t| t.name == name) {
        name += "_";
    }
    name
}

/// The window sums `W[v] = P[v] - P[v - w]` (`P[v]` while `v < w`) of the
/// prefix sums `P` (tensor `prefix`).
fn window_tensor<'c>(
    program: &mut Program<'c>,
    made: &mut HashMap<String, usize>,
    lift: &Liftable,
    prefix: usize,
    w: i64,
    location: melior::ir::Location<'c>,
) -> usize {
    let key = lift.key();
    if let Some(&t) = made.get(&key) {
        return t;
    }
    let src = &program.tensors[lift.source];
    let (n, symbols, p) = (src.domain.len(), program.dims.len(), lift.ranged);
    let point = lift.map.as_ref().map_or(src.point.clone(), |m| m.result_type().clone());
    let at = |shift: i64| shifted_identity(n, symbols, p, shift);
    let node = |kind: NodeKind| Node { kind, ty: point.clone(), location };
    // v - w >= 0
    let later = AffineExpr::Add(Box::new(AffineExpr::Dim(p)), Box::new(AffineExpr::Constant(-w)));
    let name = fresh_name(program, format!("{}_window{w}_sum", src.name));
    let domain = src.domain.clone();
    let tensor = Tensor {
        name,
        domain,
        point: point.clone(),
        is_input: false,
        branches: vec![
            Branch {
                when: IntegerSet {
                    num_dims: n,
                    num_symbols: symbols,
                    constraints: vec![Constraint { expr: later, is_equality: false }],
                },
                nodes: vec![
                    node(NodeKind::Read { source: prefix, index: at(0) }),
                    node(NodeKind::Read { source: prefix, index: at(-w) }),
                    node(NodeKind::Binary(BinaryKind::Sub, 0, 1)),
                ],
                result: 2,
                location,
            },
            Branch {
                when: IntegerSet { num_dims: n, num_symbols: symbols, constraints: vec![] },
                nodes: vec![node(NodeKind::Read { source: prefix, index: at(0) })],
                result: 0,
                location,
            },
        ],
        location,
    };
    program.tensors.push(tensor);
    made.insert(key, program.tensors.len() - 1);
    program.tensors.len() - 1
}

/// Lifts every liftable reduction; returns whether any was.
pub fn lift_recurrences(program: &mut Program, inexact: bool) -> bool {
    let mut made: HashMap<String, usize> = HashMap::new();
    let mut changed = incrementalize(program, &mut made);
    for reader in 0..program.tensors.len() {
        for b in 0..program.tensors[reader].branches.len() {
            for k in 0..program.tensors[reader].branches[b].nodes.len() {
                let branch = &program.tensors[reader].branches[b];
                let Some(lift) = liftable(program, reader, branch, k, inexact) else { continue };
                if lift.form == Form::Whole {
                    continue;
                }
                let location = branch.nodes[k].location;
                let p = match lift.form {
                    Form::Window(w) => {
                        let prefix = Liftable { form: Form::Prefix, ..lift.clone() };
                        let prefix = lifted(program, &mut made, prefix, location);
                        window_tensor(program, &mut made, &lift, prefix, w, location)
                    }
                    _ => lifted(program, &mut made, lift.clone(), location),
                };
                let reader_domain = program.tensors[reader].domain.len();
                let index = AffineMap {
                    num_dims: reader_domain,
                    num_symbols: program.dims.len(),
                    results: lift.reader_positions.iter().map(|&j| AffineExpr::Dim(j)).collect(),
                };
                program.tensors[reader].branches[b].nodes[k].kind = NodeKind::Read { source: p, index };
                changed = true;
            }
            let branch = &mut program.tensors[reader].branches[b];
            let live = live_nodes(branch);
            compact_branch(branch, &live);
        }
    }
    changed
}

/// Incrementalizes reductions over the whole range `x[0:D]` read after
/// `d`'s loop (by a tensor without `d`): they become the last point of the
/// running recurrence `P[.., D-1, ..]` (the prefix one, so the same
/// additions in the same order), and `x` no longer needs a store of all its
/// points. The branch is split: where `D >= 1` it reads `P`; otherwise the
/// range is empty and the reduction is its starting value (`0`, or the
/// lowest value for maxima), as before. Returns whether any was.
fn incrementalize(program: &mut Program, made: &mut HashMap<String, usize>) -> bool {
    let mut changed = false;
    for reader in 0..program.tensors.len() {
        let mut b = 0;
        while b < program.tensors[reader].branches.len() {
            let branch = &program.tensors[reader].branches[b];
            let found: Vec<(usize, Liftable)> = (0..branch.nodes.len())
                .filter_map(|k| liftable(program, reader, branch, k, false).map(|l| (k, l)))
                .filter(|(_, l)| l.form == Form::Whole)
                .collect();
            if found.is_empty() {
                b += 1;
                continue;
            }
            let mut lifted_branch = branch.clone();
            let mut empty_branch = branch.clone();
            let (n, symbols) = (program.tensors[reader].domain.len(), program.dims.len());
            for (k, lift) in found {
                let location = lifted_branch.nodes[k].location;
                let d = program.tensors[lift.source].domain[lift.ranged];
                let prefix = lifted(program, made, Liftable { form: Form::Prefix, ..lift.clone() }, location);
                let last = AffineExpr::Add(Box::new(AffineExpr::Symbol(d)), Box::new(AffineExpr::Constant(-1)));
                let results = lift
                    .reader_positions
                    .iter()
                    .enumerate()
                    .map(|(p, &j)| if p == lift.ranged { last.clone() } else { AffineExpr::Dim(j) })
                    .collect();
                let index = AffineMap { num_dims: n, num_symbols: symbols, results };
                lifted_branch.nodes[k].kind = NodeKind::Read { source: prefix, index };
                // D - 1 >= 0
                lifted_branch.when.constraints.push(Constraint { expr: last, is_equality: false });
                empty_branch.nodes[k].kind = start(lift.kind, &lifted_branch.nodes[k].ty);
            }
            for branch in [&mut lifted_branch, &mut empty_branch] {
                let live = live_nodes(branch);
                compact_branch(branch, &live);
            }
            let branches = &mut program.tensors[reader].branches;
            branches[b] = empty_branch;
            branches.insert(b, lifted_branch);
            changed = true;
            b += 2;
        }
    }
    changed
}
