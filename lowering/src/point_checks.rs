//! Checks that depend on the bound values, made before execution: every
//! point that is needed (an output point, or a point read by a needed point)
//! is defined by some branch, and every read of a needed point falls inside
//! its source's bounds.
//!
//! Demand is propagated exactly, in the reverse of the lowering's schedule
//! (reads only go to the past or to tensors computed earlier in the same
//! step), so points nobody needs may stay undefined.

use crate::temporal_to_loops::Plan;
use tempo_passes::program::{NodeKind, Program};

/// A failed check, naming tensor and point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointError(pub String);

impl std::fmt::Display for PointError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Runs the checks for the given bound values (one per dimension).
pub fn check_points(program: &Program, plan: &Plan, bounds: &[i64]) -> Result<(), PointError> {
    let extent = plan.time_dim.map_or(1, |d| bounds[d].max(0) as usize);
    // needed[i][p]: point p of tensor i is needed (p = 0 for domain-less).
    let mut needed: Vec<Vec<bool>> =
        program.tensors.iter().map(|t| vec![false; if t.domain.is_empty() { 1 } else { extent }]).collect();
    for &o in &program.outputs {
        needed[o].iter_mut().for_each(|x| *x = true);
    }
    let dim_name = plan.time_dim.map(|d| program.dims[d].name.clone()).unwrap_or_default();
    let point_name = |i: usize, p: usize| {
        if program.tensors[i].domain.is_empty() {
            program.tensors[i].name.clone()
        } else {
            format!("{}[{dim_name}={p}]", program.tensors[i].name)
        }
    };
    let visit = |i: usize, p: usize, needed: &mut Vec<Vec<bool>>| -> Result<(), PointError> {
        if !needed[i][p] {
            return Ok(());
        }
        let tensor = &program.tensors[i];
        let dims: Vec<i64> = if tensor.domain.is_empty() { vec![] } else { vec![p as i64] };
        let mut chosen = None;
        for (b, branch) in tensor.branches.iter().enumerate() {
            let holds = branch
                .when
                .contains(&dims, bounds)
                .map_err(|e| PointError(format!("{}: {}", point_name(i, p), e.0)))?;
            if holds {
                chosen = Some(b);
                break;
            }
        }
        let Some(b) = chosen else {
            return Err(PointError(format!(
                "point {} is needed but no branch of '{}' defines it (bounds: {})",
                point_name(i, p),
                tensor.name,
                describe_bounds(program, bounds)
            )));
        };
        for node in &tensor.branches[b].nodes {
            let NodeKind::Read { source, index } = &node.kind else { continue };
            let coords = index.eval(&dims, bounds).map_err(|e| PointError(format!("{}: {}", point_name(i, p), e.0)))?;
            let src = &program.tensors[*source];
            for (c, &d) in coords.iter().zip(&src.domain) {
                if *c < 0 || *c >= bounds[d] {
                    return Err(PointError(format!(
                        "read {} at {} is out of bounds: {} = {c} is outside 0..{} ({} = {})",
                        program.describe_read(i, *source, index),
                        point_name(i, p),
                        program.dims[d].name,
                        bounds[d],
                        program.dims[d].bound,
                        bounds[d]
                    )));
                }
            }
            let q = coords.first().map_or(0, |&c| c as usize);
            needed[*source][q] = true;
        }
        Ok(())
    };
    // Points are visited from the last to the first, so the error kept (the
    // last one found) is the one at the earliest point.
    let mut earliest_error = None;
    let loop_points = if plan.time_dim.is_some() { extent } else { 0 };
    for p in (0..loop_points).rev() {
        for &i in plan.loop_order.iter().rev() {
            if let Err(e) = visit(i, p, &mut needed) {
                earliest_error = Some(e);
            }
        }
    }
    for &i in plan.static_order.iter().rev() {
        if let Err(e) = visit(i, 0, &mut needed) {
            earliest_error = Some(e);
        }
    }
    earliest_error.map_or(Ok(()), Err)
}

fn describe_bounds(program: &Program, bounds: &[i64]) -> String {
    program.dims.iter().zip(bounds).map(|(d, b)| format!("{}={b}", d.bound)).collect::<Vec<_>>().join(", ")
}
