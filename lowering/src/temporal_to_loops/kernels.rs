//! What the lowerings of the spatial op kinds share: the options they
//! read ([`Config`]), the element types, loops over a result's elements
//! and NumPy broadcasting of an operand's index.

use super::Built;
use crate::ir_builder::{Builder, Extent};
use melior::ir::{OperationRef, Value};
use tempo_passes::program::ElementType;

/// What the kinds' lowerings need of the pass's options.
#[derive(Clone, Copy)]
pub(super) struct Config {
    /// Elementwise loops as one `scf.parallel` (for the GPU mapping).
    pub gpu: bool,
    /// Row groups of enough work spread their rows over threads.
    pub parallel: bool,
    /// Float reductions may be reassociated, and (on the CPU) `exp`,
    /// `tanh` and `sigmoid` on `f32` are polynomials.
    pub fast_math: bool,
}

impl Config {
    /// Whether `exp`, `tanh` and `sigmoid` on `f32` are approximated by
    /// polynomials (`fast-math` on the CPU; the GPU keeps libdevice's).
    pub(super) fn approximate(&self) -> bool {
        self.fast_math && !self.gpu
    }
}

/// Erases `op` (which nothing uses).
pub(super) fn erase(op: OperationRef) {
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
        mlir_sys::mlirOperationDestroy(op.to_raw());
    }
}

/// The index at which an operand of `operand_sizes` is read for the
/// element at `index` of a result of `sizes`, under NumPy broadcasting:
/// aligned at the last dimension, a static 1 under a larger size reads
/// `zero`.
pub(super) fn broadcast_at<'c, 'a>(
    operand_sizes: &[Extent<'c, 'a>],
    sizes: &[Extent<'c, 'a>],
    index: &[Value<'c, 'a>],
    zero: Value<'c, 'a>,
) -> Vec<Value<'c, 'a>> {
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let skip = sizes.len() - operand_sizes.len();
    (0..operand_sizes.len())
        .map(|d| if unit(&operand_sizes[d]) && !unit(&sizes[skip + d]) { zero } else { index[skip + d] })
        .collect()
}

/// The MLIR type of an element type.
pub(super) fn element_type<'c>(b: &Builder<'c, '_>, element: ElementType) -> melior::ir::Type<'c> {
    super::views::element_type(b.context(), element)
}

/// Loops over every element of a result of `sizes` whose elements are
/// written independently: for the GPU one `scf.parallel` loop (a kernel
/// once mapped), otherwise `scf.for` loops in row-major order. A rank-0
/// result has no loop. Returns a builder inside and the index of each
/// dimension.
pub(super) fn elementwise_loops<'c, 'a>(
    b: &Builder<'c, 'a>,
    sizes: &[Extent<'c, 'a>],
    config: Config,
) -> Result<(Builder<'c, 'a>, Vec<Value<'c, 'a>>), String> {
    if config.gpu && !sizes.is_empty() {
        let upper: Vec<Value> = sizes.iter().map(|&s| b.extent(s)).collect::<Result<_, _>>()?;
        return b.scf_parallel(&upper);
    }
    let order: Vec<usize> = (0..sizes.len()).collect();
    loop_nest(b, sizes, &order)
}

/// `scf.for` loops over `sizes` in the order `order` (dimension numbers,
/// outer first): a builder inside and the index of each dimension (by
/// dimension number).
pub(super) fn loop_nest<'c, 'a>(
    b: &Builder<'c, 'a>,
    sizes: &[Extent<'c, 'a>],
    order: &[usize],
) -> Result<(Builder<'c, 'a>, Vec<Value<'c, 'a>>), String> {
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let mut inner = *b;
    let mut ivs = vec![zero; sizes.len()];
    for &k in order {
        let upper = inner.extent(sizes[k])?;
        let (body, iv) = inner.scf_for(zero, upper, one)?;
        inner = body;
        ivs[k] = iv;
    }
    Ok((inner, ivs))
}

