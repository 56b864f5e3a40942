//! Views in `lower-temporal-to-loops`: a memref value with the size of
//! each dimension, the memref types of points, stores and buffers, and the
//! ops that see a value differently without copying it: parts and slices
//! (`memref.subview`), permutations (`memref.transpose`), reshapes of
//! contiguous values (`memref.collapse_shape` then `memref.expand_shape`)
//! and the matrices of a batched product.
//!
//! Types are built, not written: a point's view is
//! `memref<SHAPE x E, strided<[row-major strides], offset: ?>>`, a buffer or
//! store has the identity layout, and a view of a view keeps its strides
//! (read back from the type, [`Layout`]).

use crate::ir_builder::{Builder, Extent};
use melior::Context;
use melior::ir::{
    Attribute, Type, Value, ValueLike,
    attribute::{ArrayAttribute, DenseI64ArrayAttribute, IntegerAttribute},
    r#type::{DimSize, IntegerType, MemRefType, ShapedTypeLike, TypeLike},
};
use tempo_passes::program::{DYNAMIC, PointType};

/// MLIR's marker of a dynamic size, stride or offset in a type.
pub(super) const UNKNOWN: i64 = i64::MIN;

type Built<T> = Result<T, String>;

/// A memref holding a value of a branch, and the size of each dimension
/// (static, or an index value).
#[derive(Clone)]
pub(super) struct View<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub sizes: Vec<Extent<'c, 'a>>,
}

impl<'c, 'a> View<'c, 'a> {
    /// A view of the static shape of `point`.
    pub(super) fn fixed(value: Value<'c, 'a>, point: &PointType) -> Self {
        View { value, sizes: point.shape.iter().map(|&d| Extent::Static(d)).collect() }
    }

    /// The view's memref type.
    pub(super) fn ty(&self) -> Type<'c> {
        self.value.r#type()
    }
}

/// Whether two sizes are the same: equal numbers, or the same value.
pub(super) fn same(a: &Extent, b: &Extent) -> bool {
    match (a, b) {
        (Extent::Static(x), Extent::Static(y)) => x == y,
        (Extent::Value(x), Extent::Value(y)) => x == y,
        _ => false,
    }
}

/// A size's number, when static.
pub(super) fn static_size(e: &Extent) -> Option<i64> {
    match e {
        Extent::Static(n) => Some(*n),
        Extent::Value(_) => None,
    }
}

/// A key identifying an index value (for maps keyed by sizes).
pub(super) fn key(value: Value) -> usize {
    value.to_raw().ptr as usize
}

/// The MLIR type of an element type (the program model's writer's).
pub(super) use tempo_passes::emit::element_type;

/// A point shape's sizes in a type (a dynamic one as MLIR's marker).
fn dims(shape: &[i64]) -> Vec<i64> {
    shape.iter().map(|&d| if d == DYNAMIC { UNKNOWN } else { d }).collect()
}

/// Row-major strides of `dims` (dynamic before a dynamic size).
fn row_major(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for k in (0..dims.len().saturating_sub(1)).rev() {
        strides[k] =
            if strides[k + 1] == UNKNOWN || dims[k + 1] == UNKNOWN { UNKNOWN } else { strides[k + 1] * dims[k + 1] };
    }
    strides
}

pub(super) use crate::ir_builder::strided_memref as strided;

/// The memref type of a point view: `memref<4x3xf32, strided<[3, 1], offset: ?>>`.
pub(super) fn view_type<'c>(context: &'c Context, point: &PointType) -> Type<'c> {
    let dims = dims(&point.shape);
    strided(context, element_type(context, point.element), &dims, &row_major(&dims), UNKNOWN)
}

/// The memref type of a buffer of `point` (identity layout).
pub(super) fn plain_type<'c>(context: &'c Context, point: &PointType) -> Type<'c> {
    MemRefType::new(element_type(context, point.element), &dims(&point.shape), None, None).into()
}

/// `memref<lead x point shape>` (identity layout): a store's type.
pub(super) fn stacked_type<'c>(context: &'c Context, lead: &[i64], point: &PointType) -> Type<'c> {
    let dims: Vec<i64> = lead.iter().copied().chain(dims(&point.shape)).collect();
    MemRefType::new(element_type(context, point.element), &dims, None, None).into()
}

