//! Destinations of a branch body's values: where a value is computed when
//! its only use is to be copied into a part of another one.
//!
//! A concatenation's operands are computed straight into their parts of
//! the concatenation's buffer (sub-views at their offsets along the axis),
//! and so, through a contiguous reshape, is the value a reshape reads: the
//! concatenation then copies only the operands that could not be placed
//! (reads, constants, views). Nested concatenations pass their parts on. The
//! cotangents `temporal-autodiff` packs side by side (every weight's
//! gradient of one step, flattened and concatenated) are then written by
//! their products where they end up, with no copy at all.
//!
//! Only values computed by this body, used once, of static shape and not
//! computed by a row group, a fused chain or a product's epilogue receive
//! a destination; only on the CPU with fusion on (the GPU's memory
//! placement follows buffers through fewer view ops).

use super::{Emitter, View, memref_layout, plain_type};
use std::collections::HashMap;
use std::fmt::Write;
use tempo_passes::program::Branch;
use tempo_passes::program::{Movement, NodeKind, PointType};

/// The planned destinations: node to the view it is computed into, and
/// which node each placed node's value is already part of.
pub(super) struct Destinations {
    pub(super) view: HashMap<usize, View>,
    pub(super) placed_in: Vec<Option<usize>>,
}

/// What the planner needs to know of the body's nodes.
pub(super) struct Candidates<'a> {
    pub(super) users: &'a [Vec<usize>],
    pub(super) member_of: &'a [Option<usize>],
    pub(super) inlined: &'a [bool],
    pub(super) has_epilogue: &'a [bool],
    /// The node the existing result-reshape rule already computes into the
    /// slot, if any.
    pub(super) slot_operand: Option<usize>,
}

impl Emitter<'_, '_> {
    /// Plans the destinations of `branch`'s values, emitting the views (and
    /// allocating the buffers of concatenations that are not the result).
    pub(super) fn plan_destinations(
        &mut self,
        branch: &Branch,
        slot: &str,
        c: &Candidates,
        indent: &str,
        out: &mut String,
    ) -> Destinations {
        let nodes = &branch.nodes;
        let mut d = Destinations { view: HashMap::new(), placed_in: vec![None; nodes.len()] };
        if !self.reshapes_are_views() {
            return d;
        }
        let static_shape = |k: usize| nodes[k].ty.shape.iter().all(|&s| s >= 0);
        let placeable = |k: usize| {
            let computed = !matches!(
                nodes[k].kind,
                NodeKind::Read { .. }
                    | NodeKind::ReadRange { .. }
                    | NodeKind::Constant { .. }
                    | NodeKind::Move(Movement::Permute(_) | Movement::Reshape, _)
                    | NodeKind::DynamicSlice(..)
            );
            computed
                && k != branch.result
                && c.users[k].len() == 1
                && static_shape(k)
                && c.member_of[k].is_none()
                && !c.inlined[k]
                && !c.has_epilogue[k]
                && c.slot_operand != Some(k)
        };
        for n in (0..nodes.len()).rev() {
            let NodeKind::Move(Movement::Concat(axis), operands) = &nodes[n].kind else { continue };
            if !static_shape(n) || c.member_of[n].is_some() || c.inlined[n] || operands[0] == operands[1] {
                continue;
            }
            // The concatenation's own buffer: its destination, the slot for
            // the result, or a buffer of its own made now.
            let target = match d.view.get(&n) {
                Some(view) => view.clone(),
                None if n == branch.result => View::fixed(slot.to_string(), &nodes[n].ty),
                // The value a result reshape reads: the slot seen with its
                // shape (as the body emits it).
                None if c.slot_operand == Some(n) => {
                    let result = &nodes[branch.result].ty;
                    let slot_view = View::fixed(slot.to_string(), result);
                    let Some(view) = self.reshape_view(&slot_view, result, &nodes[n].ty, indent, out) else { continue };
                    d.view.insert(n, view.clone());
                    view
                }
                None => {
                    if !operands.iter().any(|&x| placeable(x) || self.placeable_reshape(nodes, x, c, &placeable)) {
                        continue;
                    }
                    let view = self.static_buffer(&nodes[n].ty);
                    d.view.insert(n, view.clone());
                    view
                }
            };
            let mut offset = 0;
            for &x in operands.iter() {
                let part_ty = &nodes[x].ty;
                let at = offset;
                offset += part_ty.shape[*axis];
                if placeable(x) {
                    let part = self.static_part(&target, *axis, at, part_ty, indent, out);
                    d.view.insert(x, part);
                    d.placed_in[x] = Some(n);
                } else if self.placeable_reshape(nodes, x, c, &placeable) {
                    let NodeKind::Move(Movement::Reshape, inner) = &nodes[x].kind else { continue };
                    let a = inner[0];
                    let part = self.static_part(&target, *axis, at, part_ty, indent, out);
                    let Some(seen) = self.reshape_view(&part, part_ty, &nodes[a].ty, indent, out) else { continue };
                    d.view.insert(x, part);
                    d.view.insert(a, seen);
                    d.placed_in[x] = Some(n);
                    d.placed_in[a] = Some(x);
                }
            }
        }
        d
    }

    /// Whether `x` is a reshape, used once, of a placeable value (whose
    /// destination is then the reshape's part seen with its shape).
    fn placeable_reshape(
        &self,
        nodes: &[tempo_passes::program::Node],
        x: usize,
        c: &Candidates,
        placeable: &dyn Fn(usize) -> bool,
    ) -> bool {
        match &nodes[x].kind {
            NodeKind::Move(Movement::Reshape, inner) => {
                c.users[x].len() == 1
                    && c.member_of[x].is_none()
                    && nodes[x].ty.shape.iter().all(|&s| s > 0)
                    && placeable(inner[0])
                    && nodes[inner[0]].ty.shape.iter().all(|&s| s > 0)
            }
            _ => false,
        }
    }

    /// A buffer of static type `ty` allocated once (at the function's
    /// entry), seen as a strided view.
    fn static_buffer(&mut self, ty: &PointType) -> View {
        let buffer = self.fresh("buf");
        let _ = writeln!(self.entry, "    {buffer} = memref.alloc() : {}", plain_type(ty));
        let _ = writeln!(self.exit, "    memref.dealloc {buffer} : {}", plain_type(ty));
        let mut entry = String::new();
        let view = self.cast(&buffer, ty, "    ", &mut entry);
        self.entry += &entry;
        View::fixed(view, ty)
    }

    /// The part of `whole` from `offset` along `axis`, of type `part`: a
    /// sub-view with `whole`'s strides.
    fn static_part(
        &mut self,
        whole: &View,
        axis: usize,
        offset: i64,
        part: &PointType,
        indent: &str,
        out: &mut String,
    ) -> View {
        let (_, element, strides, _) = memref_layout(&whole.ty).expect("views are strided memrefs");
        let sizes: Vec<String> = part.shape.iter().map(i64::to_string).collect();
        let offsets: Vec<String> =
            (0..sizes.len()).map(|k| if k == axis { offset.to_string() } else { "0".to_string() }).collect();
        let ones: Vec<&str> = sizes.iter().map(|_| "1").collect();
        let ty = format!("memref<{}x{element}, strided<[{}], offset: ?>>", sizes.join("x"), strides.join(", "));
        let name = self.fresh("part");
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {}[{}] [{}] [{}] : {} to {ty}",
            whole.name,
            offsets.join(", "),
            sizes.join(", "),
            ones.join(", "),
            whole.ty
        );
        View { name, ty, sizes }
    }
}
