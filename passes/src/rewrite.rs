//! Helpers for passes that transform the program model: the operands of a
//! node, renumbering them, removing nodes from a branch and tensors from a
//! program with every index kept consistent, and which nodes are live
//! (reach their branch's result, an external call or a collective).

use crate::program::{Branch, NodeKind, Program};

/// The nodes a node reads (indices into its branch), in operand order.
pub fn operands(kind: &NodeKind) -> Vec<usize> {
    match kind {
        NodeKind::Read { .. }
        | NodeKind::ReadRange { .. }
        | NodeKind::Random { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Position(_)
        | NodeKind::Bound(_)
        | NodeKind::Rank
        | NodeKind::WorldSize => Vec::new(),
        NodeKind::Reduce(_, a, _)
        | NodeKind::Cast(a)
        | NodeKind::Unary(_, a)
        | NodeKind::DynamicSlice(a, _)
        | NodeKind::AllReduce(_, a) => {
            vec![*a]
        }
        NodeKind::Compare(_, a, b) | NodeKind::Binary(_, a, b) | NodeKind::Matmul(a, b) | NodeKind::Gather(a, b) => {
            vec![*a, *b]
        }
        NodeKind::Select(c, a, b) => vec![*c, *a, *b],
        NodeKind::Move(_, list) | NodeKind::Einsum(_, list) => list.clone(),
        NodeKind::Call { args, .. } | NodeKind::ReadAt { data: args, .. } => args.clone(),
        NodeKind::Attention(_, list) => list.to_vec(),
        NodeKind::FlashAttention(_, list) => list.clone(),
    }
}

/// For each node of `branch`, the nodes that read it, in order, once per
/// operand (`x * x` lists its node twice under `x`): the length is the
/// number of uses.
pub fn users(branch: &crate::program::Branch) -> Vec<Vec<usize>> {
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); branch.nodes.len()];
    for (k, node) in branch.nodes.iter().enumerate() {
        for a in operands(&node.kind) {
            users[a].push(k);
        }
    }
    users
}

/// `kind` with every operand `a` replaced by `f(a)`.
pub fn map_operands(kind: &NodeKind, f: impl Fn(usize) -> usize) -> NodeKind {
    let mut kind = kind.clone();
    match &mut kind {
        NodeKind::Read { .. }
        | NodeKind::ReadRange { .. }
        | NodeKind::Random { .. }
        | NodeKind::Constant { .. }
        | NodeKind::Position(_)
        | NodeKind::Bound(_)
        | NodeKind::Rank
        | NodeKind::WorldSize => {}
        NodeKind::Reduce(_, a, _)
        | NodeKind::Cast(a)
        | NodeKind::Unary(_, a)
        | NodeKind::DynamicSlice(a, _)
        | NodeKind::AllReduce(_, a) => *a = f(*a),
        NodeKind::Compare(_, a, b) | NodeKind::Binary(_, a, b) | NodeKind::Matmul(a, b) | NodeKind::Gather(a, b) => {
            *a = f(*a);
            *b = f(*b);
        }
        NodeKind::Select(c, a, b) => {
            *c = f(*c);
            *a = f(*a);
            *b = f(*b);
        }
        NodeKind::Move(_, list) | NodeKind::Einsum(_, list) => list.iter_mut().for_each(|a| *a = f(*a)),
        NodeKind::Call { args, .. } | NodeKind::ReadAt { data: args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
        NodeKind::Attention(_, list) => list.iter_mut().for_each(|a| *a = f(*a)),
        NodeKind::FlashAttention(_, list) => list.iter_mut().for_each(|a| *a = f(*a)),
    }
    kind
}

/// The tensor a node reads points of, if it is a read, to change it.
pub fn source_mut(kind: &mut NodeKind) -> Option<&mut usize> {
    match kind {
        NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } | NodeKind::ReadAt { source, .. } => {
            Some(source)
        }
        _ => None,
    }
}

/// Whether an op cannot move to another tensor's body: its value depends
/// on where or when it runs (random values, external calls, positions,
/// collectives), or it reads more than a point (ranges, reads through
/// data, fused attention over a range).
pub fn stays_in_place(kind: &NodeKind) -> bool {
    matches!(
        kind,
        NodeKind::ReadRange { .. }
            | NodeKind::ReadAt { .. }
            | NodeKind::Random { .. }
            | NodeKind::Call { .. }
            | NodeKind::AllReduce(..)
            | NodeKind::Position(_)
            | NodeKind::Attention(..)
            | NodeKind::FlashAttention(..)
    )
}

