//! Building a [`Program`] as typed IR: the ops of the temporal dialect made
//! through the dialect's generated builders (`tempo_dialects::temporal`),
//! with their attributes (affine maps, integer sets, dense constants)
//! built through MLIR's C API, not written as text and parsed back. This
//! is how a pass that transforms the program model writes its result into
//! the module ([`replace_program`]).
//!
//! The ops are those the program was read from (`program/build.rs` reads
//! exactly what this writes): `temporal.dim`, one `temporal.input` or
//! `temporal.tensor` per tensor, a `temporal.define` per branch (its body
//! the branch's nodes in order, ending in `gpu.yield` of the result),
//! `temporal.output` and `temporal.stop`; every op keeps its node's,
//! tensor's or dimension's location. Reading the module back gives an
//! equal program. Declarations of gradients are not written: they are
//! expanded (`temporal-autodiff`) before any pass writes a program.
//!
//! Assumes a program whose node types and operands are consistent (what
//! `temporal-verify` accepts and the passes keep); a constant's elements
//! are its `values` (floats) or `integers`.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::program::{DYNAMIC, ElementType, FlashPart, Movement, Node, NodeKind, PointType, Program, ReduceKind};
use melior::Context;
use melior::ir::attribute::{ArrayAttribute, IntegerAttribute, StringAttribute, TypeAttribute};
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::r#type::IntegerType;
use melior::ir::{
    Attribute, Block, BlockLike, Location, Module, Operation, OperationRef, Region, RegionLike, Type, TypeLike, Value,
    ValueLike,
};
use tempo_dialects::temporal as t;

/// Replaces the temporal ops of `module` with `program`, built as typed IR
/// (the module's other ops, declarations of external functions, stay).
pub fn replace_program<'c>(module: OperationRef<'c, '_>, program: &Program<'c>) -> Result<(), Vec<PassDiagnostic<'c>>> {
    let fault = |message: String| vec![PassDiagnostic::new(module.location(), format!("compiler fault: {message}"))];
    // SAFETY: the module's context outlives the module and the program;
    // the reference points into `context_ref`, which lives to the end.
    let context_ref = module.context();
    let context: &'c Context = unsafe { context_ref.to_ref() };
    // The handle type as the module's declarations have it (parsing its
    // name would load the dialect, which a running pass may not do).
    let handle = tempo_dialects::block_operations(
        module.region(0).ok().and_then(|r| r.first_block()).ok_or_else(|| fault("module without a body".into()))?,
    )
    .into_iter()
    .find(|op| t::InputOp::try_from(*op).is_some() || t::TensorOp::try_from(*op).is_some())
    .and_then(|op| op.result(0).ok().map(|r| r.r#type()));
    let built = match handle {
        Some(handle) => build_program(context, program, handle).map_err(fault)?,
        None if program.tensors.is_empty() => Module::new(module.location()),
        None => return Err(fault("a program of tensors written into a module without declarations".into())),
    };
    crate::support::splice::remove_ops(module, |name| name.starts_with("temporal.")).map_err(|d| vec![d])?;
    let body =
        module.region(0).ok().and_then(|r| r.first_block()).ok_or_else(|| fault("module without a body".into()))?;
    for op in tempo_dialects::block_operations(built.body()) {
        // SAFETY: `op` is moved from the built module's body to the end of
        // `module`'s, in the same context; nothing else refers to it.
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
            mlir_sys::mlirBlockAppendOwnedOperation(body.to_raw(), op.to_raw());
        }
    }
    Ok(())
}

