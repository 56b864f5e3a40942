//! `store.write` built as typed IR ([`crate::ir_builder`]): the view of
//! the point the value is computed into, at its slot (`p mod k` along a
//! ring or window); a `blocks` store first commits the block holding the
//! point in the point's outer slice ([`super::blocks::grow`]).

use super::blocks::{Geometry, grow};
use super::{StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Extent, declare};
use melior::ir::{OperationRef, Value, ValueLike};

/// Lowers `store.write` of `store` at `coords` (then, for a `blocks` store,
/// its block `table`) before `op`, replacing `op`'s result; the caller
/// erases `op`.
pub(super) fn lower<'c, 'a>(
    module: OperationRef<'c, '_>,
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    values: &[Value<'c, 'a>],
) -> Result<(), String> {
    let b = Builder::before(op)?;
    let result = op.result(0).map_err(|_| "store.write has one result".to_string())?;
    let view_ty = result.r#type();
    let store = values[0];
    let view = if info.slot_rank == 0 {
        b.cast(store, view_ty)?
    } else {
        let coords = &values[1..1 + info.slot_rank];
        if info.kind == StoreKind::Blocks {
            let (i32, i64, ptr) = (b.integer_type(32), b.integer_type(64), b.pointer_type());
            declare(module, "mprotect", &[ptr, i64, i32], &[i32])?;
            let table = *values.get(1 + info.slot_rank).ok_or("compiler fault: a blocks store without its table")?;
            let geometry = Geometry::of(&b, info, store)?;
            // The outer slice: the coordinates before `along`, row-major.
            let mut slice = b.index(0)?;
            for (d, &coord) in coords.iter().enumerate().take(info.along) {
                let dim = b.dim(store, d)?;
                let scaled = b.arith("muli", slice, dim)?;
                slice = b.arith("addi", scaled, coord)?;
            }
            let holding = b.arith("divui", coords[info.along], geometry.block_points)?;
            let one = b.index(1)?;
            let above = b.arith("addi", holding, one)?;
            grow(&b, &geometry, table, store, slice, holding, above)?;
        }
        let mut offsets = Vec::new();
        for (d, &coord) in coords.iter().enumerate() {
            offsets.push(Extent::Value(super::slot(&b, info, d, coord)?));
        }
        offsets.extend(info.point.iter().map(|_| Extent::Static(0)));
        let sizes: Vec<Extent> = (0..info.slot_rank)
            .map(|_| Extent::Static(1))
            .chain(info.point.iter().map(|&n| Extent::Static(n)))
            .collect();
        b.subview(store, &offsets, &sizes, view_ty)?
    };
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), view.to_raw()) };
    Ok(())
}
