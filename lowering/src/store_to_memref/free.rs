//! `store.free` of every store kind, built as typed IR
//! ([`crate::ir_builder`]): the store's bytes are counted as freed and its
//! memory given back (`memref.dealloc`; a `blocks` store unmaps its
//! reservation and counts its committed blocks, row by row of its block
//! table; a swap space's file is closed).

use super::alloc::store_bytes;
use super::blocks::{Geometry, account, statistics_type};
use super::{MEMORY_STATS, StoreInfo, StoreKind};
use crate::ir_builder::{Builder, declare, declare_zeros};
use melior::ir::{OperationRef, Value};

/// Lowers `store.free` of `store` (with, for a `blocks` store, its block
/// `table` and swap `space`) before `op`; the caller erases `op`.
pub(super) fn lower<'c, 'a>(
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    values: &[Value<'c, 'a>],
) -> Result<(), String> {
    let b = Builder::before(op)?;
    let (index, i64, i32, ptr) = (b.index_type(), b.integer_type(64), b.integer_type(32), b.pointer_type());
    declare_zeros(module, MEMORY_STATS, 2)?;
    let stats = statistics_type(&b)?;
    let store = values[0];
    if info.kind != StoreKind::Blocks {
        let bytes = store_bytes(&b, info, store)?;
        account(&b, stats, bytes, true)?;
        b.op("memref.dealloc", &[store], &[], &[])?;
        return Ok(());
    }
    declare(module, "munmap", &[ptr, i64], &[i32])?;
    let table = values[1];
    if info.swap_space {
        declare(module, "fclose", &[ptr], &[i32])?;
        b.call("fclose", &[values[2]], &[i32])?;
    }
    let geometry = Geometry::of(&b, info, store)?;
    // The committed blocks of every outer slice.
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let committed = b.for_sum(zero, geometry.outer, zero, &|b, row, sum| {
        let lo = b.load(table, &[row, zero], index)?;
        let hi = b.load(table, &[row, one], index)?;
        let count = b.arith("subi", hi, lo)?;
        b.arith("addi", sum, count)
    })?;
    let committed = b.index_cast(committed, i64)?;
    let bytes = b.arith("muli", committed, geometry.block_bytes)?;
    account(&b, stats, bytes, true)?;
    let base = b.base_pointer(store)?;
    b.call("munmap", &[base, geometry.length], &[i32])?;
    b.op("memref.dealloc", &[table], &[], &[])?;
    Ok(())
}
