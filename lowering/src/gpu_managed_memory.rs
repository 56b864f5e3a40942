//! `gpu-managed-memory`: puts the memory of host code where both the host
//! and GPU kernels can use it. After the spatial loops of a step became
//! kernels (`convert-parallel-loops-to-gpu`, `gpu-kernel-outlining`), the
//! host still runs the temporal loops, the bookkeeping of the stores and
//! the spatial work that did not become a kernel, on the same buffers the
//! kernels read and write. So, outside `gpu.module`s:
//!
//! - `memref.alloc` becomes `gpu.alloc host_shared` (CUDA managed memory:
//!   one address valid on the host and the device, pages placed on first
//!   touch), and `memref.dealloc` a call of `@tempo_gpu_free` on its
//!   pointer (the upstream lowering drops a synchronous `gpu.dealloc`);
//! - the reservation of growing block stores (`@mmap`, `@mprotect`,
//!   `@madvise`, `@munmap` of `lower-store-to-memref`) calls
//!   `@tempo_gpu_mmap`, `@tempo_gpu_mprotect`, `@tempo_gpu_madvise` and
//!   `@tempo_gpu_munmap`, with the same signatures, which the runtime
//!   implements on managed memory (reserved whole, backed as it is
//!   touched).
//!
//! Kernel launches are synchronous (`gpu-to-llvm` waits on each launch's
//! stream), so host code never touches a buffer a kernel is using.
//! `memref.alloca` and globals stay host memory: only host code uses them
//! (kernels are outlined from loops over allocated buffers and arguments).
//!
//! Assumes the output of `lower-store-to-memref` (possibly with kernels
//! outlined); the runtime provides the `@tempo_gpu_*` functions.

use melior::ir::attribute::FlatSymbolRefAttribute;
use melior::ir::{
    BlockLike, OperationRef, RegionLike, ValueLike, operation::OperationLike, operation::OperationMutLike,
};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};
use tempo_passes::splice::replace_op_with_text;

/// The `gpu-managed-memory` pass.
pub struct GpuManagedMemory;

/// The memory functions of block stores and their managed-memory versions.
const RENAMED: &[(&str, &str)] = &[
    ("mmap", "tempo_gpu_mmap"),
    ("mprotect", "tempo_gpu_mprotect"),
    ("madvise", "tempo_gpu_madvise"),
    ("munmap", "tempo_gpu_munmap"),
];

impl TempoPass for GpuManagedMemory {
    fn name(&self) -> &'static str {
        "gpu-managed-memory"
    }
    fn summary(&self) -> &'static str {
        "Host allocations and block-store reservations in CUDA managed memory (gpu.alloc host_shared, @tempo_gpu_*), shared by host code and kernels"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let here = |message: String| vec![PassDiagnostic::new(op.location(), message)];
        let mut allocs = Vec::new();
        let mut deallocs = Vec::new();
        let mut renamed = Vec::new();
        collect(op, &mut allocs, &mut deallocs, &mut renamed);
        let context = op.context();
        let context = unsafe { context.to_ref() };
        for found in renamed {
            let Some((key, new)) = renamed_symbol(unsafe { OperationRef::from_raw(found) }) else { continue };
            let mut found = unsafe { melior::ir::operation::OperationRefMut::from_raw(found) };
            if key == "callee" {
                found.set_attribute("callee", FlatSymbolRefAttribute::new(context, new).into());
            } else {
                found.set_attribute("sym_name", melior::ir::attribute::StringAttribute::new(context, new).into());
            }
        }
        for alloc in allocs {
            let alloc = unsafe { OperationRef::from_raw(alloc) };
            let ty = alloc.result(0).map_err(|e| here(e.to_string()))?.r#type().to_string();
            let sizes: Vec<_> = (0..alloc.operand_count()).filter_map(|i| alloc.operand(i).ok()).collect();
            let arguments: Vec<String> = (0..sizes.len()).map(|i| format!("%s{i}: index")).collect();
            let names: Vec<String> = (0..sizes.len()).map(|i| format!("%s{i}")).collect();
            let text = format!(
                "module {{\n  func.func @replacement({}) -> {ty} {{\n    %m = gpu.alloc host_shared ({}) : {ty}\n    return %m : {ty}\n  }}\n}}",
                arguments.join(", "),
                names.join(", ")
            );
            replace_op_with_text(op, alloc, &sizes, &text).map_err(here)?;
        }
        for dealloc in deallocs {
            let dealloc = unsafe { OperationRef::from_raw(dealloc) };
            let buffer = dealloc.operand(0).map_err(|e| here(e.to_string()))?;
            let ty = buffer.r#type().to_string();
            // (The declaration is added to the module once.)
            let declaration = "  func.func private @tempo_gpu_free(index)\n";
            let text = format!(
                "module {{\n{declaration}  func.func @replacement(%m: {ty}) {{\n    %p = memref.extract_aligned_pointer_as_index %m : {ty} -> index\n    func.call @tempo_gpu_free(%p) : (index) -> ()\n    return\n  }}\n}}"
            );
            replace_op_with_text(op, dealloc, &[buffer], &text).map_err(here)?;
        }
        Ok(())
    }
}

/// For a call of (or the declaration of) a block-store memory function,
/// the attribute naming it and the managed-memory function's name.
fn renamed_symbol(op: OperationRef) -> Option<(&'static str, &'static str)> {
    let key = match op.name().as_string_ref().as_str() {
        Ok("func.call") => "callee",
        Ok("func.func") => "sym_name",
        _ => return None,
    };
    let symbol = op.attribute(key).ok()?.to_string();
    let symbol = symbol.trim_start_matches('@').trim_matches('"');
    RENAMED.iter().find(|(from, _)| *from == symbol).map(|&(_, new)| (key, new))
}

/// The allocations, deallocations and memory-function symbols of host code
/// under `op` (not inside `gpu.module`s).
fn collect(
    op: OperationRef,
    allocs: &mut Vec<mlir_sys::MlirOperation>,
    deallocs: &mut Vec<mlir_sys::MlirOperation>,
    renamed: &mut Vec<mlir_sys::MlirOperation>,
) {
    for region in 0..op.region_count() {
        let Ok(region) = op.region(region) else { continue };
        let mut block = region.first_block();
        while let Some(b) = block {
            for inner in tempo_dialects::block_operations(b) {
                let name = inner.name().as_string_ref().as_str().unwrap_or("").to_string();
                match name.as_str() {
                    "gpu.module" => continue,
                    "memref.alloc" => allocs.push(inner.to_raw()),
                    "memref.dealloc" => deallocs.push(inner.to_raw()),
                    "func.call" | "func.func" if renamed_symbol(inner).is_some() => renamed.push(inner.to_raw()),
                    _ => {}
                }
                collect(inner, allocs, deallocs, renamed);
            }
            block = b.next_in_region();
        }
    }
}
