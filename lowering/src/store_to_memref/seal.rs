//! `store.seal` built as typed IR ([`crate::ir_builder`]): a window store
//! keeps each point twice, at slot `p mod w` and its mirror `p mod w + w`,
//! so that any `w` consecutive points are one contiguous view; sealing
//! copies the point just computed to its mirror. Other kinds have nothing
//! to do. On the CUDA target a copy of a single value runs in a loop of
//! one point (a kernel once mapped), so that no host code touches store
//! data.

use super::{StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Extent};
use melior::ir::{OperationRef, Value};

/// Lowers `store.seal` of `store` at `coords` before `op`; the caller
/// erases `op`.
pub(super) fn lower<'c, 'a>(
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    store: Value<'c, 'a>,
    coords: &[Value<'c, 'a>],
    gpu: bool,
) -> Result<(), String> {
    if info.kind != StoreKind::Window {
        return Ok(());
    }
    if coords.len() != info.slot_rank {
        return Err(format!("store.seal takes {} coordinates here, not {}", info.slot_rank, coords.len()));
    }
    let b = Builder::before(op)?;
    let view = info.points_view(b.context(), None);
    let slot = super::slot(&b, info, info.along, coords[info.along])?;
    let width = b.index(info.extent)?;
    let mirror = b.arith("addi", slot, width)?;
    let at = |along: Value<'c, 'a>| -> Vec<Extent<'c, 'a>> {
        let mut offsets: Vec<Extent> =
            coords.iter().enumerate().map(|(d, &c)| Extent::Value(if d == info.along { along } else { c })).collect();
        offsets.extend(info.point.iter().map(|_| Extent::Static(0)));
        offsets
    };
    let sizes: Vec<Extent> =
        (0..info.slot_rank).map(|_| Extent::Static(1)).chain(info.point.iter().map(|&n| Extent::Static(n))).collect();
    let from = b.subview(store, &at(slot), &sizes, view)?;
    let to = b.subview(store, &at(mirror), &sizes, view)?;
    if gpu && info.point.is_empty() { b.one_point_parallel(&|b| b.copy(from, to)) } else { b.copy(from, to) }
}
