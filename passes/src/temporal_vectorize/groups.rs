//! Vectorization of a group: a dimension `d` that is a loop for some
//! tensors (a recurrence `h[t-1] -> h[t]`) is vectorized for the others,
//! the tensors over `d` computed without a recurrence along it (an RNN's
//! input projection `x[t] U`, its output layer and loss at every step, the
//! loss's cotangents in back-propagation through time). Each such tensor
//! `P` is computed once for all `D` points, before the loop that reads it
//! (or after the loop whose values it reads): a matmul of `B` rows per step
//! becomes one of `D * B` rows.
//!
//! A tensor over `d` joins the group when:
//! - it is on no dependence cycle (reads with a constant shift along
//!   another dimension, an iteration's parameters from the last one, do
//!   not count: the group is vectorized inside each point of the others);
//! - it passes the batching checks of `temporal-vectorize` (own-point
//!   reads along `d`, branch conditions free of `d`, ops with a batched
//!   form; gathers whose table does not vary along `d`), or reads ranges
//!   along `d` bounded by its own point (`k[0:t+1]`, windows, suffixes
//!   `f[t:T]`) that [`super::masks`] batches: the source read whole and
//!   masked where the range is summed, maximized or contracted;
//! - it does work worth batching (a matmul or einsum of a value that
//!   varies along `d` by one that does not: one product of `D * B` rows),
//!   or another member that does reads it (a cotangent between two
//!   products); and no product of two varying values (per-point products, as a
//!   weight gradient's, batch into `D` small ones and a store of them all);
//! - the program keeps some computed tensor's points along `d` anyway (a
//!   training step's activations, read back by the backward loop; keys
//!   read as prefixes), so that batching (which stores the group's points
//!   and what they read whole) adds no store growing with `d` where there
//!   was none: an RNN's inference keeps rings of two points and stays a
//!   loop ([`keeps_points_along`]);
//! - every read of it outside the group is a point (any coordinate along
//!   `d`: the reader takes that row of the batched value) or the whole
//!   range along `d`.
//!
//! Exact: each element is computed by the same ops in the same order.

use super::{MAX_BATCHED_BYTES, batch_tensor, batched_versions, is_dim, masks, uses_dim};
use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::program::{Branch, Node, NodeKind, PointType, Program};
use crate::sdg::Sdg;
use petgraph::graph::DiGraph;

/// Vectorizes dimension `d` (bound value `size`) for the group of tensors
/// over it computed without a recurrence; returns whether any was.
pub(super) fn vectorize_group(program: &mut Program, d: usize, size: i64, exact: bool) -> bool {
    if program.stops.iter().any(|s| program.tensors[s.done].domain.contains(&d)) {
        return false;
    }
    let group = group(program, d, size, exact);
    if !group.iter().any(|&g| g) {
        return false;
    }
    let mut candidate = program.clone();
    apply_group(&mut candidate, d, size, &group);
    // A safety net: the group was chosen off every cycle, so none can
    // appear; a program that would have one keeps its loops.
    if Sdg::build(&candidate).zero_distance_cycle().is_some() {
        return false;
    }
    *program = candidate;
    true
}

/// The strongly connected components of the reads, edges with a constant
/// non-zero shift along a dimension other than `d` left out: per tensor,
/// its component and whether it is on a cycle; per component, whether a
/// read inside it goes forward along `d` (reads `d + c`, `c > 0`: a
/// backward loop).
struct Cycles {
    component: Vec<usize>,
    cyclic: Vec<bool>,
    backward: Vec<bool>,
}

