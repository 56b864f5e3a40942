//! Which way the running sums of `temporal-autodiff` run.
//!
//! A tensor read at every point of a dimension it does not have (a weight
//! `W[i]` read at every step `t`) gets as adjoint the sum over `t` of its
//! readers' contributions `C[i, t]`, kept as a running sum `S[i, t]` and
//! read once. The sum can run either way:
//! - backward, `S[t] = C[t] + S[t+1]` read at `t = 0`: what
//!   back-propagation through time needs, where `C[t]` depends on
//!   cotangents that themselves run backward from the end (an RNN's
//!   `dh[t]` reads `dh[t+1]`), or on a whole future (Monte-Carlo returns
//!   `r[t:T]`); the sum then fuses into the backward loop computing `C`;
//! - forward, `S[t] = S[t-1] + C[t]` read at `t = T - 1`: possible in the
//!   forward loop itself when `C[t]` needs only a bounded stretch of the
//!   future (n-step returns `r[t : t+n]`: the scheduler computes `C` and
//!   the sum `n - 1` steps late, `Nest::lags`) or none at all. The
//!   activations then live for a window of steps instead of a whole
//!   episode: a policy learns while it generates.
//!
//! Both are built (`contribution`); this chooses forward exactly when the
//! contribution's dependence cone reaches a bounded distance ahead along
//! the summed dimension: a longest path over the cone's reads, each
//! weighted by how far ahead it reads along that dimension
//! ([`crate::shifts`]), with no read unbounded ahead and no cycle going
//! ahead. Tensors without the dimension count as ready before its loop
//! when they read none of its tensors in the present iteration of the
//! other loops (parameters `W[i]` read `g[i-1]`); reading one makes the
//! reach unbounded (a normalization over the whole episode). Anything the
//! analysis cannot bound keeps the backward sum, which is always right.
//!
//! The choice changes the order of a float sum; it is made here, before
//! the interpreter and the compiler see the program, so both add in the
//! same order.

use crate::affine::AffineMap;
use crate::program::{Branch, NodeKind, Program};
use crate::shifts::{Edge, read_edges};
use std::collections::{HashMap, HashSet};

/// A running sum built backward, with its forward form.
pub(super) struct RunningSum<'c> {
    /// The sum tensor `S` (its last dimension is the summed one).
    pub sum: usize,
    /// The contributions `C` it adds up.
    pub contribution: usize,
    /// The summed dimension.
    pub dim: usize,
    /// `S`'s branches running forward.
    pub forward: Vec<Branch<'c>>,
    /// The read of `S` at the last point of the dimension, for its reader.
    pub read_last: AffineMap,
}

/// Turns the sums whose contributions reach a bounded distance ahead into
/// forward ones (their readers read the last point).
pub(super) fn orient<'c>(program: &mut Program<'c>, sums: Vec<RunningSum<'c>>) {
    if sums.is_empty() {
        return;
    }
    let edges = read_edges(program);
    let mut from: HashMap<usize, Vec<&Edge>> = HashMap::new();
    for e in &edges {
        from.entry(e.reader).or_default().push(e);
    }
    let forward: Vec<bool> =
        sums.iter().map(|s| reach_ahead(program, &from, s.contribution, s.dim).is_some()).collect();
    for (sum, forward) in sums.into_iter().zip(forward) {
        if !forward {
            continue;
        }
        program.tensors[sum.sum].branches = sum.forward;
        for (r, tensor) in program.tensors.iter_mut().enumerate() {
            if r == sum.sum {
                continue;
            }
            for node in tensor.branches.iter_mut().flat_map(|b| &mut b.nodes) {
                if let NodeKind::Read { source, index } = &mut node.kind
                    && *source == sum.sum
                {
                    *index = sum.read_last.clone();
                }
            }
        }
    }
}

