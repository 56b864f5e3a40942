//! `store.read` and `store.read_range` of every store kind, built as typed
//! IR ([`crate::ir_builder`]): a view of the point (or of the box of
//! points) where the store keeps it. A ring's or window's along coordinate
//! becomes its slot, `p mod k` (`arith.remui`: coordinates are within the
//! domain, never negative); a point store is the point itself.

use super::{StoreInfo, StoreKind};
use crate::ir_builder::{Builder, Extent};
use melior::ir::{OperationRef, TypeLike, Value, ValueLike};

/// The views of a read (`ranged`: `None` for `store.read`, one flag per
/// store dimension for `store.read_range`) of `store` at `bounds` (per
/// dimension its first coordinate, then for a ranged one the number of
/// points), replacing `op`'s result. The caller erases `op`.
pub(super) fn lower<'c, 'a>(
    op: OperationRef<'c, 'a>,
    info: &StoreInfo<'c>,
    ranged: Option<&[bool]>,
    store: Value<'c, 'a>,
    bounds: &[Value<'c, 'a>],
) -> Result<(), String> {
    let b = Builder::before(op)?;
    let result = op.result(0).map_err(|_| "a read has one result".to_string())?;
    let view_ty = result.r#type();
    let view = if info.kind == StoreKind::Point || info.slot_rank == 0 {
        if ranged.is_some_and(|r| r.iter().any(|&r| r)) || bounds.len() != ranged.map_or(bounds.len(), <[bool]>::len) {
            return Err("a range of a point store holds one point: every dimension is a point".into());
        }
        b.cast(store, view_ty)?
    } else {
        let flags: Vec<bool> = match ranged {
            Some(flags) => flags.to_vec(),
            None => vec![false; info.slot_rank],
        };
        if flags.len() != info.slot_rank {
            return Err(format!(
                "'ranged' has {} entries; the store has {} point dimensions",
                flags.len(),
                info.slot_rank
            ));
        }
        let expected = flags.iter().map(|&r| if r { 2 } else { 1 }).sum::<usize>();
        if bounds.len() != expected {
            return Err(format!("store.read_range takes {expected} bounds here, not {}", bounds.len()));
        }
        if info.kind == StoreKind::Ring && flags.get(info.along) == Some(&true) {
            return Err("a range along a ring's slots is not contiguous; such stores are windows".into());
        }
        let (mut offsets, mut sizes) = (Vec::new(), Vec::new());
        let mut next = bounds.iter();
        let mut axis = 0;
        for (k, &r) in flags.iter().enumerate() {
            let first = *next.next().expect("counted");
            offsets.push(Extent::Value(super::slot(&b, info, k, first)?));
            sizes.push(if r {
                let count = *next.next().expect("counted");
                // A length the view's type states (a range whose length
                // the program is specialized for) is used as the number.
                let stated = static_dim(view_ty, axis);
                axis += 1;
                stated.map_or(Extent::Value(count), Extent::Static)
            } else {
                Extent::Static(1)
            });
        }
        offsets.extend(info.point.iter().map(|_| Extent::Static(0)));
        sizes.extend(info.point.iter().map(|&n| Extent::Static(n)));
        b.subview(store, &offsets, &sizes, view_ty)?
    };
    unsafe { mlir_sys::mlirValueReplaceAllUsesOfWith(result.to_raw(), view.to_raw()) };
    Ok(())
}

/// The size of axis `axis` of a memref type, where it is static.
fn static_dim(ty: melior::ir::Type, axis: usize) -> Option<i64> {
    // SAFETY: `ty` is a live type of the module being lowered; the calls
    // only read it, and the rank is checked before the dimension is asked.
    unsafe {
        let raw = ty.to_raw();
        if !mlir_sys::mlirTypeIsAShaped(raw) || axis as i64 >= mlir_sys::mlirShapedTypeGetRank(raw) {
            return None;
        }
        (!mlir_sys::mlirShapedTypeIsDynamicDim(raw, axis as isize))
            .then(|| mlir_sys::mlirShapedTypeGetDimSize(raw, axis as isize))
    }
}