/// A module holding the ops of `program`, in order; `handle` is the
/// dialect's `!temporal.rtensor` type.
pub fn build_program<'c>(context: &'c Context, program: &Program<'c>, handle: Type<'c>) -> Result<Module<'c>, String> {
    let b = Emit::new(context, &program.dims, handle);
    let location = program.location.unwrap_or_else(|| Location::unknown(context));
    let module = Module::new(location);
    let body = module.body();
    for (k, dim) in program.dims.iter().enumerate() {
        let location = program.dim_locations.get(k).copied().unwrap_or_else(|| Location::unknown(context));
        body.append_operation(t::DimOp::build(context, location, b.string(&dim.name), b.string(&dim.bound)));
    }
    let mut handles: Vec<Value> = Vec::with_capacity(program.tensors.len());
    for tensor in &program.tensors {
        let domain: Vec<Attribute> = tensor.domain.iter().map(|&d| b.string(&program.dims[d].name)).collect();
        let (name, domain) = (b.string(&tensor.name), ArrayAttribute::new(context, &domain).into());
        let element = TypeAttribute::new(b.tensor_type(&tensor.point)?).into();
        let op = if tensor.is_input {
            t::InputOp::build(context, tensor.location, name, domain, element, b.handle)
        } else {
            t::TensorOp::build(context, tensor.location, name, domain, element, b.handle)
        };
        let op = body.append_operation(op);
        handles.push(op.result(0).map_err(|e| e.to_string())?.into());
    }
    for (i, tensor) in program.tensors.iter().enumerate() {
        for branch in &tensor.branches {
            let block = Block::new(&[]);
            let mut values: Vec<Value> = Vec::with_capacity(branch.nodes.len());
            for node in &branch.nodes {
                let op = block.append_operation(b.node(node, &values, &handles)?);
                values.push(op.result(0).map_err(|e| e.to_string())?.into());
            }
            let result = *values.get(branch.result).ok_or("a branch result out of range")?;
            block.append_operation(yield_op(branch.location, &[result])?);
            let region = Region::new();
            region.append_block(block);
            let when = b.set(&branch.when);
            body.append_operation(t::DefineOp::build(context, branch.location, handles[i], when, region));
        }
    }
    for &o in &program.outputs {
        let location = program.tensors[o].location;
        body.append_operation(t::OutputOp::build(context, location, handles[o]));
    }
    for stop in &program.stops {
        let dim = b.string(&program.dims[stop.dim].name);
        body.append_operation(t::StopOp::build(context, stop.location, handles[stop.done], dim));
    }
    Ok(module)
}

/// `gpu.yield` of `values` (a define's or a call's region ends in one).
pub fn yield_op<'c>(location: Location<'c>, values: &[Value<'c, '_>]) -> Result<Operation<'c>, String> {
    melior::ir::operation::OperationBuilder::new("gpu.yield", location)
        .add_operands(values)
        .build()
        .map_err(|e| format!("gpu.yield: {e}"))
}

/// A dense constant of type `ty` with elements `values` (floats) or
/// `integers` (a [`NodeKind::Constant`]'s), built through MLIR's C API: the
/// splat form where every element is the same.
pub fn dense_attribute<'c>(
    context: &'c Context,
    ty: &PointType,
    values: &[f64],
    integers: &[i64],
) -> Result<Attribute<'c>, String> {
    let shaped = tensor_type(context, ty)?.to_raw();
    let n = ty.num_elements();
    let integral = !ty.element.is_float();
    let count = if integral && !integers.is_empty() { integers.len() } else { values.len() };
    if count != n {
        return Err(format!("a constant of {ty} with {count} elements"));
    }
    let int = |k: usize| if integers.is_empty() { values[k] as i64 } else { integers[k] };
    let splat =
        n > 0 && (0..n).all(|k| if integral { int(k) == int(0) } else { values[k].to_bits() == values[0].to_bits() });
    // SAFETY: element buffers of the type's element count and kind.
    let raw = unsafe {
        match (ty.element, splat) {
            (ElementType::F32, true) => mlir_sys::mlirDenseElementsAttrFloatSplatGet(shaped, values[0] as f32),
            (ElementType::F64, true) => mlir_sys::mlirDenseElementsAttrDoubleSplatGet(shaped, values[0]),
            (ElementType::I1, true) => mlir_sys::mlirDenseElementsAttrBoolSplatGet(shaped, int(0) != 0),
            (ElementType::I32, true) => mlir_sys::mlirDenseElementsAttrInt32SplatGet(shaped, int(0) as i32),
            (ElementType::I64, true) => mlir_sys::mlirDenseElementsAttrInt64SplatGet(shaped, int(0)),
            (ElementType::F32, false) => {
                let v: Vec<f32> = values.iter().map(|&x| x as f32).collect();
                mlir_sys::mlirDenseElementsAttrFloatGet(shaped, n as isize, v.as_ptr())
            }
            (ElementType::F64, false) => mlir_sys::mlirDenseElementsAttrDoubleGet(shaped, n as isize, values.as_ptr()),
            (ElementType::I1, false) => {
                let v: Vec<std::ffi::c_int> = (0..n).map(|k| (int(k) != 0) as std::ffi::c_int).collect();
                mlir_sys::mlirDenseElementsAttrBoolGet(shaped, n as isize, v.as_ptr())
            }
            (ElementType::I32, false) => {
                let v: Vec<i32> = (0..n).map(|k| int(k) as i32).collect();
                mlir_sys::mlirDenseElementsAttrInt32Get(shaped, n as isize, v.as_ptr())
            }
            (ElementType::I64, false) => {
                let v: Vec<i64> = (0..n).map(int).collect();
                mlir_sys::mlirDenseElementsAttrInt64Get(shaped, n as isize, v.as_ptr())
            }
        }
    };
    if raw.ptr.is_null() {
        return Err(format!("no dense constant of {ty}"));
    }
    Ok(unsafe { Attribute::from_raw(raw) })
}

