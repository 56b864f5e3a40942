//! `store.swap_out` and `store.swap_in` (points moved to an explicit host
//! buffer and back), built as typed IR ([`crate::ir_builder`]).
//! `swap_out` copies the points `[first, last)` of a one-dimensional
//! `full` or `blocks` store into a new host buffer (on the CUDA target
//! marked `tempo.swap`, which `gpu-place-memory` puts in host memory); a
//! `blocks` store also gives back the memory of the blocks wholly inside
//! the range (`madvise(MADV_DONTNEED)` and `PROT_NONE`, counted as freed),
//! which `swap_in` commits again before copying the points back and
//! freeing the buffer.

use super::blocks::{Geometry, account, block_span};
use super::{StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Compare, Extent, declare};
use melior::ir::r#type::MemRefType;
use melior::ir::{
    Attribute, OperationRef, Type, Value, ValueLike, attribute::DenseI32ArrayAttribute, operation::OperationLike,
};

/// Lowers `store.swap_out` (`out`) or `store.swap_in` before `op`
/// (`values`: the op's operands, then a `blocks` store's table); the
/// caller erases `op`.
pub(super) fn lower<'c, 'a>(
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    values: &[Value<'c, 'a>],
    out: bool,
    gpu: bool,
) -> Result<(), String> {
    if info.kind != StoreKind::Full && info.kind != StoreKind::Blocks || info.slot_rank != 1 {
        return Err(format!(
            "only one-dimensional 'full' and 'blocks' stores are swapped; a '{}' store holds a few points",
            info.kind
        ));
    }
    let ranges = if out { 1 } else { 2 };
    if op.operand_count() != ranges + 2 {
        return Err("a swap takes the range [first, last) of points".into());
    }
    let b = Builder::before(op)?;
    let host_dims: Vec<i64> = std::iter::once(i64::MIN).chain(info.point.iter().copied()).collect();
    let host_ty: Type = MemRefType::new(info.element, &host_dims, None, None).into();
    if out && op.result(0).map(|r| r.r#type()).ok() != Some(host_ty) {
        return Err(format!("store.swap_out returns a {host_ty}"));
    }
    let strided = info.points_view(b.context(), Some(i64::MIN));
    let store = values[0];
    let (first, last) = if out { (values[1], values[2]) } else { (values[2], values[3]) };
    let count = b.arith("subi", last, first)?;
    let offsets: Vec<Extent> =
        std::iter::once(Extent::Value(first)).chain(info.point.iter().map(|_| Extent::Static(0))).collect();
    let sizes: Vec<Extent> =
        std::iter::once(Extent::Value(count)).chain(info.point.iter().map(|&n| Extent::Static(n))).collect();
    let points = b.subview(store, &offsets, &sizes, strided)?;
    let blocks = info.kind == StoreKind::Blocks;
    // The blocks wholly inside the range, [ceil(first / B), floor(last / B)):
    // released (`out`) or committed again.
    let table_at = if out { 3 } else { 4 };
    let release = |protection: i64, advise: bool, freeing: bool| -> Result<(), String> {
        let (i32, i64, ptr) = (b.integer_type(32), b.integer_type(64), b.pointer_type());
        declare(module, "mprotect", &[ptr, i64, i32], &[i32])?;
        declare(module, "madvise", &[ptr, i64, i32], &[i32])?;
        let _ = values.get(table_at).ok_or("compiler fault: a blocks store without its table")?;
        let geometry = Geometry::of(&b, info, store)?;
        let from = b.arith("ceildivui", first, geometry.block_points)?;
        let to = b.arith("divui", last, geometry.block_points)?;
        let any = b.compare(Compare::Ult, from, to)?;
        b.if_then(any, &|b| {
            let base = b.base_pointer(store)?;
            let (at, bytes) = block_span(b, geometry.block_bytes, base, from, to)?;
            if advise {
                let dont_need = b.i32(4)?;
                b.call("madvise", &[at, bytes, dont_need], &[i32])?;
            }
            let protection = b.i32(protection)?;
            b.call("mprotect", &[at, bytes, protection], &[i32])?;
            account(b, geometry.stats, bytes, freeing)
        })
    };
    if out {
        let segments = DenseI32ArrayAttribute::new(b.context(), &[1, 0]).into();
        let mut attributes = vec![("operandSegmentSizes", segments)];
        if gpu {
            attributes.push(("tempo.swap", Attribute::unit(b.context())));
        }
        let host = b.value("memref.alloc", &[count], host_ty, &attributes)?;
        b.copy(points, host)?;
        if blocks {
            release(0, true, true)?;
        }
        let result = op.result(0).map_err(|_| "store.swap_out has one result".to_string())?;
        unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), host.to_raw()) };
    } else {
        if blocks {
            release(3, false, false)?;
        }
        let host = values[1];
        b.copy(host, points)?;
        b.op("memref.dealloc", &[host], &[], &[])?;
    }
    Ok(())
}