/// What a memref type says of its layout.
pub(super) struct Layout<'c> {
    pub dims: Vec<i64>,
    pub element: Type<'c>,
    pub strides: Vec<i64>,
    pub offset: i64,
}

/// The sizes, element type, strides and offset of a memref type (an
/// identity layout gives row-major strides).
pub(super) fn layout(ty: Type) -> Built<Layout> {
    let memref = MemRefType::try_from(ty).map_err(|_| "compiler fault: a view that is not a memref".to_string())?;
    let rank = memref.rank();
    let dims: Vec<i64> = (0..rank)
        .map(|k| match memref.dim_size(k) {
            Ok(DimSize::Static(d)) => Ok(d as i64),
            Ok(DimSize::Dynamic) => Ok(UNKNOWN),
            Err(e) => Err(e.to_string()),
        })
        .collect::<Built<_>>()?;
    let mut strides = vec![0i64; rank];
    let mut offset = 0i64;
    let found =
        unsafe { mlir_sys::mlirMemRefTypeGetStridesAndOffset(memref.to_raw(), strides.as_mut_ptr(), &mut offset) };
    if found.value == 0 {
        return Err("compiler fault: a view whose layout is not strided".into());
    }
    Ok(Layout { dims, element: memref.element(), strides, offset })
}

/// Whether the innermost dimension of a memref type has unit stride.
pub(super) fn unit_inner_stride(ty: Type) -> bool {
    layout(ty).is_ok_and(|l| l.strides.last().is_none_or(|&s| s == 1))
}

/// Sizes of an elementwise result under NumPy broadcasting: operands
/// aligned at their last dimension, a static size 1 stretching to the
/// others' size (which the verifier proved equal).
pub(super) fn broadcast_sizes<'c, 'a>(operands: &[&[Extent<'c, 'a>]]) -> Vec<Extent<'c, 'a>> {
    let rank = operands.iter().map(|v| v.len()).max().unwrap_or(0);
    let mut sizes = vec![Extent::Static(1); rank];
    for v in operands {
        let skip = rank - v.len();
        for (j, size) in v.iter().enumerate() {
            // Prefer static sizes; otherwise any operand's dynamic size.
            let slot = &mut sizes[skip + j];
            let unit = |e: &Extent| matches!(e, Extent::Static(1));
            if !unit(size) && (unit(slot) || static_size(size).is_some()) {
                *slot = *size;
            }
        }
    }
    sizes
}

/// An array attribute of `i64` integers.
fn integers<'c>(context: &'c Context, values: &[i64]) -> Attribute<'c> {
    let i64_type = IntegerType::new(context, 64).into();
    let items: Vec<Attribute> = values.iter().map(|&v| IntegerAttribute::new(i64_type, v).into()).collect();
    ArrayAttribute::new(context, &items).into()
}

/// `memref.transpose` of `input`: result dimension `i` is input dimension
/// `permutation[i]`.
pub(super) fn transposed<'c, 'a>(
    b: &Builder<'c, 'a>,
    input: &View<'c, 'a>,
    permutation: &[usize],
) -> Built<View<'c, 'a>> {
    let context = b.context();
    let l = layout(input.ty())?;
    let dims: Vec<i64> = permutation.iter().map(|&k| l.dims[k]).collect();
    let strides: Vec<i64> = permutation.iter().map(|&k| l.strides[k]).collect();
    let ty = strided(context, l.element, &dims, &strides, l.offset);
    let exprs: Vec<melior::ir::AffineExpr> =
        permutation.iter().map(|&k| melior::ir::AffineExpr::dim(context, k)).collect();
    let map = melior::ir::AffineMap::new(context, permutation.len(), 0, &exprs);
    let map = unsafe { Attribute::from_raw(mlir_sys::mlirAffineMapAttrGet(map.to_raw())) };
    let value = b.value("memref.transpose", &[input.value], ty, &[("permutation", map)])?;
    Ok(View { value, sizes: permutation.iter().map(|&k| input.sizes[k]).collect() })
}

