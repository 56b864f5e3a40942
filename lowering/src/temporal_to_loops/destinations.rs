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

use super::views::{View, reshaped, static_part};
use super::{Built, Emitter};
use crate::ir_builder::Builder;
use melior::ir::Value;
use std::collections::HashMap;
use tempo_passes::program::Branch;
use tempo_passes::program::{Movement, NodeKind};

/// The planned destinations: node to the view it is computed into, and
/// which node each placed node's value is already part of.
pub(super) struct Destinations<'c, 'a> {
    pub(super) view: HashMap<usize, View<'c, 'a>>,
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

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Plans the destinations of `branch`'s values, building the views (and
    /// allocating the buffers of concatenations that are not the result).
    pub(super) fn plan_destinations(
        &mut self,
        branch: &Branch,
        slot: Value<'c, 'a>,
        c: &Candidates,
        b: &Builder<'c, 'a>,
    ) -> Built<Destinations<'c, 'a>> {
        let nodes = &branch.nodes;
        let mut d = Destinations { view: HashMap::new(), placed_in: vec![None; nodes.len()] };
        if !self.reshapes_are_views() {
            return Ok(d);
        }
        let static_shape = |k: usize| nodes[k].ty.shape.iter().all(|&s| s >= 0);
        let placeable = |k: usize| {
            super::node_kinds::computed_into_target(&nodes[k].kind)
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
                None if n == branch.result => View::fixed(slot, &nodes[n].ty),
                // The value a result reshape reads: the slot seen with its
                // shape (as the body emits it).
                None if c.slot_operand == Some(n) => {
                    let result = &nodes[branch.result].ty;
                    let slot_view = View::fixed(slot, result);
                    let Some(view) = reshaped(b, &slot_view, result, &nodes[n].ty)? else { continue };
                    d.view.insert(n, view.clone());
                    view
                }
                None => {
                    if !operands.iter().any(|&x| placeable(x) || self.placeable_reshape(nodes, x, c, &placeable)) {
                        continue;
                    }
                    let view = self.static_buffer(&nodes[n].ty, b)?;
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
                    let part = static_part(b, &target, *axis, at, part_ty)?;
                    d.view.insert(x, part);
                    d.placed_in[x] = Some(n);
                } else if self.placeable_reshape(nodes, x, c, &placeable) {
                    let NodeKind::Move(Movement::Reshape, inner) = &nodes[x].kind else { continue };
                    let a = inner[0];
                    let part = static_part(b, &target, *axis, at, part_ty)?;
                    let Some(seen) = reshaped(b, &part, part_ty, &nodes[a].ty)? else { continue };
                    d.view.insert(x, part);
                    d.view.insert(a, seen);
                    d.placed_in[x] = Some(n);
                    d.placed_in[a] = Some(x);
                }
            }
        }
        Ok(d)
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
}
