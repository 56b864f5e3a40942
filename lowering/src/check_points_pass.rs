//! `temporal-check-points{bounds=T=10,B=3}`: with bound values known at
//! compile time, checks before any code exists that every needed point is
//! defined and every read of a needed point is in bounds (the same exact
//! demand propagation the runtime performs, [`crate::point_checks`]), and
//! reports the first failure at the read (or the tensor) it concerns.
//!
//! Assumes a program accepted by `temporal-verify` that the scheduler
//! can order; leaves the IR unchanged.

use crate::point_checks::check_points;
use crate::schedule::Schedule;
use melior::ir::{OperationRef, operation::OperationLike};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOption, PassOptions, TempoPass};
use tempo_passes::verify::verify_program;

/// The `temporal-check-points` pass.
pub struct CheckPoints;

impl TempoPass for CheckPoints {
    fn name(&self) -> &'static str {
        "temporal-check-points"
    }
    fn summary(&self) -> &'static str {
        "With bounds known at compile time (bounds=T=10,B=3), check that needed points are defined and reads stay in bounds"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] = &[PassOption::bounds(
            "bounds",
            "bound values, NAME=VALUE separated by commas (one per bound of the program)",
        )];
        OPTIONS
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        let here = |message: String| vec![PassDiagnostic::new(op.location(), message)];
        let given = options.bound_values(&program);
        let mut bounds = Vec::new();
        for (dim, value) in program.dims.iter().zip(given) {
            match value {
                Some(v) if v < 0 => return Err(here(format!("bound {} = {v} must be >= 0", dim.bound))),
                Some(v) => bounds.push(v),
                None => {
                    return Err(here(format!(
                        "temporal-check-points needs a value for bound {} (bounds={}=N)",
                        dim.bound, dim.bound
                    )));
                }
            }
        }
        let schedule = Schedule::new(&program)?;
        check_points(&program, &schedule, &bounds)
            .map_err(|e| vec![PassDiagnostic::new(e.location(&program), e.message)])
    }
}
