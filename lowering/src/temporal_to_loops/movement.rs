//! Movement ops, slices at point-dependent offsets and gathers in
//! `lower-temporal-to-loops`: loops copying each element from where
//! `Movement::source` says, or views where no copy is needed.

use super::Emitter;
use super::kernels::{Config, contiguous_dimension, copy_loops, element_type, elementwise_loops};
use super::views::View;
use crate::ir_builder::{Builder, Compare, Extent, element_of};
use melior::ir::Value;
use tempo_passes::affine::AffineMap;
use tempo_passes::program::{ElementType, Movement, PointType};

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// The box of `operand` at the offsets `offsets` gives at the reader's
    /// point (`reader_dims`), of the static shape of `ty`: a subview.
    pub(super) fn dynamic_slice(
        &mut self,
        operand: &View<'c, 'a>,
        offsets: &AffineMap,
        reader_dims: &[Value<'c, 'a>],
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Result<View<'c, 'a>, String> {
        let shape = (offsets.num_dims, offsets.num_symbols);
        let at: Vec<Value<'c, 'a>> = offsets
            .results
            .iter()
            .map(|e| self.apply("affine.apply", std::slice::from_ref(e), shape, reader_dims, b))
            .collect::<Result<_, _>>()?;
        super::views::slice(b, operand, &at, ty)
    }
}

/// Copies the elements of a movement op other than a concatenation: a
/// loop nest over the result, each element loaded from where
/// [`Movement::source`] says (an arange computes its position).
pub(super) fn build_move<'c, 'a>(
    b: &Builder<'c, 'a>,
    movement: &Movement,
    input: &View<'c, 'a>,
    target: &View<'c, 'a>,
    ty: &PointType,
    config: Config,
) -> Result<(), String> {
    // The result's dimension along which the input is contiguous: a
    // transposition is copied in tiles (`copy_loops`).
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let source_inner = match movement {
        Movement::Permute(p) => contiguous_dimension(input.ty(), &|k| p.iter().position(|&q| q == k)),
        Movement::Flip(_) | Movement::Slice(_) => contiguous_dimension(input.ty(), &|k| Some(k)),
        Movement::Reshape => {
            let kept = |sizes: &[Extent<'c, 'a>]| (0..sizes.len()).filter(|&k| !unit(&sizes[k])).collect::<Vec<_>>();
            let (from, to) = (kept(&input.sizes), kept(&target.sizes));
            contiguous_dimension(input.ty(), &|k| from.iter().position(|&f| f == k).and_then(|j| to.get(j).copied()))
        }
        _ => None,
    };
    let (inner, ivs) = copy_loops(b, &target.sizes, source_inner, config)?;
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
        // Size-1 dimensions added or removed, the others in order: each
        // other index is the result's (no division per element).
        Movement::Reshape if let Some(at) = unit_reshape(&inner, input, target, &ivs)? => load(&at)?,
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
    inputs: &[View<'c, 'a>],
    placed: &[bool],
    target: &View<'c, 'a>,
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
    table: &View<'c, 'a>,
    indices: &View<'c, 'a>,
    index_element: ElementType,
    target: &View<'c, 'a>,
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

/// The operand's indices of a reshape that only adds or removes size-1
/// dimensions (the other sizes, static or the same values, in the same
/// order): index 0 along the operand's size-1 dimensions, the result's
/// indices along the others; `None` for any other reshape.
fn unit_reshape<'c, 'a>(
    b: &Builder<'c, 'a>,
    input: &View<'c, 'a>,
    target: &View<'c, 'a>,
    ivs: &[Value<'c, 'a>],
) -> Result<Option<Vec<Value<'c, 'a>>>, String> {
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let kept = |sizes: &[Extent<'c, 'a>]| {
        sizes.iter().enumerate().filter(|(_, e)| !unit(e)).map(|(k, _)| k).collect::<Vec<_>>()
    };
    let (from, to) = (kept(&input.sizes), kept(&target.sizes));
    if from.len() != to.len()
        || from.iter().zip(&to).any(|(&i, &o)| !super::views::same(&input.sizes[i], &target.sizes[o]))
    {
        return Ok(None);
    }
    let zero = b.index(0)?;
    let mut at = vec![zero; input.sizes.len()];
    for (&i, &o) in from.iter().zip(&to) {
        at[i] = ivs[o];
    }
    Ok(Some(at))
}
