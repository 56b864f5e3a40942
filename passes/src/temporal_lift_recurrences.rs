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
        "Replace sums and maxima over prefixes x[0:t+1] (and integer suffixes) by running recurrences P[t] = P[t-1] + x[t]"
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

/// A reduction over a range the pass can lift: source, ranged position,
/// kind, whether it is a suffix, and the reader's variable position of each
/// source dimension.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Liftable {
    source: usize,
    ranged: usize,
    kind: ReduceKind,
    suffix: bool,
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
        let j = reader_domain.iter().position(|&x| x == d)?;
        reader_positions.push(j);
        if !caps[p].results.is_empty() {
            return None;
        }
        if upper[p].results.is_empty() {
            if !is_dim_plus(&lower[p], j, 0) {
                return None;
            }
            continue;
        }
        if ranged.is_some() {
            return None;
        }
        let prefix = is_constant(&lower[p], 0) && is_dim_plus(&upper[p], j, 1);
        let suffix = is_dim_plus(&lower[p], j, 0) && is_symbol(&upper[p], d);
        ranged = Some((
            p,
            if prefix {
                false
            } else if suffix {
                true
            } else {
                return None;
            },
        ));
    }
    let (ranged, suffix) = ranged?;
    let float = src.point.element.is_float();
    if suffix && float && !inexact {
        return None;
    }
    Some(Liftable { source: *source, ranged, kind, suffix, reader_positions })
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
    let identity = |shift: i64| AffineMap {
        num_dims: n,
        num_symbols: symbols,
        results: (0..n)
            .map(|i| {
                if i == p && shift != 0 {
                    AffineExpr::Add(Box::new(AffineExpr::Dim(i)), Box::new(AffineExpr::Constant(shift)))
                } else {
                    AffineExpr::Dim(i)
                }
            })
            .collect(),
    };
    let point = src.point.clone();
    let combine = match lift.kind {
        ReduceKind::Sum => BinaryKind::Add,
        _ => BinaryKind::Max,
    };
    let node = |kind: NodeKind| Node { kind, ty: point.clone(), location };
    let read_source = node(NodeKind::Read { source: lift.source, index: identity(0) });
    // The first point of the run: the start combined with x there.
    let first = if lift.suffix {
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
    let previous = node(NodeKind::Read { source: own, index: identity(if lift.suffix { 1 } else { -1 }) });
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

/// Lifts every liftable reduction; returns whether any was.
pub fn lift_recurrences(program: &mut Program, inexact: bool) -> bool {
    let mut made: HashMap<Liftable, usize> = HashMap::new();
    let mut changed = false;
    for reader in 0..program.tensors.len() {
        for b in 0..program.tensors[reader].branches.len() {
            for k in 0..program.tensors[reader].branches[b].nodes.len() {
                let branch = &program.tensors[reader].branches[b];
                let Some(lift) = liftable(program, reader, branch, k, inexact) else { continue };
                let location = branch.nodes[k].location;
                let key = Liftable { reader_positions: Vec::new(), ..lift.clone() };
                let p = match made.get(&key) {
                    Some(&p) => p,
                    None => {
                        let src = &program.tensors[lift.source].name;
                        let what = if lift.kind == ReduceKind::Sum { "sum" } else { "max" };
                        let side = if lift.suffix { "suffix" } else { "prefix" };
                        let mut name = format!("{src}_{side}_{what}");
                        while program.tensors.iter().any(|t| t.name == name) {
                            name += "_";
                        }
                        let tensor = recurrence(program, &lift, name, location);
                        program.tensors.push(tensor);
                        made.insert(key, program.tensors.len() - 1);
                        program.tensors.len() - 1
                    }
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
