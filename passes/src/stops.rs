//! Data-dependent stops (`temporal.stop`): the rules that give them a
//! meaning, checked by `temporal-verify`.
//!
//! A stop ends dimension `d` at `L = 1 + min{t : done[t]}` (the bound `T`
//! when `done` never holds), and the program means what it means with
//! bound `L`. For that to be well defined, `done[t]` must not depend on
//! `L`: `done` and every tensor it reads, directly or not (its *cone*),
//! - do not use `d`'s bound (no `T` in their conditions, coordinates,
//!   ranges, slices, and no `temporal.bound` of `d`), so that their values
//!   are the same under `T` and under `L`;
//! - read along `d` only the past or the present (`x[t]`, `x[t-1]`,
//!   `x[0:t+1]`; not `x[t+1]`, and not through data), so that finding `L`
//!   needs no point after it;
//! - read tensors over `d` only from tensors over `d`.
//!
//! Then `done[0], done[1], ...` can be computed in order until the first
//! that holds, and everything else with bound `L`: the interpreter does
//! exactly that, and the compiled code stops the loop that computes `done`
//! there (points after it are not computed) and runs everything after it
//! with `L` as the bound.
//!
//! A *ragged* stop has `done` over batch dimensions `b` besides `d`
//! (`done[b, t]`): each point `b` has its own length
//! `L(b) = 1 + min{t : done[b, t]}`, and a tensor over every batch
//! dimension has, at `b`, the points `t < L(b)` along `d` and sees `L(b)`
//! as `d`'s bound. So that each `b` has one length (besides the rules
//! above, for `done`'s cone):
//! - computed tensors over `d` are over every batch dimension;
//! - a read of a computed tensor over `d` is at the reader's own point
//!   along every batch dimension (not through data);
//! - only tensors over every batch dimension use `d`'s bound;
//! - a batch dimension is not stopped itself.
//!
//! And `done`'s cone may use the lengths of earlier points: a tensor of it
//! over every batch dimension may use `d`'s bound (and read tensors over
//! `d` at it) when every path of reads from `done` to it moves strictly
//! back along one batch dimension and stays put along the others
//! ([`known_lengths`]), so that `done[b, ..]` needs only lengths of points
//! before `b`, found first.

use crate::diagnostics::PassDiagnostic;
use crate::program::{NodeKind, Program};
use crate::shifts::{Edge, read_edges};
use melior::ir::Location;

/// The tensors `done` reads, directly or not, and itself.
pub fn cone(program: &Program, done: usize) -> Vec<bool> {
    let mut inside = vec![false; program.tensors.len()];
    let mut work = vec![done];
    while let Some(t) = work.pop() {
        if std::mem::replace(&mut inside[t], true) {
            continue;
        }
        for node in program.tensors[t].branches.iter().flat_map(|b| &b.nodes) {
            if let Some(s) = crate::rewrite::source(&node.kind) {
                work.push(s);
            }
        }
    }
    inside
}