/// Whether read `e` is of another iteration of a loop other than `dim`
/// (strictly before or after the reader's point along a shared dimension).
fn other_iteration(e: &Edge, dim: usize) -> bool {
    e.shifts.as_ref().is_some_and(|shifts| {
        shifts.iter().any(|(&d, &(lo, hi))| d != dim && (hi.is_some_and(|h| h < 0) || lo.is_some_and(|l| l > 0)))
    })
}

/// How far ahead along `dim` computing `c` at a point needs points
/// computed (the longest path of read distances through its cone), or
/// `None` when that is not bounded.
fn reach_ahead(program: &Program, from: &HashMap<usize, Vec<&Edge>>, c: usize, dim: usize) -> Option<i64> {
    let has = |t: usize| program.tensors[t].domain.contains(&dim);
    // The other loops around `c` (an iteration `i` around the steps `t`).
    let others: Vec<usize> = program.tensors[c].domain.iter().copied().filter(|&d| d != dim).collect();
    let mut weighted: Vec<(usize, usize, i64)> = Vec::new();
    let mut seen = HashSet::from([c]);
    let mut stack = vec![c];
    let mut ready = HashMap::new();
    let mut apart = HashMap::new();
    while let Some(x) = stack.pop() {
        for e in from.get(&x).into_iter().flatten() {
            if other_iteration(e, dim) || others.iter().any(|&d| without(program, from, e.source, d, &mut apart)) {
                continue;
            }
            if !has(e.source) {
                if !ready_before(program, from, e.source, dim, &mut ready) {
                    return None;
                }
                continue;
            }
            let ahead = e.shifts.as_ref()?.get(&dim)?.1?;
            weighted.push((x, e.source, ahead));
            if seen.insert(e.source) {
                stack.push(e.source);
            }
        }
    }
    // Longest paths from `c` (Bellman-Ford); still relaxing after one
    // round per tensor means a cycle that goes ahead.
    let mut distance: HashMap<usize, i64> = HashMap::from([(c, 0)]);
    for _ in 0..=seen.len() {
        let mut changed = false;
        for &(x, y, w) in &weighted {
            let Some(&dx) = distance.get(&x) else { continue };
            if distance.get(&y).is_none_or(|&dy| dy < dx + w) {
                distance.insert(y, dx + w);
                changed = true;
            }
        }
        if !changed {
            return distance.values().copied().max();
        }
    }
    None
}

/// Whether tensor `t` (without dimension `dim`) is computed before the
/// loop over `dim` of the present iteration of the other loops: it reads
/// no tensor with `dim` there, directly or through others like it.
fn ready_before(
    program: &Program,
    from: &HashMap<usize, Vec<&Edge>>,
    t: usize,
    dim: usize,
    memo: &mut HashMap<usize, bool>,
) -> bool {
    if let Some(&known) = memo.get(&t) {
        return known;
    }
    // Assumed while visiting: a cycle at the present point is refused
    // elsewhere, so it cannot make the answer wrong.
    memo.insert(t, true);
    let ready = from.get(&t).into_iter().flatten().all(|e| {
        other_iteration(e, dim)
            || (!program.tensors[e.source].domain.contains(&dim) && ready_before(program, from, e.source, dim, memo))
    });
    memo.insert(t, ready);
    ready
}

/// Whether nothing tensor `t` depends on (itself included) has dimension
/// `d`: then `t` is computed in loops of its own, before any loop over
/// `d` that reads it (the discounts `gamma^k` over `t` read by returns
/// over `(i, t)`).
fn without(
    program: &Program,
    from: &HashMap<usize, Vec<&Edge>>,
    t: usize,
    d: usize,
    memo: &mut HashMap<(usize, usize), bool>,
) -> bool {
    if let Some(&known) = memo.get(&(t, d)) {
        return known;
    }
    memo.insert((t, d), true);
    let apart = !program.tensors[t].domain.contains(&d)
        && from.get(&t).into_iter().flatten().all(|e| without(program, from, e.source, d, memo));
    memo.insert((t, d), apart);
    apart
}
