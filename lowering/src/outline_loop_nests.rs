//! `outline-loop-nests`: moves each outermost spatial loop nest of a
//! function (an `scf.for`, `scf.parallel` or `scf.while` not inside another
//! one: the code of one op of one step, a matrix kernel, a row loop) into a
//! private function of its own, called where the nest was. Constants the
//! nest uses are copied into the new function (LLVM keeps folding them:
//! trip counts, strides); every other value from outside becomes an
//! argument; the nest's results are the function's results.
//!
//! Why: a whole training run lowers to one `tempo_main` holding every
//! step's kernels inside the temporal loops (256 KiB of machine code for a
//! 2-layer GPT step), and LLVM's loop analyses cost more than linearly in
//! the size of a function (`ScalarEvolution` forgetting the values of the
//! loops around each transformed loop took a fifth of the compile time, and
//! LLVM four fifths of it). Outlined, each nest is optimized alone; the
//! temporal loops (`affine.for`, lowered after this pass) keep only calls.
//! The functions are marked `noinline` so that LLVM's inliner does not
//! rebuild the one large function; a call per nest and step costs a few
//! nanoseconds against the nest's work. Nests that are the same kernel at
//! several sites (each layer's, the forward and backward copies) share one
//! function (`share_identical`), so LLVM compiles each kernel once.
//!
//! Assumes the loop level after `convert-linalg-to-loops`, before
//! `lower-affine` (temporal loops are still `affine.for`). Nests with fewer
//! than [`MIN_OPS`] ops stay where they are; nests inside `omp`, `gpu` or
//! `affine.parallel` ops and in functions without a body are left alone.

use melior::ir::attribute::AttributeLike;
use melior::ir::{
    Attribute, Block, BlockLike, Identifier, Location, OperationRef, Region, RegionLike, Type, Value, ValueLike,
    attribute::{ArrayAttribute, StringAttribute, TypeAttribute},
    operation::{OperationBuilder, OperationLike},
    r#type::FunctionType,
};
use mlir_sys::*;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};

/// The smallest nest (ops, nested ones counted) worth a function: a loop
/// around one load, one op and one store. (From 12: the LSTM training
/// step's `tempo_main` kept about 150 small nests, 144 KB of machine code
/// whose code generation is superlinear in its size; with 4, its compile
/// time fell by a quarter and the GPT step's by a fifth, PPO's rose by
/// about 0.3 s, run times unchanged: bench/README.md, compile time.)
pub const MIN_OPS: usize = 4;

/// The `outline-loop-nests` pass.
pub struct OutlineLoopNests;

impl TempoPass for OutlineLoopNests {
    fn name(&self) -> &'static str {
        "outline-loop-nests"
    }
    fn summary(&self) -> &'static str {
        "Move each outermost scf loop nest of a function (one op's code in a step) into a private noinline function called in its place, so that LLVM optimizes many small functions instead of one large one"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let Some(module_body) = op.region(0).ok().and_then(|r| r.first_block()) else { return Ok(()) };
        let functions: Vec<OperationRef> = tempo_dialects::block_operations(module_body)
            .into_iter()
            .filter(|f| {
                f.name().as_string_ref().as_str() == Ok("func.func")
                    && f.region(0).is_ok_and(|r| r.first_block().is_some())
            })
            .collect();
        let mut count = 0;
        let mut outlined = Vec::new();
        for function in functions {
            let name = function.attribute("sym_name").ok().map(|a| a.to_string().trim_matches('"').to_string());
            let name = name.unwrap_or_else(|| "f".into());
            let mut nests = Vec::new();
            collect(function, &mut nests);
            for nest in nests {
                let nest = unsafe { OperationRef::from_raw(nest) };
                let name = format!("{name}_nest{count}");
                let made =
                    outline(op, function, nest, &name).map_err(|e| vec![PassDiagnostic::new(nest.location(), e)])?;
                outlined.push((name, made.0, made.1));
                count += 1;
            }
        }
        share_identical(op, &outlined).map_err(|e| vec![PassDiagnostic::new(op.location(), e)])?;
        Ok(())
    }
}

