//! `temporal-fuse-collectives`: all-reduces that do not depend on each
//! other travel in one message. A data-parallel training step all-reduces
//! its gradients (one fused buffer per loss, `temporal-autodiff`) and
//! often a few scalars beside them (the loss it reports, an episode
//! return); each collective costs at least one network latency per
//! iteration, so the ones that can wait for each other are merged: per
//! point, ONE `temporal.all_reduce` of their operands flattened and
//! concatenated, each tensor reading its slice back.
//!
//! A collective is a candidate when its tensor's value is nothing but the
//! reduction at every point: each branch's result is an all-reduce (one
//! reduction for all, of operands of the tensor's static type, used by
//! nothing else in the branch), and the last branch holds everywhere, so
//! every point makes exactly one all-reduce. Candidates of one domain, one
//! element type and one reduction are merged when neither one's operand
//! depends on the other's value at the same point or a later one: along
//! every path of reads between them, each dimension of the domain moves
//! by a known constant that is never positive, and at least one moves
//! back (the loss of iteration `i` reads the parameters of `i`, made from
//! the gradients of `i - 1`: mergeable with the gradients of `i`). A read
//! whose offset is unknown (a range holding the present point, data, a
//! tensor without that dimension) counts as the same point: no merge. So
//! the merged buffer never waits for itself, and both operands are
//! computed before the one collective. Sets are merged one at a time and
//! the program analysed again after each (a set's members read through
//! another merged buffer are then seen), and a message stays within
//! [`MAX_FUSED_BYTES`] (merging copies the operands into one buffer).
//!
//! For candidates `a1 .. an` merged: each `ak`'s branches move to a new
//! tensor `ak$operand` without their `temporal.all_reduce` (each value is
//! the operand), a new tensor `a1$fused` is the reduction of them all, and
//! each `ak` is its slice of it.
//!
//! Exact in one process (the reduction is the identity) and with two (the
//! sum of two values is the same in any order); with more, MPI libraries
//! may pick another reduction order for a longer message, the same on
//! every process. Every process fuses the same way (the program is the
//! same), so they still reach the same collectives in the same order.
//! Assumes a program accepted by `temporal-verify`, gradients expanded.

use crate::program::{Collective, DYNAMIC, ElementType, NodeKind, Program};
use crate::rewrite::compact_branch;
use crate::sdg::{BoxOffsets, box_offsets};
use crate::temporal_autodiff::{pack_all_reduce, push_tensor};
use std::collections::HashSet;

/// The `temporal-fuse-collectives` pass.
pub struct TemporalFuseCollectives;

crate::option_free_rewrite!(
    TemporalFuseCollectives,
    "temporal-fuse-collectives",
    "Merge all-reduces of one domain, element type and reduction that do not depend on each other into one",
    fuse_collectives
);

/// Where a read moves the point along one dimension of the domain, as far
/// as it is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Move {
    /// The same coordinate.
    Stay,
    /// Strictly earlier by a constant.
    Back,
    /// Strictly later by a constant.
    Ahead,
    /// Unknown, or a set holding the same coordinate.
    Any,
}

impl Move {
    fn of_offset(offset: Option<i64>) -> Move {
        match offset {
            Some(0) => Move::Stay,
            Some(c) if c < 0 => Move::Back,
            Some(_) => Move::Ahead,
            None => Move::Any,
        }
    }

    fn then(self, next: Move) -> Move {
        match (self, next) {
            (Move::Stay, m) | (m, Move::Stay) => m,
            (Move::Back, Move::Back) => Move::Back,
            (Move::Ahead, Move::Ahead) => Move::Ahead,
            _ => Move::Any,
        }
    }
}

/// How the read `node` (in a branch of tensor `reader`) moves the point
/// along each dimension of `domain`.
fn read_moves(program: &Program, reader: usize, node: &NodeKind, domain: &[usize]) -> Vec<Move> {
    let r = &program.tensors[reader];
    domain
        .iter()
        .map(|dim| {
            let (Some(source), Some(at)) = (crate::rewrite::source(node), r.domain.iter().position(|d| d == dim))
            else {
                return Move::Any;
            };
            let Some(k) = program.tensors[source].domain.iter().position(|d| d == dim) else {
                // The source has no such coordinate: its reads may be of any.
                return Move::Any;
            };
            match node {
                NodeKind::Read { index, .. } => Move::of_offset(index.results[k].offset_from_dim(at)),
                NodeKind::ReadRange { lower, upper, caps, .. } => {
                    // (Caps only shrink a range.)
                    match box_offsets(&lower[k], &upper[k], &caps[k], at) {
                        BoxOffsets::Point(offset) => Move::of_offset(offset),
                        BoxOffsets::Range(0, 1) => Move::Stay,
                        BoxOffsets::Range(_, high) if high <= 0 => Move::Back,
                        BoxOffsets::Range(low, _) if low >= 1 => Move::Ahead,
                        BoxOffsets::Range(..) => Move::Any,
                    }
                }
                _ => Move::Any,
            }
        })
        .collect()
}

/// A collective that may be merged: its tensor, the node of the
/// reduction in each of its branches, and what must match to merge.
struct Candidate {
    tensor: usize,
    nodes: Vec<usize>,
    key: (Vec<usize>, ElementType, Collective),
}

