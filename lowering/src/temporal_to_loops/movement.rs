//! Movement ops, slices at point-dependent offsets and gathers in
//! `lower-temporal-to-loops`: loops copying each element from where
//! `Movement::source` says, or views where no copy is needed.

use super::kernels::{Config, Kernel, KernelOperands, TypedView, element_type, elementwise_loops};
use super::{Emitter, View, memref_layout, view_type};
use crate::ir_builder::{Builder, Compare, Extent, element_of};
use melior::ir::Value;
use std::fmt::Write;
use tempo_passes::affine::AffineMap;
use tempo_passes::program::{ElementType, Movement, PointType};

impl Emitter<'_, '_> {
    /// A size (SSA index or literal) as an SSA index.
    pub(super) fn index_value(&mut self, size: &str, indent: &str, out: &mut String) -> String {
        if size.starts_with('%') {
            return size.to_string();
        }
        let c = self.fresh("c");
        let _ = writeln!(out, "{indent}{c} = arith.constant {size} : index");
        c
    }

    /// The box of `operand` at the offsets `offsets` gives at the reader's
    /// point (`reader_dims`), of the static shape of `ty`: a subview.
    pub(super) fn dynamic_slice(
        &mut self,
        operand: &View,
        offsets: &AffineMap,
        reader_dims: &[String],
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) -> View {
        let at: Vec<String> = offsets
            .results
            .iter()
            .map(|e| {
                self.apply(
                    "affine.apply",
                    std::slice::from_ref(e),
                    offsets.num_dims,
                    offsets.num_symbols,
                    reader_dims,
                    indent,
                    out,
                )
            })
            .collect();
        let (_, element, strides, _) = memref_layout(&operand.ty).expect("views are strided memrefs");
        let sizes: Vec<String> = ty.shape.iter().map(i64::to_string).collect();
        let view_ty = format!("memref<{}x{element}, strided<[{}], offset: ?>>", sizes.join("x"), strides.join(", "));
        let view_ty = if sizes.is_empty() { format!("memref<{element}, strided<[], offset: ?>>") } else { view_ty };
        let ones: Vec<&str> = sizes.iter().map(|_| "1").collect();
        let name = self.fresh("slice");
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {}[{}] [{}] [{}] : {} to {view_ty}",
            operand.name,
            at.join(", "),
            sizes.join(", "),
            ones.join(", "),
            operand.ty
        );
        View { name, ty: view_ty, sizes }
    }

    /// Copies elements for a movement op (see [`build_move`]).
    pub(super) fn move_elements(
        &mut self,
        movement: &Movement,
        inputs: &[&View],
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        if let Movement::Concat(axis) = movement {
            self.concat(*axis, inputs, &[false, false], target, indent, out);
            return;
        }
        let mut operands = KernelOperands::default();
        // An arange has no operand: its target stands in.
        let input = operands.view(inputs.first().copied().unwrap_or(target));
        let target = operands.view(target);
        let kernel = Kernel::Move { movement: movement.clone(), input, target, ty: ty.clone() };
        self.call_kernel(operands, kernel, indent, out);
    }

    /// Concatenation along `axis` of `inputs` into `target`, but for the
    /// operands already `placed` in their parts (see [`build_concat`]).
    pub(super) fn concat(
        &mut self,
        axis: usize,
        inputs: &[&View],
        placed: &[bool],
        target: &View,
        indent: &str,
        out: &mut String,
    ) {
        let mut operands = KernelOperands::default();
        let inputs = inputs.iter().map(|v| operands.view(v)).collect();
        let target = operands.view(target);
        let kernel = Kernel::Concat { axis, inputs, placed: placed.to_vec(), target };
        self.call_kernel(operands, kernel, indent, out);
    }

    /// Rows of `table` at `indices` (see [`build_gather`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gather(
        &mut self,
        table: &View,
        indices: &View,
        index_element: ElementType,
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        let mut operands = KernelOperands::default();
        let (table, indices) = (operands.view(table), operands.view(indices));
        let target = operands.view(target);
        let kernel = Kernel::Gather { table, indices, index_element, target, ty: ty.clone() };
        self.call_kernel(operands, kernel, indent, out);
    }
}

