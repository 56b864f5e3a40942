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
//! Applies to a `reduce_sum` or `reduce_max` along axis 0 of a range read
//! with one ranged dimension `d` of its source, whose range is `0 : v + 1`
//! (or `v : D` for suffixes) for the reader's own variable `v` of `d`, and
//! whose other coordinates are the reader's own variables of those
//! dimensions. Assumes a program accepted by `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use crate::diagnostics::PassResult;
use crate::pass::{PassOption, PassOptions, TempoPass};
use crate::print::{dense, replace_program};
use crate::program::{BinaryKind, Branch, ElementType, Node, NodeKind, PointType, Program, ReduceKind, Tensor};
use crate::temporal_dce::{compact_branch, live_nodes};
use crate::verify::verify_program;
use melior::ir::OperationRef;
use std::collections::HashMap;

/// The `temporal-lift-recurrences` pass.
pub struct TemporalLiftRecurrences;

impl TempoPass for TemporalLiftRecurrences {
    fn name(&self) -> &'static str {
        "temporal-lift-recurrences"
    }
    fn summary(&self) -> &'static str {
        "Replace sums and maxima over prefixes x[0:t+1] (and integer suffixes, and whole ranges read after their loop) by running recurrences P[t] = P[t-1] + x[t]"
    }
    fn options(&self) -> &'static [PassOption] {
        &[PassOption {
            name: "inexact",
            summary: "Also lift float suffix reductions (changes rounding); default false",
        }]
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let inexact = options.get("inexact").is_some_and(|v| v == "true" || v == "1");
        let mut program = verify_program(op)?;
        if lift_recurrences(&mut program, inexact) {
            replace_program(op, &program)?;
        }
        Ok(())
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
/// kind, range form, and the reader's variable position of each source
/// dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Liftable {
    source: usize,
    ranged: usize,
    kind: ReduceKind,
    form: Form,
    reader_positions: Vec<usize>,
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

/// The lift of node `k` of a branch of `reader`, if it is one.
fn liftable(program: &Program, reader: usize, branch: &Branch, k: usize, inexact: bool) -> Option<Liftable> {
    let NodeKind::Reduce(kind @ (ReduceKind::Sum | ReduceKind::Max), r, 0) = branch.nodes[k].kind else { return None };
    let NodeKind::ReadRange { source, lower, upper, caps } = &branch.nodes[r].kind else { return None };
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
    let float = src.point.element.is_float();
    match form {
        Form::Suffix if float && !inexact => return None,
        Form::Window(_) if kind != ReduceKind::Sum || (float && !inexact) => return None,
        _ => {}
    }
    Some(Liftable { source: *source, ranged, kind, form, reader_positions })
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
    NodeKind::Constant { text: dense(&values, ty), values }
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
    let point = src.point.clone();
    let combine = match lift.kind {
        ReduceKind::Sum => BinaryKind::Add,
        _ => BinaryKind::Max,
    };
    let node = |kind: NodeKind| Node { kind, ty: point.clone(), location };
    let read_source = node(NodeKind::Read { source: lift.source, index: identity(0) });
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
            Branch {
                when,
                nodes: vec![node(start(lift.kind, &point)), read_source.clone(), node(NodeKind::Binary(combine, 0, 1))],
                result: 2,
                location,
            },
            Branch {
                when: always,
                nodes: vec![previous, read_source, node(NodeKind::Binary(combine, 0, 1))],
                result: 2,
                location,
            },
        ],
        location,
    }
}

/// The recurrence tensor of `lift` (made once per source, dimension, kind
/// and form).
fn lifted<'c>(
    program: &mut Program<'c>,
    made: &mut HashMap<Liftable, usize>,
    lift: Liftable,
    location: melior::ir::Location<'c>,
) -> usize {
    let key = Liftable { reader_positions: Vec::new(), ..lift.clone() };
    if let Some(&p) = made.get(&key) {
        return p;
    }
    let src = &program.tensors[lift.source].name;
    let what = if lift.kind == ReduceKind::Sum { "sum" } else { "max" };
    let side = if lift.form == Form::Suffix { "suffix" } else { "prefix" };
    let name = fresh_name(program, format!("{src}_{side}_{what}"));
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
    made: &mut HashMap<Liftable, usize>,
    lift: &Liftable,
    prefix: usize,
    w: i64,
    location: melior::ir::Location<'c>,
) -> usize {
    let key = Liftable { reader_positions: Vec::new(), ..lift.clone() };
    if let Some(&t) = made.get(&key) {
        return t;
    }
    let src = &program.tensors[lift.source];
    let (n, symbols, p) = (src.domain.len(), program.dims.len(), lift.ranged);
    let point = src.point.clone();
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
    let mut made: HashMap<Liftable, usize> = HashMap::new();
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
fn incrementalize(program: &mut Program, made: &mut HashMap<Liftable, usize>) -> bool {
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
