//! Stores in `lower-temporal-to-loops`: each computed tensor that is not
//! an output lives in a store of the `store` dialect of the kind store
//! selection chose (`store.alloc` before the nest computing it,
//! `store.free` after the last nest reading it); a point is computed into
//! the view `store.write` gives and ended by `store.seal`, and read through
//! `store.read`. Inputs and outputs are the function's arguments, viewed
//! with `memref.subview`.

use super::views::{UNKNOWN, plain_type, stacked_type, view_type};
use super::{Built, Emitter};
use crate::ir_builder::{Builder, Extent};
use crate::schedule::{Schedule, Storage};
use melior::Context;
use melior::ir::{
    Attribute, Type, Value,
    attribute::{IntegerAttribute, StringAttribute},
    operation::OperationMutLike,
    r#type::IntegerType,
};
use tempo_dialects::store;
use tempo_passes::program::Program;

/// The dimensions of tensor `i`'s store before its point shape: per
/// domain position the store has (in domain order), its static size
/// (`None`: the dimension's bound, or a `blocks` store's reservation).
/// Inputs, outputs and `full` stores have every domain dimension.
pub(super) fn store_dims(program: &Program, schedule: &Schedule, i: usize) -> Vec<(usize, Option<usize>)> {
    let t = &program.tensors[i];
    let storage = schedule.storage[i];
    match (storage, storage.slicing()) {
        (Storage::Point, _) => Vec::new(),
        (_, Some(slicing)) => {
            slicing.kept(t.domain.len()).map(|k| (k, if k == slicing.along { storage.slots() } else { None })).collect()
        }
        _ => (0..t.domain.len()).map(|k| (k, None)).collect(),
    }
}

/// The memref type of tensor `i`'s store.
pub(super) fn store_type<'c>(context: &'c Context, program: &Program, schedule: &Schedule, i: usize) -> Type<'c> {
    let t = &program.tensors[i];
    let dims = store_dims(program, schedule, i);
    if dims.is_empty() {
        return plain_type(context, &t.point);
    }
    let lead: Vec<i64> = dims.iter().map(|(_, n)| n.map_or(UNKNOWN, |n| n as i64)).collect();
    stacked_type(context, &lead, &t.point)
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// The store of tensor `i` (or its argument).
    pub(super) fn store_of(&self, i: usize) -> Built<Value<'c, 'a>> {
        self.function.store[i]
            .ok_or_else(|| format!("compiler fault: '{}' has no store here", self.program.tensors[i].name))
    }

    /// The dimensions of tensor `i`'s store (see [`store_dims`]).
    pub(super) fn store_dims(&self, i: usize) -> Vec<(usize, Option<usize>)> {
        store_dims(self.program, self.schedule, i)
    }

    /// The coordinates of tensor `i`'s store ops: one per domain dimension,
    /// less those a sliced store drops.
    fn store_coords(&self, i: usize, coords: &[Value<'c, 'a>]) -> Vec<Value<'c, 'a>> {
        match self.schedule.storage[i].slicing() {
            Some(slicing) => slicing.kept(coords.len()).map(|k| coords[k]).collect(),
            None => coords.to_vec(),
        }
    }

    /// Whether tensor `i` lives in a store of the `store` dialect (not an
    /// input or output buffer).
    pub(super) fn in_store(&self, i: usize) -> bool {
        !matches!(self.schedule.storage[i], Storage::Input | Storage::Output)
    }

    /// `store.alloc` of tensor `i`'s store.
    pub(super) fn allocate_store(&mut self, i: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let context = self.context;
        let t = &self.program.tensors[i];
        let ty = store_type(context, self.program, self.schedule, i);
        let storage = self.schedule.storage[i];
        let (kind, extent) = match storage {
            Storage::Point => ("point", 1),
            Storage::Ring(k, _) => ("ring", k),
            Storage::Window(w, _) => ("window", w),
            Storage::Blocks(n, _) => ("blocks", n),
            _ => ("full", 0),
        };
        // Sizes of the store's dynamic dimensions, in order.
        let sizes: Vec<Value> = self
            .store_dims(i)
            .iter()
            .filter(|(_, n)| n.is_none())
            .map(|&(k, _)| self.function.bound_args[t.domain[k]])
            .collect();
        let i64_type: Type = IntegerType::new(context, 64).into();
        let integer = |n: i64| -> Attribute<'c> { IntegerAttribute::new(i64_type, n).into() };
        let mut op = store::AllocOp::build(
            context,
            b.location,
            &sizes,
            StringAttribute::new(context, kind).into(),
            integer(extent as i64),
            ty,
        );
        // Where the store runs along one of its dimensions (`along`).
        if let Some(slicing) = storage.slicing()
            && slicing.along_in_store() > 0
        {
            op.set_attribute("along", integer(slicing.along_in_store() as i64));
        }
        if self.schedule.swaps.contains_key(&i) {
            op.set_attribute("swap_space", StringAttribute::new(context, "file").into());
        }
        let op = b.insert_op(op);
        self.function.store[i] = Some(op.result(0).map_err(|e| format!("compiler fault: store.alloc: {e}"))?.into());
        Ok(())
    }

    /// `store.free` of tensor `i`'s store.
    pub(super) fn free_store(&mut self, i: usize, b: &Builder<'c, 'a>) -> Built<()> {
        b.insert_op(store::FreeOp::build(self.context, b.location, self.store_of(i)?));
        Ok(())
    }

    /// `store.seal` of tensor `i`'s point at `coords`.
    pub(super) fn seal(&mut self, i: usize, coords: &[Value<'c, 'a>], b: &Builder<'c, 'a>) -> Built<()> {
        let coords = self.store_coords(i, coords);
        b.insert_op(store::SealOp::build(self.context, b.location, self.store_of(i)?, &coords));
        Ok(())
    }

    /// A view of one point of tensor `i` at `coords` (indices, one per
    /// domain dimension in domain order): `store.write` when `writing` the
    /// point, `store.read` otherwise, or a subview of an input or output.
    pub(super) fn point_view(
        &mut self,
        i: usize,
        coords: &[Value<'c, 'a>],
        writing: bool,
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let tensor = &self.program.tensors[i];
        let store = self.store_of(i)?;
        let ty = view_type(self.context, &tensor.point);
        if tensor.domain.is_empty() {
            return b.cast(store, ty);
        }
        if self.in_store(i) {
            let coords = self.store_coords(i, coords);
            let op = if writing {
                store::WriteOp::build(self.context, b.location, store, &coords, ty)
            } else {
                store::ReadOp::build(self.context, b.location, store, &coords, ty)
            };
            let op = b.insert_op(op);
            return Ok(op.result(0).map_err(|e| format!("compiler fault: store.read: {e}"))?.into());
        }
        let rank = tensor.point.shape.len();
        let offsets: Vec<Extent> =
            coords.iter().map(|&c| Extent::Value(c)).chain((0..rank).map(|_| Extent::Static(0))).collect();
        let sizes: Vec<Extent> = coords
            .iter()
            .map(|_| Extent::Static(1))
            .chain(tensor.point.shape.iter().map(|&d| Extent::Static(d)))
            .collect();
        b.subview(store, &offsets, &sizes, ty)
    }
}
