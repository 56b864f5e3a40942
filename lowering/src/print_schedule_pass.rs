//! `temporal-print-schedule`: prints the schedule in a short readable form
//! to stderr, leaving the IR unchanged: per nest its loops, outer to inner,
//! with their direction (`for t = 0 up to T-1`, `for t = T-1 down to 0`),
//! and the tensors placed in each loop in body order with the store each
//! one gets. With `memory-budget` (and `bounds`), the swap plan
//! `lower-temporal-to-loops` makes with the same options shows on the
//! swapped tensors.
//!
//! Assumes a program accepted by `temporal-verify`. Follows the module's
//! `@tempo_schedule` when it has one (checked as `lower-temporal-to-loops`
//! checks it), and the scheduler's order otherwise; programs with no legal
//! schedule get the scheduler's diagnostic.

use crate::schedule::{Schedule, Step};
use crate::schedule_pass::read_schedule;
use melior::ir::OperationRef;
use melior::ir::operation::OperationLike;
use std::fmt::Write;
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::diagnostics::PassResult;
use tempo_passes::pass::{OptionKind, PassOption, PassOptions, TempoPass};
use tempo_passes::program::Program;
use tempo_passes::verify::verify_program;

/// The `temporal-print-schedule` pass.
pub struct PrintSchedule;

impl TempoPass for PrintSchedule {
    fn name(&self) -> &'static str {
        "temporal-print-schedule"
    }
    fn summary(&self) -> &'static str {
        "Print the schedule (loops, directions, placed tensors and their stores) to stderr; the IR is unchanged"
    }
    fn options(&self) -> &'static [PassOption] {
        &[
            PassOption {
                name: "memory-budget",
                kind: OptionKind::Unsigned,
                summary: "bytes: show the swap plan of lower-temporal-to-loops under this budget",
            },
            PassOption {
                name: "bounds",
                kind: OptionKind::Bounds,
                summary: "bound values for memory-budget, NAME=VALUE separated by commas",
            },
        ]
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        let mut schedule = match read_schedule(op, &program)? {
            Some((nests, location)) => Schedule::with_nests(&program, nests, location)?,
            None => Schedule::new(&program)?,
        };
        let budget = crate::temporal_to_loops::swaps::memory_budget(&program, options)
            .map_err(|e| vec![PassDiagnostic::new(op.location(), e)])?;
        if let Some((budget, bounds)) = budget {
            schedule.plan_swaps(&program, budget, &bounds);
        }
        eprint!("{}", pretty(&program, &schedule));
        Ok(())
    }
}

/// The schedule in a short readable form.
pub fn pretty(program: &Program, schedule: &Schedule) -> String {
    fn items(program: &Program, schedule: &Schedule, steps: &[Step], level: usize, out: &mut String) {
        let indent = "  ".repeat(level + 1);
        for step in steps {
            match step {
                Step::Compute(t) => {
                    let names = program.domain_names(*t);
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    let mut late = match schedule.lag(*t) {
                        0 => String::new(),
                        l => format!("  late: {l}"),
                    };
                    if let Some(swap) = schedule.swaps.get(t) {
                        late += &format!("  {}", crate::schedule::swaps::describe(swap));
                    }
                    let _ = writeln!(
                        out,
                        "{indent}{}[{}]  store: {}{late}",
                        program.tensors[*t].name,
                        names.join(", "),
                        schedule.storage[*t].describe(&names)
                    );
                }
                Step::Loop { dim, forward, body } => {
                    let dim = &program.dims[*dim];
                    let latest = body
                        .iter()
                        .map(|step| if let Step::Compute(t) = step { schedule.lag(*t) } else { 0 })
                        .max()
                        .unwrap_or(0);
                    let range = if *forward && latest > 0 {
                        format!("0 up to {}-1+{latest}", dim.bound)
                    } else if *forward {
                        format!("0 up to {}-1", dim.bound)
                    } else {
                        format!("{}-1 down to 0", dim.bound)
                    };
                    let _ = writeln!(out, "{indent}for {} = {range}:", dim.name);
                    items(program, schedule, body, level + 1, out);
                }
            }
        }
    }
    let mut out = String::from("schedule:\n");
    for nest in &schedule.nests {
        if crate::schedule::is_data_nest(program, nest) {
            // A data group: its points in the order of their depths.
            let dim = &program.dims[nest.dims[0]];
            let _ = writeln!(
                out,
                "  for {} in 0..{} by depth (the order of the data, known at run time):",
                dim.name, dim.bound
            );
            let body: Vec<Step> = nest.body.iter().map(|&t| Step::Compute(t)).collect();
            items(program, schedule, &body, 1, &mut out);
            continue;
        }
        items(program, schedule, &nest.steps(program), 0, &mut out);
    }
    out
}