/// `source` (a point of type `from`) seen with the shape of `to`, no
/// copy: a `memref.collapse_shape` to one dimension, then a
/// `memref.expand_shape`. `None` unless `source` is a contiguous row-major
/// view of static, non-empty sizes (what the views of points and buffers
/// are; ranges of block stores and permuted views are not).
pub(super) fn reshaped<'c, 'a>(
    b: &Builder<'c, 'a>,
    source: &View<'c, 'a>,
    from: &PointType,
    to: &PointType,
) -> Built<Option<View<'c, 'a>>> {
    let context = b.context();
    let static_sizes = |p: &PointType| p.shape.iter().all(|&d| d > 0);
    if from.shape.first() == Some(&DYNAMIC) && to.shape.first() == Some(&DYNAMIC) {
        return reshaped_rows(b, source, from, to);
    }
    if source.ty() != view_type(context, from) || !static_sizes(from) || !static_sizes(to) {
        return Ok(None);
    }
    let count: i64 = from.shape.iter().product();
    if count != to.shape.iter().product::<i64>() {
        return Ok(None);
    }
    let flat_type = view_type(context, &PointType { shape: vec![count], element: from.element });
    let all = |rank: usize| -> Attribute<'c> {
        let group = integers(context, &(0..rank as i64).collect::<Vec<_>>());
        ArrayAttribute::new(context, &[group]).into()
    };
    let none: Attribute<'c> = ArrayAttribute::new(context, &[]).into();
    let flat = match from.shape.len() {
        1 => source.value,
        0 => b.value(
            "memref.expand_shape",
            &[source.value],
            flat_type,
            &[("reassociation", none), ("static_output_shape", DenseI64ArrayAttribute::new(context, &[1]).into())],
        )?,
        rank => b.value("memref.collapse_shape", &[source.value], flat_type, &[("reassociation", all(rank))])?,
    };
    let value = match to.shape.len() {
        1 => flat,
        0 => b.value("memref.collapse_shape", &[flat], view_type(context, to), &[("reassociation", none)])?,
        rank => b.value(
            "memref.expand_shape",
            &[flat],
            view_type(context, to),
            &[
                ("reassociation", all(rank)),
                ("static_output_shape", DenseI64ArrayAttribute::new(context, &to.shape).into()),
            ],
        )?,
    };
    Ok(Some(View::fixed(value, to)))
}

/// `source` (of static shape `from`, any static strides) seen with the
/// shape of `to` where the two differ only by dimensions of size 1 (the
/// sizes other than 1 the same, in order): a rank-reducing
/// `memref.subview` drops `from`'s unit dimensions, a
/// `memref.expand_shape` inserts `to`'s. No copy, whatever the strides
/// (a permuted view `[T, BH, 1, T] -> [BH, T, 1, T]` reshaped to
/// `[BH, T, T]` for a batched product was copied, 16 MB at T 256, before).
/// `None` for any other reshape, dynamic sizes or strides, all sizes 1,
/// or a last dimension (of size other than 1) without unit stride.
pub(super) fn unit_reshaped<'c, 'a>(
    b: &Builder<'c, 'a>,
    source: &View<'c, 'a>,
    from: &PointType,
    to: &PointType,
) -> Built<Option<View<'c, 'a>>> {
    let context = b.context();
    let kept = |shape: &[i64]| shape.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    let core = kept(&from.shape);
    if from.shape.iter().chain(&to.shape).any(|&d| d <= 0) || core != kept(&to.shape) || core.is_empty() {
        return Ok(None);
    }
    let l = layout(source.ty())?;
    if l.dims != from.shape || l.strides.iter().any(|&s| s == UNKNOWN) {
        return Ok(None);
    }
    // Drop the unit dimensions (a subview of the whole, rank-reduced).
    let core_strides: Vec<i64> = (0..from.shape.len()).filter(|&k| from.shape[k] != 1).map(|k| l.strides[k]).collect();
    if core_strides.last() != Some(&1) {
        // Without unit stride along its last dimension the view would be
        // read across pages by whatever reads it (a product's packing once
        // per batch index); one tiled copy costs less.
        return Ok(None);
    }
    let reduced = if core.len() == from.shape.len() {
        source.value
    } else {
        let zero: Vec<Extent> = from.shape.iter().map(|_| Extent::Static(0)).collect();
        let whole: Vec<Extent> = from.shape.iter().map(|&d| Extent::Static(d)).collect();
        let ty = strided(context, l.element, &core, &core_strides, UNKNOWN);
        b.subview(source.value, &zero, &whole, ty)?
    };
    if core.len() == to.shape.len() {
        return Ok(Some(View::fixed(reduced, to)));
    }
    // Insert `to`'s unit dimensions: each joins the group of the next
    // dimension of another size (trailing ones the last group).
    let mut groups: Vec<Vec<i64>> = vec![Vec::new(); core.len()];
    let mut next = 0usize;
    for (k, &d) in to.shape.iter().enumerate() {
        let g = next.min(core.len() - 1);
        groups[g].push(k as i64);
        if d != 1 {
            next += 1;
        }
    }
    // Strides as MLIR infers them: within a group, the innermost dimension
    // has the source's stride, each outer one the next one's times its size.
    let mut strides = vec![0i64; to.shape.len()];
    for (g, group) in groups.iter().enumerate() {
        let mut stride = core_strides[g];
        for &k in group.iter().rev() {
            strides[k as usize] = stride;
            stride *= to.shape[k as usize];
        }
    }
    let reassociation: Vec<Attribute> = groups.iter().map(|g| integers(context, g)).collect();
    let value = b.value(
        "memref.expand_shape",
        &[reduced],
        strided(context, l.element, &to.shape, &strides, UNKNOWN),
        &[
            ("reassociation", ArrayAttribute::new(context, &reassociation).into()),
            ("static_output_shape", DenseI64ArrayAttribute::new(context, &to.shape).into()),
        ],
    )?;
    Ok(Some(View::fixed(value, to)))
}

