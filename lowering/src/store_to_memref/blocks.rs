//! The typed IR pieces of `blocks` stores shared by their ops: the
//! geometry of the reservation, committing blocks of an outer slice (as a
//! write or a reload does) and counting live bytes.
//!
//! A `blocks` store reserves room for its bound (rounded up to whole
//! blocks) per outer slice (the store dimensions before `along`); the
//! dimensions after `along` are inside each block. Row `s` of the block
//! table holds the committed blocks `[lo, hi)` of outer slice `s`.

use super::{MEMORY_STATS, StoreInfo};
use crate::ir_builder::{Builder, Compare};
use melior::ir::{Type, Value};

/// The sizes of a `blocks` store's reservation.
pub(super) struct Geometry<'c, 'a> {
    /// Outer slices (index).
    pub outer: Value<'c, 'a>,
    pub block_points: Value<'c, 'a>,
    /// Bytes of one block of one outer slice (i64).
    pub block_bytes: Value<'c, 'a>,
    /// Bytes of all blocks of one outer slice (i64).
    pub slice_bytes: Value<'c, 'a>,
    /// Bytes reserved, at least a page (i64).
    pub length: Value<'c, 'a>,
    /// The type of the live/peak statistics global.
    pub stats: Type<'c>,
}

impl<'c, 'a> Geometry<'c, 'a> {
    /// The geometry of `store` (a `blocks` store described by `info`).
    pub fn of(b: &Builder<'c, 'a>, info: &StoreInfo<'c>, store: Value<'c, '_>) -> Result<Self, String> {
        let i64 = b.integer_type(64);
        let (mut outer, mut inner) = (b.index(1)?, b.index(info.point_bytes())?);
        for d in 0..info.slot_rank {
            let dim = b.dim(store, d)?;
            if d < info.along {
                outer = b.arith("muli", outer, dim)?;
            } else if d > info.along {
                inner = b.arith("muli", inner, dim)?;
            }
        }
        let block_points = b.index(info.extent)?;
        let block_bytes = b.arith("muli", inner, block_points)?;
        let along = b.dim(store, info.along)?;
        let slice_bytes = b.arith("muli", inner, along)?;
        let all_bytes = b.arith("muli", slice_bytes, outer)?;
        let all_bytes = b.index_cast(all_bytes, i64)?;
        let page = b.i64(4096)?;
        Ok(Geometry {
            outer,
            block_points,
            block_bytes: b.index_cast(block_bytes, i64)?,
            slice_bytes: b.index_cast(slice_bytes, i64)?,
            length: b.arith("maxui", all_bytes, page)?,
            stats: statistics_type(b)?,
        })
    }
}

/// The type of the live/peak statistics global, `memref<2xi64>`.
pub(super) fn statistics_type<'c>(b: &Builder<'c, '_>) -> Result<Type<'c>, String> {
    Ok(melior::ir::r#type::MemRefType::new(b.integer_type(64), &[2], None, None).into())
}

/// Adds `bytes` (`i64`) to the live store bytes (subtracts when
/// `freeing`), raising the peak.
pub(super) fn account<'c>(
    b: &Builder<'c, '_>,
    stats: Type<'c>,
    bytes: Value<'c, '_>,
    freeing: bool,
) -> Result<(), String> {
    let i64 = b.integer_type(64);
    let stats = b.global(MEMORY_STATS, stats)?;
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let live = b.load(stats, &[zero], i64)?;
    let updated = b.arith(if freeing { "subi" } else { "addi" }, live, bytes)?;
    b.store(updated, stats, &[zero])?;
    if !freeing {
        let peak = b.load(stats, &[one], i64)?;
        let raised = b.arith("maxsi", peak, updated)?;
        b.store(raised, stats, &[one])?;
    }
    Ok(())
}

/// The address and byte count (`i64`) of blocks `[from, to)` of the slice
/// at `base`.
pub(super) fn block_span<'c, 'a>(
    b: &Builder<'c, 'a>,
    block_bytes: Value<'c, '_>,
    base: Value<'c, '_>,
    from: Value<'c, '_>,
    to: Value<'c, '_>,
) -> Result<(Value<'c, 'a>, Value<'c, 'a>), String> {
    let i64 = b.integer_type(64);
    let first = b.index_cast(from, i64)?;
    let offset = b.arith("muli", first, block_bytes)?;
    let count = b.arith("subi", to, from)?;
    let count = b.index_cast(count, i64)?;
    let bytes = b.arith("muli", count, block_bytes)?;
    Ok((b.offset(base, offset)?, bytes))
}

/// Grows the committed blocks `[lo, hi)` of outer slice `slice` (a row of
/// `table`) to hold blocks `[from, to)` (an empty range starts at `from`),
/// committing (`mprotect` read/write) the blocks added below and above and
/// counting their bytes. Needs `mprotect` declared.
#[allow(clippy::too_many_arguments)]
pub(super) fn grow<'c>(
    b: &Builder<'c, '_>,
    geometry: &Geometry<'c, '_>,
    table: Value<'c, '_>,
    store: Value<'c, '_>,
    slice: Value<'c, '_>,
    from: Value<'c, '_>,
    to: Value<'c, '_>,
) -> Result<(), String> {
    let (index, i32, i64) = (b.index_type(), b.integer_type(32), b.integer_type(64));
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let lo_now = b.load(table, &[slice, zero], index)?;
    let hi_now = b.load(table, &[slice, one], index)?;
    let empty = b.compare(Compare::Eq, lo_now, hi_now)?;
    let lo = b.select(empty, from, lo_now)?;
    let hi = b.select(empty, from, hi_now)?;
    let new_lo = b.arith("minui", lo, from)?;
    let new_hi = b.arith("maxui", hi, to)?;
    let below = b.compare(Compare::Ult, new_lo, lo)?;
    let above = b.compare(Compare::Ugt, new_hi, hi)?;
    let grows = b.arith("ori", below, above)?;
    b.if_then(grows, &|b| {
        let base = b.base_pointer(store)?;
        let row = b.index_cast(slice, i64)?;
        let offset = b.arith("muli", row, geometry.slice_bytes)?;
        let slice_base = b.offset(base, offset)?;
        let read_write = b.i32(3)?;
        let (low_at, low_bytes) = block_span(b, geometry.block_bytes, slice_base, new_lo, lo)?;
        b.call("mprotect", &[low_at, low_bytes, read_write], &[i32])?;
        let (high_at, high_bytes) = block_span(b, geometry.block_bytes, slice_base, hi, new_hi)?;
        b.call("mprotect", &[high_at, high_bytes, read_write], &[i32])?;
        let grown = b.arith("addi", low_bytes, high_bytes)?;
        account(b, geometry.stats, grown, false)?;
        b.store(new_lo, table, &[slice, zero])?;
        b.store(new_hi, table, &[slice, one])
    })
}