fn cycles(program: &Program, d: usize) -> Cycles {
    let sdg = Sdg::build(program);
    let count = program.tensors.len();
    let mut graph: DiGraph<usize, Option<i64>> = DiGraph::new();
    for t in 0..count {
        graph.add_node(t);
    }
    for e in sdg.graph.edge_indices() {
        let (r, s) = sdg.graph.edge_endpoints(e).expect("an edge");
        let edge = &sdg.graph[e];
        let source = &program.tensors[s.index()];
        let mut along = None;
        let mut other_shift = false;
        for (k, dim) in source.domain.iter().enumerate() {
            let shift = edge.shifts.get(k).copied().flatten();
            if *dim == d {
                along = shift;
            } else if shift.is_some_and(|c| c != 0) {
                other_shift = true;
            }
        }
        if !other_shift {
            graph.add_edge(r, s, along);
        }
    }
    let mut component = vec![0; count];
    let mut cyclic = vec![false; count];
    let sccs = petgraph::algo::tarjan_scc(&graph);
    for (c, members) in sccs.iter().enumerate() {
        for m in members {
            component[m.index()] = c;
            cyclic[m.index()] = members.len() > 1 || graph.find_edge(*m, *m).is_some();
        }
    }
    let mut backward = vec![false; sccs.len()];
    for e in graph.edge_indices() {
        let (r, s) = graph.edge_endpoints(e).expect("an edge");
        if component[r.index()] == component[s.index()] && graph[e].is_some_and(|c| c > 0) {
            backward[component[r.index()]] = true;
        }
    }
    Cycles { component, cyclic, backward }
}

/// Whether tensor `t`'s branches can be batched along `d` (read at their
/// own point, conditions free of `d`, ops with batched forms), and whether
/// they do work worth batching.
pub(crate) fn batchable(program: &Program, t: usize, d: usize, size: i64, exact: bool) -> (bool, bool) {
    let tensor = &program.tensors[t];
    let p = tensor.domain.iter().position(|&x| x == d).expect("over d");
    let mentions = |maps: &[&AffineMap]| maps.iter().any(|m| m.results.iter().any(|e| uses_dim(e, p)));
    let mut heavy = false;
    for branch in &tensor.branches {
        if branch.when.constraints.iter().any(|c| uses_dim(&c.expr, p) && !masks::holds_everywhere(c, p, d, size)) {
            return (false, false);
        }
        // How a range along `d` masked by the point's position flows.
        let range_of = |k: usize| masks::range_of(program, &branch.nodes[k], d, p);
        let Some(flow) = masks::flow(&branch.nodes, branch.result, size, range_of, exact) else {
            return (false, false);
        };
        // Whether each node's value varies along `d`.
        let mut varies = vec![false; branch.nodes.len()];
        for (k, node) in branch.nodes.iter().enumerate() {
            let operands = crate::rewrite::operands(&node.kind);
            varies[k] = operands.iter().any(|&o| varies[o]);
            match &node.kind {
                NodeKind::Read { source, index } => {
                    if let Some(q) = program.tensors[*source].domain.iter().position(|&x| x == d) {
                        if !matches!(&index.results[q], AffineExpr::Dim(i) if *i == p)
                            || index.results.iter().enumerate().any(|(i, e)| i != q && uses_dim(e, p))
                        {
                            return (false, false);
                        }
                        varies[k] = true;
                    } else if mentions(&[index]) {
                        return (false, false);
                    }
                }
                NodeKind::ReadRange { source, lower, upper, caps } => {
                    if let Some(q) = program.tensors[*source].domain.iter().position(|&x| x == d) {
                        if flow.axis[k].is_some() {
                            // A masked range: the source read whole, the
                            // same value at every point.
                            continue;
                        }
                        if !is_dim(&lower[q], p) || !upper[q].results.is_empty() || !caps[q].results.is_empty() {
                            return (false, false);
                        }
                        let others: Vec<&AffineMap> = (0..lower.len())
                            .filter(|&i| i != q)
                            .flat_map(|i| [&lower[i], &upper[i], &caps[i]])
                            .collect();
                        if mentions(&others) {
                            return (false, false);
                        }
                        varies[k] = true;
                    } else {
                        let all: Vec<&AffineMap> = lower.iter().chain(upper).chain(caps).collect();
                        if mentions(&all) {
                            return (false, false);
                        }
                    }
                }
                NodeKind::DynamicSlice(_, offsets) if mentions(&[offsets]) => return (false, false),
                NodeKind::Gather(table, _) if varies[*table] => return (false, false),
                NodeKind::Matmul(a, b) => {
                    let ranks = (branch.nodes[*a].ty.shape.len(), branch.nodes[*b].ty.shape.len());
                    // Products of two varying operands batch into one
                    // small product per point (a per-step weight gradient),
                    // no faster than the loop and a store of all of them:
                    // they stay in the loop.
                    if !matches!(ranks, (2, 2) | (1, 2) | (2, 1)) || (varies[*a] && varies[*b]) {
                        return (false, false);
                    }
                    heavy |= varies[k];
                }
                NodeKind::Einsum(spec, operands) => {
                    let mut varying = operands.iter().filter(|&&o| varies[o]).count();
                    // A contracted masked range: an operand carrying it is
                    // masked at each point (a varying one where there is one).
                    let carriers: Vec<(usize, usize)> =
                        operands.iter().enumerate().filter_map(|(i, &o)| flow.axis[o].map(|m| (i, m))).collect();
                    if let Some(&(i, m)) = carriers.first()
                        && !spec.result.contains(&spec.operands[i][m])
                    {
                        if !carriers.iter().any(|&(i, _)| varies[operands[i]]) {
                            varying += 1;
                        }
                        varies[k] = true;
                    }
                    if varying > 1 {
                        return (false, false);
                    }
                    heavy |= varies[k];
                }
                // A sum or maximum along a masked range: masked at each point.
                NodeKind::Reduce(_, a, r) if flow.axis[*a] == Some(*r) => varies[k] = true,
                // A fused attention over a masked range: its band.
                NodeKind::FlashAttention(flash, operands) => {
                    let ranged = flash.part.range_operands();
                    let mask = flow.mask.as_ref();
                    if !ranged.iter().all(|&i| flow.axis[operands[i]] == Some(0))
                        || mask.and_then(|m| masks::band(m, p, d, flash.part)).is_none()
                    {
                        return (false, false);
                    }
                    varies[k] = true;
                    heavy = true;
                }
                NodeKind::Random { .. }
                | NodeKind::Call { .. }
                | NodeKind::AllReduce(..)
                | NodeKind::ReadAt { .. }
                | NodeKind::Attention(..)
                | NodeKind::Position(_) => return (false, false),
                _ => {}
            }
        }
    }
    (true, heavy)
}

