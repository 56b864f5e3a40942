//! Read summaries: for every read between computed tensors, the shifts
//! its coordinates can make relative to the reader's own variables, per
//! dimension both tensors have (an interval: `[c, c]` for a point `d + c`,
//! `(-inf, 0]` for the prefix `0:d+1`, `[1, +inf)` for `d+1:D`), using what
//! the read's branch condition says about the reader's variable.
//!
//! The scheduler orders loops and bodies from them, store selection sizes
//! stores from them, and `temporal-autodiff` uses them to tell whether a
//! weight gradient's running sum can run forward in time (its
//! contributions reach a bounded distance into the future).

use crate::affine::{AffineExpr, IntegerSet};
use crate::program::{NodeKind, Program};
use melior::ir::Location;
use std::collections::HashMap;

/// The shifts `coordinate - v` a read can make along one dimension, as an
/// interval (`None`: unbounded on that side). A point read `v + c` is
/// `[c, c]`; the prefix `0 : v + 1` is `(-inf, 0]`; `v + 1 : T` is `[1, +inf)`.
pub type Shift = (Option<i64>, Option<i64>);

/// Per source dimension of a read: the results bounding the coordinate
/// from below (max), from above (min, exclusive; `None` for a point), and
/// the caps of a point (min).
type Bounds<'a> = (&'a [AffineExpr], Option<&'a [AffineExpr]>, &'a [AffineExpr]);

/// A read between two computed tensors.
#[derive(Clone)]
pub struct Edge<'c> {
    pub reader: usize,
    pub source: usize,
    /// Shift interval per dimension that reader and source both have (by
    /// dimension index), when each is bounded relative to the reader's own
    /// variable.
    pub shifts: Option<HashMap<usize, Shift>>,
    /// Whether the read spans a range along some dimension (a clamped
    /// point is a `read_range` that does not).
    pub spans: bool,
    /// The source dimensions (by position in the source's domain) along
    /// which the read spans a range.
    pub spanned: Vec<usize>,
    /// For a point read whose coordinate along the source's last dimension
    /// is fixed: `(j, true)` for `bound - 1 - j`, `(j, false)` for the
    /// constant `j`.
    pub fixed: Option<(i64, bool)>,
    pub location: Location<'c>,
    pub text: String,
}

/// What the branch condition of a read says about the reader's variable
/// `v` of one dimension: `v >= low` and `bound - v >= gap` (by default
/// `0` and `1`, from `0 <= v < bound`), and `bound - v <= end` where known
/// (the last `end` points: an `otherwise` branch after one for
/// `v < bound - n`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct VariableRange {
    low: i64,
    gap: i64,
    end: Option<i64>,
}

impl VariableRange {
    /// The range of the variable at `position` (of dimension `dim`) where
    /// `when` holds: constraints `v - k >= 0` raise `low` to `k`,
    /// `bound - v - k >= 0` raise `gap` to `k`, `v - bound + k >= 0`
    /// lowers `end` to `k` (equalities count as both directions); other
    /// constraints are ignored, which is sound.
    fn of(when: &IntegerSet, position: usize, dim: usize) -> Self {
        let mut range = Self { low: 0, gap: 1, end: None };
        for constraint in &when.constraints {
            let Some((dims, symbols, k)) = constraint.expr.linear() else { continue };
            let a = dims.get(position).copied().unwrap_or(0);
            let s = symbols.get(dim).copied().unwrap_or(0);
            let others = dims.iter().enumerate().any(|(i, &x)| i != position && x != 0)
                || symbols.iter().enumerate().any(|(i, &x)| i != dim && x != 0);
            if others {
                continue;
            }
            let mut apply = |a: i64, s: i64, k: i64| match (a, s) {
                (1, 0) => range.low = range.low.max(-k),
                (-1, 1) => range.gap = range.gap.max(-k),
                (1, -1) => range.end = Some(range.end.map_or(k, |e| e.min(k))),
                _ => {}
            };
            apply(a, s, k);
            if constraint.is_equality {
                apply(-a, -s, -k);
            }
        }
        range
    }
}

