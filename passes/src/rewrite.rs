//! Helpers for passes that transform the program model: the operands of a
//! node, renumbering them, removing nodes from a branch and tensors from a
//! program with every index kept consistent.

use crate::program::{NodeKind, Program};

/// The nodes a node reads (indices into its branch), in operand order.
pub fn operands(kind: &NodeKind) -> Vec<usize> {
    match kind {
        NodeKind::Read { .. } | NodeKind::ReadRange { .. } | NodeKind::Random { .. } | NodeKind::Constant { .. } => {
            Vec::new()
        }
        NodeKind::Reduce(_, a, _) | NodeKind::Cast(a) | NodeKind::Unary(_, a) | NodeKind::DynamicSlice(a, _) => {
            vec![*a]
        }
        NodeKind::Compare(_, a, b) | NodeKind::Binary(_, a, b) | NodeKind::Matmul(a, b) | NodeKind::Gather(a, b) => {
            vec![*a, *b]
        }
        NodeKind::Select(c, a, b) => vec![*c, *a, *b],
        NodeKind::Move(_, list) | NodeKind::Einsum(_, list) => list.clone(),
        NodeKind::Call { args, .. } => args.clone(),
        NodeKind::Attention(_, list) => list.to_vec(),
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
        NodeKind::Read { .. } | NodeKind::ReadRange { .. } | NodeKind::Random { .. } | NodeKind::Constant { .. } => {}
        NodeKind::Reduce(_, a, _) | NodeKind::Cast(a) | NodeKind::Unary(_, a) | NodeKind::DynamicSlice(a, _) => {
            *a = f(*a)
        }
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
        NodeKind::Call { args, .. } => args.iter_mut().for_each(|a| *a = f(*a)),
        NodeKind::Attention(_, list) => list.iter_mut().for_each(|a| *a = f(*a)),
    }
    kind
}

/// The tensor a node reads points of, if it is a read.
pub fn source(kind: &NodeKind) -> Option<usize> {
    match kind {
        NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } => Some(*source),
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
                match &mut node.kind {
                    NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } => *source = new_index[*source],
                    _ => {}
                }
            }
        }
    }
    program.outputs = program.outputs.iter().map(|&o| new_index[o]).collect();
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
