//! Removing a module's top-level ops, and adding ops parsed from MLIR text
//! (the few lowerings that still write declarations and helper functions
//! as text).

use crate::diagnostics::PassDiagnostic;
use crate::fault::{Origins, parse_generated};
use melior::ir::{BlockLike, Module, OperationRef, RegionLike, ValueLike, operation::OperationLike};
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

/// Adds every top-level op of the module parsed from `text` (declarations,
/// globals) to `module`, first, unless a symbol of that name is there.
pub fn add_missing_symbols(module: OperationRef<'_, '_>, text: &str) -> Result<(), String> {
    let context = module.context();
    let parsed = parse_generated(
        unsafe { context.to_ref() },
        text,
        Some(&Origins::new()),
        (module.location(), "the module"),
        false,
    )
    .map_err(|fault| fault.message)?;
    move_new_symbols(module, &parsed, "").map(|_| ())
}

/// Moves the top-level ops of `parsed` whose symbol `module` lacks to the
/// front of `module`'s body; the op named `keep` (if any) stays and is
/// returned.
fn move_new_symbols<'p>(
    module: OperationRef<'_, '_>,
    parsed: &'p Module,
    keep: &str,
) -> Result<Option<OperationRef<'p, 'p>>, String> {
    use mlir_sys::mlirBlockInsertOwnedOperationBefore;
    let module_body =
        module.region(0).ok().and_then(|r| r.first_block()).ok_or("compiler fault: module without a body")?;
    let existing: std::collections::HashSet<String> = block_operations(module_body)
        .into_iter()
        .filter_map(|o| o.attribute("sym_name").ok().map(|a| a.to_string()))
        .collect();
    let keep = format!("\"{keep}\"");
    let mut kept = None;
    for top in block_operations(parsed.body()) {
        let symbol = top.attribute("sym_name").ok().map(|a| a.to_string());
        if symbol.as_deref() == Some(keep.as_str()) {
            kept = Some(top);
        } else if symbol.as_ref().is_none_or(|s| !existing.contains(s)) {
            let first = module_body.first_operation().map_or(std::ptr::null_mut(), |o| o.to_raw().ptr);
            unsafe {
                mlirOperationRemoveFromParent(top.to_raw());
                mlirBlockInsertOwnedOperationBefore(
                    module_body.to_raw(),
                    mlir_sys::MlirOperation { ptr: first },
                    top.to_raw(),
                );
            }
        }
    }
    Ok(kept)
}

/// Replaces `op` with the body of `@replacement` in the module parsed from
/// `text` (in `op`'s context): the function's arguments stand for `inputs`
/// (in order), its ops are moved before `op`, and the values it returns
/// replace `op`'s results, in order. Returned values beyond `op`'s results
/// are handed back to the caller. Every other top-level op of `text` (a
/// declaration such as `func.func private @mmap` or a `memref.global`) is
/// added to `module` unless a symbol of that name is already there.
pub fn replace_op_with_text<'c, 'a>(
    module: OperationRef<'c, 'a>,
    op: OperationRef<'c, 'a>,
    inputs: &[melior::ir::Value<'c, 'a>],
    text: &str,
) -> Result<Vec<mlir_sys::MlirValue>, String> {
    use mlir_sys::{
        mlirBlockGetArgument, mlirBlockInsertOwnedOperationBefore, mlirOperationGetNumOperands,
        mlirOperationGetOperand, mlirValueReplaceAllUsesOfWith,
    };
    let context = op.context();
    let name = op.name().as_string_ref().as_str().unwrap_or("an op").to_string();
    // The replacement gets the replaced op's location (after a lowering,
    // the user's op); a fault is reported there by the caller.
    let parsed =
        parse_generated(unsafe { context.to_ref() }, text, Some(&Origins::new()), (op.location(), &name), false)
            .map_err(|fault| fault.message)?;
    let replacement = move_new_symbols(module, &parsed, "replacement")?;
    let function = replacement.ok_or("compiler fault: replacement text without @replacement")?;
    let block =
        function.region(0).ok().and_then(|r| r.first_block()).ok_or("compiler fault: @replacement without a body")?;
    if block.argument_count() != inputs.len() {
        return Err("compiler fault: @replacement takes a different number of values".into());
    }
    let parent = op.block().ok_or("compiler fault: the replaced op is not in a block")?;
    let ops = block_operations(block);
    let (terminator, body) = ops.split_last().ok_or("compiler fault: empty @replacement")?;
    for moved in body {
        unsafe {
            mlirOperationRemoveFromParent(moved.to_raw());
            mlirBlockInsertOwnedOperationBefore(parent.to_raw(), op.to_raw(), moved.to_raw());
        }
    }
    unsafe {
        for (i, input) in inputs.iter().enumerate() {
            mlirValueReplaceAllUsesOfWith(mlirBlockGetArgument(block.to_raw(), i as isize), input.to_raw());
        }
        let returned: Vec<_> = (0..mlirOperationGetNumOperands(terminator.to_raw()))
            .map(|i| mlirOperationGetOperand(terminator.to_raw(), i))
            .collect();
        if returned.len() < op.result_count() {
            return Err("compiler fault: @replacement returns too few values".into());
        }
        for (i, value) in returned.iter().enumerate().take(op.result_count()) {
            mlirValueReplaceAllUsesOfWith(op.result(i).expect("in range").to_raw(), *value);
        }
        mlirOperationRemoveFromParent(op.to_raw());
        mlirOperationDestroy(op.to_raw());
        Ok(returned[op.result_count()..].to_vec())
    }
}