/// Calls of structurally identical outlined functions (the same kernel at
/// several sites: each layer's, the forward and backward copies) go to
/// the first of them; the others are erased, so that LLVM optimizes and
/// generates each kernel once (159 nests of a GPT training step were 57
/// distinct functions). Identical means the same printed form but for the
/// name (SSA names are numbered per function; locations are not printed).
fn share_identical(module: OperationRef, outlined: &[(String, MlirOperation, MlirOperation)]) -> Result<(), String> {
    let held = module.context();
    let context = unsafe { held.to_ref() };
    let mut first: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (name, function, call) in outlined {
        let function = unsafe { OperationRef::from_raw(*function) };
        // (Printed in its own scope: the default builds the printer's state
        // for the whole module at each print.)
        let flags = melior::ir::operation::OperationPrintingFlags::new().use_local_scope();
        let key = function.to_string_with_flags(flags).map_err(|e| e.to_string())?;
        let key = key.replacen(&format!("@{name}("), "@(", 1);
        match first.get(&key) {
            Some(kept) => {
                let callee = melior::ir::attribute::FlatSymbolRefAttribute::new(context, kept);
                let call = unsafe { melior::ir::OperationRef::from_raw(*call) };
                unsafe {
                    mlirOperationSetAttributeByName(
                        call.to_raw(),
                        melior::StringRef::new("callee").to_raw(),
                        Attribute::from(callee).to_raw(),
                    );
                    mlirOperationRemoveFromParent(function.to_raw());
                    mlirOperationDestroy(function.to_raw());
                }
            }
            None => {
                first.insert(key, name.clone());
            }
        }
    }
    Ok(())
}

fn is_loop(name: &str) -> bool {
    matches!(name, "scf.for" | "scf.parallel" | "scf.while")
}

/// Outermost loops under `op` with at least [`MIN_OPS`] ops, not inside
/// regions that must stay whole (OpenMP, GPU, affine parallel loops).
fn collect(op: OperationRef, out: &mut Vec<MlirOperation>) {
    for inner in tempo_dialects::nested_operations(op) {
        let name = inner.name().as_string_ref().as_str().unwrap_or("").to_string();
        if name.starts_with("omp.") || name.starts_with("gpu.") || name == "affine.parallel" {
            continue;
        }
        if !is_loop(&name) {
            collect(inner, out);
        } else if size(inner) >= MIN_OPS {
            out.push(inner.to_raw());
        }
    }
}

/// Ops under `op`, itself included.
fn size(op: OperationRef) -> usize {
    1 + tempo_dialects::nested_operations(op).into_iter().map(size).sum::<usize>()
}

/// Whether `ancestor` is `op` or holds it.
fn within(op: MlirOperation, ancestor: MlirOperation) -> bool {
    let mut current = op;
    while !current.ptr.is_null() {
        if current.ptr == ancestor.ptr {
            return true;
        }
        current = unsafe { mlirOperationGetParentOperation(current) };
    }
    false
}

/// The op a value is defined in: its defining op, or the op owning the
/// block it is an argument of.
fn defining_scope(value: MlirValue) -> MlirOperation {
    unsafe {
        if mlirValueIsABlockArgument(value) {
            mlirBlockGetParentOperation(mlirBlockArgumentGetOwner(value))
        } else {
            mlirOpResultGetOwner(value)
        }
    }
}

/// Values used inside `nest` and defined outside it, in first-use order.
fn captured(nest: OperationRef) -> Vec<MlirValue> {
    fn walk(
        op: OperationRef,
        nest: MlirOperation,
        seen: &mut std::collections::HashSet<*const std::ffi::c_void>,
        out: &mut Vec<MlirValue>,
    ) {
        for k in 0..op.operand_count() {
            let Ok(v) = op.operand(k) else { continue };
            let raw = v.to_raw();
            if !seen.contains(&raw.ptr) && !within(defining_scope(raw), nest) {
                seen.insert(raw.ptr);
                out.push(raw);
            }
        }
        for inner in tempo_dialects::nested_operations(op) {
            walk(inner, nest, seen, out);
        }
    }
    let mut out = Vec::new();
    walk(nest, nest.to_raw(), &mut Default::default(), &mut out);
    out
}

/// Whether `value` is the result of an operand-free `arith.constant` (or
/// another constant op): copied into the function rather than passed.
fn constant_op(value: MlirValue) -> Option<OperationRef<'static, 'static>> {
    if unsafe { mlirValueIsABlockArgument(value) } {
        return None;
    }
    let op = unsafe { OperationRef::from_raw(mlirOpResultGetOwner(value)) };
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
    (matches!(name.as_str(), "arith.constant" | "llvm.mlir.constant" | "ub.poison") && op.operand_count() == 0)
        .then_some(op)
}

/// Replaces, in the ops of `nest`, each operand that is a key of
/// `replacements` by its value: one walk of the nest (not of every use of
/// each value, which for a constant used all over the entry made the pass
/// quadratic in the program's size).
fn replace_inside(replacements: &std::collections::HashMap<*const std::ffi::c_void, MlirValue>, nest: OperationRef) {
    for k in 0..nest.operand_count() {
        let Ok(v) = nest.operand(k) else { continue };
        if let Some(new) = replacements.get(&v.to_raw().ptr) {
            unsafe { mlirOperationSetOperand(nest.to_raw(), k as isize, *new) };
        }
    }
    for inner in tempo_dialects::nested_operations(nest) {
        replace_inside(replacements, inner);
    }
}

