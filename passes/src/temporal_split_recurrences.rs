//! `temporal-split-recurrences`: takes the time-parallel work out of a
//! recurrence. In `gates[t] = act(x[t] Wx + b + h[t-1] Wh)` only `h[t-1]
//! Wh` needs the previous step; `x[t] Wx + b` does not, yet it sits in
//! the loop body and is computed one step (`B` rows) at a time. The pass
//! moves such a subexpression into a tensor of its own, `P[t] = x[t] Wx +
//! b`, over the same domain, and the recurrence reads `P[t]`. `P` is on
//! no cycle, so `temporal-vectorize` (which runs next) computes it for all
//! steps at once, one product of `T * B` rows before the loop. The same
//! holds in back-propagation through time, whose contribution tensors copy
//! the forward body: there the copy's input projection is split off too,
//! and `temporal-dedup` merges it with the forward one.
//!
//! What moves: in a branch of a tensor `X` on a dependence cycle that
//! reads the cycle (a recurrent branch), a largest subexpression that
//! - reads no tensor of `X`'s cycle (its strongly connected component of
//!   reads, reads through data included), only tensors defined at every
//!   point (inputs, or a last branch without condition), each at the
//!   reader's own point along the dimensions it shares with `X` and at
//!   coordinates free of `X`'s variables along the others;
//! - has no op whose value depends on where or when it runs (random
//!   values, external calls, positions), no range read or read through
//!   data, no fused attention;
//! - does work worth a tensor: a matmul or einsum of values that vary
//!   over `X`'s domain.
//!
//! Every occurrence of the same expression in any branch of `X` (a `t ==
//! 0` branch computing `act(x[t] Wx + b)`) reads `P` too. A larger split
//! expression containing a smaller one reads the smaller one's tensor.
//!
//! Only tensors over a dimension that `temporal-vectorize` can batch a
//! group along are split: one with a bound value (option `bounds`, as the
//! vectorizer takes) along which the program keeps points anyway (a
//! training step; see `temporal_vectorize::keeps_points_along`).
//! Elsewhere `P` would stay in the loop, a store more for nothing.
//!
//! Exact: `P`'s point is computed by the same ops on the same values.
//! Assumes a program accepted by `temporal-verify`.

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOption, PassOptions, ProgramRewrite, TempoPass};
use crate::program::{Branch, Node, NodeKind, Program, Tensor};
use crate::temporal_vectorize::uses_dim;
use melior::ir::Location;
use petgraph::graph::{DiGraph, NodeIndex};
use std::collections::HashMap;

/// The `temporal-split-recurrences` pass.
pub struct TemporalSplitRecurrences;

impl TempoPass for TemporalSplitRecurrences {
    fn name(&self) -> &'static str {
        "temporal-split-recurrences"
    }
    fn summary(&self) -> &'static str {
        "Move the time-parallel work of a recurrence's body (matmuls of values that do not depend on the recurrence, e.g. an input projection x[t] Wx + b) into tensors of their own that temporal-vectorize then computes for all steps at once"
    }
    fn options(&self) -> &'static [PassOption] {
        const OPTIONS: &[PassOption] = &[PassOption::bounds(
            "bounds",
            "bound values the program runs with, NAME=VALUE separated by commas: only tensors over a dimension with one are split (temporal-vectorize batches only those)",
        )];
        OPTIONS
    }
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        Some(self)
    }
}

impl ProgramRewrite for TemporalSplitRecurrences {
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        _at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>> {
        let values = options.bound_values(program);
        Ok(split_recurrences(program, &values))
    }
}

/// Splits the time-parallel subexpressions out of every recurrent tensor
/// over a dimension with a bound value (`bound_values`, per dimension);
/// returns whether any was.
pub fn split_recurrences(program: &mut Program, bound_values: &[Option<i64>]) -> bool {
    let defined_everywhere = crate::rewrite::defined_everywhere(program);
    // The dimensions `temporal-vectorize` can batch a group along.
    let batchable: Vec<bool> = (0..program.dims.len())
        .map(|d| {
            bound_values.get(d).copied().flatten().is_some()
                && crate::temporal_vectorize::keeps_points_along(program, d)
        })
        .collect();
    // The reads' components along each such dimension.
    let along: Vec<Option<(Vec<usize>, Vec<bool>)>> =
        (0..program.dims.len()).map(|d| batchable[d].then(|| components(program, d))).collect();
    let mut changed = false;
    for x in 0..program.tensors.len() {
        // The innermost dimension of the tensor's that can be batched.
        let Some(&d) = program.tensors[x].domain.iter().rev().find(|&&d| batchable[d]) else { continue };
        let (component, cyclic) = along[d].as_ref().expect("computed for every batchable dimension");
        if program.tensors[x].is_input || !cyclic[x] {
            continue;
        }
        // A tensor made by an earlier split (past `component`) is on no cycle.
        let in_cycle = |s: usize| component.get(s) == Some(&component[x]);
        changed |= split_tensor(program, x, &in_cycle, &defined_everywhere);
    }
    changed
}