/// Per tensor, whether it is defined at every point of its domain as far
/// as its branches show: an input, or a last branch without condition.
pub fn defined_everywhere(program: &crate::program::Program) -> Vec<bool> {
    program.tensors.iter().map(|t| t.is_input || t.branches.last().is_some_and(|b| b.when.is_universe())).collect()
}

/// The tensor a node reads points of, if it is a read.
pub fn source(kind: &NodeKind) -> Option<usize> {
    match kind {
        NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } | NodeKind::ReadAt { source, .. } => {
            Some(*source)
        }
        _ => None,
    }
}

/// Keeps the tensors with `keep[i]` (inputs are never removed by callers),
/// renumbering reads, outputs and call sites.
pub fn retain_tensors(program: &mut Program, keep: &[bool]) {
    let mut new_index = vec![usize::MAX; program.tensors.len()];
    let mut next = 0;
    for (i, &k) in keep.iter().enumerate() {
        if k {
            new_index[i] = next;
            next += 1;
        }
    }
    let old = std::mem::take(&mut program.tensors);
    program.tensors = old.into_iter().enumerate().filter(|(i, _)| keep[*i]).map(|(_, t)| t).collect();
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            for node in &mut branch.nodes {
                if let Some(source) = source_mut(&mut node.kind) {
                    *source = new_index[*source];
                }
            }
        }
    }
    program.outputs = program.outputs.iter().map(|&o| new_index[o]).collect();
    for stop in &mut program.stops {
        stop.done = new_index[stop.done];
    }
    program.call_sites.retain(|site| keep[site.tensor]);
    for site in &mut program.call_sites {
        site.tensor = new_index[site.tensor];
    }
    renumber_call_sites(program);
}

/// Numbers the call sites in program order again (after nodes or tensors
/// were removed).
pub fn renumber_call_sites(program: &mut Program) {
    let mut next = 0;
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            for node in &mut branch.nodes {
                if let NodeKind::Call { site, .. } = &mut node.kind {
                    *site = next;
                    next += 1;
                }
            }
        }
    }
}

/// Removes the nodes of `branch` for which `live` is false, renumbering the
/// others; returns whether any was removed.
pub fn compact_branch(branch: &mut Branch, live: &[bool]) -> bool {
    if live.iter().all(|&l| l) {
        return false;
    }
    let mut new_index = vec![usize::MAX; live.len()];
    let mut kept = Vec::new();
    for (k, node) in std::mem::take(&mut branch.nodes).into_iter().enumerate() {
        if live[k] {
            new_index[k] = kept.len();
            kept.push(node);
        }
    }
    for node in &mut kept {
        node.kind = map_operands(&node.kind, |a| new_index[a]);
    }
    branch.nodes = kept;
    branch.result = new_index[branch.result];
    true
}

/// The nodes of `branch` whose values reach its result or an op with an
/// effect ([`NodeKind::has_effect`]: an external call, a collective).
pub fn live_nodes(branch: &Branch) -> Vec<bool> {
    let mut live = vec![false; branch.nodes.len()];
    live[branch.result] = true;
    for (k, node) in branch.nodes.iter().enumerate() {
        if node.kind.has_effect() {
            live[k] = true;
        }
    }
    // Operands precede their users: one backward sweep closes the set.
    for k in (0..branch.nodes.len()).rev() {
        if live[k] {
            for a in operands(&branch.nodes[k].kind) {
                live[a] = true;
            }
        }
    }
    live
}

/// Removes the body ops whose values reach neither their branch's result
/// nor an external call or collective ([`live_nodes`]); returns whether
/// any was removed.
///
/// This is the evaluation rule of the language, not only an optimization:
/// such ops are never evaluated ("Evaluation is demand-driven" in
/// `dialects/README.md`), so a dead read needs no point and is never out of
/// bounds. The interpreter and the bound checks skip them; the lowering
/// removes them before emitting code at every optimization level.
pub fn remove_dead_nodes(program: &mut Program) -> bool {
    let mut changed = false;
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            let live = live_nodes(branch);
            changed |= compact_branch(branch, &live);
        }
    }
    changed
}
