//! Removing a module's top-level ops.

use crate::diagnostics::PassDiagnostic;
use melior::ir::{OperationRef, RegionLike, ValueLike, operation::OperationLike};
use mlir_sys::{mlirOperationDestroy, mlirOperationRemoveFromParent};
use tempo_dialects::block_operations;

/// Removes the top-level ops of `module` for which `remove(name)` holds.
pub fn remove_ops<'c>(module: OperationRef<'c, '_>, remove: impl Fn(&str) -> bool) -> Result<(), PassDiagnostic<'c>> {
    let fault = |message: &str| PassDiagnostic::new(module.location(), format!("compiler fault: {message}"));
    let body = module.region(0).ok().and_then(|r| r.first_block()).ok_or_else(|| fault("module without a body"))?;
    // Destroy ops only once nothing uses their results (uses may sit in the
    // regions of other removed ops, or precede the definition in a graph
    // region), so no use list ever points at freed memory.
    let mut pending: Vec<_> = block_operations(body)
        .into_iter()
        .filter(|op| remove(op.name().as_string_ref().as_str().unwrap_or("")))
        .collect();
    while !pending.is_empty() {
        let before = pending.len();
        pending.retain(|op| {
            let unused = (0..op.result_count()).all(|i| unsafe {
                mlir_sys::mlirOpOperandIsNull(mlir_sys::mlirValueGetFirstUse(op.result(i).expect("in range").to_raw()))
            });
            if unused {
                unsafe {
                    mlirOperationRemoveFromParent(op.to_raw());
                    mlirOperationDestroy(op.to_raw());
                }
            }
            !unused
        });
        if pending.len() == before {
            return Err(fault("cannot remove the program: its values are used by ops that stay"));
        }
    }
    Ok(())
}