/// Copies the elements of a movement op other than a concatenation: a
/// loop nest over the result, each element loaded from where
/// [`Movement::source`] says (an arange computes its position).
pub(super) fn build_move<'c, 'a>(
    b: &Builder<'c, 'a>,
    movement: &Movement,
    input: &TypedView<'c, 'a>,
    target: &TypedView<'c, 'a>,
    ty: &PointType,
    config: Config,
) -> Result<(), String> {
    let (inner, ivs) = elementwise_loops(b, &target.sizes, config)?;
    let load = |at: &[Value<'c, 'a>]| inner.load(input.value, at, element_of(input.value)?);
    let value = match movement {
        Movement::Permute(p) => {
            let mut at = ivs.clone();
            for (i, &k) in p.iter().enumerate() {
                at[k] = ivs[i];
            }
            load(&at)?
        }
        Movement::Flip(axis) => {
            let last = inner.arith("subi", inner.extent(target.sizes[*axis])?, inner.index(1)?)?;
            let mut at = ivs.clone();
            at[*axis] = inner.arith("subi", last, ivs[*axis])?;
            load(&at)?
        }
        Movement::Slice(offsets) => {
            let at: Vec<Value> = ivs
                .iter()
                .zip(offsets)
                .map(|(&iv, &o)| inner.arith("addi", iv, inner.index(o)?))
                .collect::<Result<_, _>>()?;
            load(&at)?
        }
        Movement::Reshape => {
            // The row-major position in the result, then the operand
            // index at that position (sizes may be dynamic).
            let mut linear = inner.index(0)?;
            for (&iv, stride) in ivs.iter().zip(row_major_strides(&inner, &target.sizes)?) {
                linear = inner.arith("addi", linear, inner.arith("muli", iv, stride)?)?;
            }
            let mut at = Vec::new();
            for (&size, stride) in input.sizes.iter().zip(row_major_strides(&inner, &input.sizes)?) {
                let q = inner.arith("divui", linear, stride)?;
                at.push(inner.arith("remui", q, inner.extent(size)?)?);
            }
            load(&at)?
        }
        Movement::Expand => {
            let skip = ivs.len() - input.sizes.len();
            let zero = inner.index(0)?;
            let at: Vec<Value> = input
                .sizes
                .iter()
                .enumerate()
                .map(|(k, n)| if matches!(n, Extent::Static(1)) { zero } else { ivs[skip + k] })
                .collect();
            load(&at)?
        }
        Movement::Concat(_) => return Err("compiler fault: a concatenation copied as a movement".into()),
        Movement::Arange => {
            let position = inner.index_cast(ivs[0], inner.integer_type(64))?;
            let e = element_type(&inner, ty.element);
            match ty.element {
                ElementType::I64 => position,
                ElementType::I32 | ElementType::I1 => inner.convert("arith.trunci", position, e)?,
                ElementType::F32 | ElementType::F64 => inner.convert("arith.sitofp", position, e)?,
            }
        }
    };
    inner.store(value, target.value, &ivs)
}

/// Row-major strides (in elements) of `sizes` as index values.
fn row_major_strides<'c, 'a>(b: &Builder<'c, 'a>, sizes: &[Extent<'c, 'a>]) -> Result<Vec<Value<'c, 'a>>, String> {
    let mut stride = b.index(1)?;
    let mut strides = vec![stride; sizes.len()];
    for k in (0..sizes.len()).rev() {
        strides[k] = stride;
        if k > 0 {
            stride = b.arith("muli", stride, b.extent(sizes[k])?)?;
        }
    }
    Ok(strides)
}

/// Concatenation along `axis`: one copy nest per operand, each over the
/// operand's own sizes and storing at its offset along `axis`. Both sides
/// of every copy run in row-major order, so the innermost loop is a
/// contiguous copy the vectorizer turns into plain vector loads and stores
/// (a single nest over the result with a per-element choice of operand
/// became masked gathers). Operands already `placed` in their parts of
/// `target` (see `destinations`) are not copied.
pub(super) fn build_concat<'c, 'a>(
    b: &Builder<'c, 'a>,
    axis: usize,
    inputs: &[TypedView<'c, 'a>],
    placed: &[bool],
    target: &TypedView<'c, 'a>,
    config: Config,
) -> Result<(), String> {
    let first = b.extent(inputs[0].sizes[axis])?;
    for (k, input) in inputs.iter().enumerate() {
        if placed.get(k).copied().unwrap_or(false) {
            continue;
        }
        let (inner, ivs) = elementwise_loops(b, &input.sizes, config)?;
        let v = inner.load(input.value, &ivs, element_of(input.value)?)?;
        let mut at = ivs.clone();
        if k > 0 {
            at[axis] = inner.arith("addi", ivs[axis], first)?;
        }
        inner.store(v, target.value, &at)?;
    }
    Ok(())
}

