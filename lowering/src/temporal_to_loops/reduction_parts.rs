//! What the CPU's reductions (`reductions.rs`) and the GPU's
//! (`gpu_reduction.rs`) share: a reduction's input (one view, or an
//! elementwise chain over its leaves), the op combining two partial
//! results, and the starting value of a maximum.

use super::kernels::element_type;
use super::scalar::Chain;
use super::views::View;
use crate::ir_builder::{Builder, Extent};
use melior::ir::Value;
use tempo_passes::program::{ElementType, ReduceKind};

/// The input of a reduction: one view, or a chain over its leaves; its
/// sizes.
pub(super) struct ReduceInput<'r, 'c, 'a> {
    pub leaves: &'r [View<'c, 'a>],
    pub chain: Option<&'r Chain>,
    pub shape: &'r [Extent<'c, 'a>],
}

/// The op combining two partial results of a sum, maximum or mean of
/// `element`s.
pub(super) fn combine_op(kind: ReduceKind, element: ElementType) -> &'static str {
    match (kind, element.is_float()) {
        (ReduceKind::Max, true) => "arith.maximumf",
        (ReduceKind::Max, false) => "arith.maxsi",
        (_, true) => "arith.addf",
        (_, false) => "arith.addi",
    }
}

/// The smallest value of an element type (-inf for floats).
pub(super) fn lowest<'c, 'a>(b: &Builder<'c, 'a>, element: ElementType) -> Result<Value<'c, 'a>, String> {
    let ty = element_type(b, element);
    match element {
        ElementType::F32 | ElementType::F64 => b.float(f64::NEG_INFINITY, ty),
        ElementType::I32 => b.constant(i32::MIN as i64, ty),
        _ => b.constant(i64::MIN, ty),
    }
}