/// The tensors of the group (see the module's documentation).
fn group(program: &Program, d: usize, size: i64, exact: bool) -> Vec<bool> {
    let count = program.tensors.len();
    let over = |t: usize| program.tensors[t].domain.contains(&d);
    let cycles = cycles(program, d);
    if !keeps_points(program, d, &cycles) {
        return vec![false; count];
    }
    // Per tensor: whether it may join the group, and whether it does work
    // worth batching.
    let checked: Vec<(bool, bool)> = (0..count)
        .map(|t| {
            let tensor = &program.tensors[t];
            let bytes = tensor.point.num_elements() as u64 * tensor.point.element.byte_size() as u64;
            if !over(t) || tensor.is_input || cycles.cyclic[t] || bytes.saturating_mul(size as u64) > MAX_BATCHED_BYTES
            {
                return (false, false);
            }
            batchable(program, t, d, size, exact)
        })
        .collect();
    let mut member: Vec<bool> = checked.iter().map(|c| c.0).collect();
    let heavy: Vec<bool> = checked.iter().map(|c| c.0 && c.1).collect();
    // Readers of each tensor: (reader, branch, node).
    let mut readers: Vec<Vec<(usize, usize, usize)>> = vec![Vec::new(); count];
    for (r, tensor) in program.tensors.iter().enumerate() {
        for (b, branch) in tensor.branches.iter().enumerate() {
            for (k, node) in branch.nodes.iter().enumerate() {
                if let Some(s) = crate::rewrite::source(&node.kind) {
                    readers[s].push((r, b, k));
                }
            }
        }
    }
    loop {
        let mut changed = false;
        for p in 0..count {
            if !member[p] {
                continue;
            }
            // (What it reads outside the group is then stored whole, as
            // the program keeps points along `d` anyway.)
            let mut ok = true;
            // How it is read outside the group.
            for &(r, b, k) in &readers[p] {
                if member[r] {
                    continue;
                }
                let q = program.tensors[p].domain.iter().position(|&x| x == d).expect("over d");
                let node = &program.tensors[r].branches[b].nodes[k];
                match &node.kind {
                    NodeKind::Read { .. } => {}
                    NodeKind::ReadRange { lower, upper, caps, .. } => {
                        let whole = matches!(lower[q].results[..], [AffineExpr::Constant(0)])
                            && matches!(upper[q].results[..], [AffineExpr::Symbol(s)] if s == d)
                            && caps[q].results.is_empty();
                        // The batched value's length is static: the reader's
                        // type states it, or the range is only reduced along
                        // it (a loss over all steps), so that no type after
                        // the read changes.
                        let ranged = upper.iter().filter(|m| !m.results.is_empty()).count();
                        let before = upper[..q].iter().filter(|m| !m.results.is_empty()).count();
                        let branch = &program.tensors[r].branches[b];
                        let reduced = before + 1 == ranged
                            && crate::rewrite::users(branch)[k].iter().all(|&u| {
                                matches!(branch.nodes[u].kind, NodeKind::Reduce(kind, a, axis)
                                    if a == k && axis == before && kind != crate::program::ReduceKind::CumSum
                                        && kind != crate::program::ReduceKind::ArgMax)
                            });
                        ok &= whole && (node.ty.shape.get(before) == Some(&size) || reduced);
                    }
                    _ => ok = false,
                }
            }
            if !ok {
                member[p] = false;
                changed = true;
            }
        }
        if changed {
            continue;
        }
        // Only the members that do work worth batching, and the cheap ones
        // they read (a cotangent between two products), stay.
        let mut keep: Vec<bool> = (0..count).map(|t| member[t] && heavy[t]).collect();
        let mut stack: Vec<usize> = (0..count).filter(|&t| keep[t]).collect();
        while let Some(t) = stack.pop() {
            for node in program.tensors[t].branches.iter().flat_map(|b| &b.nodes) {
                if let Some(s) = crate::rewrite::source(&node.kind)
                    && member[s]
                    && !keep[s]
                {
                    keep[s] = true;
                    stack.push(s);
                }
            }
        }
        if keep == member {
            return member;
        }
        member = keep;
    }
}

