//! `gpu-share-kernels`: kernels that are the same op for op share one
//! kernel module. After `gpu-kernel-outlining` every launch site has its
//! own `gpu.module`, though a training step's layers, and the forward and
//! backward copies of a body, launch the same kernel at many sites (640
//! kernels of the GPT training step of `bench/train` are 161 distinct
//! ones). Each module is compiled to PTX apart (`gpu-module-to-binary`, the
//! NVPTX backend and `ptxas`' work at load time), so duplicates cost compile
//! time, load time and device memory for nothing.
//!
//! Two modules are the same when their printed forms, each printed in its
//! own scope, are equal once the module's own name is left out; every
//! launch of a duplicate then names the first such module's kernel, and
//! the duplicates are erased.
//!
//! Assumes the output of `gpu-kernel-outlining` (modules directly in the
//! top-level module, launches in host code naming `@module::@kernel`).

use melior::ir::{OperationRef, attribute::AttributeLike, operation::OperationLike};
use std::collections::HashMap;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};

/// The `gpu-share-kernels` pass.
pub struct GpuShareKernels;

impl TempoPass for GpuShareKernels {
    fn name(&self) -> &'static str {
        "gpu-share-kernels"
    }
    fn summary(&self) -> &'static str {
        "Kernel modules that are the same op for op (a layer's kernels at each layer, a body's forward and backward copies) become one, every launch naming it: each distinct kernel is compiled and loaded once"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let here = |message: String| vec![PassDiagnostic::new(op.location(), message)];
        // (The context reference must outlive the `&Context` taken from it.)
        let context = op.context();
        let context = unsafe { context.to_ref() };
        let flags = || melior::ir::operation::OperationPrintingFlags::new().use_local_scope();
        // The first module of each printed form, and what each duplicate
        // becomes.
        let mut first: HashMap<String, String> = HashMap::new();
        let mut renamed: HashMap<String, String> = HashMap::new();
        let mut duplicates = Vec::new();
        for module in tempo_dialects::nested_operations(op) {
            if module.name().as_string_ref().as_str() != Ok("gpu.module") {
                continue;
            }
            let Some(name) = symbol_name(module) else { continue };
            let printed = module.to_string_with_flags(flags()).map_err(|e| here(e.to_string()))?;
            let key = printed.replacen(&format!("@{name} "), "@ ", 1);
            match first.get(&key) {
                Some(kept) => {
                    renamed.insert(name, kept.clone());
                    duplicates.push(module.to_raw());
                }
                None => {
                    first.insert(key, name);
                }
            }
        }
        if duplicates.is_empty() {
            return Ok(());
        }
        let mut launches = Vec::new();
        crate::gpu_scope_launch_arguments::host_launches(op, &mut launches);
        for launch in launches {
            let launch = unsafe { OperationRef::from_raw(launch) };
            let Ok(kernel) = launch.attribute("kernel") else { continue };
            // `@module::@kernel`: the root reference renamed, the nested
            // ones kept.
            if !unsafe { mlir_sys::mlirAttributeIsASymbolRef(kernel.to_raw()) } {
                continue;
            }
            let root = unsafe { mlir_sys::mlirSymbolRefAttrGetRootReference(kernel.to_raw()) };
            let module = unsafe { melior::StringRef::from_raw(root) }.as_str().unwrap_or("").to_string();
            let Some(kept) = renamed.get(module.as_str()) else { continue };
            let nested: Vec<mlir_sys::MlirAttribute> =
                (0..unsafe { mlir_sys::mlirSymbolRefAttrGetNumNestedReferences(kernel.to_raw()) })
                    .map(|k| unsafe { mlir_sys::mlirSymbolRefAttrGetNestedReference(kernel.to_raw(), k) })
                    .collect();
            let kept = kept.to_string();
            let new = unsafe {
                melior::ir::Attribute::from_raw(mlir_sys::mlirSymbolRefAttrGet(
                    context.to_raw(),
                    melior::StringRef::new(&kept).to_raw(),
                    nested.len() as isize,
                    nested.as_ptr(),
                ))
            };
            unsafe {
                mlir_sys::mlirOperationSetAttributeByName(
                    launch.to_raw(),
                    melior::StringRef::new("kernel").to_raw(),
                    new.to_raw(),
                )
            };
        }
        for module in duplicates {
            unsafe {
                mlir_sys::mlirOperationRemoveFromParent(module);
                mlir_sys::mlirOperationDestroy(module);
            }
        }
        Ok(())
    }
}

/// The name of a symbol op, without `@` or quotes.
fn symbol_name(op: OperationRef) -> Option<String> {
    let name = op.attribute("sym_name").ok()?.to_string();
    Some(name.trim_matches('"').to_string())
}
