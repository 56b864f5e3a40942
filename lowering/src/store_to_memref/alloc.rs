//! `store.alloc` built as typed IR ([`crate::ir_builder`]), counting the
//! store's bytes as live:
//! - `point`, `ring`, `window`, `full`: one `memref.alloc` of the store
//!   type;
//! - `blocks`: `mmap` reserves (`PROT_NONE`, no swap space) room for the
//!   bound rounded up to whole blocks per outer slice; the memref
//!   descriptor of the reservation is built with `llvm` ops and cast to the
//!   store type (`builtin.unrealized_conversion_cast`, folded away by
//!   `reconcile-unrealized-casts`); the block table starts empty (one row
//!   `[0, 0)` per outer slice). Nothing is counted until blocks are
//!   committed. With `swap_space = "file"`, a temporary file
//!   (`tmpfile()`) is opened too; failing to open it ends the run with the
//!   reason (`Builder::fail`).

use super::blocks::{account, statistics_type};
use super::{MEMORY_STATS, StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Compare, declare, declare_string, declare_zeros};
use melior::ir::{OperationRef, Type, Value, ValueLike};

/// The symbol of the message printed when the swap file cannot be made.
pub(super) const FAILURE: &str = "tempo_swap_failure";
/// Its text (the runtime adds the system's reason).
pub(super) const FAILURE_TEXT: &str = "the swap file of a store could not be made, written or read back";

/// Lowers `store.alloc` with size operands `sizes` before `op`, replacing
/// its result; returns the values the store's other ops need (a `blocks`
/// store's block table, then its swap space). The caller erases `op`.
pub(super) fn lower<'c, 'a>(
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    sizes: &[Value<'c, 'a>],
) -> Result<Vec<mlir_sys::MlirValue>, String> {
    let b = Builder::before(op)?;
    let ty = info.ty;
    declare_zeros(module, MEMORY_STATS, 2)?;
    let result = op.result(0).map_err(|_| "store.alloc has one result".to_string())?;
    let mut extras = Vec::new();
    let store = if info.kind != StoreKind::Blocks {
        let store = b.alloc(ty, sizes)?;
        let bytes = store_bytes(&b, info, store)?;
        account(&b, statistics_type(&b)?, bytes, false)?;
        store
    } else {
        let (table, store) = reserve(module, &b, info, ty, sizes)?;
        extras.push(table.to_raw());
        if info.swap_space {
            extras.push(swap_space(module, &b)?.to_raw());
        }
        store
    };
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), store.to_raw()) };
    Ok(extras)
}

/// The bytes (`i64`) of a store other than `blocks`: its static slots
/// times every sized dimension, times the point.
pub(super) fn store_bytes<'c, 'a>(
    b: &Builder<'c, 'a>,
    info: &StoreInfo<'c>,
    store: Value<'c, '_>,
) -> Result<Value<'c, 'a>, String> {
    let slots = match info.kind {
        StoreKind::Ring => info.extent,
        StoreKind::Window => 2 * info.extent,
        _ => 1,
    };
    let mut size = b.index(slots * info.point_bytes())?;
    for d in (0..info.slot_rank).filter(|&d| info.kind == StoreKind::Full || d != info.along) {
        let dim = b.dim(store, d)?;
        size = b.arith("muli", size, dim)?;
    }
    b.index_cast(size, b.integer_type(64))
}