/// Vectorizes the tensors of `group` along `d`.
fn apply_group(program: &mut Program<'_>, d: usize, size: i64, group: &[bool]) {
    let symbols = program.dims.len();
    // Outputs keep their domain: the batched tensor is a new one, the
    // output reads its rows.
    let (batched_of, outputs, vectorized) = batched_versions(program, group);
    let total = program.tensors.len();
    for &o in &outputs {
        let n = program.tensors[o].domain.len();
        let location = program.tensors[o].location;
        let point = program.tensors[o].point.clone();
        let index = AffineMap { num_dims: n, num_symbols: symbols, results: (0..n).map(AffineExpr::Dim).collect() };
        let nodes = vec![Node { kind: NodeKind::Read { source: batched_of[o], index }, ty: point, location }];
        program.tensors[o].branches = vec![Branch {
            when: IntegerSet { num_dims: n, num_symbols: symbols, constraints: vec![] },
            nodes,
            result: 0,
            location,
        }];
    }
    let snapshot = program.clone();
    for t in 0..total {
        if vectorized[t] {
            batch_tensor(program, &snapshot, t, d, size, &vectorized);
        } else {
            for b in 0..program.tensors[t].branches.len() {
                let branch = &snapshot.tensors[t].branches[b];
                if branch.nodes.iter().any(|n| crate::rewrite::source(&n.kind).is_some_and(|s| vectorized[s])) {
                    program.tensors[t].branches[b] = rows_read(&snapshot, t, b, d, size, &vectorized);
                }
            }
        }
    }
}