/// A reshape of rows `[?, a...]` to `[?, b...]` (static `a` and `b` of
/// one size, the rows kept, as in a batch of points): a view when the
/// rows are contiguous (`memref.collapse_shape` of the row, then
/// `memref.expand_shape`), else `None`.
fn reshaped_rows<'c, 'a>(
    b: &Builder<'c, 'a>,
    source: &View<'c, 'a>,
    from: &PointType,
    to: &PointType,
) -> Built<Option<View<'c, 'a>>> {
    let context = b.context();
    let (tail_from, tail_to) = (&from.shape[1..], &to.shape[1..]);
    if tail_from.iter().chain(tail_to).any(|&d| d <= 0) {
        return Ok(None);
    }
    let count: i64 = tail_from.iter().product();
    if count != tail_to.iter().product::<i64>() || tail_from.is_empty() || tail_to.is_empty() {
        return Ok(None);
    }
    let l = layout(source.ty())?;
    let mut expected = vec![1i64; from.shape.len()];
    for k in (0..from.shape.len() - 1).rev() {
        expected[k] = expected[k + 1] * from.shape[k + 1];
    }
    if l.strides != expected {
        return Ok(None);
    }
    let groups = |rank: usize| -> Attribute<'c> {
        let rest: Vec<i64> = (1..rank as i64).collect();
        ArrayAttribute::new(context, &[integers(context, &[0]), integers(context, &rest)]).into()
    };
    let flat_type = strided(context, l.element, &[UNKNOWN, count], &[count, 1], l.offset);
    let flat = match tail_from.len() {
        1 => source.value,
        _ => b.value(
            "memref.collapse_shape",
            &[source.value],
            flat_type,
            &[("reassociation", groups(from.shape.len()))],
        )?,
    };
    let mut strides = vec![1i64; to.shape.len()];
    for k in (0..to.shape.len() - 1).rev() {
        strides[k] = strides[k + 1] * to.shape[k + 1];
    }
    let dims: Vec<i64> = std::iter::once(UNKNOWN).chain(tail_to.iter().copied()).collect();
    let value = match tail_to.len() {
        1 => flat,
        _ => {
            let rows = b.extent(source.sizes[0])?;
            let op = melior::ir::operation::OperationBuilder::new("memref.expand_shape", b.location)
                .add_operands(&[flat, rows])
                .add_results(&[strided(context, l.element, &dims, &strides, l.offset)])
                .add_attributes(&[
                    (melior::ir::Identifier::new(context, "reassociation"), groups(to.shape.len())),
                    (
                        melior::ir::Identifier::new(context, "static_output_shape"),
                        DenseI64ArrayAttribute::new(context, &dims).into(),
                    ),
                ])
                .build()
                .map_err(|e| format!("compiler fault: cannot build 'memref.expand_shape': {e}"))?;
            b.insert_op(op).result(0).map_err(|e| e.to_string())?.into()
        }
    };
    let sizes = std::iter::once(source.sizes[0]).chain(tail_to.iter().map(|&d| Extent::Static(d))).collect();
    Ok(Some(View { value, sizes }))
}