/// Outlines `nest` as function `name`; returns the new function and the call.
fn outline(
    module: OperationRef,
    function: OperationRef,
    nest: OperationRef,
    name: &str,
) -> Result<(MlirOperation, MlirOperation), String> {
    // (The reference points into `held`: keep it alive.)
    let held = module.context();
    let context = unsafe { held.to_ref() };
    let location = nest.location();
    let values = captured(nest);
    let (constants, arguments): (Vec<MlirValue>, Vec<MlirValue>) =
        values.into_iter().partition(|v| constant_op(*v).is_some());
    let argument_types: Vec<Type> = arguments.iter().map(|v| unsafe { Type::from_raw(mlirValueGetType(*v)) }).collect();
    let result_types: Vec<Type> = (0..nest.result_count())
        .map(|k| nest.result(k).map(|r| r.r#type()).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    // The function: arguments, the constants copied, then the nest.
    let region = Region::new();
    let block_arguments: Vec<(Type, Location)> = argument_types.iter().map(|&t| (t, location)).collect();
    region.append_block(Block::new(&block_arguments));
    let ty = FunctionType::new(context, &argument_types, &result_types);
    let noinline = ArrayAttribute::new(context, &[StringAttribute::new(context, "noinline").into()]);
    fn attribute<'c>(context: &'c melior::Context, k: &str, v: Attribute<'c>) -> (Identifier<'c>, Attribute<'c>) {
        (Identifier::new(context, k), v)
    }
    let new_function = OperationBuilder::new("func.func", location)
        .add_attributes(&[
            attribute(context, "sym_name", StringAttribute::new(context, name).into()),
            attribute(context, "function_type", TypeAttribute::new(ty.into()).into()),
            attribute(context, "sym_visibility", StringAttribute::new(context, "private").into()),
            attribute(context, "passthrough", noinline.into()),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| format!("compiler fault: cannot build the outlined function: {e}"))?;
    let module_body = module.region(0).map_err(|e| e.to_string())?.first_block().ok_or("a module without a body")?;
    let new_function = module_body.insert_operation_after(function, new_function);
    let body = new_function.region(0).map_err(|e| e.to_string())?.first_block().ok_or("no body")?;
    let mut replacements = std::collections::HashMap::new();
    for (k, v) in arguments.iter().enumerate() {
        let argument = body.argument(k).map_err(|e| e.to_string())?;
        replacements.insert(v.ptr, argument.to_raw());
    }
    for v in &constants {
        let op = constant_op(*v).ok_or("compiler fault: not a constant")?;
        let copy = unsafe { mlirOperationClone(op.to_raw()) };
        unsafe { mlirBlockAppendOwnedOperation(body.to_raw(), copy) };
        replacements.insert(v.ptr, unsafe { mlirOperationGetResult(copy, 0) });
    }
    replace_inside(&replacements, nest);
    // The call where the nest was, its results for the nest's.
    let parent = nest.block().ok_or("compiler fault: the nest is not in a block")?;
    let operands: Vec<Value> = arguments.iter().map(|v| unsafe { Value::from_raw(*v) }).collect();
    let callee = melior::ir::attribute::FlatSymbolRefAttribute::new(context, name);
    let call = OperationBuilder::new("func.call", location)
        .add_operands(&operands)
        .add_results(&result_types)
        .add_attributes(&[attribute(context, "callee", callee.into())])
        .build()
        .map_err(|e| format!("compiler fault: cannot build the call: {e}"))?;
    let call = parent.insert_operation_before(nest, call);
    for k in 0..nest.result_count() {
        let (old, new) = (nest.result(k).map_err(|e| e.to_string())?, call.result(k).map_err(|e| e.to_string())?);
        unsafe { mlirValueReplaceAllUsesOfWith(old.to_raw(), new.to_raw()) };
    }
    unsafe {
        mlirOperationRemoveFromParent(nest.to_raw());
        mlirBlockAppendOwnedOperation(body.to_raw(), nest.to_raw());
    }
    let results: Vec<Value> = (0..nest.result_count())
        .map(|k| nest.result(k).map(Value::from).map_err(|e| e.to_string()))
        .collect::<Result<_, _>>()?;
    let ret = OperationBuilder::new("func.return", location)
        .add_operands(&results)
        .build()
        .map_err(|e| format!("compiler fault: cannot build the return: {e}"))?;
    body.append_operation(ret);
    Ok((new_function.to_raw(), call.to_raw()))
}
