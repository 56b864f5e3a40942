//! `temporal-dedup`: computes each value once.
//!
//! - Within a branch body, an op identical to an earlier one (same op,
//!   attributes, result type and operands, after merging) is replaced by it
//!   (common subexpressions; seeded random values are pure functions of
//!   seed, point and position, so equal ones merge too; external calls and
//!   collectives never do: each runs once per computed point).
//! - Computed tensors that provably hold the same values are merged: the
//!   coarsest partition of tensors such that tensors of one class have the
//!   same domain, point type and branches (conditions and bodies equal, with
//!   reads of tensors of one class counted equal) is found by partition
//!   refinement, which also merges duplicated recurrences that read
//!   themselves (the duplicated forward pass of RL training programs). Reads
//!   of a merged tensor read its representative instead, and the merged
//!   tensors are removed. An output is always a representative; two outputs
//!   are never merged (each has its own result), nor tensors with an
//!   external call or a collective.
//!
//! Exact: merged values are computed by the same ops on the same operands.
//! Assumes a program accepted by `temporal-verify`.

use crate::program::{NodeKind, Program};
use crate::rewrite::{compact_branch, live_nodes};
use crate::rewrite::{map_operands, retain_tensors};
use std::collections::HashMap;

/// The `temporal-dedup` pass.
pub struct TemporalDedup;

crate::option_free_rewrite!(
    TemporalDedup,
    "temporal-dedup",
    "Merge identical ops of a branch body and tensors that provably hold the same values",
    deduplicate
);

/// Merges identical ops and tensors until nothing more merges (merging
/// tensors makes reads of them identical); returns whether anything did.
pub fn deduplicate(program: &mut Program) -> bool {
    let mut changed = merge_common_subexpressions(program);
    while merge_duplicate_tensors(program) {
        changed = true;
        merge_common_subexpressions(program);
    }
    changed
}

/// Merges identical nodes within each branch; returns whether any merged.
pub fn merge_common_subexpressions(program: &mut Program) -> bool {
    let mut changed = false;
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            let mut first: HashMap<String, usize> = HashMap::new();
            let mut canonical: Vec<usize> = Vec::with_capacity(branch.nodes.len());
            for k in 0..branch.nodes.len() {
                let kind = map_operands(&branch.nodes[k].kind, |a| canonical[a]);
                branch.nodes[k].kind = kind;
                let node = &branch.nodes[k];
                // Ops with an effect (a call, a collective) each run.
                if node.kind.has_effect() {
                    canonical.push(k);
                    continue;
                }
                let key = format!("{} {:?}", kind_key(&node.kind), node.ty);
                canonical.push(*first.entry(key).or_insert(k));
            }
            branch.result = canonical[branch.result];
            if canonical.iter().enumerate().any(|(k, &c)| c != k) {
                let live = live_nodes(branch);
                compact_branch(branch, &live);
                changed = true;
            }
        }
    }
    changed
}

/// A node's kind as a key: its debug form, except that a constant's values
/// are written as runs of equal bit patterns (`bits x count`), exact and
/// short for splats, instead of each element formatted as a decimal float
/// (a splat over a large shape, formatted in every round, was a third of
/// the optimizer's time on the training programs).
fn kind_key(kind: &NodeKind) -> String {
    match kind {
        NodeKind::Constant { integers, .. } if !integers.is_empty() => format!("Constant {integers:?}"),
        NodeKind::Constant { values, .. } => {
            let mut key = String::from("Constant");
            let mut k = 0;
            while k < values.len() {
                let bits = values[k].to_bits();
                let run = values[k..].iter().take_while(|v| v.to_bits() == bits).count();
                key += &format!(" {bits:x}x{run}");
                k += run;
            }
            key
        }
        other => format!("{other:?}"),
    }
}