/// Elements (static sizes) from which, with `parallel` on the CPU, a
/// copy's or an elementwise op's loops spread over threads. (A parallel
/// region's fork and join cost a few microseconds; 2^16 elements copied
/// or computed take tens.)
pub(super) const PARALLEL_ELEMENTS: i64 = 1 << 16;

/// The side of the square tiles in which [`copy_loops`] visits a result
/// whose source is contiguous along another dimension than the result's
/// last: 16 elements of 4 bytes are a cache line, so a tile touches 16
/// lines of each side, and each line it loads is used whole.
pub(super) const TRANSPOSE_TILE: i64 = 16;

/// Whether loops over a result of `sizes` spread over CPU threads:
/// `parallel` on the CPU, at least two dimensions, static sizes of at
/// least [`PARALLEL_ELEMENTS`] elements, and not already on a thread of a
/// parallel loop.
pub(super) fn spreads(b: &Builder, sizes: &[Extent], config: Config) -> bool {
    let elements = sizes.iter().try_fold(1i64, |acc, s| match s {
        Extent::Static(n) => Some(acc.saturating_mul(*n)),
        Extent::Value(_) => None,
    });
    config.parallel
        && !config.gpu
        && sizes.len() >= 2
        && elements.is_some_and(|n| n >= PARALLEL_ELEMENTS)
        && !b.inside_parallel()
}

/// Loops over every element of a result of `sizes` whose elements are
/// written independently from sources of which one is contiguous along
/// result dimension `source_inner` (`None`: along the last, or unknown).
/// On the GPU, [`elementwise_loops`]. On the CPU, where the source's
/// contiguous dimension is not the result's last (a transposition), both
/// are visited in [`TRANSPOSE_TILE`]-square tiles, so that neither side
/// strides through memory one element per cache line (and, across a
/// large tensor, one per page); where [`spreads`] says so, the loops
/// outside the tile (or outside the last dimension) are one
/// `scf.parallel`. Otherwise row-major `scf.for` loops. Returns a builder
/// inside and the index of each dimension.
pub(super) fn copy_loops<'c, 'a>(
    b: &Builder<'c, 'a>,
    sizes: &[Extent<'c, 'a>],
    source_inner: Option<usize>,
    config: Config,
) -> Result<(Builder<'c, 'a>, Vec<Value<'c, 'a>>), String> {
    if config.gpu {
        return elementwise_loops(b, sizes, config);
    }
    let rank = sizes.len();
    let (zero, one) = (b.index(0)?, b.index(1)?);
    // The innermost dimension that is not a static 1 (trailing ones are
    // loops of one point inside it).
    let Some(z) = inner_dimension(sizes) else {
        let order: Vec<usize> = (0..rank).collect();
        return loop_nest(b, sizes, &order);
    };
    let spread = spreads(b, sizes, config);
    let at_least_tile = |k: usize| matches!(sizes[k], Extent::Static(n) if n >= TRANSPOSE_TILE);
    let tiled = source_inner.filter(|&a| a < z && at_least_tile(a) && at_least_tile(z));
    // Outside: the dimensions before `z` but `a` (whole), then, tiled,
    // the tiles' first indices along `a` and `z`; inside: `a` and `z`
    // within the tile (or `z` whole), then the trailing ones.
    let (outside, inside): (Vec<usize>, Vec<usize>) = match tiled {
        Some(a) => ((0..z).filter(|&k| k != a).chain([a, z]).collect(), vec![a, z]),
        None => ((0..z).collect(), vec![z]),
    };
    let tile = b.index(TRANSPOSE_TILE)?;
    let step = |k: usize| if tiled.is_some() && (Some(k) == tiled || k == z) { tile } else { one };
    let upper: Vec<Value> = outside.iter().map(|&k| b.extent(sizes[k])).collect::<Result<_, _>>()?;
    let (mut inner, starts) = if spread && !outside.is_empty() {
        let steps: Vec<Value> = outside.iter().map(|&k| step(k)).collect();
        b.scf_parallel_range(&vec![zero; outside.len()], &upper, &steps)?
    } else {
        let mut inner = *b;
        let mut starts = Vec::new();
        for (&k, &u) in outside.iter().zip(&upper) {
            let (body, iv) = inner.scf_for(zero, u, step(k))?;
            inner = body;
            starts.push(iv);
        }
        (inner, starts)
    };
    let mut ivs = vec![zero; rank];
    for (&k, &iv) in outside.iter().zip(&starts) {
        ivs[k] = iv;
    }
    for &k in &inside {
        let (start, end) = if tiled.is_some() {
            let start = ivs[k];
            let end = match sizes[k] {
                // Whole tiles: a constant trip count.
                Extent::Static(n) if n % TRANSPOSE_TILE == 0 => inner.arith("addi", start, tile)?,
                s => inner.arith("minui", inner.arith("addi", start, tile)?, inner.extent(s)?)?,
            };
            (start, end)
        } else {
            (zero, inner.extent(sizes[k])?)
        };
        let (body, iv) = inner.scf_for(start, end, one)?;
        inner = body;
        ivs[k] = iv;
    }
    for k in z + 1..rank {
        let (body, iv) = inner.scf_for(zero, inner.extent(sizes[k])?, one)?;
        inner = body;
        ivs[k] = iv;
    }
    Ok((inner, ivs))
}

