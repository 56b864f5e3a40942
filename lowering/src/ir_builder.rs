//! Typed IR building for the lowerings: ops are created through melior's
//! `OperationBuilder` with values and types as handles, not written as
//! text and parsed back (issue 29). A [`Builder`] inserts before an anchor
//! op (the op being lowered, whose location every new op takes) or at the
//! end of a block (the regions of `scf.if`); each helper builds one op of
//! `arith`, `memref`, `llvm`, `func` or `scf` and returns its result.
//!
//! A failure to build an op (operands of the wrong kind) is a compiler
//! fault: it is returned as a message for the caller to report at the op
//! being lowered.

use melior::ir::{
    Attribute, Block, BlockLike, BlockRef, Identifier, Location, Operation, OperationRef, Region, RegionLike, Type,
    Value, ValueLike,
    attribute::{
        ArrayAttribute, DenseI32ArrayAttribute, DenseI64ArrayAttribute, FlatSymbolRefAttribute, FloatAttribute,
        IntegerAttribute, StringAttribute, TypeAttribute,
    },
    operation::{OperationBuilder, OperationLike},
    r#type::{FunctionType, IntegerType, MemRefType, ShapedTypeLike},
};
use melior::{Context, ContextRef};

/// The predicates of `arith.cmpi` (their attribute values).
#[derive(Clone, Copy, Debug)]
pub enum Compare {
    Eq = 0,
    Ne = 1,
    Slt = 2,
    Sle = 3,
    Sgt = 4,
    Sge = 5,
    Ult = 6,
    Ule = 7,
    Ugt = 8,
}

/// The predicates of `arith.cmpf` (their attribute values).
#[derive(Clone, Copy, Debug)]
pub enum FloatCompare {
    Oeq = 1,
    Ogt = 2,
    Oge = 3,
    Olt = 4,
    Ole = 5,
    One = 6,
    Une = 13,
    Uno = 14,
}

/// An offset or size of a view: a value, or a number known statically.
#[derive(Clone, Copy)]
pub enum Extent<'c, 'a> {
    Value(Value<'c, 'a>),
    Static(i64),
}

/// Where new ops go, and the location they get.
#[derive(Clone, Copy)]
pub struct Builder<'c, 'a> {
    context: ContextRef<'c>,
    pub location: Location<'c>,
    block: BlockRef<'c, 'a>,
    /// Insert before this op; at the block's end when `None`.
    anchor: Option<OperationRef<'c, 'a>>,
}

type Built<T> = Result<T, String>;

impl<'c, 'a> Builder<'c, 'a> {
    /// Inserts before `op`, with `op`'s location.
    pub fn before(op: OperationRef<'c, 'a>) -> Built<Self> {
        let block = op.block().ok_or("compiler fault: the op being lowered is not in a block")?;
        Ok(Builder { context: op.context(), location: op.location(), block, anchor: Some(op) })
    }

    /// The same insertion point, building ops at `location`.
    pub fn at(&self, location: Location<'c>) -> Self {
        Builder { location, ..*self }
    }

    /// Appends to `block`.
    fn at_end(context: ContextRef<'c>, location: Location<'c>, block: BlockRef<'c, 'a>) -> Self {
        Builder { context, location, block, anchor: None }
    }

