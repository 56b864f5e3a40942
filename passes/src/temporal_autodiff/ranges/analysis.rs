//! How each node of a reader's branch relates to the range of the read
//! being differentiated (its *carry*): a row value, elementwise along the
//! range at some axis, collapsing it, or beyond what the element frame
//! follows (refused with the reason).

use crate::program::{Branch, DYNAMIC, Movement, NodeKind, ReduceKind, reshape_fits};

/// How a node of the reader's branch relates to the range of the read
/// being differentiated (the *pivot*).
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Carry {
    /// No range axis of the pivot's (a row value).
    Row,
    /// The range's axis at this position; elementwise along it.
    Axis(usize),
    /// Removes the range's axis (a row value computed from range values).
    Collapse,
    /// Has the range's axis in a way the element frame cannot follow.
    Unsupported(String),
}

/// The labels of a matmul's operands and result (`None`: broadcast batch
/// dimensions of different sizes, which an einsum cannot say).
fn matmul_labels(x: &[i64], y: &[i64]) -> Option<(Vec<char>, Vec<char>, Vec<char>)> {
    match (x.len(), y.len()) {
        (1, 2) => Some((vec!['k'], vec!['k', 'n'], vec!['n'])),
        (2, 1) => Some((vec!['m', 'k'], vec!['k'], vec!['m'])),
        (rx, ry) if rx >= 2 && ry >= 2 => {
            let batch = rx.max(ry) - 2;
            let letters: Vec<char> = (0..batch).map(|k| (b'A' + k as u8) as char).collect();
            let (bx, by) = (&x[..rx - 2], &y[..ry - 2]);
            for k in 0..bx.len().min(by.len()) {
                if bx[bx.len() - 1 - k] != by[by.len() - 1 - k] {
                    return None;
                }
            }
            let mut a = letters[batch - (rx - 2)..].to_vec();
            a.extend(['m', 'k']);
            let mut b = letters[batch - (ry - 2)..].to_vec();
            b.extend(['k', 'n']);
            let mut r = letters;
            r.extend(['m', 'n']);
            Some((a, b, r))
        }
        _ => None,
    }
}

/// The operands' labels and the result's of a contraction node.
/// A contraction's operands, their labels and the result's labels.
pub(super) type Labels = (Vec<usize>, Vec<Vec<char>>, Vec<char>);

pub(super) fn contraction_labels(branch: &Branch, n: usize) -> Option<Labels> {
    let ty = |k: usize| branch.nodes[k].ty.shape.clone();
    match &branch.nodes[n].kind {
        NodeKind::Matmul(a, b) => {
            let (la, lb, lr) = matmul_labels(&ty(*a), &ty(*b))?;
            Some((vec![*a, *b], vec![la, lb], lr))
        }
        NodeKind::Einsum(spec, ops) => Some((ops.clone(), spec.operands.clone(), spec.result.clone())),
        _ => None,
    }
}

/// Whether range read `n` reads the same range as the pivot `k` (its
/// elements are the pivot's, position by position).
pub(super) fn same_range(branch: &Branch, n: usize, k: usize) -> bool {
    let range = |n: usize| match &branch.nodes[n].kind {
        NodeKind::ReadRange { lower, upper, .. } => {
            let dims: Vec<usize> = (0..upper.len()).filter(|&j| !upper[j].results.is_empty()).collect();
            match dims[..] {
                [j] => Some((lower[j].clone(), upper[j].clone())),
                _ => None,
            }
        }
        _ => None,
    };
    range(n).is_some() && range(n) == range(k)
}

