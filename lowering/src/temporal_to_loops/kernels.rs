//! What the lowerings of the spatial op kinds share: the options they
//! read ([`Config`]), the element types, loops over a result's elements
//! and NumPy broadcasting of an operand's index.

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
