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
            flatten(op, found).map_err(|e| vec![PassDiagnostic::new(found.location(), e)])?;
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
    let text = op.attribute("value").ok()?.to_string();
    text.split(':').next()?.trim().parse().ok()
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

fn flatten(module: OperationRef, op: OperationRef) -> Result<(), String> {
    use mlir_sys::*;
    let rank = op.operand_count() / 3;
    let extents: Vec<_> = (rank..2 * rank).filter_map(|i| op.operand(i).ok()).collect();
    // The replacement: strides, the flat loop, and in its body 2 ops per
    // dimension, the index being the second.
    let arguments: Vec<String> = (0..rank).map(|d| format!("%n{d}: index")).collect();
    let mut text = format!("module {{\n  func.func @replacement({}) {{\n", arguments.join(", "));
    text += "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n";
    text += &format!("    %s{} = arith.constant 1 : index\n", rank - 1);
    for d in (0..rank - 1).rev() {
        text += &format!("    %s{d} = arith.muli %s{}, %n{} : index\n", d + 1, d + 1);
    }
    text += "    %total = arith.muli %s0, %n0 : index\n";
    text += "    scf.parallel (%k) = (%c0) to (%total) step (%c1) {\n";
    for d in 0..rank {
        text +=
            &format!("      %q{d} = arith.divui %k, %s{d} : index\n      %i{d} = arith.remui %q{d}, %n{d} : index\n");
    }
    text += "    }\n    return\n  }\n}\n";
    let body = op.region(0).map_err(|e| e.to_string())?.first_block().ok_or("a parallel loop without a body")?;
    let old_ops = tempo_dialects::block_operations(body);
    let (old_terminator, old_body) = old_ops.split_last().ok_or("an empty parallel loop")?;
    if old_terminator.name().as_string_ref().as_str() != Ok("scf.reduce") || old_terminator.operand_count() != 0 {
        return Err("compiler fault: a parallel loop without a plain scf.reduce".into());
    }
    // Parse the replacement in the module's context; move its ops before
    // the loop and the loop's body into the flat loop.
    let context = module.context();
    let origins = tempo_passes::fault::Origins::new();
    let fallback = (op.location(), "a parallel loop");
    let parsed =
        tempo_passes::fault::parse_generated(unsafe { context.to_ref() }, &text, Some(&origins), fallback, false)
            .map_err(|fault| fault.message)?;
    let function =
        tempo_dialects::block_operations(parsed.body()).into_iter().next().ok_or("compiler fault: no @replacement")?;
    let block = function.region(0).map_err(|e| e.to_string())?.first_block().ok_or("no @replacement body")?;
    let parent = op.block().ok_or("compiler fault: the loop is not in a block")?;
    let new_ops = tempo_dialects::block_operations(block);
    let (_return, new_body) = new_ops.split_last().ok_or("compiler fault: empty @replacement")?;
    unsafe {
        for (d, extent) in extents.iter().enumerate() {
            mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(block.to_raw(), d as isize), extent.to_raw());
        }
        let mut flat = None;
        for moved in new_body {
            if moved.name().as_string_ref().as_str() == Ok("scf.parallel") {
                flat = Some(*moved);
            }
            mlirOperationRemoveFromParent(moved.to_raw());
            mlirBlockInsertOwnedOperationBefore(parent.to_raw(), op.to_raw(), moved.to_raw());
        }
        let flat = flat.ok_or("compiler fault: no flat loop")?;
        let flat_body =
            flat.region(0).map_err(|e| e.to_string())?.first_block().ok_or("compiler fault: flat loop body")?;
        let flat_ops = tempo_dialects::block_operations(flat_body);
        let terminator = *flat_ops.last().ok_or("compiler fault: flat loop terminator")?;
        for d in 0..rank {
            let index = flat_ops[2 * d + 1].result(0).map_err(|e| e.to_string())?;
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