/// Branch `b` of tensor `t` (outside the group) with its reads of batched
/// tensors taking the rows they read: a point read at coordinate `e` along
/// `d` reads the batched point and slices row `e`; a read of the whole
/// range along `d` reads the batched point (the range's axis moved back
/// where it was).
fn rows_read<'c>(snapshot: &Program<'c>, t: usize, b: usize, d: usize, size: i64, vectorized: &[bool]) -> Branch<'c> {
    let reader = &snapshot.tensors[t];
    let branch = &reader.branches[b];
    let n = reader.domain.len();
    let symbols = snapshot.dims.len();
    let mut nodes: Vec<Node<'c>> = Vec::with_capacity(branch.nodes.len() + 4);
    let mut new: Vec<usize> = Vec::with_capacity(branch.nodes.len());
    for node in &branch.nodes {
        let location = node.location;
        let mut push = |kind: NodeKind, ty: PointType| {
            nodes.push(Node { kind, ty, location });
            nodes.len() - 1
        };
        let source = crate::rewrite::source(&node.kind).filter(|&s| vectorized[s]);
        let Some(source) = source else {
            let kind = crate::rewrite::map_operands(&node.kind, |o| new[o]);
            new.push(push(kind, node.ty.clone()));
            continue;
        };
        // The source's dimension `d`, in its original domain (`d` was
        // removed from the snapshot's copy only where batched: the
        // snapshot still has it).
        let q = snapshot.tensors[source].domain.iter().position(|&x| x == d).expect("over d");
        let element = node.ty.element;
        match &node.kind {
            NodeKind::Read { index, .. } => {
                let mut rest = index.clone();
                let along = rest.results.remove(q);
                let batched =
                    PointType { shape: std::iter::once(size).chain(node.ty.shape.clone()).collect(), element };
                let read = push(NodeKind::Read { source, index: rest }, batched);
                let mut offsets = vec![along];
                offsets.extend(node.ty.shape.iter().map(|_| AffineExpr::Constant(0)));
                let one = PointType { shape: std::iter::once(1).chain(node.ty.shape.clone()).collect(), element };
                let row = push(
                    NodeKind::DynamicSlice(read, AffineMap { num_dims: n, num_symbols: symbols, results: offsets }),
                    one,
                );
                new.push(push(NodeKind::Move(crate::program::Movement::Reshape, vec![row]), node.ty.clone()));
            }
            NodeKind::ReadRange { lower, upper, caps, .. } => {
                let ranged = upper.iter().filter(|m| !m.results.is_empty()).count();
                let before = upper[..q].iter().filter(|m| !m.results.is_empty()).count();
                let (mut lower, mut upper, mut caps) = (lower.clone(), upper.clone(), caps.clone());
                lower.remove(q);
                upper.remove(q);
                caps.remove(q);
                // The value: the other ranged axes, then the batch, then the point.
                let mut shape = node.ty.shape.clone();
                shape.remove(before);
                shape.insert(ranged - 1, size);
                let read = push(NodeKind::ReadRange { source, lower, upper, caps }, PointType { shape, element });
                if before == ranged - 1 {
                    new.push(read);
                } else {
                    let rank = node.ty.shape.len();
                    // Axis `ranged - 1` back to `before`.
                    let mut order: Vec<usize> = (0..rank).filter(|&k| k != ranged - 1).collect();
                    order.insert(before, ranged - 1);
                    new.push(push(
                        NodeKind::Move(crate::program::Movement::Permute(order), vec![read]),
                        node.ty.clone(),
                    ));
                }
            }
            _ => unreachable!("only point and whole-range reads of the group stay"),
        }
    }
    let result = new[branch.result];
    Branch { when: branch.when.clone(), nodes, result, location: branch.location }
}

/// Per tensor, whether it is on a dependence cycle along `d` (reads with a
/// constant shift along another dimension left out, as the group does).
pub(crate) fn cyclic_along(program: &Program, d: usize) -> Vec<bool> {
    cycles(program, d).cyclic
}

/// Whether the program keeps some computed tensor's points along `d` past
/// the next step anyway: read back by a loop in the other direction (the
/// forward states of back-propagation through time), read as a range along
/// `d` (keys read as prefixes), or read whole after `d`'s loop. Its memory
/// then grows with `D` already, and batching changes that by a factor;
/// otherwise (an RNN's inference: rings of two points) batching would add
/// the first store growing with `D`, and the loops stay.
pub(crate) fn keeps_points_along(program: &Program, d: usize) -> bool {
    keeps_points(program, d, &cycles(program, d))
}

/// [`keeps_points_along`] with the cycles along `d` computed.
fn keeps_points(program: &Program, d: usize, cycles: &Cycles) -> bool {
    let over = |t: usize| program.tensors[t].domain.contains(&d);
    program.tensors.iter().enumerate().any(|(z, tensor)| {
        tensor.branches.iter().flat_map(|b| &b.nodes).any(|node| match &node.kind {
            NodeKind::ReadRange { source, upper, .. } => {
                let q = program.tensors[*source].domain.iter().position(|&x| x == d);
                !program.tensors[*source].is_input && q.is_some_and(|q| !upper[q].results.is_empty() || !over(z))
            }
            NodeKind::Read { source, .. } => {
                let y = *source;
                over(z)
                    && over(y)
                    && !program.tensors[y].is_input
                    && cycles.cyclic[z]
                    && cycles.backward[cycles.component[z]]
                    && cycles.component[z] != cycles.component[y]
                    && !cycles.backward[cycles.component[y]]
            }
            _ => false,
        })
    })
}