/// The MLIR type of an element type.
pub fn element_type(context: &Context, element: ElementType) -> Type<'_> {
    match element {
        ElementType::F32 => Type::float32(context),
        ElementType::F64 => Type::float64(context),
        ElementType::I1 => IntegerType::new(context, 1).into(),
        ElementType::I32 => IntegerType::new(context, 32).into(),
        ElementType::I64 => IntegerType::new(context, 64).into(),
    }
}

/// `tensor<...>` of a point type (`DYNAMIC` sizes as `?`).
pub fn tensor_type<'c>(context: &'c Context, ty: &PointType) -> Result<Type<'c>, String> {
    let shape: Vec<i64> = ty.shape.iter().map(|&d| if d == DYNAMIC { i64::MIN } else { d }).collect();
    let element = element_type(context, ty.element);
    // SAFETY: a ranked tensor type of a builtin element type; the
    // shape outlives the call.
    let raw = unsafe {
        mlir_sys::mlirRankedTensorTypeGet(
            shape.len() as isize,
            shape.as_ptr(),
            element.to_raw(),
            mlir_sys::mlirAttributeGetNull(),
        )
    };
    if raw.ptr.is_null() {
        return Err(format!("no tensor type {ty}"));
    }
    Ok(unsafe { Type::from_raw(raw) })
}

/// What building needs: the context, the program (dimension names) and the
/// handle type.
/// Builds the ops of a program's parts through the dialect's typed
/// builders: what [`build_program`] does for the passes' model, and what a
/// front end building a program of its own (the Rust API) uses for the
/// nodes of its branches and their conditions.
pub struct Emit<'c, 'p> {
    context: &'c Context,
    /// The program's dimensions (for the ops naming one).
    dims: &'p [crate::program::Dim],
    /// The dialect's `!temporal.rtensor` type.
    handle: Type<'c>,
}

impl<'c, 'p> Emit<'c, 'p> {
    /// An emitter for a program of dimensions `dims`; `handle` is the
    /// dialect's `!temporal.rtensor` type.
    pub fn new(context: &'c Context, dims: &'p [crate::program::Dim], handle: Type<'c>) -> Self {
        Emit { context, dims, handle }
    }

