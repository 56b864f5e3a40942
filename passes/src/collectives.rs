//! The rule that makes collectives well defined (`temporal-verify`): every
//! process of a run reaches the same collectives (`temporal.all_reduce`)
//! in the same order, so the points of a tensor holding one, and the
//! branch each point takes, may not depend on data. Programs are the same
//! on every process and branch conditions are affine in the point and the
//! bounds, so only three things make them depend on data, each refused at
//! the collective:
//!
//! - the tensor is over a dimension a `temporal.stop` ends (its length, or
//!   each batch point's for a ragged stop, is decided by data computed on
//!   each process);
//! - a branch condition of the tensor uses such a dimension's bound (which
//!   branch defines a point then depends on where the data stopped);
//! - the tensor's points are needed through a read through data
//!   (`temporal.read_at` of it, or of a tensor that reads it): which points
//!   are computed depends on the coordinates the data names.
//!
//! Not yet: a stop whose `done` is itself the same on every process (an
//! all-reduced flag), which would make its length uniform.

use crate::diagnostics::PassDiagnostic;
use crate::program::{Collective, ElementType, NodeKind, Program};
use crate::rewrite::source;
use melior::ir::Location;

/// Refuses the first collective whose points or branches depend on data.
pub fn check_collectives<'c>(program: &Program<'c>) -> Result<(), PassDiagnostic<'c>> {
    let collectives: Vec<(usize, Location<'c>)> = program
        .tensors
        .iter()
        .enumerate()
        .filter_map(|(t, tensor)| {
            let mut nodes = tensor.branches.iter().flat_map(|b| &b.nodes);
            nodes.find(|n| matches!(n.kind, NodeKind::AllReduce(..))).map(|n| (t, n.location))
        })
        .collect();
    if collectives.is_empty() {
        return Ok(());
    }
    const WHY: &str = "every process must reach the same collectives in the same order";
    let through_data = needed_through_data(program);
    for &(t, location) in &collectives {
        let tensor = &program.tensors[t];
        for stop in &program.stops {
            let dim = &program.dims[stop.dim];
            let done = &program.tensors[stop.done].name;
            if tensor.domain.contains(&stop.dim) {
                return Err(PassDiagnostic::new(
                    location,
                    format!(
                        "a collective in '{}', which is over '{}': '{done}' stops '{}' where the data decides, so \
                         processes could compute different numbers of its points ({WHY})",
                        tensor.name, dim.name, dim.name
                    ),
                ));
            }
            if tensor.branches.iter().any(|b| b.when.constraints.iter().any(|c| c.expr.uses_symbol(stop.dim))) {
                return Err(PassDiagnostic::new(
                    location,
                    format!(
                        "a collective in '{}', whose branch conditions use the bound {} of '{}', which '{done}' \
                         stops where the data decides: which branch defines a point depends on the data ({WHY})",
                        tensor.name, dim.bound, dim.name
                    ),
                ));
            }
        }
        if let Some((reader, _)) = through_data[t] {
            return Err(PassDiagnostic::new(
                location,
                format!(
                    "a collective in '{}', whose points are needed through a read through data (temporal.read_at \
                     in '{}'): which points are computed depends on the data ({WHY})",
                    tensor.name, program.tensors[reader].name
                ),
            ));
        }
    }
    Ok(())
}

/// For each tensor, whether which of its points are needed can depend on
/// data: the tensor (and the read) of a `temporal.read_at` that reads it
/// or a tensor it is read by, directly or not.
fn needed_through_data<'c>(program: &Program<'c>) -> Vec<Option<(usize, Location<'c>)>> {
    let mut marked: Vec<Option<(usize, Location<'c>)>> = vec![None; program.tensors.len()];
    let mut work = Vec::new();
    for (r, tensor) in program.tensors.iter().enumerate() {
        for node in tensor.branches.iter().flat_map(|b| &b.nodes) {
            if let NodeKind::ReadAt { source, .. } = node.kind
                && marked[source].is_none()
            {
                marked[source] = Some((r, node.location));
                work.push(source);
            }
        }
    }
    while let Some(t) = work.pop() {
        let mark = marked[t];
        for node in program.tensors[t].branches.iter().flat_map(|b| &b.nodes) {
            if let Some(s) = source(&node.kind)
                && marked[s].is_none()
            {
                marked[s] = mark;
                work.push(s);
            }
        }
    }
    marked
}

// The calling convention between the code `lower-temporal-to-loops`
// generates for collectives and the runtime functions it calls (both
// sides read these; the runtime does not depend on the lowering).

/// The runtime function giving the number of processes of the run, as an
/// `i64` (`tempo_runtime::mpi::tempo_mpi_world_size`).
pub const WORLD_SIZE: &str = "tempo_mpi_world_size";

/// The runtime function of the GPU lowering's all-reduce
/// (`tempo_runtime::nccl::tempo_gpu_all_reduce`): `(address: i64, count:
/// i64, element: i32, op: i32)`, the flat buffer reduced in place (NCCL on
/// the CUDA target, MPI where the GPU lowering runs on the CPU). Element
/// 0 to 3: f32, f64, i32, i64; op 0 to 2: sum, max, min.
pub const GPU_ALL_REDUCE: &str = "tempo_gpu_all_reduce";

/// The code of an element type in [`GPU_ALL_REDUCE`]'s calls (and the
/// runtime's MPI path): f32 0, f64 1, i32 2, i64 3; booleans are not
/// reduced.
pub fn element_code(element: ElementType) -> Option<usize> {
    match element {
        ElementType::F32 => Some(0),
        ElementType::F64 => Some(1),
        ElementType::I32 => Some(2),
        ElementType::I64 => Some(3),
        ElementType::I1 => None,
    }
}

/// The code of a reduction in [`GPU_ALL_REDUCE`]'s calls: sum (and the
/// mean's sum) 0, max 1, min 2.
pub fn reduction_code(kind: Collective) -> usize {
    match kind {
        Collective::Sum | Collective::Mean => 0,
        Collective::Max => 1,
        Collective::Min => 2,
    }
}