/// Rows of `table` at `indices` (clamped into the table; zeros from an
/// empty table): a loop nest over the result.
pub(super) fn build_gather<'c, 'a>(
    b: &Builder<'c, 'a>,
    table: &TypedView<'c, 'a>,
    indices: &TypedView<'c, 'a>,
    index_element: ElementType,
    target: &TypedView<'c, 'a>,
    ty: &PointType,
    config: Config,
) -> Result<(), String> {
    let e = element_type(b, ty.element);
    let rows = b.extent(table.sizes[0])?;
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let last = b.arith("subi", rows, c1)?;
    let empty = b.compare(Compare::Eq, rows, c0)?;
    let (inner, ivs) = elementwise_loops(b, &target.sizes, config)?;
    let rank = indices.sizes.len();
    let raw = inner.load(indices.value, &ivs[..rank], element_type(&inner, index_element))?;
    let position = inner.index_cast(raw, inner.index_type())?;
    let clamped = inner.arith("minsi", inner.arith("maxsi", position, c0)?, last)?;
    let (then, otherwise, values) = inner.scf_if(empty, &[e])?;
    then.yield_values("scf.yield", &[zero(&then, ty.element)?])?;
    let mut at = vec![clamped];
    at.extend(ivs[rank..].iter().copied());
    let loaded = otherwise.load(table.value, &at, e)?;
    otherwise.yield_values("scf.yield", &[loaded])?;
    inner.store(values[0], target.value, &ivs)
}

/// The zero of an element type (`false` for `i1`).
pub(super) fn zero<'c, 'a>(b: &Builder<'c, 'a>, element: ElementType) -> Result<Value<'c, 'a>, String> {
    let ty = element_type(b, element);
    match element {
        ElementType::F32 | ElementType::F64 => b.float(0.0, ty),
        _ => b.constant(0, ty),
    }
}

impl Emitter<'_, '_> {
    /// `source` (a point of type `from`) seen with the shape of `to`, no
    /// copy: a `memref.collapse_shape` to one dimension, then a
    /// `memref.expand_shape`. `None` unless `source` is a contiguous
    /// row-major view of static, non-empty sizes (what the views of points
    /// and buffers are; ranges of block stores and permuted views are not).
    pub(super) fn reshape_view(
        &mut self,
        source: &View,
        from: &PointType,
        to: &PointType,
        indent: &str,
        out: &mut String,
    ) -> Option<View> {
        let static_sizes = |p: &PointType| p.shape.iter().all(|&d| d > 0);
        if source.ty != view_type(from) || !static_sizes(from) || !static_sizes(to) {
            return None;
        }
        let count: i64 = from.shape.iter().product();
        if count != to.shape.iter().product::<i64>() {
            return None;
        }
        let flat_ty = PointType { shape: vec![count], element: from.element };
        let flat = match from.shape.len() {
            1 => source.name.clone(),
            0 => {
                let name = self.fresh("flat");
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.expand_shape {} [] output_shape [1] : {} into {}",
                    source.name,
                    source.ty,
                    view_type(&flat_ty)
                );
                name
            }
            rank => {
                let name = self.fresh("flat");
                let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.collapse_shape {} [[{}]] : {} into {}",
                    source.name,
                    all.join(", "),
                    source.ty,
                    view_type(&flat_ty)
                );
                name
            }
        };
        let name = match to.shape.len() {
            1 => flat,
            0 => {
                let name = self.fresh("reshaped");
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.collapse_shape {flat} [] : {} into {}",
                    view_type(&flat_ty),
                    view_type(to)
                );
                name
            }
            rank => {
                let name = self.fresh("reshaped");
                let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
                let sizes: Vec<String> = to.shape.iter().map(i64::to_string).collect();
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.expand_shape {flat} [[{}]] output_shape [{}] : {} into {}",
                    all.join(", "),
                    sizes.join(", "),
                    view_type(&flat_ty),
                    view_type(to)
                );
                name
            }
        };
        Some(View::fixed(name, to))
    }
}