    /// A string attribute.
    pub fn string(&self, text: &str) -> Attribute<'c> {
        StringAttribute::new(self.context, text).into()
    }

    fn integer(&self, value: i64) -> Attribute<'c> {
        IntegerAttribute::new(IntegerType::new(self.context, 64).into(), value).into()
    }

    fn integers(&self, values: impl IntoIterator<Item = i64>) -> Attribute<'c> {
        let items: Vec<Attribute> = values.into_iter().map(|v| self.integer(v)).collect();
        ArrayAttribute::new(self.context, &items).into()
    }

    pub fn tensor_type(&self, ty: &PointType) -> Result<Type<'c>, String> {
        tensor_type(self.context, ty)
    }

    fn expr(&self, e: &AffineExpr) -> mlir_sys::MlirAffineExpr {
        let ctx = self.context.to_raw();
        // SAFETY: expressions of the context; MLIR simplifies them as its
        // parser does.
        unsafe {
            match e {
                AffineExpr::Dim(i) => mlir_sys::mlirAffineDimExprGet(ctx, *i as isize),
                AffineExpr::Symbol(i) => mlir_sys::mlirAffineSymbolExprGet(ctx, *i as isize),
                AffineExpr::Constant(c) => mlir_sys::mlirAffineConstantExprGet(ctx, *c),
                AffineExpr::Add(a, b) => mlir_sys::mlirAffineAddExprGet(self.expr(a), self.expr(b)),
                AffineExpr::Mul(a, b) => mlir_sys::mlirAffineMulExprGet(self.expr(a), self.expr(b)),
                AffineExpr::Mod(a, b) => mlir_sys::mlirAffineModExprGet(self.expr(a), self.expr(b)),
                AffineExpr::FloorDiv(a, b) => mlir_sys::mlirAffineFloorDivExprGet(self.expr(a), self.expr(b)),
                AffineExpr::CeilDiv(a, b) => mlir_sys::mlirAffineCeilDivExprGet(self.expr(a), self.expr(b)),
            }
        }
    }

    /// An `affine_map` attribute.
    fn map(&self, map: &AffineMap) -> Attribute<'c> {
        let mut results: Vec<mlir_sys::MlirAffineExpr> = map.results.iter().map(|e| self.expr(e)).collect();
        // SAFETY: the results are expressions of the context.
        unsafe {
            let raw = mlir_sys::mlirAffineMapGet(
                self.context.to_raw(),
                map.num_dims as isize,
                map.num_symbols as isize,
                results.len() as isize,
                results.as_mut_ptr(),
            );
            Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(raw))
        }
    }

    fn maps(&self, maps: &[AffineMap]) -> Attribute<'c> {
        let items: Vec<Attribute> = maps.iter().map(|m| self.map(m)).collect();
        ArrayAttribute::new(self.context, &items).into()
    }

    /// An `affine_set` attribute (`0 == 0` where it always holds: MLIR's
    /// sets have at least one constraint).
    pub fn set(&self, set: &IntegerSet) -> Attribute<'c> {
        let (mut constraints, mut equalities): (Vec<mlir_sys::MlirAffineExpr>, Vec<bool>) =
            set.constraints.iter().map(|c| (self.expr(&c.expr), c.is_equality)).unzip();
        if constraints.is_empty() {
            constraints.push(self.expr(&AffineExpr::Constant(0)));
            equalities.push(true);
        }
        // SAFETY: the constraints are expressions of the context, one flag
        // each.
        unsafe {
            let raw = mlir_sys::mlirIntegerSetGet(
                self.context.to_raw(),
                set.num_dims as isize,
                set.num_symbols as isize,
                constraints.len() as isize,
                constraints.as_ptr(),
                equalities.as_ptr(),
            );
            Attribute::from_raw(mlir_sys::mlirIntegerSetAttrGet(raw))
        }
    }

    /// The op of `node` (a branch's nodes so far have `values`; tensors
    /// have `handles`).
    pub fn node(
        &self,
        node: &Node<'c>,
        values: &[Value<'c, '_>],
        handles: &[Value<'c, '_>],
    ) -> Result<Operation<'c>, String> {
        let (c, at, ty) = (self.context, node.location, self.tensor_type(&node.ty)?);
        let v = |k: usize| values.get(k).copied().ok_or_else(|| format!("operand {k} not yet built"));
        let dim = |d: usize| self.string(&self.dims[d].name);
        Ok(match &node.kind {
            NodeKind::Read { source, index } => t::ReadOp::build(c, at, handles[*source], self.map(index), ty),
            NodeKind::ReadAt { source, index, data } => {
                let data: Vec<Value> = data.iter().map(|&k| v(k)).collect::<Result<_, _>>()?;
                t::ReadAtOp::build(c, at, handles[*source], &data, self.map(index), ty)
            }
            NodeKind::ReadRange { source, lower, upper, caps } => {
                let (lower, upper, caps) = (self.maps(lower), self.maps(upper), self.maps(caps));
                t::ReadRangeOp::build(c, at, handles[*source], lower, upper, caps, ty)
            }
            NodeKind::Constant { values: floats, integers, .. } => {
                t::ConstantOp::build(c, at, dense_attribute(c, &node.ty, floats, integers)?, ty)
            }
            // Elementwise ops have no attributes: built by the name the
            // model gives their kind, so that a new one is declared and
            // named once (the dialect, `UnaryKind::op_name`).
            NodeKind::Unary(_, a) => elementwise(&node.kind.op_name(), at, &[v(*a)?], ty)?,
            NodeKind::Binary(_, a, b) => elementwise(&node.kind.op_name(), at, &[v(*a)?, v(*b)?], ty)?,
            NodeKind::Compare(p, a, b) => t::CmpOp::build(c, at, v(*a)?, v(*b)?, self.string(p.text()), ty),
            NodeKind::Select(p, a, b) => t::SelectOp::build(c, at, v(*p)?, v(*a)?, v(*b)?, ty),
            NodeKind::Cast(a) => t::CastOp::build(c, at, v(*a)?, ty),
            NodeKind::Reduce(kind, a, axis) => {
                let (a, axis) = (v(*a)?, self.integer(*axis as i64));
                match kind {
                    ReduceKind::Sum => t::ReduceSumOp::build(c, at, a, axis, ty),
                    ReduceKind::Max => t::ReduceMaxOp::build(c, at, a, axis, ty),
                    ReduceKind::Mean => t::ReduceMeanOp::build(c, at, a, axis, ty),
                    ReduceKind::ArgMax => t::ArgmaxOp::build(c, at, a, axis, ty),
                    ReduceKind::CumSum => t::CumsumOp::build(c, at, a, axis, ty),
                }
            }
            NodeKind::Move(movement, operands) => {
                let ops: Vec<Value> = operands.iter().map(|&k| v(k)).collect::<Result<_, _>>()?;
                let first = || ops.first().copied().ok_or("a movement without an operand");
                match movement {
                    Movement::Permute(p) => {
                        t::PermuteOp::build(c, at, first()?, self.integers(p.iter().map(|&k| k as i64)), ty)
                    }
                    Movement::Flip(axis) => t::FlipOp::build(c, at, first()?, self.integer(*axis as i64), ty),
                    Movement::Slice(offsets) => {
                        t::SliceOp::build(c, at, first()?, self.integers(offsets.iter().copied()), ty)
                    }
                    Movement::Reshape => t::ReshapeOp::build(c, at, first()?, ty),
                    Movement::Expand => t::ExpandOp::build(c, at, first()?, ty),
                    Movement::Concat(axis) => {
                        let rhs = *ops.get(1).ok_or("a concatenation of one operand")?;
                        t::ConcatOp::build(c, at, first()?, rhs, self.integer(*axis as i64), ty)
                    }
                    Movement::Arange => t::ArangeOp::build(c, at, ty),
                }
            }
            NodeKind::Gather(table, indices) => t::GatherOp::build(c, at, v(*table)?, v(*indices)?, ty),
            NodeKind::DynamicSlice(a, offsets) => t::DynamicSliceOp::build(c, at, v(*a)?, self.map(offsets), ty),
            NodeKind::Einsum(spec, operands) => {
                let ops: Vec<Value> = operands.iter().map(|&k| v(k)).collect::<Result<_, _>>()?;
                let (lhs, rest) = ops.split_first().ok_or("an einsum without operands")?;
                t::EinsumOp::build(c, at, *lhs, rest, self.string(&spec.to_string()), ty)
            }
            NodeKind::Attention(a, [q, k, val, scale]) => {
                let (score, combine) = (self.string(&a.score.to_string()), self.string(&a.combine.to_string()));
                let block = self.integer(a.block);
                t::AttentionOp::build(c, at, v(*q)?, v(*k)?, v(*val)?, v(*scale)?, score, combine, block, ty)
            }
            NodeKind::FlashAttention(f, operands) => {
                let o: Vec<Value> = operands.iter().map(|&k| v(k)).collect::<Result<_, _>>()?;
                let band = self.string(&f.band.to_string());
                match (f.part, o.as_slice()) {
                    (FlashPart::Forward, &[q, k, val, s]) => t::FlashAttentionOp::build(c, at, q, k, val, s, band, ty),
                    (FlashPart::Query, &[q, k, val, g, s]) => {
                        t::FlashAttentionQueryGradOp::build(c, at, q, k, val, g, s, band, ty)
                    }
                    (FlashPart::Key, &[q, g, m, l, d, k, val, s]) => {
                        t::FlashAttentionKeyGradOp::build(c, at, q, g, m, l, d, k, val, s, band, ty)
                    }
                    _ => return Err(format!("{} with {} operands", f.part.op_name(), o.len())),
                }
            }
            NodeKind::Call { callee, args, batched, .. } => {
                let args: Vec<Value> = args.iter().map(|&k| v(k)).collect::<Result<_, _>>()?;
                let block = Block::new(&[]);
                block.append_operation(yield_op(at, &args)?);
                let region = Region::new();
                region.append_block(block);
                let mut op = t::CallOp::build(c, at, self.string(callee), ty, region);
                if *batched {
                    op.set_attribute("batched", Attribute::unit(c));
                }
                op
            }
            NodeKind::Position(d) => t::PositionOp::build(c, at, dim(*d), ty),
            NodeKind::Bound(d) => t::BoundOp::build(c, at, dim(*d), ty),
            NodeKind::Rank => t::RankOp::build(c, at, ty),
            NodeKind::WorldSize => t::WorldSizeOp::build(c, at, ty),
            NodeKind::AllReduce(kind, a) => t::AllReduceOp::build(c, at, v(*a)?, self.string(kind.text()), ty),
            NodeKind::Random { seed, normal } => {
                let distribution = self.string(if *normal { "normal" } else { "uniform" });
                t::RandomOp::build(c, at, self.integer(*seed), distribution, ty)
            }
            NodeKind::Matmul(a, b) => t::MatmulOp::build(c, at, v(*a)?, v(*b)?, ty),
        })
    }
}

