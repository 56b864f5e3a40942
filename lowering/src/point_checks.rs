//! Checks that depend on the bound values, made before execution: every
//! point that is needed (an output point, or a point read by a needed point)
//! is defined by some branch, every read of a needed point falls inside
//! its source's bounds, and every slice at point-dependent offsets lies
//! inside its operand. Only the ops whose values reach their branch's
//! result or an external call are checked: the others are never evaluated
//! (a dead read needs no point; "Evaluation is demand-driven" in
//! `dialects/README.md`), as in the interpreter.
//!
//! Demand is propagated exactly, visiting points in the reverse of the
//! schedule's order (a read always refers to a point computed earlier in the
//! schedule, so every reader of a point is visited before the point), with
//! one bit per point; points nobody needs may stay undefined. When several
//! points are bad, the error reported is the first in schedule order.

use crate::schedule::{Schedule, Step};
use tempo_passes::program::{NodeKind, Program};
use tempo_passes::rewrite::live_nodes;
use tempo_passes::support::bits::Bits;

/// A failed check, naming tensor and point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointError {
    pub message: String,
    /// The tensor whose point failed.
    pub tensor: usize,
    /// The branch and node (a read) at fault, when there is one.
    pub node: Option<(usize, usize)>,
}

impl PointError {
    /// Where the failure is reported: the read at fault, or the tensor.
    pub fn location<'c>(&self, program: &Program<'c>) -> melior::ir::Location<'c> {
        let tensor = &program.tensors[self.tensor];
        match self.node {
            Some((b, n)) => tensor.branches[b].nodes[n].location,
            None => tensor.location,
        }
    }
}

impl std::fmt::Display for PointError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Row-major flat index of `point` in the box of `extents`.
fn flat(point: &[i64], extents: &[i64]) -> usize {
    point.iter().zip(extents).fold(0usize, |acc, (&p, &e)| acc * e as usize + p as usize)
}

/// One bit per point of each tensor (of `extents`), unset but for the
/// outputs', allocated fallibly: a bound in the trillions gets an error
/// here, not an allocation abort.
fn needed_bits(program: &Program, extents: &[Vec<i64>], bounds: &[i64]) -> Result<Vec<Bits>, PointError> {
    let mut needed: Vec<Bits> = Vec::new();
    for (i, e) in extents.iter().enumerate() {
        let points = e.iter().try_fold(1u64, |acc, &x| acc.checked_mul(x as u64));
        let bits = points.and_then(|p| Bits::new(p, program.outputs.contains(&i))).ok_or_else(|| PointError {
            message: format!(
                "'{}' has {} points for these bounds ({}): too many to check",
                program.tensors[i].name,
                points.map_or("more than 2^64".into(), |p| p.to_string()),
                describe_bounds(program, bounds)
            ),
            tensor: i,
            node: None,
        })?;
        needed.push(bits);
    }
    Ok(needed)
}