    /// The context. The reference points into the builder (melior's
    /// `ContextRef::to_ref`): use it while the builder lives, as every
    /// helper here does; what is built from it holds the context itself.
    pub fn context(&self) -> &'c Context {
        unsafe { self.context.to_ref() }
    }

    /// The module the builder's block is in.
    pub fn module(&self) -> Built<OperationRef<'c, 'a>> {
        let mut op = self.block.parent_operation();
        while let Some(o) = op {
            if o.name().as_string_ref().as_str() == Ok("builtin.module") {
                return Ok(o);
            }
            op = o.parent_operation();
        }
        Err("compiler fault: the code being built is not in a module".into())
    }

    /// Whether the insertion point is inside a parallel loop or region
    /// (`scf.parallel`, `affine.parallel`, an `omp` or `gpu` op): code
    /// built there is on a thread already and must not fork again.
    pub fn inside_parallel(&self) -> bool {
        let mut op = self.block.parent_operation();
        while let Some(o) = op {
            let name = o.name();
            let name = name.as_string_ref().as_str().unwrap_or("");
            if matches!(name, "scf.parallel" | "affine.parallel")
                || name.starts_with("omp.")
                || name.starts_with("gpu.")
            {
                return true;
            }
            op = o.parent_operation();
        }
        false
    }

    /// Inserts an op built elsewhere (with regions the helpers here do
    /// not make).
    pub fn insert_op(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        self.insert(op)
    }

    fn insert(&self, op: Operation<'c>) -> OperationRef<'c, 'a> {
        match self.anchor {
            Some(anchor) => self.block.insert_operation_before(anchor, op),
            None => self.block.append_operation(op),
        }
    }

    /// Builds op `name` with `operands`, result types and attributes.
    pub fn op(
        &self,
        name: &str,
        operands: &[Value<'c, '_>],
        results: &[Type<'c>],
        attributes: &[(&str, Attribute<'c>)],
    ) -> Built<OperationRef<'c, 'a>> {
        let attributes: Vec<(Identifier<'c>, Attribute<'c>)> =
            attributes.iter().map(|(k, v)| (Identifier::new(self.context(), k), *v)).collect();
        let op = OperationBuilder::new(name, self.location)
            .add_operands(operands)
            .add_results(results)
            .add_attributes(&attributes)
            .build()
            .map_err(|e| format!("compiler fault: cannot build '{name}': {e}"))?;
        Ok(self.insert(op))
    }

    /// Builds op `name` with one result of type `result` and returns it.
    pub fn value(
        &self,
        name: &str,
        operands: &[Value<'c, '_>],
        result: Type<'c>,
        attributes: &[(&str, Attribute<'c>)],
    ) -> Built<Value<'c, 'a>> {
        let op = self.op(name, operands, &[result], attributes)?;
        Ok(op.result(0).map_err(|e| format!("compiler fault: '{name}' has no result: {e}"))?.into())
    }

    pub fn index_type(&self) -> Type<'c> {
        Type::index(self.context())
    }
    pub fn integer_type(&self, bits: u32) -> Type<'c> {
        IntegerType::new(self.context(), bits).into()
    }
    pub fn pointer_type(&self) -> Type<'c> {
        melior::dialect::llvm::r#type::pointer(self.context(), 0)
    }

    /// `arith.constant` of type `ty` (index or integer).
    pub fn constant(&self, value: i64, ty: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value("arith.constant", &[], ty, &[("value", IntegerAttribute::new(ty, value).into())])
    }
    pub fn index(&self, value: i64) -> Built<Value<'c, 'a>> {
        self.constant(value, self.index_type())
    }
    pub fn i64(&self, value: i64) -> Built<Value<'c, 'a>> {
        self.constant(value, self.integer_type(64))
    }
    pub fn i32(&self, value: i64) -> Built<Value<'c, 'a>> {
        self.constant(value, self.integer_type(32))
    }

    /// A binary `arith` op (`addi`, `subi`, `muli`, `divui`, `ceildivui`,
    /// `minui`, `maxui`, `andi`, `ori`) on two values of one type.
    pub fn arith(&self, op: &str, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        self.value(&format!("arith.{op}"), &[lhs, rhs], lhs.r#type(), &[])
    }

    /// `arith.cmpi`.
    pub fn compare(&self, predicate: Compare, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        let attribute = IntegerAttribute::new(self.integer_type(64), predicate as i64).into();
        self.value("arith.cmpi", &[lhs, rhs], self.integer_type(1), &[("predicate", attribute)])
    }

    /// `arith.cmpf`.
    pub fn compare_floats(
        &self,
        predicate: FloatCompare,
        lhs: Value<'c, '_>,
        rhs: Value<'c, '_>,
    ) -> Built<Value<'c, 'a>> {
        let attribute = IntegerAttribute::new(self.integer_type(64), predicate as i64).into();
        self.value("arith.cmpf", &[lhs, rhs], self.integer_type(1), &[("predicate", attribute)])
    }

    /// `arith.select`.
    pub fn select(&self, condition: Value<'c, '_>, yes: Value<'c, '_>, no: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        self.value("arith.select", &[condition, yes, no], yes.r#type(), &[])
    }

    /// `arith.index_cast` to `ty`.
    pub fn index_cast(&self, value: Value<'c, '_>, ty: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value("arith.index_cast", &[value], ty, &[])
    }

    /// `memref.load` of `memref[indices]` (element type `ty`).
    pub fn load(&self, memref: Value<'c, '_>, indices: &[Value<'c, '_>], ty: Type<'c>) -> Built<Value<'c, 'a>> {
        let operands: Vec<Value> = std::iter::once(memref).chain(indices.iter().copied()).collect();
        self.value("memref.load", &operands, ty, &[])
    }

    /// `vector.load` of a vector of type `ty` at `memref[indices]`.
    pub fn vector_load(&self, memref: Value<'c, '_>, indices: &[Value<'c, '_>], ty: Type<'c>) -> Built<Value<'c, 'a>> {
        let operands: Vec<Value> = std::iter::once(memref).chain(indices.iter().copied()).collect();
        self.value("vector.load", &operands, ty, &[])
    }

    /// `memref.store` of `value` at `memref[indices]`.
    pub fn store(&self, value: Value<'c, '_>, memref: Value<'c, '_>, indices: &[Value<'c, '_>]) -> Built<()> {
        let operands: Vec<Value> = [value, memref].into_iter().chain(indices.iter().copied()).collect();
        self.op("memref.store", &operands, &[], &[]).map(|_| ())
    }

    /// `memref.subview` of `source` as `result`: per dimension an offset
    /// and a size, each a value or a static number; unit strides.
    pub fn subview<'v>(
        &self,
        source: Value<'c, 'v>,
        offsets: &[Extent<'c, 'v>],
        sizes: &[Extent<'c, 'v>],
        result: Type<'c>,
    ) -> Built<Value<'c, 'a>> {
        let statics = |items: &[Extent<'c, 'v>]| -> Vec<i64> {
            items.iter().map(|e| if let Extent::Static(n) = e { *n } else { i64::MIN }).collect()
        };
        let dynamic = |items: &[Extent<'c, 'v>]| -> Vec<Value<'c, 'v>> {
            items.iter().filter_map(|e| if let Extent::Value(v) = e { Some(*v) } else { None }).collect()
        };
        let (dynamic_offsets, dynamic_sizes) = (dynamic(offsets), dynamic(sizes));
        let operands: Vec<Value> = std::iter::once(source)
            .chain(dynamic_offsets.iter().copied())
            .chain(dynamic_sizes.iter().copied())
            .collect();
        let context = self.context();
        let segments = [1, dynamic_offsets.len() as i32, dynamic_sizes.len() as i32, 0];
        self.value(
            "memref.subview",
            &operands,
            result,
            &[
                ("static_offsets", DenseI64ArrayAttribute::new(context, &statics(offsets)).into()),
                ("static_sizes", DenseI64ArrayAttribute::new(context, &statics(sizes)).into()),
                ("static_strides", DenseI64ArrayAttribute::new(context, &vec![1; offsets.len()]).into()),
                ("operandSegmentSizes", DenseI32ArrayAttribute::new(context, &segments).into()),
            ],
        )
    }

    /// `memref.alloc` of `ty` with the dynamic sizes `sizes`.
    pub fn alloc(&self, ty: Type<'c>, sizes: &[Value<'c, '_>]) -> Built<Value<'c, 'a>> {
        let segments = DenseI32ArrayAttribute::new(self.context(), &[sizes.len() as i32, 0]).into();
        self.value("memref.alloc", sizes, ty, &[("operandSegmentSizes", segments)])
    }

    /// `llvm.insertvalue value, aggregate[position]`.
    pub fn insert_value(
        &self,
        aggregate: Value<'c, '_>,
        value: Value<'c, '_>,
        position: &[i64],
    ) -> Built<Value<'c, 'a>> {
        let position = DenseI64ArrayAttribute::new(self.context(), position).into();
        self.value("llvm.insertvalue", &[aggregate, value], aggregate.r#type(), &[("position", position)])
    }

    /// `llvm.icmp` of two pointers.
    pub fn compare_pointers(&self, predicate: Compare, lhs: Value<'c, '_>, rhs: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        let attribute = IntegerAttribute::new(self.integer_type(64), predicate as i64).into();
        self.value("llvm.icmp", &[lhs, rhs], self.integer_type(1), &[("predicate", attribute)])
    }

    /// Prints the system's reason for the last failure after the string
    /// constant `@message` (`perror`) and aborts; `perror` and `abort` must
    /// be declared. Self-contained code (`mlir-runner`, an object file) does
    /// just that; under tempo's runtime the two calls resolve to its
    /// functions (`runtime/src/guard.rs`), which end the run with the
    /// message instead, free what it held and return to the caller.
    pub fn fail(&self, message: &str) -> Built<()> {
        let symbol = FlatSymbolRefAttribute::new(self.context(), message).into();
        let text = self.value("llvm.mlir.addressof", &[], self.pointer_type(), &[("global_name", symbol)])?;
        self.call("perror", &[text], &[])?;
        self.call("abort", &[], &[])?;
        Ok(())
    }

    /// `memref.cast` of `source` to `result`.
    pub fn cast(&self, source: Value<'c, '_>, result: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value("memref.cast", &[source], result, &[])
    }

    /// `memref.get_global @name` of type `ty`.
    pub fn global(&self, name: &str, ty: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value("memref.get_global", &[], ty, &[("name", FlatSymbolRefAttribute::new(self.context(), name).into())])
    }

    /// The aligned base address of `memref` as an `!llvm.ptr`.
    pub fn base_pointer(&self, memref: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        let index = self.value("memref.extract_aligned_pointer_as_index", &[memref], self.index_type(), &[])?;
        let word = self.index_cast(index, self.integer_type(64))?;
        self.value("llvm.inttoptr", &[word], self.pointer_type(), &[])
    }

    /// `base + bytes` (an `i64` byte offset) as an `!llvm.ptr`.
    pub fn offset(&self, base: Value<'c, '_>, bytes: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        // rawConstantIndices: one dynamic index (INT32_MIN marks it).
        let indices = DenseI32ArrayAttribute::new(self.context(), &[i32::MIN]).into();
        let element = TypeAttribute::new(self.integer_type(8)).into();
        self.value(
            "llvm.getelementptr",
            &[base, bytes],
            self.pointer_type(),
            &[("rawConstantIndices", indices), ("elem_type", element)],
        )
    }

    /// `func.call @callee(args)` with `results`.
    pub fn call(&self, callee: &str, args: &[Value<'c, '_>], results: &[Type<'c>]) -> Built<Vec<Value<'c, 'a>>> {
        let attribute = FlatSymbolRefAttribute::new(self.context(), callee).into();
        let op = self.op("func.call", args, results, &[("callee", attribute)])?;
        Ok((0..results.len()).map(|k| op.result(k).expect("declared result").into()).collect())
    }

    /// `scf.for %iv = from to to step 1 iter_args(%acc = init) -> index`:
    /// `body` computes the next accumulator from the induction variable
    /// and the current one; returns the final accumulator.
    pub fn for_sum(
        &self,
        from: Value<'c, '_>,
        to: Value<'c, '_>,
        init: Value<'c, '_>,
        body: &dyn for<'r> Fn(&Builder<'c, 'r>, Value<'c, 'r>, Value<'c, 'r>) -> Built<Value<'c, 'r>>,
    ) -> Built<Value<'c, 'a>> {
        let index = self.index_type();
        let step = self.index(1)?;
        let region = Region::new();
        let block = region.append_block(Block::new(&[(index, self.location), (init.r#type(), self.location)]));
        {
            let inner = Builder::at_end(self.context, self.location, block);
            let iv = block.argument(0).map_err(|e| e.to_string())?.into();
            let acc = block.argument(1).map_err(|e| e.to_string())?.into();
            let next = body(&inner, iv, acc)?;
            inner.op("scf.yield", &[next], &[], &[])?;
        }
        let op = OperationBuilder::new("scf.for", self.location)
            .add_operands(&[from, to, step, init])
            .add_results(&[init.r#type()])
            .add_regions([region])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.for': {e}"))?;
        let op = self.insert(op);
        Ok(op.result(0).map_err(|e| e.to_string())?.into())
    }

    /// `linalg.copy` of the view `from` into the view `to` (same shape).
    pub fn copy(&self, from: Value<'c, '_>, to: Value<'c, '_>) -> Built<()> {
        self.input_to_output("linalg.copy", from, to)
    }

    /// `linalg.fill` of the view `target` with `value`.
    pub fn fill(&self, value: Value<'c, '_>, target: Value<'c, '_>) -> Built<()> {
        self.input_to_output("linalg.fill", value, target)
    }

    /// A `linalg` op of one input and one output whose body yields the
    /// input's element (`linalg.copy`, `linalg.fill`).
    fn input_to_output(&self, name: &str, input: Value<'c, '_>, output: Value<'c, '_>) -> Built<()> {
        let element = element_of(output)?;
        let input_element = element_of(input).unwrap_or(input.r#type());
        let region = Region::new();
        let block = region.append_block(Block::new(&[(input_element, self.location), (element, self.location)]));
        {
            let inner = Builder::at_end(self.context, self.location, block);
            let value: Value = block.argument(0).map_err(|e| e.to_string())?.into();
            inner.op("linalg.yield", &[value], &[], &[])?;
        }
        let segments = DenseI32ArrayAttribute::new(self.context(), &[1, 1]).into();
        let op = OperationBuilder::new(name, self.location)
            .add_operands(&[input, output])
            .add_attributes(&[(Identifier::new(self.context(), "operandSegmentSizes"), segments)])
            .add_regions([region])
            .build()
            .map_err(|e| format!("compiler fault: cannot build '{name}': {e}"))?;
        self.insert(op);
        Ok(())
    }

    /// `scf.parallel` over the one point `0` (a loop the GPU mapping turns
    /// into a kernel) around `body`.
    pub fn one_point_parallel(&self, body: &dyn Fn(&Builder<'c, '_>) -> Built<()>) -> Built<()> {
        let (zero, one) = (self.index(0)?, self.index(1)?);
        let region = Region::new();
        let block = region.append_block(Block::new(&[(self.index_type(), self.location)]));
        {
            let inner = Builder::at_end(self.context, self.location, block);
            body(&inner)?;
            inner.op("scf.reduce", &[], &[], &[])?;
        }
        let segments = DenseI32ArrayAttribute::new(self.context(), &[1, 1, 1, 0]).into();
        let op = OperationBuilder::new("scf.parallel", self.location)
            .add_operands(&[zero, one, one])
            .add_attributes(&[(Identifier::new(self.context(), "operandSegmentSizes"), segments)])
            .add_regions([region])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.parallel': {e}"))?;
        self.insert(op);
        Ok(())
    }

    /// `memref.dim` of `memref` along `dimension`.
    pub fn dim(&self, memref: Value<'c, '_>, dimension: usize) -> Built<Value<'c, 'a>> {
        let at = self.index(dimension as i64)?;
        self.value("memref.dim", &[memref, at], self.index_type(), &[])
    }

    /// `scf.if condition { then } else { otherwise }` without results.
    pub fn if_else(
        &self,
        condition: Value<'c, '_>,
        then: &dyn Fn(&Builder<'c, '_>) -> Built<()>,
        otherwise: Option<&dyn Fn(&Builder<'c, '_>) -> Built<()>>,
    ) -> Built<()> {
        let branch = |fill: &dyn Fn(&Builder<'c, '_>) -> Built<()>| -> Built<Region<'c>> {
            let region = Region::new();
            let block = region.append_block(Block::new(&[]));
            let inner = Builder::at_end(self.context, self.location, block);
            fill(&inner)?;
            inner.op("scf.yield", &[], &[], &[])?;
            Ok(region)
        };
        let then_region = branch(then)?;
        let else_region = match otherwise {
            Some(fill) => branch(fill)?,
            None => Region::new(),
        };
        let op = OperationBuilder::new("scf.if", self.location)
            .add_operands(&[condition])
            .add_regions([then_region, else_region])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.if': {e}"))?;
        self.insert(op);
        Ok(())
    }

    /// `scf.if condition { then }`.
    pub fn if_then(&self, condition: Value<'c, '_>, then: &dyn Fn(&Builder<'c, '_>) -> Built<()>) -> Built<()> {
        self.if_else(condition, then, None)
    }
}

/// Structured ops with regions: each helper inserts the op with its
/// blocks and returns builders inside them (with the iteration variables
/// or block arguments). Loops and `affine.if` come with their terminators,
/// and the builders insert before them; blocks that yield values
/// (`scf.if` with results, `linalg.generic`) are left for the caller to
/// end with [`Builder::yield_values`].
impl<'c, 'a> Builder<'c, 'a> {
    /// Inserts `op` and returns a builder for block 0 of each region:
    /// before its terminator when `terminated`, else at its end.
    fn inside(&self, op: Operation<'c>, terminated: bool) -> Built<(OperationRef<'c, 'a>, Vec<Builder<'c, 'a>>)> {
        let op = self.insert(op);
        let mut builders = Vec::new();
        for region in op.regions() {
            let Some(block) = region.first_block() else { continue };
            let anchor = if terminated { block.terminator() } else { None };
            builders.push(Builder { context: self.context, location: self.location, block, anchor });
        }
        Ok((op, builders))
    }

    /// Inserts `op` (one region whose block ends with its terminator) and
    /// returns a builder before that terminator and the block's arguments.
    pub fn inside_terminated(&self, op: Operation<'c>) -> Built<(Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
        let (_, mut inside) = self.inside(op, true)?;
        let body = inside.pop().ok_or("compiler fault: an op without its body")?;
        let arguments = self.arguments(&body)?;
        Ok((body, arguments))
    }

    /// A block with `arguments` ending with `terminator` (when given).
    fn region(&self, arguments: &[Type<'c>], terminator: Option<&str>) -> Built<Region<'c>> {
        let region = Region::new();
        let arguments: Vec<(Type<'c>, Location<'c>)> = arguments.iter().map(|&t| (t, self.location)).collect();
        let block = region.append_block(Block::new(&arguments));
        if let Some(name) = terminator {
            let op = OperationBuilder::new(name, self.location)
                .build()
                .map_err(|e| format!("compiler fault: cannot build '{name}': {e}"))?;
            block.append_operation(op);
        }
        Ok(region)
    }

    fn arguments(&self, builder: &Builder<'c, 'a>) -> Built<Vec<Value<'c, 'a>>> {
        (0..builder.block.argument_count())
            .map(|k| builder.block.argument(k).map(Value::from).map_err(|e| e.to_string()))
            .collect()
    }

    /// Ends the block of an `scf.if` with results (`scf.yield`) or of a
    /// `linalg.generic` (`linalg.yield`).
    pub fn yield_values(&self, terminator: &str, values: &[Value<'c, '_>]) -> Built<()> {
        self.op(terminator, values, &[], &[]).map(|_| ())
    }

    /// `scf.for %iv = lower to upper step step`: a builder inside and `%iv`.
    pub fn scf_for(
        &self,
        lower: Value<'c, '_>,
        upper: Value<'c, '_>,
        step: Value<'c, '_>,
    ) -> Built<(Builder<'c, 'a>, Value<'c, 'a>)> {
        let op = OperationBuilder::new("scf.for", self.location)
            .add_operands(&[lower, upper, step])
            .add_regions([self.region(&[self.index_type()], Some("scf.yield"))?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.for': {e}"))?;
        let (_, mut inside) = self.inside(op, true)?;
        let body = inside.pop().ok_or("compiler fault: scf.for without a body")?;
        let iv = self.arguments(&body)?[0];
        Ok((body, iv))
    }

    /// `scf.for %iv = lower to upper step step iter_args(inits)`: a
    /// builder inside (its block to end with `scf.yield` of the next
    /// values), `%iv`, the carried values and the loop's results.
    #[allow(clippy::type_complexity)]
    pub fn scf_for_carrying(
        &self,
        lower: Value<'c, '_>,
        upper: Value<'c, '_>,
        step: Value<'c, '_>,
        inits: &[Value<'c, '_>],
    ) -> Built<(Builder<'c, 'a>, Value<'c, 'a>, Vec<Value<'c, 'a>>, Vec<Value<'c, 'a>>)> {
        let types: Vec<Type<'c>> = inits.iter().map(|v| v.r#type()).collect();
        let arguments: Vec<Type<'c>> = std::iter::once(self.index_type()).chain(types.iter().copied()).collect();
        let operands: Vec<Value> = [lower, upper, step].into_iter().chain(inits.iter().copied()).collect();
        let op = OperationBuilder::new("scf.for", self.location)
            .add_operands(&operands)
            .add_results(&types)
            .add_regions([self.region(&arguments, None)?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.for': {e}"))?;
        let (op, mut inside) = self.inside(op, false)?;
        let body = inside.pop().ok_or("compiler fault: scf.for without a body")?;
        let mut carried = self.arguments(&body)?;
        let iv = carried.remove(0);
        let results = (0..types.len()).map(|k| op.result(k).map(Value::from).map_err(|e| e.to_string()));
        Ok((body, iv, carried, results.collect::<Built<Vec<_>>>()?))
    }

    /// Asks LLVM to unroll `count` times the loop whose result is `result`
    /// (an `scf.for` built by [`Builder::scf_for_carrying`]): the hint
    /// `llvm.loop_annotation` on the loop, which `llvm-loop-annotations`
    /// makes loop metadata.
    pub fn unroll_hint(&self, result: Value<'c, '_>, count: u32) -> Built<()> {
        self.loop_hint(result, &format!("#llvm.loop_annotation<unroll = <count = {count} : i32>>"))
    }

    /// Asks LLVM's vectorizer to interleave `count` times (that many
    /// independent partial sums) the loop whose result is `result` (an
    /// `scf.for` built by [`Builder::scf_for_carrying`]): the CPU's code is
    /// optimized with interleaving off but where a loop asks for it
    /// (`runtime/src/orc/codegen.rs`).
    pub fn interleave_hint(&self, result: Value<'c, '_>, count: u32) -> Built<()> {
        self.loop_hint(result, &format!("#llvm.loop_annotation<interleave = <count = {count} : i32>>"))
    }

    /// Sets the loop annotation `text` on the loop whose result is `result`.
    fn loop_hint(&self, result: Value<'c, '_>, text: &str) -> Built<()> {
        let hint = Attribute::parse(self.context(), text).ok_or("compiler fault: the loop annotation")?;
        unsafe {
            let owner = mlir_sys::mlirOpResultGetOwner(result.to_raw());
            mlir_sys::mlirOperationSetAttributeByName(
                owner,
                melior::StringRef::new(crate::llvm_loop_annotations::HINT).to_raw(),
                melior::ir::attribute::AttributeLike::to_raw(&hint),
            );
        }
        Ok(())
    }

    /// `scf.parallel` over `[0, upper)` per dimension, step 1: a builder
    /// inside and the induction variables.
    pub fn scf_parallel(&self, upper: &[Value<'c, '_>]) -> Built<(Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
        let (zero, one) = (self.index(0)?, self.index(1)?);
        let n = upper.len();
        self.scf_parallel_range(&vec![zero; n], upper, &vec![one; n])
    }

    /// `scf.parallel` over `[lower, upper)` by `step` per dimension: a
    /// builder inside and the induction variables.
    pub fn scf_parallel_range(
        &self,
        lower: &[Value<'c, '_>],
        upper: &[Value<'c, '_>],
        step: &[Value<'c, '_>],
    ) -> Built<(Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
        let n = upper.len();
        let operands: Vec<Value> = lower.iter().chain(upper).chain(step).copied().collect();
        let segments = DenseI32ArrayAttribute::new(self.context(), &[n as i32, n as i32, n as i32, 0]).into();
        let op = OperationBuilder::new("scf.parallel", self.location)
            .add_operands(&operands)
            .add_attributes(&[(Identifier::new(self.context(), "operandSegmentSizes"), segments)])
            .add_regions([self.region(&vec![self.index_type(); n], Some("scf.reduce"))?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.parallel': {e}"))?;
        let (_, mut inside) = self.inside(op, true)?;
        let body = inside.pop().ok_or("compiler fault: scf.parallel without a body")?;
        let ivs = self.arguments(&body)?;
        Ok((body, ivs))
    }

    /// `scf.if condition -> (results)` with both branches: builders in the
    /// then and else blocks (each to end with `scf.yield`) and the results.
    pub fn scf_if(
        &self,
        condition: Value<'c, '_>,
        results: &[Type<'c>],
    ) -> Built<(Builder<'c, 'a>, Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
        let op = OperationBuilder::new("scf.if", self.location)
            .add_operands(&[condition])
            .add_results(results)
            .add_regions([self.region(&[], None)?, self.region(&[], None)?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.if': {e}"))?;
        let (op, mut inside) = self.inside(op, false)?;
        let otherwise = inside.pop().ok_or("compiler fault: scf.if without an else block")?;
        let then = inside.pop().ok_or("compiler fault: scf.if without a then block")?;
        let values = (0..results.len()).map(|k| op.result(k).map(Value::from).map_err(|e| e.to_string()));
        Ok((then, otherwise, values.collect::<Built<Vec<_>>>()?))
    }

    /// `linalg.index dimension`.
    pub fn linalg_index(&self, dimension: usize) -> Built<Value<'c, 'a>> {
        let attribute = IntegerAttribute::new(self.integer_type(64), dimension as i64).into();
        self.value("linalg.index", &[], self.index_type(), &[("dim", attribute)])
    }

    /// `linalg.generic` over `inputs` into `outputs` with `maps` (one per
    /// operand) and `iterators` (`parallel` or `reduction`, one per loop):
    /// a builder in its body (to end with `linalg.yield`) and the block
    /// arguments (the elements of the inputs, then of the outputs).
    pub fn generic(
        &self,
        inputs: &[Value<'c, '_>],
        outputs: &[Value<'c, '_>],
        maps: &[melior::ir::AffineMap<'c>],
        iterators: &[&str],
    ) -> Built<(Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
        let context = self.context();
        let elements: Vec<Type<'c>> = inputs.iter().chain(outputs).map(|v| element_of(*v)).collect::<Built<_>>()?;
        let maps: Vec<Attribute<'c>> =
            maps.iter().map(|m| unsafe { Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(m.to_raw())) }).collect();
        let iterators: Vec<Attribute<'c>> = iterators
            .iter()
            .map(|kind| {
                Attribute::parse(context, &format!("#linalg.iterator_type<{kind}>"))
                    .ok_or_else(|| format!("compiler fault: no iterator type '{kind}'"))
            })
            .collect::<Built<_>>()?;
        let segments = DenseI32ArrayAttribute::new(context, &[inputs.len() as i32, outputs.len() as i32]).into();
        let operands: Vec<Value> = inputs.iter().chain(outputs).copied().collect();
        let op = OperationBuilder::new("linalg.generic", self.location)
            .add_operands(&operands)
            .add_attributes(&[
                (Identifier::new(context, "indexing_maps"), ArrayAttribute::new(context, &maps).into()),
                (Identifier::new(context, "iterator_types"), ArrayAttribute::new(context, &iterators).into()),
                (Identifier::new(context, "operandSegmentSizes"), segments),
            ])
            .add_regions([self.region(&elements, None)?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'linalg.generic': {e}"))?;
        let (_, mut inside) = self.inside(op, false)?;
        let body = inside.pop().ok_or("compiler fault: linalg.generic without a body")?;
        let arguments = self.arguments(&body)?;
        Ok((body, arguments))
    }

    /// `arith.constant` of the float `value` of type `ty`.
    pub fn float(&self, value: f64, ty: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value("arith.constant", &[], ty, &[("value", FloatAttribute::new(self.context(), ty, value).into())])
    }

    /// An op of one operand whose result has its type (`math.log`,
    /// `arith.negf`).
    pub fn unary(&self, name: &str, operand: Value<'c, '_>) -> Built<Value<'c, 'a>> {
        self.value(name, &[operand], operand.r#type(), &[])
    }

    /// A conversion op (`arith.sitofp`, `arith.truncf`, ...) to `ty`.
    pub fn convert(&self, name: &str, operand: Value<'c, '_>, ty: Type<'c>) -> Built<Value<'c, 'a>> {
        self.value(name, &[operand], ty, &[])
    }

    /// A size or offset as an index value (a constant when static).
    pub fn extent(&self, extent: Extent<'c, 'a>) -> Built<Value<'c, 'a>> {
        match extent {
            Extent::Static(n) => self.index(n),
            Extent::Value(v) => Ok(v),
        }
    }
}

/// `memref<dims x element, strided<[strides], offset: offset>>` (MLIR's
/// `i64::MIN` marks a dynamic size, stride or offset).
pub fn strided_memref<'c>(
    context: &'c Context,
    element: Type<'c>,
    dims: &[i64],
    strides: &[i64],
    offset: i64,
) -> Type<'c> {
    let layout = melior::ir::attribute::StridedLayoutAttribute::new(context, offset, strides).into();
    MemRefType::new(element, dims, Some(layout), None).into()
}

/// The element type of a memref value.
pub fn element_of<'c>(memref: Value<'c, '_>) -> Built<Type<'c>> {
    MemRefType::try_from(memref.r#type())
        .map(|t| t.element())
        .map_err(|_| "compiler fault: a view that is not a memref".to_string())
}

/// The MLIR form of an affine map of the `temporal` dialect's programs.
pub fn affine_map<'c>(
    context: &'c Context,
    num_dims: usize,
    num_symbols: usize,
    results: &[tempo_passes::affine::AffineExpr],
) -> melior::ir::AffineMap<'c> {
    let exprs: Vec<melior::ir::AffineExpr<'c>> = results.iter().map(|e| affine_expr(context, e)).collect();
    melior::ir::AffineMap::new(context, num_dims, num_symbols, &exprs)
}

fn affine_expr<'c>(context: &'c Context, expr: &tempo_passes::affine::AffineExpr) -> melior::ir::AffineExpr<'c> {
    use melior::ir::AffineExpr as M;
    use tempo_passes::affine::AffineExpr as E;
    match expr {
        E::Dim(k) => M::dim(context, *k),
        E::Symbol(k) => M::symbol(context, *k),
        E::Constant(c) => M::constant(context, *c),
        E::Add(a, b) => affine_expr(context, a) + affine_expr(context, b),
        E::Mul(a, b) => affine_expr(context, a) * affine_expr(context, b),
        E::Mod(a, b) => M::modulo(affine_expr(context, a), affine_expr(context, b)),
        E::FloorDiv(a, b) => M::floor_div(affine_expr(context, a), affine_expr(context, b)),
        E::CeilDiv(a, b) => M::ceil_div(affine_expr(context, a), affine_expr(context, b)),
    }
}

/// The body block of `module`.
fn module_body<'c, 'a>(module: OperationRef<'c, 'a>) -> Built<BlockRef<'c, 'a>> {
    module.region(0).ok().and_then(|r| r.first_block()).ok_or_else(|| "compiler fault: a module without a body".into())
}

/// Inserts `op` at the start of `body`.
fn prepend<'c>(body: BlockRef<'c, '_>, op: Operation<'c>) {
    match body.first_operation() {
        Some(first) => body.insert_operation_before(first, op),
        None => body.append_operation(op),
    };
}

/// Adds the NUL-terminated string constant `@name` (an `llvm.mlir.global`)
/// to `module` unless a symbol of that name is there.
pub fn declare_string(module: OperationRef<'_, '_>, name: &str, text: &str) -> Built<()> {
    // The reference points into `context_ref`, which outlives its uses here.
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() };
    let body = module_body(module)?;
    if has_symbol(body, name) {
        return Ok(());
    }
    let bytes = format!("{text}\0");
    let array = melior::dialect::llvm::r#type::array(IntegerType::new(context, 8).into(), bytes.len() as u32);
    let linkage = Attribute::parse(context, "#llvm.linkage<internal>").ok_or("compiler fault: the linkage")?;
    let op = OperationBuilder::new("llvm.mlir.global", module.location())
        .add_attributes(&[
            (Identifier::new(context, "sym_name"), StringAttribute::new(context, name).into()),
            (Identifier::new(context, "global_type"), TypeAttribute::new(array).into()),
            (Identifier::new(context, "value"), StringAttribute::new(context, &bytes).into()),
            (Identifier::new(context, "constant"), Attribute::unit(context)),
            (Identifier::new(context, "linkage"), linkage),
            (
                Identifier::new(context, "addr_space"),
                IntegerAttribute::new(IntegerType::new(context, 32).into(), 0).into(),
            ),
        ])
        .add_regions([Region::new()])
        .build()
        .map_err(|e| format!("compiler fault: cannot declare '{name}': {e}"))?;
    prepend(body, op);
    Ok(())
}

/// Adds the zero-initialized `memref.global @name : memref<size x i64>`
/// to `module` unless a symbol of that name is there.
/// Declares the global `memref<shape x element>` named `name`, zeros (in
/// the program's zero-initialized data: its pages are touched once per
/// process, not per run), unless the module has it.
pub fn declare_zero_buffer<'c>(
    module: OperationRef<'c, '_>,
    name: &str,
    element: Type<'c>,
    shape: &[i64],
) -> Built<Type<'c>> {
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() };
    let memref: Type = MemRefType::new(element, shape, None, None).into();
    let body = module_body(module)?;
    if has_symbol(body, name) {
        return Ok(memref);
    }
    let dims: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    let tensor = melior::ir::r#type::RankedTensorType::new(&dims, element, None).into();
    use melior::ir::r#type::TypeLike;
    let zero: Attribute = if !element.is_integer() {
        melior::ir::attribute::FloatAttribute::new(context, element, 0.0).into()
    } else {
        IntegerAttribute::new(element, 0).into()
    };
    let zeros = melior::ir::attribute::DenseElementsAttribute::new(tensor, &[zero])
        .map_err(|e| format!("compiler fault: the global's value: {e}"))?
        .into();
    let op = OperationBuilder::new("memref.global", module.location())
        .add_attributes(&[
            (Identifier::new(context, "sym_name"), StringAttribute::new(context, name).into()),
            (Identifier::new(context, "sym_visibility"), StringAttribute::new(context, "private").into()),
            (Identifier::new(context, "type"), TypeAttribute::new(memref).into()),
            (Identifier::new(context, "initial_value"), zeros),
        ])
        .build()
        .map_err(|e| format!("compiler fault: cannot declare '{name}': {e}"))?;
    prepend(body, op);
    Ok(memref)
}

pub fn declare_zeros(module: OperationRef<'_, '_>, name: &str, size: i64) -> Built<()> {
    // The reference points into `context_ref`, which outlives its uses here.
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() };
    let body = module_body(module)?;
    if has_symbol(body, name) {
        return Ok(());
    }
    let i64_type: Type = IntegerType::new(context, 64).into();
    let memref: Type = MemRefType::new(i64_type, &[size], None, None).into();
    let tensor = melior::ir::r#type::RankedTensorType::new(&[size as u64], i64_type, None).into();
    let zeros =
        melior::ir::attribute::DenseElementsAttribute::new(tensor, &[IntegerAttribute::new(i64_type, 0).into()])
            .map_err(|e| format!("compiler fault: the global's value: {e}"))?
            .into();
    let op = OperationBuilder::new("memref.global", module.location())
        .add_attributes(&[
            (Identifier::new(context, "sym_name"), StringAttribute::new(context, name).into()),
            (Identifier::new(context, "type"), TypeAttribute::new(memref).into()),
            (Identifier::new(context, "initial_value"), zeros),
        ])
        .build()
        .map_err(|e| format!("compiler fault: cannot declare '{name}': {e}"))?;
    prepend(body, op);
    Ok(())
}

/// Appends `func.func @name(inputs)` (no results) to `module`, its body
/// ending in `func.return`: a builder before the return, at `module`'s
/// location, and the function's arguments.
pub fn define_function<'c, 'a>(
    module: OperationRef<'c, 'a>,
    name: &str,
    inputs: &[Type<'c>],
) -> Built<(Builder<'c, 'a>, Vec<Value<'c, 'a>>)> {
    let outside = Builder::at_end(module.context(), module.location(), module_body(module)?);
    let context = outside.context();
    let function = FunctionType::new(context, inputs, &[]);
    let op = OperationBuilder::new("func.func", outside.location)
        .add_attributes(&[
            (Identifier::new(context, "sym_name"), StringAttribute::new(context, name).into()),
            (Identifier::new(context, "function_type"), TypeAttribute::new(function.into()).into()),
        ])
        .add_regions([outside.region(inputs, Some("func.return"))?])
        .build()
        .map_err(|e| format!("compiler fault: cannot build '@{name}': {e}"))?;
    outside.inside_terminated(op)
}

/// Adds `func.func private @name(inputs) -> results` to `module` (its
/// body block) unless a symbol of that name is there.
pub fn declare<'c>(module: OperationRef<'c, '_>, name: &str, inputs: &[Type<'c>], results: &[Type<'c>]) -> Built<()> {
    // The reference points into `context_ref`, which outlives its uses here.
    let context_ref = module.context();
    let context = unsafe { context_ref.to_ref() };
    let body = module_body(module)?;
    if has_symbol(body, name) {
        return Ok(());
    }
    let function = FunctionType::new(context, inputs, results);
    let op = OperationBuilder::new("func.func", module.location())
        .add_attributes(&[
            (Identifier::new(context, "sym_name"), StringAttribute::new(context, name).into()),
            (Identifier::new(context, "function_type"), TypeAttribute::new(function.into()).into()),
            (Identifier::new(context, "sym_visibility"), StringAttribute::new(context, "private").into()),
        ])
        .add_regions([Region::new()])
        .build()
        .map_err(|e| format!("compiler fault: cannot declare '{name}': {e}"))?;
    prepend(body, op);
    Ok(())
}

/// Whether `block` holds an op with `sym_name = name`.
pub fn has_symbol(block: BlockRef, name: &str) -> bool {
    tempo_dialects::block_operations(block).iter().any(|op| {
        op.attribute("sym_name").ok().and_then(|a| StringAttribute::try_from(a).ok()).is_some_and(|s| s.value() == name)
    })
}

/// The `affine` dialect's ops: loops over bounds given as affine maps,
/// conditions given as integer sets, and index arithmetic.
impl<'c, 'a> Builder<'c, 'a> {
    /// `affine.for %iv = max(lower) to min(upper)` (step 1), each bound a
    /// map of its operands (dims, then symbols): a builder inside (before
    /// the `affine.yield`) and `%iv`.
    pub fn affine_for(
        &self,
        lower: (melior::ir::AffineMap<'c>, &[Value<'c, '_>]),
        upper: (melior::ir::AffineMap<'c>, &[Value<'c, '_>]),
    ) -> Built<(Builder<'c, 'a>, Value<'c, 'a>)> {
        let context = self.context();
        let operands: Vec<Value> = lower.1.iter().chain(upper.1).copied().collect();
        let segments = [lower.1.len() as i32, upper.1.len() as i32, 0];
        let op = OperationBuilder::new("affine.for", self.location)
            .add_operands(&operands)
            .add_attributes(&[
                (Identifier::new(context, "lowerBoundMap"), map_attribute(lower.0)),
                (Identifier::new(context, "upperBoundMap"), map_attribute(upper.0)),
                (Identifier::new(context, "step"), IntegerAttribute::new(self.index_type(), 1).into()),
                (
                    Identifier::new(context, "operandSegmentSizes"),
                    DenseI32ArrayAttribute::new(context, &segments).into(),
                ),
            ])
            .add_regions([self.region(&[self.index_type()], Some("affine.yield"))?])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'affine.for': {e}"))?;
        let (_, mut inside) = self.inside(op, true)?;
        let body = inside.pop().ok_or("compiler fault: affine.for without a body")?;
        let iv = self.arguments(&body)?[0];
        Ok((body, iv))
    }

    /// `affine.if condition(operands)` (dims, then symbols): builders in
    /// the then block and, `with_else`, the else block (before their
    /// `affine.yield`s).
    pub fn affine_if(
        &self,
        condition: &tempo_passes::affine::IntegerSet,
        operands: &[Value<'c, '_>],
        with_else: bool,
    ) -> Built<(Builder<'c, 'a>, Option<Builder<'c, 'a>>)> {
        let set = integer_set(self.context(), condition)?;
        let otherwise = if with_else { self.region(&[], Some("affine.yield"))? } else { Region::new() };
        let op = OperationBuilder::new("affine.if", self.location)
            .add_operands(operands)
            .add_attributes(&[(Identifier::new(self.context(), "condition"), set)])
            .add_regions([self.region(&[], Some("affine.yield"))?, otherwise])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'affine.if': {e}"))?;
        let (_, mut inside) = self.inside(op, true)?;
        let mut inside = inside.drain(..);
        let then = inside.next().ok_or("compiler fault: affine.if without a then block")?;
        Ok((then, inside.next()))
    }

    /// `scf.if condition` without results: builders in the then block and,
    /// `with_else`, the else block (both already terminated).
    pub fn scf_if_else(
        &self,
        condition: Value<'c, '_>,
        with_else: bool,
    ) -> Built<(Builder<'c, 'a>, Option<Builder<'c, 'a>>)> {
        let otherwise = if with_else { self.region(&[], Some("scf.yield"))? } else { Region::new() };
        let op = OperationBuilder::new("scf.if", self.location)
            .add_operands(&[condition])
            .add_regions([self.region(&[], Some("scf.yield"))?, otherwise])
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'scf.if': {e}"))?;
        let (_, mut inside) = self.inside(op, true)?;
        let mut inside = inside.drain(..);
        let then = inside.next().ok_or("compiler fault: scf.if without a then block")?;
        Ok((then, inside.next()))
    }

    /// The value of `expr` (an index) computed with `arith` ops on `dims`
    /// and `symbols` (index values): for values that are not valid affine
    /// dimensions or symbols (loaded from memory inside a loop). `mod` is
    /// the non-negative remainder and `floordiv`/`ceildiv` round down/up,
    /// as in affine maps.
    pub fn arith_expr(
        &self,
        expr: &tempo_passes::affine::AffineExpr,
        dims: &[Value<'c, 'a>],
        symbols: &[Value<'c, 'a>],
    ) -> Built<Value<'c, 'a>> {
        use tempo_passes::affine::AffineExpr as E;
        let pair = |a: &E, b: &E| -> Built<(Value<'c, 'a>, Value<'c, 'a>)> {
            Ok((self.arith_expr(a, dims, symbols)?, self.arith_expr(b, dims, symbols)?))
        };
        let operand = |values: &[Value<'c, 'a>], k: usize, what: &str| -> Built<Value<'c, 'a>> {
            values.get(k).copied().ok_or_else(|| format!("compiler fault: affine {what} {k} has no value"))
        };
        match expr {
            E::Dim(k) => operand(dims, *k, "dimension"),
            E::Symbol(k) => operand(symbols, *k, "symbol"),
            E::Constant(c) => self.index(*c),
            E::Add(a, b) => {
                let (x, y) = pair(a, b)?;
                self.arith("addi", x, y)
            }
            E::Mul(a, b) => {
                let (x, y) = pair(a, b)?;
                self.arith("muli", x, y)
            }
            E::FloorDiv(a, b) => {
                let (x, y) = pair(a, b)?;
                self.arith("floordivsi", x, y)
            }
            E::CeilDiv(a, b) => {
                let (x, y) = pair(a, b)?;
                self.arith("ceildivsi", x, y)
            }
            E::Mod(a, b) => {
                let (x, y) = pair(a, b)?;
                let r = self.arith("remsi", x, y)?;
                let negative = self.compare(Compare::Slt, r, self.index(0)?)?;
                self.select(negative, self.arith("addi", r, y)?, r)
            }
        }
    }

    /// Whether every constraint of `set` holds (an `i1`), computed with
    /// `arith` ops ([`Builder::arith_expr`]).
    pub fn arith_set(
        &self,
        set: &tempo_passes::affine::IntegerSet,
        dims: &[Value<'c, 'a>],
        symbols: &[Value<'c, 'a>],
    ) -> Built<Value<'c, 'a>> {
        let mut all = self.constant(1, self.integer_type(1))?;
        for c in &set.constraints {
            let v = self.arith_expr(&c.expr, dims, symbols)?;
            let zero = self.index(0)?;
            let holds = self.compare(if c.is_equality { Compare::Eq } else { Compare::Sge }, v, zero)?;
            all = self.arith("andi", all, holds)?;
        }
        Ok(all)
    }

    /// `affine.apply`, `affine.min` or `affine.max` (`name`) of `map` on
    /// `operands` (dims, then symbols).
    pub fn affine_value(
        &self,
        name: &str,
        map: melior::ir::AffineMap<'c>,
        operands: &[Value<'c, '_>],
    ) -> Built<Value<'c, 'a>> {
        self.value(name, operands, self.index_type(), &[("map", map_attribute(map))])
    }
}

/// An affine map as an attribute.
fn map_attribute(map: melior::ir::AffineMap) -> Attribute {
    unsafe { Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(map.to_raw())) }
}

/// The MLIR form of an integer set of the `temporal` dialect's programs,
/// as an attribute (`affine_set<...>`). A set without constraints is
/// always true (`0 == 0`).
pub fn integer_set<'c>(context: &'c Context, set: &tempo_passes::affine::IntegerSet) -> Built<Attribute<'c>> {
    use tempo_passes::affine::{AffineExpr as E, Constraint};
    let always = [Constraint { expr: E::Constant(0), is_equality: true }];
    let constraints = if set.constraints.is_empty() { &always[..] } else { &set.constraints[..] };
    let exprs: Vec<mlir_sys::MlirAffineExpr> =
        constraints.iter().map(|c| affine_expr(context, &c.expr).to_raw()).collect();
    let equalities: Vec<bool> = constraints.iter().map(|c| c.is_equality).collect();
    unsafe {
        let raw = mlir_sys::mlirIntegerSetGet(
            context.to_raw(),
            set.num_dims as isize,
            set.num_symbols as isize,
            exprs.len() as isize,
            exprs.as_ptr(),
            equalities.as_ptr(),
        );
        if raw.ptr.is_null() {
            return Err("compiler fault: an integer set MLIR refuses".into());
        }
        Ok(Attribute::from_raw(mlir_sys::mlirIntegerSetAttrGet(raw)))
    }
}