/// The innermost dimension of `sizes` that is not a static 1 (`None`:
/// every one is).
pub(super) fn inner_dimension(sizes: &[Extent]) -> Option<usize> {
    (0..sizes.len()).rev().find(|&k| !matches!(sizes[k], Extent::Static(1)))
}

/// Copies the view `from` into the buffer or view `to` of the same sizes
/// with [`copy_loops`] (tiled where `from` is transposed, spread over
/// threads where large and `parallel`), on the CPU.
pub(super) fn copy_view<'c, 'a>(
    b: &Builder<'c, 'a>,
    from: &super::views::View<'c, 'a>,
    to: Value<'c, 'a>,
    parallel: bool,
) -> Result<(), String> {
    let config = Config { gpu: false, parallel, fast_math: false };
    let source_inner = contiguous_dimension(from.ty(), &|k| Some(k));
    let (inner, ivs) = copy_loops(b, &from.sizes, source_inner, config)?;
    let value = inner.load(from.value, &ivs, crate::ir_builder::element_of(from.value)?)?;
    inner.store(value, to, &ivs)
}

/// The dimension along which a view of `ty` is contiguous (unit stride,
/// more than one element), as a dimension of `sizes`' result read through
/// `to_result` (the view's dimension to the result's, `None` where it has
/// none); `None` when it is the result's last, or not known.
pub(super) fn contiguous_dimension(ty: melior::ir::Type, to_result: &dyn Fn(usize) -> Option<usize>) -> Option<usize> {
    let layout = super::views::layout(ty).ok()?;
    let k = (0..layout.dims.len()).find(|&k| layout.strides[k] == 1 && layout.dims[k] != 1)?;
    to_result(k)
}

/// The index of a value labelled `labels` at the indices `ivs` (by label:
/// the einsum-style labels of attention's operands).
pub(super) fn index_of<'c, 'a>(labels: &[char], ivs: &[(char, Value<'c, 'a>)]) -> Built<Vec<Value<'c, 'a>>> {
    labels
        .iter()
        .map(|c| {
            ivs.iter()
                .find(|(x, _)| x == c)
                .map(|(_, iv)| *iv)
                .ok_or_else(|| format!("compiler fault: attention label '{c}' has no index"))
        })
        .collect()
}

/// The row-major position of a row (`ivs` of rows of sizes `dims`, in
/// order): its slice of per-row buffers.
pub(super) fn row_position<'c, 'a>(b: &Builder<'c, 'a>, ivs: &[Value<'c, 'a>], dims: &[i64]) -> Built<Value<'c, 'a>> {
    let mut position = b.index(0)?;
    for (k, &d) in dims.iter().enumerate() {
        position = b.arith("addi", b.arith("muli", position, b.index(d)?)?, ivs[k])?;
    }
    Ok(position)
}