/// The shifts `e - v` can make, where `v` is the reader's variable at
/// `position` (dimension `dim`, whose bound is symbol `dim`), knowing only
/// `range` (`low <= v`, `v <= bound - gap`, `bound - end <= v`): `v + c`
/// gives `[c, c]`, a constant `c` at most `c - low`, `bound + c` at least
/// `c + gap` (and at most `c + end`).
fn expr_shift(e: &AffineExpr, position: usize, dim: usize, range: VariableRange) -> Shift {
    let Some((dims, symbols, c)) = e.linear() else { return (None, None) };
    let a = dims.get(position).copied().unwrap_or(0);
    let others_zero = dims.iter().enumerate().all(|(i, &x)| i == position || x == 0);
    let s = symbols.get(dim).copied().unwrap_or(0);
    let other_symbols_zero = symbols.iter().enumerate().all(|(i, &x)| i == dim || x == 0);
    if !others_zero || !other_symbols_zero {
        return (None, None);
    }
    match (a, s) {
        (1, 0) => (Some(c), Some(c)),
        (0, 0) => (None, Some(c - range.low)),
        (0, 1) => (Some(c + range.gap), range.end.map(|end| c + end)),
        _ => (None, None),
    }
}

/// The shifts of `max(exprs)`.
fn max_shift(shifts: &[Shift]) -> Shift {
    let low = shifts.iter().filter_map(|s| s.0).max();
    let high = shifts.iter().map(|s| s.1).collect::<Option<Vec<_>>>().and_then(|h| h.into_iter().max());
    (low, high)
}

/// The shifts of `min(exprs)`.
fn min_shift(shifts: &[Shift]) -> Shift {
    let low = shifts.iter().map(|s| s.0).collect::<Option<Vec<_>>>().and_then(|l| l.into_iter().min());
    let high = shifts.iter().filter_map(|s| s.1).min();
    (low, high)
}

/// The shifts a coordinate can make relative to the reader's variable at
/// `position` (of dimension `dim`): for a point `min(max(lower), caps...)`,
/// for a range `[max(lower), min(upper))`, where the read's branch condition
/// `when` holds. `None` when the coordinate is not bounded at all relative
/// to the variable (e.g. `T - 1 - t`).
fn shift_interval(
    position: usize,
    dim: usize,
    lower: &[AffineExpr],
    upper: Option<&[AffineExpr]>,
    caps: &[AffineExpr],
    when: &IntegerSet,
) -> Option<Shift> {
    let range = VariableRange::of(when, position, dim);
    let shifts =
        |exprs: &[AffineExpr]| -> Vec<Shift> { exprs.iter().map(|e| expr_shift(e, position, dim, range)).collect() };
    let low = max_shift(&shifts(lower));
    let interval = match upper {
        None if caps.is_empty() => low,
        None => {
            let mut all = shifts(caps);
            all.push(low);
            min_shift(&all)
        }
        Some(upper) => (low.0, min_shift(&shifts(upper)).1.map(|h| h - 1)),
    };
    (interval != (None, None)).then_some(interval)
}

/// Along a dimension running forward, the read only sees the past or the
/// present; backward, the future or the present.
pub fn in_past(shift: Shift, forward: bool) -> bool {
    if forward { shift.1.is_some_and(|hi| hi <= 0) } else { shift.0.is_some_and(|lo| lo >= 0) }
}

/// Whether the read may see the present point along the dimension.
pub fn touches_present(shift: Shift) -> bool {
    shift.0.is_none_or(|lo| lo <= 0) && shift.1.is_none_or(|hi| hi >= 0)
}

