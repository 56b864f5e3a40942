//! The swap space of `blocks` stores (`store.alloc` with
//! `swap_space = "file"`) and the ops that use it: `store.spill`,
//! `store.reload` and `store.discard`.
//!
//! On the CPU the swap space is a temporary file (`tmpfile()`: created
//! unlinked in the system's temporary directory, gone when the store is
//! freed or the process ends), one per store. Point `p` lives at byte
//! `p * point bytes` of the file, so a spill in one loop and its reload in
//! another need no handle between them. A spill writes the points
//! (`pwrite`), then releases the blocks wholly inside the range that sit at
//! either end of the committed blocks (`madvise(MADV_DONTNEED)`,
//! `PROT_NONE`, the block table shrunk, the bytes counted as freed); a
//! reload commits the range's blocks again (as a write does) and reads the
//! points back (`pread`); a discard releases without writing. A failed
//! file operation ends the run with the system's reason (`Builder::fail`).
//!
//! Assumes one-dimensional `blocks` stores (one slice; the along dimension
//! is the only store dimension before the point shape).

use super::alloc::{FAILURE, FAILURE_TEXT};
use super::blocks::{Geometry, account, block_span, grow};
use super::{MEMORY_STATS, StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Compare, declare, declare_string, declare_zeros};
use melior::ir::{OperationRef, Value, operation::OperationLike};

/// Checks that `info` is a store these ops work on.
fn check(info: &StoreInfo<'_>, op: &str, operands: usize) -> Result<(), String> {
    if info.kind != StoreKind::Blocks || info.slot_rank != 1 {
        return Err(format!(
            "'{op}' works on one-dimensional 'blocks' stores; this is a '{}' store with {} point dimensions",
            info.kind, info.slot_rank
        ));
    }
    if operands != 3 {
        return Err(format!("'{op}' takes the store and the range [first, last) of points"));
    }
    Ok(())
}

/// Lowers `store.spill` (write and release), `store.discard` (release
/// only) or `store.reload` (commit and read back) of the points
/// `[first, end)` of a store: `values` are the op's operands (store,
/// first, end), then the block table and, for spill and reload, the swap
/// space. Built as typed IR before `op` ([`crate::ir_builder`]); the caller
/// erases `op`.
pub(super) fn lower<'c>(
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, '_>,
    info: &StoreInfo<'c>,
    name: &str,
    values: &[Value<'c, '_>],
) -> Result<(), String> {
    let uses_file = name != "store.discard";
    check(info, name, op.operand_count())?;
    if uses_file && !info.swap_space {
        return Err(format!("'{name}' needs a store allocated with swap_space = \"file\""));
    }
    let b = Builder::before(op)?;
    let (i64, i32, ptr) = (b.integer_type(64), b.integer_type(32), b.pointer_type());
    declare(module, "madvise", &[ptr, i64, i32], &[i32])?;
    declare(module, "mprotect", &[ptr, i64, i32], &[i32])?;
    declare(module, "fileno", &[ptr], &[i32])?;
    declare(module, "pwrite", &[i32, ptr, i64, i64], &[i64])?;
    declare(module, "perror", &[ptr], &[])?;
    declare(module, "abort", &[], &[])?;
    declare(module, "pread", &[i32, ptr, i64, i64], &[i64])?;
    declare_string(module, FAILURE, FAILURE_TEXT)?;
    declare_zeros(module, MEMORY_STATS, 2)?;
    let (store, first, end, table) = (values[0], values[1], values[2], values[3]);
    let geometry = Geometry::of(&b, info, store)?;
    if name == "store.reload" {
        // Commit blocks [first / B, ceil(end / B)) before reading back.
        let from = b.arith("divui", first, geometry.block_points)?;
        let to = b.arith("ceildivui", end, geometry.block_points)?;
        let wanted = b.compare(Compare::Ult, from, to)?;
        let slice = b.index(0)?;
        b.if_then(wanted, &|b| grow(b, &geometry, table, store, slice, from, to))?;
    }
    let base = b.base_pointer(store)?;
    let point_bytes = b.i64(info.point_bytes())?;
    let first_i = b.index_cast(first, i64)?;
    let end_i = b.index_cast(end, i64)?;
    let points = b.arith("subi", end_i, first_i)?;
    let bytes = b.arith("muli", points, point_bytes)?;
    let offset = b.arith("muli", first_i, point_bytes)?;
    let at = b.offset(base, offset)?;
    let no_points = b.i64(0)?;
    let some = b.compare(Compare::Sgt, points, no_points)?;
    if uses_file {
        let space = values[4];
        let call = if name == "store.reload" { "pread" } else { "pwrite" };
        b.if_then(some, &|b| {
            let fd = b.call("fileno", &[space], &[i32])?[0];
            let moved = b.call(call, &[fd, at, bytes, offset], &[i64])?[0];
            let all_moved = b.compare(Compare::Eq, moved, bytes)?;
            b.if_else(all_moved, &|_| Ok(()), Some(&|b| b.fail(FAILURE)))
        })?;
    }
    if name != "store.reload" {
        release(&b, &geometry, table, base, first, end)?;
    }
    Ok(())
}

/// Releases the blocks wholly inside `[first, end)` that are at either end
/// of the committed blocks `[lo, hi)` (row 0 of the table): their memory is
/// given back (`madvise(MADV_DONTNEED)`, `PROT_NONE`), their bytes counted
/// as freed, and the range shrinks.
fn release<'c>(
    b: &Builder<'c, '_>,
    geometry: &Geometry<'c, '_>,
    table: Value<'c, '_>,
    base: Value<'c, '_>,
    first: Value<'c, '_>,
    end: Value<'c, '_>,
) -> Result<(), String> {
    let index = b.index_type();
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let inside_from = b.arith("ceildivui", first, geometry.block_points)?;
    let inside_to = b.arith("divui", end, geometry.block_points)?;
    let lo_now = b.load(table, &[zero, zero], index)?;
    let hi_now = b.load(table, &[zero, one], index)?;
    let cut_from = b.arith("maxui", inside_from, lo_now)?;
    let cut_to = b.arith("minui", inside_to, hi_now)?;
    let nonempty = b.compare(Compare::Ult, cut_from, cut_to)?;
    let at_low = b.compare(Compare::Eq, cut_from, lo_now)?;
    let at_high = b.compare(Compare::Eq, cut_to, hi_now)?;
    let at_end = b.arith("ori", at_low, at_high)?;
    let cut = b.arith("andi", nonempty, at_end)?;
    b.if_then(cut, &|b| {
        let i32 = b.integer_type(32);
        let (at, bytes) = block_span(b, geometry.block_bytes, base, cut_from, cut_to)?;
        let dont_need = b.i32(4)?;
        b.call("madvise", &[at, bytes, dont_need], &[i32])?;
        let no_access = b.i32(0)?;
        b.call("mprotect", &[at, bytes, no_access], &[i32])?;
        account(b, geometry.stats, bytes, true)?;
        // Cut at the low end: lo moves up (to hi when all is cut); else hi down.
        let lo_next = b.select(at_low, cut_to, lo_now)?;
        let hi_next = b.select(at_low, hi_now, cut_from)?;
        b.store(lo_next, table, &[zero, zero])?;
        b.store(hi_next, table, &[zero, one])
    })
}