/// A tensor's definition with the tensors it reads left out (its shape:
/// domain, point type, branches and nodes) and the tensors it reads, in
/// order: two tensors hold the same values when their shapes are equal and
/// the tensors they read, position by position, do.
fn shape(program: &Program, t: usize) -> (String, Vec<usize>) {
    let tensor = &program.tensors[t];
    let mut text = format!("{:?} {:?} |", tensor.domain, tensor.point);
    let mut reads = Vec::new();
    for branch in &tensor.branches {
        text += &format!(" when {:?} result {} :", branch.when, branch.result);
        for node in &branch.nodes {
            let mut kind = node.kind.clone();
            if let Some(source) = crate::rewrite::source_mut(&mut kind) {
                reads.push(*source);
                *source = usize::MAX;
            }
            text += &format!(" {} {:?};", kind_key(&kind), node.ty);
        }
    }
    (text, reads)
}

/// Merges computed tensors that hold the same values; returns whether any
/// merged.
pub fn merge_duplicate_tensors(program: &mut Program) -> bool {
    let n = program.tensors.len();
    // Inputs and tensors with external calls or collectives stay alone
    // (class = own index + n keeps them distinct from every refined class).
    let alone = |t: usize| {
        program.tensors[t].is_input
            || program.tensors[t].branches.iter().flat_map(|b| &b.nodes).any(|x| x.kind.has_effect())
    };
    // Each tensor's shape, formatted once; the rounds refine classes by
    // the classes of the tensors read (partition refinement).
    let mut shapes: HashMap<String, usize> = HashMap::new();
    let mut local: Vec<(usize, Vec<usize>)> = Vec::with_capacity(n);
    for t in 0..n {
        if alone(t) {
            local.push((usize::MAX, Vec::new()));
            continue;
        }
        let (text, reads) = shape(program, t);
        let fresh = shapes.len();
        local.push((*shapes.entry(text).or_insert(fresh), reads));
    }
    let mut class: Vec<usize> = (0..n).map(|t| if alone(t) { n + t } else { 0 }).collect();
    loop {
        let mut ids: HashMap<(usize, usize, Vec<usize>), usize> = HashMap::new();
        let mut next: Vec<usize> = Vec::with_capacity(n);
        for t in 0..n {
            if alone(t) {
                next.push(n + t);
                continue;
            }
            let (id, reads) = &local[t];
            let key = (class[t], *id, reads.iter().map(|&r| class[r]).collect::<Vec<_>>());
            let fresh = ids.len();
            next.push(*ids.entry(key).or_insert(fresh));
        }
        let classes = |c: &[usize]| c.iter().collect::<std::collections::HashSet<_>>().len();
        let stable = classes(&next) == classes(&class);
        class = next;
        if stable {
            break;
        }
    }
    // Representatives: the output of a class if it has one, else its first
    // tensor; further outputs stay.
    let mut representative: Vec<usize> = (0..n).collect();
    let mut chosen: HashMap<usize, usize> = HashMap::new();
    for t in 0..n {
        if alone(t) {
            continue;
        }
        let is_output = program.outputs.contains(&t);
        match chosen.get(&class[t]).copied() {
            None => {
                chosen.insert(class[t], t);
            }
            Some(r) if is_output && !program.outputs.contains(&r) => {
                // The output represents the class; earlier members follow it.
                for x in 0..t {
                    if representative[x] == r || x == r {
                        representative[x] = t;
                    }
                }
                chosen.insert(class[t], t);
            }
            Some(r) if !is_output => representative[t] = r,
            Some(_) => {}
        }
    }
    if (0..n).all(|t| representative[t] == t) {
        return false;
    }
    for tensor in &mut program.tensors {
        for node in tensor.branches.iter_mut().flat_map(|b| &mut b.nodes) {
            if let Some(source) = crate::rewrite::source_mut(&mut node.kind) {
                *source = representative[*source];
            }
        }
    }
    for stop in &mut program.stops {
        stop.done = representative[stop.done];
    }
    let keep: Vec<bool> = (0..n).map(|t| representative[t] == t).collect();
    retain_tensors(program, &keep);
    true
}