/// Every read between computed tensors, with its shift summary (a read
/// through data has none: it may name any point).
pub fn read_edges<'c>(program: &Program<'c>) -> Vec<Edge<'c>> {
    let mut edges = Vec::new();
    for (reader, tensor) in program.tensors.iter().enumerate() {
        for (b, branch) in tensor.branches.iter().enumerate() {
            // A branch holds where it says and no earlier one does: an
            // earlier condition of one inequality adds its negation.
            let mut when = branch.when.clone();
            for earlier in &tensor.branches[..b] {
                if let [c] = &earlier.when.constraints[..]
                    && !c.is_equality
                {
                    let negated = AffineExpr::Add(
                        Box::new(AffineExpr::Mul(Box::new(c.expr.clone()), Box::new(AffineExpr::Constant(-1)))),
                        Box::new(AffineExpr::Constant(-1)),
                    );
                    when.constraints.push(crate::affine::Constraint { expr: negated, is_equality: false });
                }
            }
            for node in &branch.nodes {
                // A read through data may name any point: unbounded.
                if let NodeKind::ReadAt { source, .. } = node.kind {
                    if !program.tensors[source].is_input {
                        edges.push(Edge {
                            reader,
                            source,
                            shifts: None,
                            spans: false,
                            spanned: Vec::new(),
                            fixed: None,
                            location: node.location,
                            text: format!("a read through data of '{}'", program.tensors[source].name),
                        });
                    }
                    continue;
                }
                // Per source dimension: the reader's results that bound
                // the coordinate from below (max) and above (min, exclusive;
                // `None` for a point).
                let (source, bounds, _is_range, text) = match &node.kind {
                    NodeKind::ReadRange { source, lower, upper, caps } => {
                        let bounds: Vec<Bounds> = lower
                            .iter()
                            .zip(upper)
                            .zip(caps)
                            .map(|((lo, hi), cap)| {
                                (&lo.results[..], (!hi.results.is_empty()).then_some(&hi.results[..]), &cap.results[..])
                            })
                            .collect();
                        (*source, bounds, true, format!("a range of '{}'", program.tensors[*source].name))
                    }
                    NodeKind::Read { source, index } => {
                        let bounds = index.results.iter().map(|e| (std::slice::from_ref(e), None, &[][..])).collect();
                        (*source, bounds, false, program.describe_read(reader, *source, index))
                    }
                    _ => continue,
                };
                if program.tensors[source].is_input {
                    continue;
                }
                let src_domain = &program.tensors[source].domain;
                // Shifts along the dimensions both tensors have; `None` if
                // one of them is unbounded relative to the reader's variable.
                let shifts = src_domain
                    .iter()
                    .zip(&bounds)
                    .filter_map(|(d, (lower, upper, caps))| {
                        let position = tensor.domain.iter().position(|x| x == d)?;
                        Some(shift_interval(position, *d, lower, *upper, caps, &when).map(|s| (*d, s)))
                    })
                    .collect::<Option<HashMap<_, _>>>();
                let fixed = match &node.kind {
                    NodeKind::Read { index, .. } if !src_domain.is_empty() => {
                        index.results[src_domain.len() - 1].linear().and_then(|(dims, symbols, c)| {
                            let d = src_domain[src_domain.len() - 1];
                            let no_dims = dims.iter().all(|&x| x == 0);
                            let only_bound = symbols.iter().enumerate().all(|(k, &x)| x == i64::from(k == d));
                            let constant = symbols.iter().all(|&x| x == 0);
                            match (no_dims, only_bound, constant) {
                                (true, true, _) if c <= -1 => Some((-1 - c, true)),
                                (true, _, true) if c >= 0 => Some((c, false)),
                                _ => None,
                            }
                        })
                    }
                    _ => None,
                };
                let spanned: Vec<usize> =
                    bounds.iter().enumerate().filter(|(_, (_, upper, _))| upper.is_some()).map(|(k, _)| k).collect();
                let spans = !spanned.is_empty();
                edges.push(Edge { reader, source, shifts, spans, spanned, fixed, location: node.location, text });
            }
        }
    }

    edges
}