/// The tensors whose every branch's value is an all-reduce (of one
/// reduction, operands of one static type, used by nothing else in the
/// branch) and whose last branch holds at every point: each point makes
/// exactly one all-reduce, whichever branch defines it.
fn candidates(program: &Program) -> Vec<Candidate> {
    program
        .tensors
        .iter()
        .enumerate()
        .filter_map(|(t, tensor)| {
            if !tensor.branches.last()?.when.constraints.is_empty() {
                return None;
            }
            let mut key: Option<(ElementType, Collective)> = None;
            let mut nodes = Vec::new();
            for branch in &tensor.branches {
                let NodeKind::AllReduce(reduction, operand) = branch.nodes[branch.result].kind else { return None };
                let used = branch.nodes.iter().any(|n| crate::rewrite::operands(&n.kind).contains(&branch.result));
                let ty = &branch.nodes[operand].ty;
                if used || ty.shape.contains(&DYNAMIC) || ty != &tensor.point {
                    return None;
                }
                if key.replace((ty.element, reduction)).is_some_and(|k| k != (ty.element, reduction)) {
                    return None;
                }
                nodes.push(branch.result);
            }
            let (element, reduction) = key?;
            Some(Candidate { tensor: t, nodes, key: (tensor.domain.clone(), element, reduction) })
        })
        .collect()
}

/// Whether tensor `from` at a point `p` of `domain` may need the value of
/// a tensor of `targets` at `p` or later: a path of reads reaching one of
/// them where no dimension moved ahead or unknown and one moved back is
/// harmless; any other is not.
fn may_need(program: &Program, from: usize, targets: &[usize], domain: &[usize]) -> bool {
    let mut seen: HashSet<(usize, Vec<Move>)> = HashSet::new();
    let mut work = vec![(from, vec![Move::Stay; domain.len()])];
    while let Some((tensor, moves)) = work.pop() {
        if !seen.insert((tensor, moves.clone())) {
            continue;
        }
        for node in program.tensors[tensor].branches.iter().flat_map(|b| &b.nodes) {
            let Some(source) = crate::rewrite::source(&node.kind) else { continue };
            let next: Vec<Move> =
                moves.iter().zip(read_moves(program, tensor, &node.kind, domain)).map(|(a, b)| a.then(b)).collect();
            if targets.contains(&source) {
                let back = next.contains(&Move::Back) && next.iter().all(|m| matches!(m, Move::Back | Move::Stay));
                if !back {
                    return true;
                }
            }
            work.push((source, next));
        }
    }
    false
}

/// The most bytes a merged message may hold: merging copies every operand
/// into one buffer, which at about 10 GB/s costs 25 us for 256 KiB, the
/// order of the latency a message saves (5 us over RDMA to 50 us over
/// TCP, per step of the all-reduce). Larger buffers travel apart.
pub const MAX_FUSED_BYTES: usize = 256 << 10;

/// The bytes of a candidate's values at one point.
fn bytes(program: &Program, c: &Candidate) -> usize {
    let point = &program.tensors[c.tensor].point;
    point.num_elements() * point.element.byte_size()
}

/// Merges independent collectives, one set at a time (the first
/// candidate, in program order, with every later one of its key that is
/// independent of all the set's members both ways and keeps the message
/// within [`MAX_FUSED_BYTES`]), the program analysed again after each
/// merge: two sets merged on the same analysis could each be fine and
/// together make a cycle (one set's member reading the other's at the
/// same point, and back). Returns whether any was merged.
pub fn fuse_collectives(program: &mut Program) -> bool {
    let mut changed = false;
    while let Some(set) = next_set(program) {
        merge(program, &set);
        changed = true;
    }
    changed
}

/// The first set of two or more collectives to merge, if any.
fn next_set(program: &Program) -> Option<Vec<Candidate>> {
    let mut all = candidates(program);
    for s in 0..all.len() {
        let seed = &all[s];
        let mut members = vec![s];
        let mut total = bytes(program, seed);
        for (k, c) in all.iter().enumerate().skip(s + 1) {
            let tensors: Vec<usize> = members.iter().map(|&m| all[m].tensor).collect();
            let fits = c.key == seed.key
                && total + bytes(program, c) <= MAX_FUSED_BYTES
                && !may_need(program, c.tensor, &tensors, &c.key.0)
                && !tensors.iter().any(|&m| may_need(program, m, &[c.tensor], &c.key.0));
            if fits {
                members.push(k);
                total += bytes(program, c);
            }
        }
        if members.len() > 1 {
            // Taken out in reverse so the indices stay valid.
            let mut set: Vec<Candidate> = members.iter().rev().map(|&m| all.remove(m)).collect();
            set.reverse();
            return Some(set);
        }
    }
    None
}

/// Merges `set` into one all-reduce.
fn merge(program: &mut Program, set: &[Candidate]) {
    let (domain, _, reduction) = set[0].key.clone();
    let mut parts = Vec::new();
    for c in set {
        // The branches, each's value its operand: the reductions removed.
        let t = &program.tensors[c.tensor];
        let (name, point, location) = (format!("{}$operand", t.name), t.point.clone(), t.location);
        let mut branches = t.branches.clone();
        for (branch, &node) in branches.iter_mut().zip(&c.nodes) {
            let NodeKind::AllReduce(_, operand) = branch.nodes[node].kind else { unreachable!("a candidate") };
            branch.result = operand;
            let mut keep = vec![true; branch.nodes.len()];
            keep[node] = false;
            compact_branch(branch, &keep);
        }
        let operand_tensor = push_tensor(program, name, domain.clone(), point, location);
        program.tensors[operand_tensor].branches = branches;
        parts.push((c.tensor, operand_tensor, location));
    }
    let name = format!("{}$fused", program.tensors[set[0].tensor].name);
    let location = program.tensors[set[0].tensor].location;
    pack_all_reduce(program, &parts, &domain, reduction, &name, location);
}