/// The reservation of a `blocks` store and its empty block table.
fn reserve<'c, 'a>(
    module: OperationRef<'c, '_>,
    b: &Builder<'c, 'a>,
    info: &StoreInfo<'c>,
    ty: Type<'c>,
    sizes: &[Value<'c, 'a>],
) -> Result<(Value<'c, 'a>, Value<'c, 'a>), String> {
    let (i32, i64, ptr) = (b.integer_type(32), b.integer_type(64), b.pointer_type());
    declare(module, "mmap", &[ptr, i64, i32, i32, i32, i64], &[ptr])?;
    let along = info.along;
    // The along dimension's bound, rounded up to whole blocks (at least one).
    let block = b.index(info.extent)?;
    let blocks = b.arith("ceildivui", sizes[along], block)?;
    let one = b.index(1)?;
    let one_block = b.arith("maxui", blocks, one)?;
    let capacity = b.arith("muli", one_block, block)?;
    let mut extents = Vec::new();
    for (d, &size) in sizes.iter().enumerate().take(info.slot_rank) {
        extents.push(b.index_cast(if d == along { capacity } else { size }, i64)?);
    }
    // Row-major strides (elements), from the point shape outwards.
    let point_strides = tempo_passes::program::row_major_strides(&info.point);
    let mut slot_strides = vec![b.i64(info.point_elements())?; info.slot_rank];
    for d in (0..info.slot_rank.saturating_sub(1)).rev() {
        slot_strides[d] = b.arith("muli", slot_strides[d + 1], extents[d + 1])?;
    }
    let total = b.arith("muli", slot_strides[0], extents[0])?;
    let element_bytes = b.i64(info.element_bytes)?;
    let all_bytes = b.arith("muli", total, element_bytes)?;
    let page = b.i64(4096)?;
    let length = b.arith("maxui", all_bytes, page)?;
    let null = b.value("llvm.mlir.zero", &[], ptr, &[])?;
    let no_access = b.i32(0)?;
    // MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE on Linux.
    let flags = b.i32(16418)?;
    let no_file = b.i32(-1)?;
    let zero = b.i64(0)?;
    let reserved = b.call("mmap", &[null, length, no_access, flags, no_file, zero], &[ptr])?[0];
    let rank = info.slot_rank + info.point.len();
    let (ptr, i64_type) = (b.pointer_type(), b.integer_type(64));
    let sizes_type = melior::dialect::llvm::r#type::array(i64_type, rank as u32);
    let descriptor_ty =
        melior::dialect::llvm::r#type::r#struct(b.context(), &[ptr, ptr, i64_type, sizes_type, sizes_type], false);
    let mut descriptor = b.value("llvm.mlir.undef", &[], descriptor_ty, &[])?;
    let mut fields: Vec<(Value, Vec<i64>)> = vec![(reserved, vec![0]), (reserved, vec![1]), (zero, vec![2])];
    for d in 0..info.slot_rank {
        fields.push((extents[d], vec![3, d as i64]));
        fields.push((slot_strides[d], vec![4, d as i64]));
    }
    for (k, (&extent, &stride)) in info.point.iter().zip(&point_strides).enumerate() {
        let position = (info.slot_rank + k) as i64;
        fields.push((b.i64(extent)?, vec![3, position]));
        fields.push((b.i64(stride)?, vec![4, position]));
    }
    for (value, position) in fields {
        descriptor = b.insert_value(descriptor, value, &position)?;
    }
    let store = b.value("builtin.unrealized_conversion_cast", &[descriptor], ty, &[])?;
    // One row [lo, hi) per outer slice, all empty.
    let mut outer = one;
    for &size in sizes.iter().take(along) {
        outer = b.arith("muli", outer, size)?;
    }
    let table_ty = super::table_type(b.context());
    let table = b.alloc(table_ty, &[outer])?;
    let start = b.index(0)?;
    b.for_sum(start, outer, start, &|b, row, unchanged| {
        let (zero, one) = (b.index(0)?, b.index(1)?);
        b.store(zero, table, &[row, zero])?;
        b.store(zero, table, &[row, one])?;
        Ok(unchanged)
    })?;
    Ok((table, store))
}

/// A temporary file for the store's swap space (its `FILE *`).
fn swap_space<'c, 'a>(module: OperationRef<'c, '_>, b: &Builder<'c, 'a>) -> Result<Value<'c, 'a>, String> {
    let ptr = b.pointer_type();
    declare(module, "tmpfile", &[], &[ptr])?;
    declare(module, "perror", &[ptr], &[])?;
    declare(module, "abort", &[], &[])?;
    declare_string(module, FAILURE, FAILURE_TEXT)?;
    let space = b.call("tmpfile", &[], &[ptr])?[0];
    let none = b.value("llvm.mlir.zero", &[], ptr, &[])?;
    let made = b.compare_pointers(Compare::Ne, space, none)?;
    b.if_else(made, &|_| Ok(()), Some(&|b| b.fail(FAILURE)))?;
    Ok(space)
}
