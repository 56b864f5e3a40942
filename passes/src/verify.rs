//! The checks of `temporal-verify` (the pass is `temporal_verify.rs`):
//! that a module holds a well-formed temporal program, and its model.
//!
//! Checks: dimension and tensor declarations (unique names, known
//! dimensions, static point types), definitions (target is a computed
//! tensor, condition arity matches the target's domain and the bounds, body
//! ends in `gpu.yield` of a value of the tensor's point type), reads (index
//! arity matches reader and source domains, result type), compute-op types,
//! and causality: no cycle of same-point reads (a zero-distance cycle such as
//! `y[t]` reading `y[t]`), reported with the tensors on the cycle; stops'
//! rules (`stops.rs`) and collectives' (`collectives.rs`: none where the
//! points computed depend on data).
//!
//! Assumes nothing beyond IRDL verification; leaves the IR unchanged.

use crate::diagnostics::PassDiagnostic;
use crate::program::{NodeKind, Program, UnaryKind};
use crate::sdg::Sdg;
use melior::ir::OperationRef;

/// Runs every check of `temporal-verify` and returns the program model.
pub fn verify_program<'c>(module: OperationRef<'c, '_>) -> Result<Program<'c>, Vec<PassDiagnostic<'c>>> {
    let program = Program::from_module(module)?;
    // Gradients are expanded first (`temporal-autodiff`, first in every
    // pipeline); the rest of the compiler sees an ordinary program.
    let unexpanded: Vec<PassDiagnostic<'c>> =
        program
            .grads
            .iter()
            .map(|g| g.location)
            .chain(
                program.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes).filter_map(|n| {
                    matches!(n.kind, NodeKind::Unary(UnaryKind::StopGradient, _)).then_some(n.location)
                }),
            )
            .map(|location| {
                PassDiagnostic::new(
                    location,
                    "run temporal-autodiff first: it expands temporal.grad and removes temporal.stop_gradient",
                )
            })
            .collect();
    if !unexpanded.is_empty() {
        return Err(unexpanded);
    }
    crate::stops::check_stops(&program).map_err(|d| vec![d])?;
    crate::collectives::check_collectives(&program).map_err(|d| vec![d])?;
    let sdg = Sdg::build(&program);
    if let Some((cycle, location)) = sdg.zero_distance_cycle() {
        let names: Vec<&str> = cycle.iter().map(|&t| program.tensors[t].name.as_str()).collect();
        return Err(vec![PassDiagnostic::new(
            location,
            format!(
                "zero-distance cycle: {} (each point would need itself; a recurrence must read another point, e.g. t-1)",
                names.join(" -> ")
            ),
        )]);
    }
    Ok(program)
}
