//! Scratch buffers shared between the values of branch bodies (CPU).
//!
//! A value a body computes that is neither its result nor placed in a
//! destination gets a buffer of its static type, allocated once at the
//! function's entry. Each value used to have one of its own for the whole
//! run, so a training step held every temporary of every body at once: a
//! GPT block's attention backward, vectorized over `T` steps, has about 40
//! values of `[B * heads, T, T]` (17 MiB each at `T = 256`), and the whole
//! step over a GiB of scratch memory, each buffer touched once per step.
//!
//! Here the buffers are a pool, by type: a value takes a free buffer of
//! its type (a new one is allocated at entry only when none is free) and
//! gives it back once the body has emitted the last code that reads or
//! writes it ([`lifetimes`]), so later values of the same body, and the
//! values of every later body, reuse it. A body's code runs in the order
//! it is emitted (its nests are straight-line code within a step), and a
//! temporary is never read outside its body, so a buffer given back is
//! never read again before its next owner writes it. The pool's size is
//! the most values of each type live at once in one body; reused buffers
//! also stay in cache from one value to the next.
//!
//! Not pooled: the GPU target's buffers (kept as they were), buffers of
//! dynamic size, destinations planned for concatenations, the slot.

use super::Emitter;
use super::views::View;
use crate::ir_builder::Builder;
use std::collections::HashMap;
use tempo_passes::program::{Branch, Movement, NodeKind, PointType};

/// A buffer of the pool: its point type, its view, and whether a value
/// holds it now.
pub(super) struct Pooled<'c, 'a> {
    ty: PointType,
    view: View<'c, 'a>,
    busy: bool,
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// A free buffer of static type `ty` from the pool (one allocated at
    /// entry when none is free), marked taken: the view and its number in
    /// the pool.
    pub(super) fn take_scratch(
        &mut self,
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Result<(View<'c, 'a>, usize), String> {
        if let Some(k) = self.function.scratch.iter().position(|p| !p.busy && p.ty == *ty) {
            self.function.scratch[k].busy = true;
            return Ok((self.function.scratch[k].view.clone(), k));
        }
        let view = self.static_buffer(ty, b)?;
        self.function.scratch.push(Pooled { ty: ty.clone(), view: view.clone(), busy: true });
        Ok((view, self.function.scratch.len() - 1))
    }

    /// Gives buffer `k` back to the pool.
    pub(super) fn give_back_scratch(&mut self, k: usize) {
        if let Some(p) = self.function.scratch.get_mut(k) {
            p.busy = false;
        }
    }
}

/// For each node of `branch`, the last node position at whose emission
/// code may still read or write the buffer its value is in (positions are
/// node numbers: the body emits node `k`'s code while at node `k`), or
/// `usize::MAX` where the buffer must live to the body's end (the
/// result's, and every value it may be a view of).
///
/// `at` is the position at which each node's code runs (the branch
/// body's fusion decides it: an elementwise node inlined into its user
/// runs at its user's, a member of a row group at the group's last node,
/// a product with an epilogue at its chain's root). A value's buffer is live from its node's position to the last position
/// of a node reading it. A movement or a dynamic slice may be a view of
/// its operand's buffer (a transposition, a reshape of a contiguous value,
/// a subview), so values linked by them share the latest position of
/// them all.
pub(super) fn lifetimes(branch: &Branch, at: &[usize]) -> Vec<usize> {
    let nodes = &branch.nodes;
    let n = nodes.len();
    // Values that may share a buffer (union-find).
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for (k, node) in nodes.iter().enumerate() {
        let views = match &node.kind {
            NodeKind::Move(Movement::Concat(_), _) => false,
            NodeKind::Move(..) | NodeKind::DynamicSlice(..) => true,
            _ => false,
        };
        if views {
            for a in tempo_passes::rewrite::operands(&node.kind) {
                let (x, y) = (find(&mut parent, k), find(&mut parent, a));
                parent[x] = y;
            }
        }
    }
    let mut last = at.to_vec();
    for (k, node) in nodes.iter().enumerate() {
        for a in tempo_passes::rewrite::operands(&node.kind) {
            last[a] = last[a].max(at[k]);
        }
    }
    let mut latest: HashMap<usize, usize> = HashMap::new();
    for (k, &l) in last.iter().enumerate() {
        let r = find(&mut parent, k);
        let e = latest.entry(r).or_insert(l);
        *e = (*e).max(l);
    }
    let result = find(&mut parent, branch.result);
    (0..n)
        .map(|k| {
            let r = find(&mut parent, k);
            if r == result { usize::MAX } else { latest[&r] }
        })
        .collect()
}