/// Runs the checks for the given bound values (one per dimension).
pub fn check_points(program: &Program, schedule: &Schedule, bounds: &[i64]) -> Result<(), PointError> {
    let extents: Vec<Vec<i64>> =
        program.tensors.iter().map(|t| t.domain.iter().map(|&d| bounds[d].max(0)).collect()).collect();
    let mut needed = needed_bits(program, &extents, bounds)?;
    // Per tensor and branch, the nodes that are evaluated.
    let live: Vec<Vec<Vec<bool>>> =
        program.tensors.iter().map(|t| t.branches.iter().map(live_nodes).collect()).collect();
    let point_name = |i: usize, point: &[i64]| {
        let t = &program.tensors[i];
        if point.is_empty() {
            return t.name.clone();
        }
        let coords: Vec<String> =
            t.domain.iter().zip(point).map(|(&d, v)| format!("{}={v}", program.dims[d].name)).collect();
        format!("{}[{}]", t.name, coords.join(", "))
    };
    let visit = |i: usize, point: &[i64], needed: &mut Vec<Bits>| -> Result<(), PointError> {
        if !needed[i].get(flat(point, &extents[i])) {
            return Ok(());
        }
        let tensor = &program.tensors[i];
        let fail = |message: String, node: Option<(usize, usize)>| PointError { message, tensor: i, node };
        let mut chosen = None;
        for (b, branch) in tensor.branches.iter().enumerate() {
            let holds = branch
                .when
                .contains(point, bounds)
                .map_err(|e| fail(format!("{}: {}", point_name(i, point), e.0), None))?;
            if holds {
                chosen = Some(b);
                break;
            }
        }
        let Some(b) = chosen else {
            return Err(fail(
                format!(
                    "point {} is needed but no branch of '{}' defines it (bounds: {})",
                    point_name(i, point),
                    tensor.name,
                    describe_bounds(program, bounds)
                ),
                None,
            ));
        };
        for (n, node) in tensor.branches[b].nodes.iter().enumerate().filter(|&(n, _)| live[i][b][n]) {
            if let NodeKind::ReadRange { source, lower, upper, caps } = &node.kind {
                let src = &program.tensors[*source];
                let mut intervals = Vec::new();
                for (((lo_map, hi_map), cap), &d) in lower.iter().zip(upper).zip(caps).zip(&src.domain) {
                    let (lo, hi, _) = tempo_passes::affine::coordinate_interval(lo_map, hi_map, cap, point, bounds)
                        .map_err(|e| fail(format!("{}: {}", point_name(i, point), e.0), Some((b, n))))?;
                    if hi > lo && (lo < 0 || hi > bounds[d]) {
                        return Err(fail(
                            program.out_of_bounds(
                                &format!("range read of '{}'", src.name),
                                &point_name(i, point),
                                d,
                                &format!("{} in {lo}..{hi}", program.dims[d].name),
                                bounds[d],
                            ),
                            Some((b, n)),
                        ));
                    }
                    intervals.push(lo..hi.max(lo));
                }
                let lengths: Vec<i64> = upper
                    .iter()
                    .zip(&intervals)
                    .filter(|(hi, _)| !hi.results.is_empty())
                    .map(|(_, r)| r.end - r.start)
                    .collect();
                if let Some(message) = tempo_passes::program::static_length_mismatch(&lengths, &node.ty.shape) {
                    return Err(fail(format!("at {}: {message}", point_name(i, point)), Some((b, n))));
                }
                let mut boxes = vec![vec![]];
                for interval in intervals {
                    boxes = boxes
                        .into_iter()
                        .flat_map(|p: Vec<i64>| interval.clone().map(move |v| [p.clone(), vec![v]].concat()))
                        .collect();
                }
                for p in boxes {
                    needed[*source].set(flat(&p, &extents[*source]));
                }
                continue;
            }
            if let NodeKind::DynamicSlice(operand, offsets) = &node.kind {
                let at = offsets
                    .eval(point, bounds)
                    .map_err(|e| fail(format!("{}: {}", point_name(i, point), e.0), Some((b, n))))?;
                let whole = &tensor.branches[b].nodes[*operand].ty.shape;
                let inside = at.iter().zip(&node.ty.shape).zip(whole).all(|((&o, &size), &m)| o >= 0 && o + size <= m);
                if !inside {
                    return Err(fail(
                        format!(
                            "at {}: the slice at offsets {at:?} of shape {:?} is not inside the operand of shape {whole:?} (bounds: {})",
                            point_name(i, point),
                            node.ty.shape,
                            describe_bounds(program, bounds)
                        ),
                        Some((b, n)),
                    ));
                }
                continue;
            }
            let NodeKind::Read { source, index } = &node.kind else { continue };
            let coords = index
                .eval(point, bounds)
                .map_err(|e| fail(format!("{}: {}", point_name(i, point), e.0), Some((b, n))))?;
            let src = &program.tensors[*source];
            for (c, &d) in coords.iter().zip(&src.domain) {
                if *c < 0 || *c >= bounds[d] {
                    return Err(fail(
                        program.out_of_bounds(
                            &format!("read {}", program.describe_read(i, *source, index)),
                            &point_name(i, point),
                            d,
                            &format!("{} = {c}", program.dims[d].name),
                            bounds[d],
                        ),
                        Some((b, n)),
                    ));
                }
            }
            needed[*source].set(flat(&coords, &extents[*source]));
        }
        Ok(())
    };
    // Points are visited from the last to the first, so the error kept (the
    // last one found) is the one earliest in schedule order.
    let mut earliest_error = None;
    for nest in schedule.nests.iter().rev() {
        let mut values = vec![0i64; program.dims.len()];
        visit_reversed(program, &nest.steps(program), &|t| nest.lag(t), bounds, &mut values, &mut |i, point| {
            if let Err(e) = visit(i, point, &mut needed) {
                earliest_error = Some(e);
            }
        });
    }
    earliest_error.map_or(Ok(()), Err)
}

/// Calls `f(tensor, point)` for every point `steps` compute (the values of
/// the open loops' variables in `values`, by dimension), from the last
/// computed to the first (a tensor computed `lag(t)` iterations late in
/// a retimed loop at the point `lag(t)` before the loop's variable).
fn visit_reversed(
    program: &Program,
    steps: &[Step],
    lag: &dyn Fn(usize) -> i64,
    bounds: &[i64],
    values: &mut Vec<i64>,
    f: &mut dyn FnMut(usize, &[i64]),
) {
    for step in steps.iter().rev() {
        match step {
            Step::Compute(i) => {
                let point: Vec<i64> = program.tensors[*i].domain.iter().map(|&d| values[d]).collect();
                f(*i, &point);
            }
            Step::Loop { dim, forward, body } => {
                let size = bounds[*dim].max(0);
                let latest = body.iter().map(|s| if let Step::Compute(t) = s { lag(*t) } else { 0 }).max().unwrap_or(0);
                if *forward && latest > 0 {
                    for step in (0..size + latest).rev() {
                        for s in body.iter().rev() {
                            let Step::Compute(t) = s else { unreachable!("a retimed loop is innermost") };
                            let point = step - lag(*t);
                            if (0..size).contains(&point) {
                                values[*dim] = point;
                                visit_reversed(program, std::slice::from_ref(s), lag, bounds, values, f);
                            }
                        }
                    }
                    continue;
                }
                for step in (0..size).rev() {
                    values[*dim] = if *forward { step } else { size - 1 - step };
                    visit_reversed(program, body, lag, bounds, values, f);
                }
            }
        }
    }
}

fn describe_bounds(program: &Program, bounds: &[i64]) -> String {
    program.dims.iter().zip(bounds).map(|(d, b)| format!("{}={b}", d.bound)).collect::<Vec<_>>().join(", ")
}