/// The carry of every node of `branch` for the pivot `k`.
pub(super) fn analyse(branch: &Branch, k: usize) -> Vec<Carry> {
    let nodes = &branch.nodes;
    let mut carry: Vec<Carry> = Vec::with_capacity(nodes.len());
    for (n, node) in nodes.iter().enumerate() {
        let ops = crate::rewrite::operands(&node.kind);
        if let Some(why) = ops.iter().find_map(|&a| match &carry[a] {
            Carry::Unsupported(why) => Some(why.clone()),
            _ => None,
        }) {
            carry.push(Carry::Unsupported(why));
            continue;
        }
        let axis = |a: usize| match carry[a] {
            Carry::Axis(p) => Some(p),
            _ => None,
        };
        if let NodeKind::ReadRange { .. } = node.kind {
            carry.push(if n == k || same_range(branch, n, k) { Carry::Axis(0) } else { Carry::Row });
            continue;
        }
        if !ops.iter().any(|&a| axis(a).is_some()) {
            carry.push(Carry::Row);
            continue;
        }
        let rank = node.ty.shape.len();
        let unsupported = |why: &str| Carry::Unsupported(why.to_string());
        let next = match &node.kind {
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => Carry::Axis(axis(*a).expect("carries")),
            NodeKind::Binary(..) | NodeKind::Compare(..) | NodeKind::Select(..) => {
                // Aligned from the right, as broadcasting aligns them.
                let mut at: Option<usize> = None;
                let mut fits = true;
                for &a in &ops {
                    let offset = rank - nodes[a].ty.shape.len();
                    if let Some(p) = axis(a) {
                        fits &= at.is_none_or(|q| q == p + offset);
                        at = Some(p + offset);
                    }
                }
                let at = at.expect("carries");
                for &a in &ops {
                    let offset = rank - nodes[a].ty.shape.len();
                    if axis(a).is_none() && at >= offset && nodes[a].ty.shape[at - offset] != 1 {
                        fits = false;
                    }
                }
                if fits { Carry::Axis(at) } else { unsupported("operands with the range at different axes") }
            }
            NodeKind::Reduce(kind, a, along) => {
                let p = axis(*a).expect("carries");
                match (*along == p, kind) {
                    (true, ReduceKind::CumSum) => unsupported("a running sum along the range"),
                    (true, _) => Carry::Collapse,
                    (false, ReduceKind::CumSum) => Carry::Axis(p),
                    (false, _) => Carry::Axis(if *along < p { p - 1 } else { p }),
                }
            }
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => match contraction_labels(branch, n) {
                None => unsupported("a batched product broadcasting its batch dimensions"),
                Some((ops, labels, result)) => {
                    let mut label: Option<char> = None;
                    let mut fits = true;
                    for (&a, l) in ops.iter().zip(&labels) {
                        if let Some(p) = axis(a) {
                            fits &= label.is_none_or(|c| c == l[p]);
                            label = Some(l[p]);
                        }
                    }
                    let label = label.expect("carries");
                    for (&a, l) in ops.iter().zip(&labels) {
                        fits &= axis(a).is_some() || !l.contains(&label);
                    }
                    match (fits, result.iter().position(|&c| c == label)) {
                        (false, _) => unsupported("a contraction of the range with another range"),
                        (true, Some(p)) => Carry::Axis(p),
                        (true, None) => Carry::Collapse,
                    }
                }
            },
            NodeKind::Move(movement, _) => {
                let a = ops[0];
                let p = axis(a).expect("a first operand carries");
                match movement {
                    Movement::Permute(permutation) => {
                        Carry::Axis(permutation.iter().position(|&x| x == p).expect("a permutation"))
                    }
                    Movement::Flip(along) if *along == p => unsupported("a flip along the range"),
                    Movement::Flip(_) => Carry::Axis(p),
                    Movement::Slice(offsets) => {
                        if offsets[p] != 0 || node.ty.shape[p] != DYNAMIC {
                            unsupported("a slice of the range")
                        } else {
                            Carry::Axis(p)
                        }
                    }
                    Movement::Reshape => {
                        let input = &nodes[a].ty.shape;
                        let dynamic = |s: &[i64]| s.iter().filter(|&&d| d == DYNAMIC).count();
                        match node.ty.shape.iter().position(|&d| d == DYNAMIC) {
                            Some(o) if dynamic(input) == 1 && reshape_fits(input, &node.ty.shape) => Carry::Axis(o),
                            _ => unsupported("a reshape moving the range"),
                        }
                    }
                    Movement::Expand => Carry::Axis(p + rank - nodes[a].ty.shape.len()),
                    Movement::Concat(along) => {
                        if *along != p && ops.iter().all(|&o| axis(o) == Some(p)) {
                            Carry::Axis(p)
                        } else {
                            unsupported("a concatenation with the range")
                        }
                    }
                    Movement::Arange => Carry::Row,
                }
            }
            NodeKind::Gather(table, indices) => match (axis(*table), axis(*indices)) {
                (None, Some(p)) => Carry::Axis(p),
                _ => unsupported("a gather from the range"),
            },
            NodeKind::DynamicSlice(..) => unsupported("a dynamic_slice of the range"),
            NodeKind::Attention(..) | NodeKind::FlashAttention(..) => unsupported("an attention inside an attention"),
            NodeKind::Call { .. } => unsupported("an external call on the range"),
            NodeKind::AllReduce(..) => unsupported("an all_reduce of values along the range"),
            NodeKind::ReadAt { .. } => unsupported("a read through data at coordinates from the range"),
            NodeKind::Read { .. }
            | NodeKind::ReadRange { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Position(_)
            | NodeKind::Bound(_)
            | NodeKind::Rank
            | NodeKind::WorldSize
            | NodeKind::Random { .. } => Carry::Row,
        };
        carry.push(next);
    }
    carry
}