/// The elementwise op `name` (with the dialect's prefix) of `operands`,
/// of result type `ty`.
fn elementwise<'c>(
    name: &str,
    at: Location<'c>,
    operands: &[Value<'c, '_>],
    ty: Type<'c>,
) -> Result<Operation<'c>, String> {
    melior::ir::operation::OperationBuilder::new(name, at)
        .add_operands(operands)
        .add_results(&[ty])
        .build()
        .map_err(|e| format!("{name}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::operation::OperationPrintingFlags;

    /// Each top-level op of `module`'s body, printed generically with its
    /// locations, but those of `gpu.yield` and `temporal.output`: the text
    /// printer writes none (their parsed locations are lines of the printed
    /// text), the builder the branch's and the tensor's.
    fn ops_text(module: &Module) -> Vec<String> {
        let flags = || OperationPrintingFlags::new().enable_debug_info(true, false).print_generic_operation_form();
        let unlocated = |line: &str| match line.rfind(" loc(") {
            Some(at) if line.contains("\"gpu.yield\"") || line.starts_with("\"temporal.output\"") => {
                line[..at].to_string()
            }
            _ => line.to_string(),
        };
        tempo_dialects::block_operations(module.body())
            .into_iter()
            .map(|op| {
                let text = op.to_string_with_flags(flags()).expect("prints");
                text.lines().map(unlocated).collect::<Vec<_>>().join("\n")
            })
            .collect()
    }

    /// Every example and corpus program (gradients expanded, as passes see
    /// them): the ops built as typed IR are the ops the text printer's
    /// output parses to, attribute for attribute and location for location.
    #[test]
    fn built_ops_are_the_printed_programs_ops() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        // The examples, the corpus and every lit test's program.
        fn programs(dir: &std::path::Path, into: &mut Vec<std::path::PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else { return };
            let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for path in paths {
                if path.is_dir() {
                    programs(&path, into);
                } else if path.extension().is_some_and(|e| e == "mlir") {
                    into.push(path);
                }
            }
        }
        let mut files: Vec<std::path::PathBuf> = Vec::new();
        for dir in ["examples", "test"] {
            programs(&std::path::Path::new(root).join(dir), &mut files);
        }
        let context = tempo_dialects::create_context();
        let mut checked = 0;
        for path in &files {
            let source = std::fs::read_to_string(path).expect("readable");
            // Programs with several inputs (split files) or that the model
            // refuses (error tests) are not what this checks.
            if source.contains("// -----") {
                continue;
            }
            let Some(module) = Module::parse(&context, &source) else { continue };
            let Ok(mut program) = Program::from_module(module.as_operation()) else { continue };
            if crate::temporal_autodiff::expand(&mut program).is_err() {
                continue;
            }
            let text = format!("module {{\n{}}}\n", crate::print::program_text(&program));
            let printed = Module::parse(&context, &text).expect("the printed program parses");
            let handle = Type::parse(&context, "!temporal.rtensor").expect("the dialect is loaded");
            let built = build_program(&context, &program, handle).expect("the program builds");
            assert!(built.as_operation().verify(), "{}: the built module does not verify", path.display());
            assert_eq!(ops_text(&built), ops_text(&printed), "{}", path.display());
            checked += 1;
        }
        assert!(checked >= 150, "only {checked} programs checked");
    }
}