/// Per tensor, its strongly connected component of reads (all kinds, but
/// those carried by a loop outside dimension `d`'s: see
/// [`carried_outside`]) and whether it is on a cycle.
fn components(program: &Program, d: usize) -> (Vec<usize>, Vec<bool>) {
    let count = program.tensors.len();
    let mut graph: DiGraph<(), ()> = DiGraph::new();
    for _ in 0..count {
        graph.add_node(());
    }
    for (r, tensor) in program.tensors.iter().enumerate() {
        for node in tensor.branches.iter().flat_map(|b| &b.nodes) {
            if let Some(s) = crate::rewrite::source(&node.kind)
                && !carried_outside(program, r, &node.kind, d)
            {
                graph.update_edge(NodeIndex::new(r), NodeIndex::new(s), ());
            }
        }
    }
    let mut component = vec![0; count];
    let mut cyclic = vec![false; count];
    for (c, members) in petgraph::algo::tarjan_scc(&graph).iter().enumerate() {
        for m in members {
            component[m.index()] = c;
            cyclic[m.index()] = members.len() > 1 || graph.find_edge(*m, *m).is_some();
        }
    }
    (component, cyclic)
}

/// Whether read `kind` of tensor `reader` is carried by a loop outside
/// dimension `d`'s: along the first dimension of the reader's domain (its
/// outermost loop) that the source shares and the read does not hold at
/// the reader's own coordinate, a dimension before `d` in that domain, it
/// reads a strictly earlier point at a constant distance (`W[i - 1]`, the
/// previous training iteration's parameters). Every point of the source it
/// reads is then computed in an earlier iteration of that loop, so the
/// read forms no recurrence along `d` inside it: a training run's
/// parameters `W[i]` depend on the loss of iteration `i - 1`, not on the
/// recurrence along `t` of iteration `i` that reads them, and an input
/// projection `x[t] W[i]` is as time-parallel as with constant weights.
/// (The domain's order is the loops' nesting.)
fn carried_outside(program: &Program, reader: usize, kind: &NodeKind, d: usize) -> bool {
    let NodeKind::Read { source, index } = kind else { return false };
    let source = &program.tensors[*source];
    for (p, dim) in program.tensors[reader].domain.iter().enumerate() {
        if *dim == d {
            return false;
        }
        let Some(q) = source.domain.iter().position(|x| x == dim) else { continue };
        match index.results[q].offset_from_dim(p) {
            Some(0) => continue,
            Some(c) => return c < 0,
            None => return false,
        }
    }
    false
}

/// Per node of `branch` (of tensor `x`): whether it may move, whether its
/// value varies over `x`'s domain, whether its subexpression holds a matmul
/// or einsum of varying values, and a structural key.
struct Analysis {
    movable: Vec<bool>,
    varies: Vec<bool>,
    heavy: Vec<bool>,
    key: Vec<String>,
}

fn analyse(
    program: &Program,
    x: &Tensor,
    branch: &Branch,
    in_cycle: &dyn Fn(usize) -> bool,
    defined_everywhere: &[bool],
) -> Analysis {
    let n = branch.nodes.len();
    let (mut movable, mut varies, mut heavy) = (vec![false; n], vec![false; n], vec![false; n]);
    let mut key: Vec<String> = Vec::with_capacity(n);
    for (k, node) in branch.nodes.iter().enumerate() {
        let operands = crate::rewrite::operands(&node.kind);
        let erased = crate::rewrite::map_operands(&node.kind, |_| 0);
        let inner: Vec<&str> = operands.iter().map(|&o| key[o].as_str()).collect();
        key.push(format!("{erased:?}:{:?}({})", node.ty, inner.join(",")));
        varies[k] = operands.iter().any(|&o| varies[o]);
        heavy[k] = operands.iter().any(|&o| heavy[o]);
        movable[k] = operands.iter().all(|&o| movable[o]);
        match &node.kind {
            NodeKind::Read { source, index } => {
                let src = &program.tensors[*source];
                let mut ok = !in_cycle(*source) && defined_everywhere[*source];
                for (q, dim) in src.domain.iter().enumerate() {
                    match x.domain.iter().position(|d| d == dim) {
                        Some(p) => {
                            ok &= matches!(&index.results[q], AffineExpr::Dim(i) if *i == p);
                            varies[k] = true;
                        }
                        None => ok &= (0..x.domain.len()).all(|p| !uses_dim(&index.results[q], p)),
                    }
                }
                movable[k] = ok;
            }
            NodeKind::Matmul(..) | NodeKind::Einsum(..) => heavy[k] |= varies[k],
            other if crate::rewrite::stays_in_place(other) => movable[k] = false,
            _ => {}
        }
    }
    Analysis { movable, varies, heavy, key }
}

