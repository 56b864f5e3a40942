//! Replacing a module's contents with code parsed from MLIR text.
//!
//! Lowerings that produce whole functions build them as text (readable,
//! and checked by MLIR's own parser and verifier) and splice the result into
//! the module being transformed, in the module's context.

use melior::ir::{BlockLike, Module, OperationRef, RegionLike, ValueLike, operation::OperationLike};
use mlir_sys::{mlirBlockAppendOwnedOperation, mlirOperationDestroy, mlirOperationRemoveFromParent};
use tempo_dialects::block_operations;

/// Removes the top-level ops of `module` for which `remove(name)` holds and
/// appends every op of the module parsed from `text`.
pub fn replace_module_body(
    module: OperationRef<'_, '_>,
    text: &str,
    remove: impl Fn(&str) -> bool,
) -> Result<(), String> {
    let context = module.context();
    let parsed = Module::parse(unsafe { context.to_ref() }, text).ok_or_else(|| {
        format!("internal error: generated code does not parse; please report it with the input program\n{text}")
    })?;
    let body = module.region(0).ok().and_then(|r| r.first_block()).ok_or("internal error: module without a body")?;
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
            return Err("cannot remove the program: its values are used by ops that stay".into());
        }
    }
    for op in block_operations(parsed.body()) {
        unsafe {
            mlirOperationRemoveFromParent(op.to_raw());
            mlirBlockAppendOwnedOperation(body.to_raw(), op.to_raw());
        }
    }
    Ok(())
}
