//! What each lowering asks of a branch's nodes before building anything
//! (the core the op kinds' lowerings share): which nodes are elementwise
//! and their operands, which are computed inside their user's loop, and
//! which are written into a buffer they are given.

use tempo_passes::program::{BinaryKind, ElementType, Movement, NodeKind, Predicate, ReduceKind, UnaryKind};

/// The kind of an elementwise node.
#[derive(Clone, Copy, Debug)]
pub(super) enum Elementwise {
    Unary(UnaryKind),
    Binary(BinaryKind),
    Compare(Predicate),
    Select,
    /// From this element type to the result's.
    Cast(ElementType),
}

/// The operands of an elementwise node (`None` for other kinds).
pub(super) fn operands_of(kind: &NodeKind) -> Option<Vec<usize>> {
    match kind {
        NodeKind::Unary(_, a) | NodeKind::Cast(a) => Some(vec![*a]),
        NodeKind::Binary(_, a, b) | NodeKind::Compare(_, a, b) => Some(vec![*a, *b]),
        NodeKind::Select(c, a, b) => Some(vec![*c, *a, *b]),
        _ => None,
    }
}

/// The elementwise nodes computed inside their only user's loop: used
/// once, by an elementwise node of the same type shape or by a sum, maximum
/// or mean, and not the branch's result.
pub(super) fn inlined_nodes(branch: &tempo_passes::program::Branch) -> Vec<bool> {
    let n = branch.nodes.len();
    let mut uses = vec![0usize; n];
    let mut user = vec![usize::MAX; n];
    for (k, node) in branch.nodes.iter().enumerate() {
        for a in tempo_passes::rewrite::operands(&node.kind) {
            uses[a] += 1;
            user[a] = k;
        }
    }
    (0..n)
        .map(|k| {
            let fusing_user = match &branch.nodes.get(user[k]).map(|u| &u.kind) {
                // Same shape: no broadcasting on the way to the user.
                Some(kind) if operands_of(kind).is_some() => branch.nodes[k].ty.shape == branch.nodes[user[k]].ty.shape,
                Some(NodeKind::Reduce(ReduceKind::Sum | ReduceKind::Max | ReduceKind::Mean, ..)) => true,
                _ => false,
            };
            k != branch.result && uses[k] == 1 && operands_of(&branch.nodes[k].kind).is_some() && fusing_user
        })
        .collect()
}

/// Whether a node's value is written by the body into a buffer it is
/// given (so that it can be computed into a destination: the slot, a part
/// of a concatenation), as opposed to a view of memory the body does not
/// write: reads of every kind (a read through data is a view of the point
/// it names; in a batch, reads and positions are gathered into buffers of
/// their own), constants, and the ops lowered as views (permutations,
/// reshapes and slices at point-dependent offsets). Destinations are
/// planned with this one rule, so a view can never be taken for a value
/// written where its user expects it.
pub(super) fn computed_into_target(kind: &NodeKind) -> bool {
    !matches!(
        kind,
        NodeKind::Read { .. }
            | NodeKind::ReadRange { .. }
            | NodeKind::ReadAt { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Position(_)
            | NodeKind::Move(Movement::Permute(_) | Movement::Reshape, _)
            | NodeKind::DynamicSlice(..)
    )
}