/// Splits tensor `x`; returns whether it did.
fn split_tensor(
    program: &mut Program,
    x: usize,
    in_cycle: &dyn Fn(usize) -> bool,
    defined_everywhere: &[bool],
) -> bool {
    let tensor = program.tensors[x].clone();
    let analyses: Vec<Analysis> =
        tensor.branches.iter().map(|b| analyse(program, &tensor, b, in_cycle, defined_everywhere)).collect();
    // The roots: largest movable heavy varying subexpressions of the
    // recurrent branches, by key, in order of appearance.
    let mut roots: Vec<(String, usize, usize)> = Vec::new();
    for (b, branch) in tensor.branches.iter().enumerate() {
        let a = &analyses[b];
        let recurrent = branch.nodes.iter().any(|n| crate::rewrite::source(&n.kind).is_some_and(in_cycle));
        if !recurrent || a.movable[branch.result] {
            continue;
        }
        let users = crate::rewrite::users(branch);
        for k in 0..branch.nodes.len() {
            let root = a.movable[k] && a.heavy[k] && a.varies[k] && users[k].iter().any(|&u| !a.movable[u]);
            if root && !roots.iter().any(|(key, ..)| *key == a.key[k]) {
                roots.push((a.key[k].clone(), b, k));
            }
        }
    }
    if roots.is_empty() {
        return false;
    }
    // One tensor per root, over `x`'s domain.
    let dims = tensor.domain.len();
    let symbols = program.dims.len();
    let identity =
        AffineMap { num_dims: dims, num_symbols: symbols, results: (0..dims).map(AffineExpr::Dim).collect() };
    let mut split_of: HashMap<String, usize> = HashMap::new();
    for (i, (key, b, k)) in roots.iter().enumerate() {
        let branch = &tensor.branches[*b];
        let a = &analyses[*b];
        // The root's subexpression, reading the tensors of earlier roots.
        let mut nodes: Vec<Node> = Vec::new();
        let mut new: HashMap<usize, usize> = HashMap::new();
        let mut stack = vec![(*k, false)];
        while let Some((n, expanded)) = stack.pop() {
            if new.contains_key(&n) {
                continue;
            }
            let node = &branch.nodes[n];
            if n != *k
                && let Some(&p) = split_of.get(&a.key[n])
            {
                nodes.push(Node {
                    kind: NodeKind::Read { source: p, index: identity.clone() },
                    ty: node.ty.clone(),
                    location: node.location,
                });
                new.insert(n, nodes.len() - 1);
                continue;
            }
            let operands = crate::rewrite::operands(&node.kind);
            if !expanded {
                stack.push((n, true));
                stack.extend(operands.iter().rev().filter(|o| !new.contains_key(o)).map(|&o| (o, false)));
                continue;
            }
            let kind = crate::rewrite::map_operands(&node.kind, |o| new[&o]);
            nodes.push(Node { kind, ty: node.ty.clone(), location: node.location });
            new.insert(n, nodes.len() - 1);
        }
        let result = new[k];
        let root = &branch.nodes[*k];
        let mut name = format!("{}$split{i}", tensor.name);
        while program.tensors.iter().any(|t| t.name == name) {
            name += "_";
        }
        program.tensors.push(Tensor {
            name,
            domain: tensor.domain.clone(),
            point: root.ty.clone(),
            is_input: false,
            branches: vec![Branch {
                when: IntegerSet { num_dims: dims, num_symbols: symbols, constraints: Vec::new() },
                nodes,
                result,
                location: root.location,
            }],
            location: root.location,
        });
        split_of.insert(key.clone(), program.tensors.len() - 1);
    }
    // Every occurrence in `x`'s branches reads its tensor.
    for (b, branch) in program.tensors[x].branches.iter_mut().enumerate() {
        let a = &analyses[b];
        for (k, node) in branch.nodes.iter_mut().enumerate() {
            if a.movable[k]
                && let Some(&p) = split_of.get(&a.key[k])
            {
                node.kind = NodeKind::Read { source: p, index: identity.clone() };
            }
        }
        let live = crate::rewrite::live_nodes(branch);
        crate::rewrite::compact_branch(branch, &live);
    }
    true
}