/// The part of `whole` from `offset` along `axis`, of type `part`: a
/// sub-view with `whole`'s strides.
pub(super) fn static_part<'c, 'a>(
    b: &Builder<'c, 'a>,
    whole: &View<'c, 'a>,
    axis: usize,
    offset: i64,
    part: &PointType,
) -> Built<View<'c, 'a>> {
    let l = layout(whole.ty())?;
    let sizes: Vec<Extent> = part.shape.iter().map(|&d| Extent::Static(d)).collect();
    let offsets: Vec<Extent> = (0..sizes.len()).map(|k| Extent::Static(if k == axis { offset } else { 0 })).collect();
    let ty = strided(b.context(), l.element, &part.shape, &l.strides, UNKNOWN);
    let value = b.subview(whole.value, &offsets, &sizes, ty)?;
    Ok(View { value, sizes })
}

/// The box of `operand` at offsets `at` (index values), of the static
/// shape of `ty`: a subview with `operand`'s strides.
pub(super) fn slice<'c, 'a>(
    b: &Builder<'c, 'a>,
    operand: &View<'c, 'a>,
    at: &[Value<'c, 'a>],
    ty: &PointType,
) -> Built<View<'c, 'a>> {
    let l = layout(operand.ty())?;
    let sizes: Vec<Extent> = ty.shape.iter().map(|&d| Extent::Static(d)).collect();
    let offsets: Vec<Extent> = at.iter().map(|&v| Extent::Value(v)).collect();
    let result = strided(b.context(), l.element, &ty.shape, &l.strides, UNKNOWN);
    let value = b.subview(operand.value, &offsets, &sizes, result)?;
    Ok(View { value, sizes })
}

/// The matrix (last two dimensions) of `v` at the batch index `ivs` of a
/// result with batch sizes `batch`: a rank-reduced subview; an operand
/// dimension of size 1 under a larger one, or missing, is not indexed.
pub(super) fn matrix<'c, 'a>(
    b: &Builder<'c, 'a>,
    v: &View<'c, 'a>,
    ivs: &[Value<'c, 'a>],
    batch: &[Extent<'c, 'a>],
) -> Built<View<'c, 'a>> {
    let own = v.sizes.len() - 2;
    let skip = batch.len() - own;
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let mut offsets: Vec<Extent> = (0..own)
        .map(|d| {
            if unit(&v.sizes[d]) && !unit(&batch[skip + d]) { Extent::Static(0) } else { Extent::Value(ivs[skip + d]) }
        })
        .collect();
    offsets.extend([Extent::Static(0), Extent::Static(0)]);
    let mut sizes: Vec<Extent> = vec![Extent::Static(1); own];
    sizes.extend(v.sizes[own..].iter().copied());
    let l = layout(v.ty())?;
    let ty = strided(b.context(), l.element, &l.dims[own..], &l.strides[own..], UNKNOWN);
    let value = b.subview(v.value, &offsets, &sizes, ty)?;
    Ok(View { value, sizes: v.sizes[own..].to_vec() })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempo_passes::program::ElementType;

    #[test]
    fn view_types_are_row_major_strided() {
        let context = tempo_dialects::create_context();
        let p = PointType { shape: vec![4, 3], element: ElementType::F32 };
        assert_eq!(view_type(&context, &p).to_string(), "memref<4x3xf32, strided<[3, 1], offset: ?>>");
        let s = PointType { shape: vec![], element: ElementType::I64 };
        assert_eq!(view_type(&context, &s).to_string(), "memref<i64, strided<[], offset: ?>>");
        let l = layout(stacked_type(&context, &[UNKNOWN], &p)).unwrap();
        assert_eq!((l.dims, l.strides, l.offset), (vec![UNKNOWN, 4, 3], vec![12, 3, 1], 0));
    }

    #[test]
    fn inner_strides_are_read_from_the_type() {
        let context = tempo_dialects::create_context();
        let f32_type = Type::float32(&context);
        assert!(unit_inner_stride(plain_type(&context, &PointType { shape: vec![4, 8], element: ElementType::F32 })));
        assert!(unit_inner_stride(strided(&context, f32_type, &[4, 8], &[8, 1], UNKNOWN)));
        assert!(!unit_inner_stride(strided(&context, f32_type, &[4, 8], &[1, 4], UNKNOWN)));
        assert!(!unit_inner_stride(strided(&context, f32_type, &[4, 8], &[UNKNOWN, UNKNOWN], UNKNOWN)));
    }
}
