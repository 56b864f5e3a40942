//! `gpu-flatten-parallel-loops`: turns every outermost multi-dimensional
//! `scf.parallel` of host code into a one-dimensional loop over the product
//! of its extents, each original index recovered as `(k / stride) % extent`
//! (row-major, so consecutive `k` are consecutive innermost indices).
//!
//! Why: the GPU mapping tiles parallel loops with fixed tile sizes, one per
//! dimension, and the points of a decode step are mostly `1 x N` or
//! `heads x 1 x d`. A `16 x 16` tile of a `1 x 768` loop leaves 15 of 16
//! threads idle; the same loop flattened to 768 points and tiled by 256 uses
//! every thread, and neighbouring threads touch neighbouring elements
//! (coalesced accesses).
//!
//! Applies to loops with lower bounds 0, steps 1 and no reductions (what
//! `convert-linalg-to-parallel-loops` and the lowering emit); others, and
//! loops nested in another `scf.parallel`, are left as they are. Loops inside
//! `gpu.module`s are not touched.

use crate::ir_builder::Builder;
use melior::ir::{BlockLike, OperationRef, RegionLike, ValueLike, operation::OperationLike};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};

/// The `gpu-flatten-parallel-loops` pass.
pub struct GpuFlattenParallelLoops;

impl TempoPass for GpuFlattenParallelLoops {
    fn name(&self) -> &'static str {
        "gpu-flatten-parallel-loops"
    }
    fn summary(&self) -> &'static str {
        "Flatten outermost multi-dimensional scf.parallel loops of host code (bounds from 0, steps of 1) to one dimension, so that GPU tiles are full"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let mut loops = Vec::new();
        collect(op, false, &mut loops);
        for found in loops {
            let found = unsafe { OperationRef::from_raw(found) };
            flatten(found).map_err(|e| vec![PassDiagnostic::new(found.location(), e)])?;
        }
        Ok(())
    }
}

/// Outermost `scf.parallel` ops of rank 2 or more under `op`, outside
/// `gpu.module`s.
fn collect(op: OperationRef, inside_parallel: bool, out: &mut Vec<mlir_sys::MlirOperation>) {
    for r in 0..op.region_count() {
        let Ok(region) = op.region(r) else { continue };
        let mut block = region.first_block();
        while let Some(b) = block {
            for inner in tempo_dialects::block_operations(b) {
                let name = inner.name().as_string_ref().as_str().unwrap_or("").to_string();
                if name == "gpu.module" {
                    continue;
                }
                let parallel = name == "scf.parallel";
                if parallel && !inside_parallel && flattenable(inner) {
                    out.push(inner.to_raw());
                }
                collect(inner, inside_parallel || parallel, out);
            }
            block = b.next_in_region();
        }
    }
}

/// The constant integer an index value is defined as, if it is one.
fn constant_index(value: melior::ir::Value) -> Option<i64> {
    let defining = unsafe { mlir_sys::mlirOpResultGetOwner(value.to_raw()) };
    if defining.ptr.is_null() || !unsafe { mlir_sys::mlirValueIsAOpResult(value.to_raw()) } {
        return None;
    }
    let op = unsafe { OperationRef::from_raw(defining) };
    if op.name().as_string_ref().as_str() != Ok("arith.constant") {
        return None;
    }
    let value = melior::ir::attribute::IntegerAttribute::try_from(op.attribute("value").ok()?).ok()?;
    Some(value.value())
}

/// Rank of `op` (an `scf.parallel`) if it has rank >= 2, bounds from 0,
/// steps of 1 and no reductions.
fn flattenable(op: OperationRef) -> bool {
    let operands = op.operand_count();
    if operands % 3 != 0 || op.result_count() != 0 {
        return false;
    }
    let rank = operands / 3;
    rank >= 2
        && (0..rank).all(|d| {
            op.operand(d).ok().and_then(constant_index) == Some(0)
                && op.operand(2 * rank + d).ok().and_then(constant_index) == Some(1)
        })
}

/// Replaces `op` by the flat loop: the strides and the total before it,
/// and in the flat loop's body each original index (`(k / stride) %
/// extent`), then the original body.
fn flatten(op: OperationRef) -> Result<(), String> {
    use mlir_sys::*;
    let rank = op.operand_count() / 3;
    let extents: Vec<_> =
        (rank..2 * rank).map(|i| op.operand(i).map_err(|e| e.to_string())).collect::<Result<_, _>>()?;
    let body = op.region(0).map_err(|e| e.to_string())?.first_block().ok_or("a parallel loop without a body")?;
    let old_ops = tempo_dialects::block_operations(body);
    let (old_terminator, old_body) = old_ops.split_last().ok_or("an empty parallel loop")?;
    if old_terminator.name().as_string_ref().as_str() != Ok("scf.reduce") || old_terminator.operand_count() != 0 {
        return Err("compiler fault: a parallel loop without a plain scf.reduce".into());
    }
    // Row-major strides: the innermost 1, each outer one the product of
    // the extents inside it.
    let b = Builder::before(op)?;
    let mut strides = vec![b.index(1)?; rank];
    for d in (0..rank - 1).rev() {
        strides[d] = b.arith("muli", strides[d + 1], extents[d + 1])?;
    }
    let total = b.arith("muli", strides[0], extents[0])?;
    let (inside, flat) = b.scf_parallel(&[total])?;
    let k = flat[0];
    let mut indices = Vec::new();
    for d in 0..rank {
        let q = inside.arith("divui", k, strides[d])?;
        indices.push(inside.arith("remui", q, extents[d])?);
    }
    let flat_body = unsafe { melior::ir::BlockRef::from_raw(mlirBlockArgumentGetOwner(k.to_raw())) };
    let terminator = flat_body.terminator().ok_or("compiler fault: the flat loop has no terminator")?;
    unsafe {
        for (d, index) in indices.iter().enumerate() {
            mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(body.to_raw(), d as isize), index.to_raw());
        }
        for moved in old_body {
            mlirOperationRemoveFromParent(moved.to_raw());
            mlirBlockInsertOwnedOperationBefore(flat_body.to_raw(), terminator.to_raw(), moved.to_raw());
        }
        mlirOperationRemoveFromParent(op.to_raw());
        mlirOperationDestroy(op.to_raw());
    }
    Ok(())
}