/// Checks every stop of `program` (see the module's doc).
pub fn check_stops<'c>(program: &Program<'c>) -> Result<(), PassDiagnostic<'c>> {
    for stop in &program.stops {
        if stop.is_ragged(program) {
            check_ragged(program, stop)?;
        }
        let d = stop.dim;
        let dim = &program.dims[d];
        let inside = cone(program, stop.done);
        let done = &program.tensors[stop.done].name;
        let why = format!(
            "'{done}' decides where '{}' stops, so what it is computed from must not depend on where it stops",
            dim.name
        );
        // A ragged stop's lengths may be used where only earlier batch
        // points' lengths are needed (see `known_lengths`).
        let known = if stop.is_ragged(program) { known_lengths(program, stop, &inside) } else { Vec::new() };
        let past = |t: usize| known.get(t).copied().unwrap_or(false);
        for (_, tensor) in program.tensors.iter().enumerate().filter(|(t, _)| inside[*t] && !past(*t)) {
            for branch in &tensor.branches {
                if branch.when.constraints.iter().any(|c| c.expr.uses_symbol(d)) {
                    return Err(PassDiagnostic::new(
                        branch.location,
                        format!("this condition of '{}' uses the bound {}: {why}", tensor.name, dim.bound),
                    ));
                }
                for node in &branch.nodes {
                    let maps: Vec<&crate::affine::AffineMap> = match &node.kind {
                        NodeKind::Read { index, .. } | NodeKind::ReadAt { index, .. } => vec![index],
                        NodeKind::ReadRange { lower, upper, caps, .. } => {
                            lower.iter().chain(upper).chain(caps).collect()
                        }
                        NodeKind::DynamicSlice(_, offsets) => vec![offsets],
                        _ => Vec::new(),
                    };
                    let uses_bound = maps.iter().any(|m| m.results.iter().any(|e| e.uses_symbol(d)))
                        || matches!(node.kind, NodeKind::Bound(b) if b == d);
                    if uses_bound {
                        return Err(PassDiagnostic::new(
                            node.location,
                            format!("this op of '{}' uses the bound {}: {why}", tensor.name, dim.bound),
                        ));
                    }
                    if let Some(s) = crate::rewrite::source(&node.kind)
                        && program.tensors[s].domain.contains(&d)
                    {
                        if !tensor.domain.contains(&d) {
                            return Err(PassDiagnostic::new(
                                node.location,
                                format!(
                                    "'{}', not over '{}', reads '{}', which is: {why}",
                                    tensor.name, dim.name, program.tensors[s].name
                                ),
                            ));
                        }
                        if matches!(node.kind, NodeKind::ReadAt { .. }) {
                            return Err(PassDiagnostic::new(
                                node.location,
                                format!(
                                    "'{}' reads '{}' through data along '{}': {why} (only the past and the present may be read)",
                                    tensor.name, program.tensors[s].name, dim.name
                                ),
                            ));
                        }
                    }
                }
            }
        }
        for e in read_edges(program) {
            if !inside[e.reader] || past(e.reader) || !program.tensors[e.source].domain.contains(&d) {
                continue;
            }
            let ahead = match e.shifts.as_ref().and_then(|s| s.get(&d)) {
                Some(&(_, Some(high))) => high > 0,
                _ => true,
            };
            if ahead {
                return Err(PassDiagnostic::new(
                    e.location,
                    format!(
                        "read {} by '{}' may reach ahead along '{}': {why} (only the past and the present may be read)",
                        e.text, program.tensors[e.reader].name, dim.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// For a ragged stop, the tensors of `done`'s cone (`inside`) that may use
/// the stopped dimension's lengths, and read tensors over it at those
/// lengths: those whose point `b` that `done[b', t]` needs is always
/// strictly before `b'` along one batch dimension `k` (and `b'` along the
/// others), so that the lengths they see are known before `done[b', 0]`
/// is computed (a decode whose next token reads the previous token's
/// output at its own exit layer). Every read on the way, from `done` to
/// the tensor, is between tensors over every batch dimension, at the same
/// point along the others and a bounded shift along `k`; the largest sum
/// of shifts along `k` over those paths is at most -1.
fn known_lengths(program: &Program, stop: &crate::program::Stop, inside: &[bool]) -> Vec<bool> {
    let n = program.tensors.len();
    let batch = stop.batch(program);
    let over_batch = |t: usize| batch.iter().all(|b| program.tensors[t].domain.contains(b));
    let users: Vec<usize> =
        (0..n).filter(|&t| inside[t] && t != stop.done && uses_bound(program, t, stop.dim).is_some()).collect();
    let edges: Vec<Edge> = read_edges(program).into_iter().filter(|e| inside[e.reader] && inside[e.source]).collect();
    let mut known = vec![false; n];
    for &u in users.iter().filter(|&&u| over_batch(u)) {
        // The tensors on paths from `done` to `u`: reachable from `done`
        // and reaching `u` (reads point from reader to source).
        let reach = |from: usize, forward: bool| {
            let mut seen = vec![false; n];
            let mut work = vec![from];
            while let Some(t) = work.pop() {
                if std::mem::replace(&mut seen[t], true) {
                    continue;
                }
                for e in &edges {
                    match forward {
                        true if e.reader == t => work.push(e.source),
                        false if e.source == t => work.push(e.reader),
                        _ => {}
                    }
                }
            }
            seen
        };
        let (from_done, to_u) = (reach(stop.done, true), reach(u, false));
        let on_path: Vec<&Edge> = edges
            .iter()
            .filter(|e| from_done[e.reader] && to_u[e.reader] && from_done[e.source] && to_u[e.source])
            .collect();
        known[u] = batch.iter().any(|&k| {
            // Each edge's largest shift along `k`, when it stays at its
            // point along the other batch dimensions.
            let weights: Option<Vec<(usize, usize, i64)>> = on_path
                .iter()
                .map(|e| {
                    if !over_batch(e.reader) || !over_batch(e.source) {
                        return None;
                    }
                    let shifts = e.shifts.as_ref()?;
                    let same = batch.iter().filter(|&&j| j != k).all(|j| shifts.get(j) == Some(&(Some(0), Some(0))));
                    let high = shifts.get(&k)?.1?;
                    same.then_some((e.reader, e.source, high))
                })
                .collect();
            let Some(weights) = weights else { return false };
            // Longest paths from `done` (Bellman-Ford): still improving
            // after n rounds means a cycle of positive shift.
            let mut best: Vec<Option<i64>> = vec![None; n];
            best[stop.done] = Some(0);
            for round in 0..=n {
                let mut changed = false;
                for &(r, src, w) in &weights {
                    if let Some(at) = best[r]
                        && best[src].is_none_or(|b| at + w > b)
                    {
                        best[src] = Some(at + w);
                        changed = true;
                    }
                }
                if !changed {
                    break;
                }
                if round == n {
                    return false;
                }
            }
            best[u].is_some_and(|b| b <= -1)
        });
    }
    known
}

/// The rules of a ragged stop (see the module's doc).
fn check_ragged<'c>(program: &Program<'c>, stop: &crate::program::Stop<'c>) -> Result<(), PassDiagnostic<'c>> {
    let d = stop.dim;
    let batch = stop.batch(program);
    let dim = &program.dims[d].name;
    let names: Vec<&str> = batch.iter().map(|&b| program.dims[b].name.as_str()).collect();
    let why = format!(
        "'{}' gives each point of ({}) its own length along '{dim}'",
        program.tensors[stop.done].name,
        names.join(", ")
    );
    if let Some(other) = program.stops.iter().find(|s| batch.contains(&s.dim)) {
        return Err(PassDiagnostic::new(
            other.location,
            format!(
                "not yet: a stop of '{}', a batch dimension of a ragged stop ({why})",
                program.dims[other.dim].name
            ),
        ));
    }
    let over_batch = |t: usize| batch.iter().all(|b| program.tensors[t].domain.contains(b));
    for (t, tensor) in program.tensors.iter().enumerate() {
        if tensor.is_input {
            continue;
        }
        if tensor.domain.contains(&d) && !over_batch(t) {
            return Err(PassDiagnostic::new(
                tensor.location,
                format!(
                    "'{}' is over '{dim}' but not over ({}): {why}, so it must be over them too",
                    tensor.name,
                    names.join(", ")
                ),
            ));
        }
        if over_batch(t) {
            continue;
        }
        for branch in &tensor.branches {
            if branch.when.constraints.iter().any(|c| c.expr.uses_symbol(d)) {
                return Err(PassDiagnostic::new(
                    branch.location,
                    format!(
                        "this condition of '{}', not over ({}), uses the bound of '{dim}': {why}",
                        tensor.name,
                        names.join(", ")
                    ),
                ));
            }
            for node in &branch.nodes {
                let maps: Vec<&crate::affine::AffineMap> = match &node.kind {
                    NodeKind::Read { index, .. } | NodeKind::ReadAt { index, .. } => vec![index],
                    NodeKind::ReadRange { lower, upper, caps, .. } => lower.iter().chain(upper).chain(caps).collect(),
                    NodeKind::DynamicSlice(_, offsets) => vec![offsets],
                    _ => Vec::new(),
                };
                if maps.iter().any(|m| m.results.iter().any(|e| e.uses_symbol(d)))
                    || matches!(node.kind, NodeKind::Bound(b) if b == d)
                {
                    return Err(PassDiagnostic::new(
                        node.location,
                        format!(
                            "this op of '{}', not over ({}), uses the bound of '{dim}': {why}",
                            tensor.name,
                            names.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    for branch_node in program.tensors.iter().flat_map(|t| &t.branches).flat_map(|b| &b.nodes) {
        if let NodeKind::ReadAt { source, .. } = branch_node.kind
            && program.tensors[source].domain.contains(&d)
            && !program.tensors[source].is_input
        {
            return Err(PassDiagnostic::new(
                branch_node.location,
                format!("not yet: a read through data of '{}', over '{dim}': {why}", program.tensors[source].name),
            ));
        }
    }
    // Reads of tensors over `d`: at the reader's own point along each
    // batch dimension (a point coordinate that is the reader's variable).
    for (reader, tensor) in program.tensors.iter().enumerate() {
        for node in tensor.branches.iter().flat_map(|b| &b.nodes) {
            let (source, coordinates): (usize, Vec<Option<&crate::affine::AffineExpr>>) = match &node.kind {
                NodeKind::Read { source, index } => (*source, index.results.iter().map(Some).collect()),
                NodeKind::ReadRange { source, lower, upper, .. } => (
                    *source,
                    lower
                        .iter()
                        .zip(upper)
                        .map(|(l, u)| (u.results.is_empty()).then(|| l.results.first()).flatten())
                        .collect(),
                ),
                _ => continue,
            };
            let src = &program.tensors[source];
            if !src.domain.contains(&d) || src.is_input {
                continue;
            }
            for &b in &batch {
                let Some(k) = src.domain.iter().position(|&x| x == b) else { continue };
                let own = tensor.domain.iter().position(|&x| x == b);
                let at_own = matches!((coordinates.get(k).copied().flatten(), own), (Some(crate::affine::AffineExpr::Dim(i)), Some(o)) if *i == o);
                if !at_own {
                    return Err(PassDiagnostic::new(
                        node.location,
                        format!(
                            "read {} by '{}' must be at its own '{}': {why}",
                            match &node.kind {
                                NodeKind::Read { index, .. } => program.describe_read(reader, source, index),
                                _ => format!("a range of '{}'", src.name),
                            },
                            tensor.name,
                            program.dims[b].name
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Where tensor `t` uses the bound of dimension `d` (a condition, a
/// coordinate, a range or slice, `temporal.bound`), if it does.
pub fn uses_bound<'c>(program: &Program<'c>, t: usize, d: usize) -> Option<Location<'c>> {
    for branch in &program.tensors[t].branches {
        if branch.when.constraints.iter().any(|c| c.expr.uses_symbol(d)) {
            return Some(branch.location);
        }
        for node in &branch.nodes {
            let uses = match &node.kind {
                NodeKind::Read { index, .. } | NodeKind::ReadAt { index, .. } => {
                    index.results.iter().any(|e| e.uses_symbol(d))
                }
                NodeKind::ReadRange { lower, upper, caps, .. } => {
                    lower.iter().chain(upper).chain(caps).any(|m| m.results.iter().any(|e| e.uses_symbol(d)))
                }
                NodeKind::DynamicSlice(_, offsets) => offsets.results.iter().any(|e| e.uses_symbol(d)),
                NodeKind::Bound(b) => *b == d,
                _ => false,
            };
            if uses {
                return Some(node.location);
            }
        }
    }
    None
}

/// Ordering edges for the scheduler: each tensor outside a stop's cone
/// that uses the stopped dimension's bound reads, in effect, the stop's
/// length, so it comes after `done` is computed to the stop (as a read of
/// `done` from its own point to the end along the stopped dimension, at
/// its own point along the others they share).
pub fn stop_edges<'c>(program: &Program<'c>) -> Vec<Edge<'c>> {
    let mut edges = Vec::new();
    for stop in &program.stops {
        let inside = cone(program, stop.done);
        let done = &program.tensors[stop.done];
        for (t, tensor) in program.tensors.iter().enumerate() {
            if inside[t] || tensor.is_input {
                continue;
            }
            let Some(location) = uses_bound(program, t, stop.dim) else { continue };
            let shifts = done
                .domain
                .iter()
                .filter(|d| tensor.domain.contains(d))
                .map(|&d| (d, if d == stop.dim { (Some(0), None) } else { (Some(0), Some(0)) }))
                .collect();
            let spanned: Vec<usize> = done
                .domain
                .iter()
                .enumerate()
                .filter(|(_, d)| **d == stop.dim || !tensor.domain.contains(d))
                .map(|(k, _)| k)
                .collect();
            edges.push(Edge {
                reader: t,
                source: stop.done,
                shifts: Some(shifts),
                spans: true,
                spanned,
                fixed: None,
                location,
                text: format!("the length '{}' gives '{}'", done.name, program.dims[stop.dim].name),
            });
        }
    }
    edges
}
