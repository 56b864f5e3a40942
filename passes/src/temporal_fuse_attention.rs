//! `temporal-fuse-attention`: replaces softmax attention over a range, and
//! the two halves of its backward pass that `temporal-autodiff` writes, by
//! `temporal.flash_attention` ops ([`Flash`]), which the runtime's tiled
//! kernels compute without materializing scores as long as the range.
//! Run before `temporal-vectorize`, which batches the fused ops of a
//! sequence's steps into one op over all of them with a band of keys per
//! query position (a causal prefix `k[0:t+1]` becomes the lower triangle,
//! computed in blocks with the blocks above the diagonal skipped).
//!
//! Recognized chains, in the per-step form (`n` the range's label, `G`
//! the labels the queries share with the keys, `R` the queries' own, `d`
//! the contracted label):
//!
//! ```text
//! forward  S = q . k[range]; X = S * c; P = softmax_n(X); O = P . v[range]
//! query    the forward chain, dP = dO . v[range], D = sum_n P * dP,
//!          dS = P * (dP - D) * c, dQ = dS . k[range]
//! key      over query rows r[range] (q, dO and the statistics m, l, D
//!          the query half stashed): s = q[r] . k; P = exp(s * c - m) / l;
//!          dV = sum P dO[r]; dS = P * (dO[r] . v - D) * c; dK = sum dS q[r]
//! ```
//!
//! (`softmax_n` written out as `exp(X - max_n X) / sum_n exp(...)`, the
//! form `Expr::softmax` writes; contractions are einsums or matmuls; `c`
//! a scalar, possibly absent.) The ops are put in canonical shapes by
//! permutations and reshapes (views in compiled code), and each value of
//! the chain used outside it (the output, the maximum and sum the backward
//! pass stashes, the query's cotangent) is read back from the fused op's
//! packed result. A chain whose intermediate values (scores, weights,
//! their products) are used elsewhere is left alone, as is one whose
//! inputs depend on its outputs.
//!
//! Not exact bit for bit: the kernels rescale a running maximum and sum
//! products in blocks, so the pass runs where rounding may change: `-O3`,
//! and `-O2` with fast math on the CPU (the kernels are the CPU runtime's).
//! Assumes a program accepted by `temporal-verify`, after
//! `temporal-autodiff`.

use crate::program::{
    Band, BinaryKind, Branch, DYNAMIC, Einsum, Flash, FlashPart, Movement, Node, NodeKind, PointType, Program,
    ReduceKind,
};
use crate::rewrite::{compact_branch, live_nodes, map_operands, operands, users};
use crate::temporal_tile_ranges::{Scores, Softmax, contraction, is_softmax, scores, swapped};
use std::collections::HashMap;

mod key;

/// The `temporal-fuse-attention` pass.
pub struct TemporalFuseAttention;

crate::option_free_rewrite!(
    TemporalFuseAttention,
    "temporal-fuse-attention",
    "Fuse softmax attention over ranges and its backward halves into temporal.flash_attention ops for the runtime's tiled kernels (changes float rounding)",
    fuse_attention
);

/// Fuses every recognized chain; returns whether any was.
pub fn fuse_attention(program: &mut Program) -> bool {
    let mut changed = false;
    for t in 0..program.tensors.len() {
        for b in 0..program.tensors[t].branches.len() {
            // Each rewrite removes a chain; a branch holds few.
            for _ in 0..64 {
                let Some(plan) = find(&program.tensors[t].branches[b]) else { break };
                apply(&mut program.tensors[t].branches[b], plan);
                changed = true;
            }
        }
    }
    changed
}

/// An operand of the fused op: node `node`, whose axes are labelled
/// `labels`, permuted to `order` and reshaped to `shape`.
struct Input {
    node: usize,
    labels: Vec<char>,
    order: Vec<char>,
    shape: Vec<i64>,
}

/// A value of the chain read back from the fused result: `width` entries
/// of the last axis from `offset`, reshaped to the labels `order` (their
/// sizes `sizes`), permuted to the node's `labels`.
struct Output {
    node: usize,
    offset: i64,
    width: i64,
    order: Vec<char>,
    sizes: Vec<i64>,
    labels: Vec<char>,
}

/// A recognized chain and its replacement.
struct Plan {
    part: FlashPart,
    inputs: Vec<Input>,
    /// The scale (`None`: none in the chain, a constant 1).
    scale: Option<usize>,
    result: Vec<i64>,
    outputs: Vec<Output>,
    location: usize,
}

/// The labels of a chain, named as the scores name them.
#[derive(Clone, Debug)]
struct Roles {
    n: char,
    d: char,
    groups: Vec<char>,
    rows: Vec<char>,
}

fn unique(labels: &[char]) -> bool {
    labels.iter().enumerate().all(|(i, c)| !labels[..i].contains(c))
}

fn same_set(a: &[char], b: &[char]) -> bool {
    a.len() == b.len() && a.iter().all(|c| b.contains(c))
}

/// The roles of the labels of scores `score` (`q . k`, `k` holding `n`).
fn roles(score: &Einsum, n: char) -> Option<Roles> {
    let (ql, kl, rl) = (&score.operands[0], &score.operands[1], &score.result);
    if ![ql, kl, rl].iter().all(|l| unique(l)) || ql.contains(&n) || !kl.contains(&n) || !rl.contains(&n) {
        return None;
    }
    let summed = score.summed();
    let [d] = summed.as_slice() else { return None };
    if !ql.contains(d) || !kl.contains(d) {
        return None;
    }
    let groups: Vec<char> = ql.iter().copied().filter(|c| kl.contains(c) && c != d).collect();
    let rows: Vec<char> = ql.iter().copied().filter(|c| !kl.contains(c)).collect();
    let keys: Vec<char> = std::iter::once(n).chain(groups.iter().copied()).chain([*d]).collect();
    let result: Vec<char> = groups.iter().chain(&rows).copied().chain([n]).collect();
    (same_set(kl, &keys) && same_set(rl, &result)).then_some(Roles { n, d: *d, groups, rows })
}

/// `spec` with the labels `from` renamed to `to` (position by position)
/// and every other label to one apart from `to`; `None` where `from`
/// names one label twice with two names.
fn rename(spec: &Einsum, from: &[char], to: &[char]) -> Option<Einsum> {
    if from.len() != to.len() {
        return None;
    }
    let mut map: Vec<(char, char)> = Vec::new();
    for (&f, &t) in from.iter().zip(to) {
        match map.iter().find(|(x, _)| *x == f) {
            Some(&(_, y)) if y != t => return None,
            Some(_) => {}
            None => map.push((f, t)),
        }
    }
    let mut free = ('a'..='z').chain('A'..='Z').filter(|c| !to.contains(c));
    for &c in spec.operands.iter().flatten().chain(&spec.result) {
        if !map.iter().any(|(x, _)| *x == c) {
            map.push((c, free.next()?));
        }
    }
    let name = |list: &[char]| -> Vec<char> {
        list.iter().map(|c| map.iter().find(|(x, _)| x == c).expect("mapped").1).collect()
    };
    Some(Einsum { operands: spec.operands.iter().map(|o| name(o)).collect(), result: name(&spec.result) })
}

/// The sizes of labels, from nodes' shapes.
#[derive(Default)]
struct Sizes(HashMap<char, i64>);

impl Sizes {
    fn add(&mut self, labels: &[char], shape: &[i64]) -> Option<()> {
        if labels.len() != shape.len() {
            return None;
        }
        for (&c, &s) in labels.iter().zip(shape) {
            match self.0.get(&c) {
                Some(&t) if t != s => return None,
                _ => {
                    self.0.insert(c, s);
                }
            }
        }
        Some(())
    }
    fn of(&self, labels: &[char]) -> Vec<i64> {
        labels.iter().map(|c| self.0[c]).collect()
    }
    fn product(&self, labels: &[char]) -> i64 {
        labels.iter().map(|c| self.0[c]).product()
    }
}

/// The softmax of scores over a range, at node `p`: `P = softmax_n(S *
/// c)`, `S = q . k[range]`.
struct Core {
    p: usize,
    softmax: Softmax,
    x: usize,
    s: usize,
    scale: Option<usize>,
    q: usize,
    k: usize,
    score: Einsum,
    roles: Roles,
    sizes: Sizes,
}

fn core(branch: &Branch, p: usize) -> Option<Core> {
    let nodes = &branch.nodes;
    let softmax = is_softmax(branch, p)?;
    let (x, axis) = (softmax.input, softmax.axis);
    let Scores { s, scale, score, q, k } = scores(branch, x, axis)?;
    let n = score.result[axis];
    let roles = roles(&score, n)?;
    let mut sizes = Sizes::default();
    sizes.add(&score.operands[0], &nodes[q].ty.shape)?;
    sizes.add(&score.operands[1], &nodes[k].ty.shape)?;
    // The range dynamic, every other label static; floats of one type.
    if sizes.0[&n] != DYNAMIC || sizes.0.iter().any(|(c, &s)| *c != n && s == DYNAMIC) {
        return None;
    }
    let element = nodes[p].ty.element;
    if !element.is_float() || [q, k].iter().chain(scale.as_ref()).any(|&a| nodes[a].ty.element != element) {
        return None;
    }
    Some(Core { p, softmax, x, s, scale, q, k, score, roles, sizes })
}

/// The nodes of the softmax that only the chain may use.
fn core_internal(c: &Core) -> Vec<usize> {
    // (The maximum's and sum's reshapes for broadcasting may have other
    // readers: they stay, reading the fused op's statistics.)
    let sm = &c.softmax;
    let mut inside = vec![c.p, sm.exp, sm.shifted, c.x];
    if c.s != c.x {
        inside.push(c.s);
    }
    inside
}

/// The values of a chain: node `node`, its labels named as the scores name
/// theirs, with their own label `e`.
#[derive(Clone)]
struct Values {
    node: usize,
    labels: Vec<char>,
    e: char,
}

/// Whether `labels` (of values over the range) are the range, the groups
/// and one label `e` of their own; `e` then.
fn values_label(c: &Core, labels: &[char]) -> Option<char> {
    let own: Vec<char> = labels.iter().copied().filter(|x| *x != c.roles.n && !c.roles.groups.contains(x)).collect();
    let [e] = own.as_slice() else { return None };
    (unique(labels) && labels.len() == c.roles.groups.len() + 2 && labels.contains(&c.roles.n)).then_some(*e)
}

/// The output `O = P . v[range]`: a reader of `P` summing the range only.
fn output(branch: &Branch, c: &Core, users: &[Vec<usize>]) -> Option<(usize, Values, Vec<char>)> {
    users[c.p].iter().find_map(|&o| {
        let (spec, other) = first_operand(branch, o, c.p)?;
        let spec = rename(&spec, &spec.operands[0].clone(), &c.score.result)?;
        let e = values_label(c, &spec.operands[1])?;
        let out: Vec<char> = c.roles.groups.iter().chain(&c.roles.rows).copied().chain([e]).collect();
        let fits = same_set(&spec.result, &out) && unique(&spec.result) && spec.summed() == [c.roles.n];
        let dynamic = branch.nodes[other].ty.shape.get(spec.operands[1].iter().position(|&x| x == c.roles.n)?);
        let element = branch.nodes[other].ty.element == branch.nodes[c.p].ty.element;
        (fits && element && dynamic == Some(&DYNAMIC))
            .then(|| (o, Values { node: other, labels: spec.operands[1].clone(), e }, spec.result.clone()))
    })
}

/// The contraction at `k` with `x` as its first operand (swapped where it
/// is the second), and the other operand.
fn first_operand(branch: &Branch, k: usize, x: usize) -> Option<(Einsum, usize)> {
    let (spec, [a, b]) = contraction(branch, k)?;
    if a == x {
        Some((spec, b))
    } else if b == x {
        Some((swapped(&spec), a))
    } else {
        None
    }
}

/// The query half's extra nodes: `dP`, `P * dP`, its sum `D`, `dP - D`,
/// `P * (dP - D)`, its scaling, and `dQ`, with the values `dP` reads.
struct QueryHalf {
    dp: usize,
    d_o: usize,
    d_o_labels: Vec<char>,
    e2: char,
    values: Values,
    pdp: usize,
    dsum: usize,
    diff: usize,
    ds0: usize,
    ds: usize,
    dq: usize,
    dq_labels: Vec<char>,
    d2: char,
}

/// The other operand of a product `Binary(Mul, a, b)` at node `u` with
/// `x` as one of them.
fn times(branch: &Branch, u: usize, x: usize) -> Option<usize> {
    match branch.nodes[u].kind {
        NodeKind::Binary(BinaryKind::Mul, a, b) if a == x => Some(b),
        NodeKind::Binary(BinaryKind::Mul, a, b) if b == x => Some(a),
        _ => None,
    }
}

/// Whether scalar nodes `a` and `b` are the same scale.
fn same_scale(branch: &Branch, a: usize, b: usize) -> bool {
    if a == b {
        return true;
    }
    let (x, y) = (&branch.nodes[a], &branch.nodes[b]);
    matches!((&x.kind, &y.kind), (NodeKind::Constant { values: u, .. }, NodeKind::Constant { values: v, .. }) if u == v)
        && x.ty == y.ty
}

/// Node `x`'s labels as those of `target`'s axes: `x` is `target` or a
/// permutation of it (`labels` are `x`'s).
fn through_permute(branch: &Branch, x: usize, target: usize, labels: &[char]) -> Option<Vec<char>> {
    if x == target {
        return Some(labels.to_vec());
    }
    match &branch.nodes[x].kind {
        NodeKind::Move(Movement::Permute(order), list) if list[0] == target => {
            let mut out = vec![' '; labels.len()];
            for (i, &k) in order.iter().enumerate() {
                out[k] = labels[i];
            }
            Some(out)
        }
        _ => None,
    }
}

fn query_half(branch: &Branch, c: &Core, users: &[Vec<usize>], values: Option<&Values>) -> Option<QueryHalf> {
    let nodes = &branch.nodes;
    let axis = c.softmax.axis;
    let shape = &nodes[c.s].ty.shape;
    for &pdp in &users[c.p] {
        let Some(dp) = times(branch, pdp, c.p) else { continue };
        let Some((spec, [a, b])) = contraction(branch, dp) else { continue };
        if nodes[dp].ty.shape != *shape {
            continue;
        }
        let Some(spec) = rename(&spec, &spec.result.clone(), &c.score.result) else { continue };
        // The values: the operand with the range.
        let (d_o, v, spec) = if spec.operands[1].contains(&c.roles.n) {
            (a, b, spec)
        } else if spec.operands[0].contains(&c.roles.n) {
            (b, a, swapped(&spec))
        } else {
            continue;
        };
        let summed = spec.summed();
        let [e2] = summed.as_slice() else { continue };
        let e2 = *e2;
        let Some(e) = values_label(c, &spec.operands[1]) else { continue };
        if e != e2 || nodes[v].ty.element != nodes[c.p].ty.element {
            continue;
        }
        let found = Values { node: v, labels: spec.operands[1].clone(), e };
        // The values of the output, where there is one, are these (their
        // own label apart).
        if let Some(w) = values {
            let same = w.node == v
                && w.labels.iter().zip(&found.labels).all(|(x, y)| if *x == w.e { *y == e } else { x == y });
            if !same {
                continue;
            }
        }
        let Some(at) = found.labels.iter().position(|&x| x == c.roles.n) else { continue };
        if nodes[v].ty.shape.get(at) != Some(&DYNAMIC) {
            continue;
        }
        let want: Vec<char> = c.roles.groups.iter().chain(&c.roles.rows).copied().chain([e2]).collect();
        if !unique(&spec.operands[0]) || !same_set(&spec.operands[0], &want) {
            continue;
        }
        let d_o_labels = spec.operands[0].clone();
        // D = sum_n P dP, kept for broadcasting.
        let Some(&dsum) = users[pdp]
            .iter()
            .find(|&&u| matches!(nodes[u].kind, NodeKind::Reduce(ReduceKind::Sum, a, r) if a == pdp && r == axis))
        else {
            continue;
        };
        let kept = users[dsum].iter().copied().find(|&u| {
            let mut keep = shape.clone();
            keep[axis] = 1;
            matches!(&nodes[u].kind, NodeKind::Move(Movement::Reshape, _)) && nodes[u].ty.shape == keep
        });
        let held = match kept {
            Some(k) => k,
            None if axis == 0 => dsum,
            None => continue,
        };
        let Some(&diff) = users[held]
            .iter()
            .find(|&&u| matches!(nodes[u].kind, NodeKind::Binary(BinaryKind::Sub, x, y) if x == dp && y == held))
        else {
            continue;
        };
        let Some(&ds0) = users[diff].iter().find(|&&u| times(branch, u, diff) == Some(c.p)) else { continue };
        let ds = match c.scale {
            None => ds0,
            Some(scale) => {
                let Some(&ds) =
                    users[ds0].iter().find(|&&u| times(branch, u, ds0).is_some_and(|s| same_scale(branch, s, scale)))
                else {
                    continue;
                };
                ds
            }
        };
        // dQ = dS . k, summing the range (k possibly permuted).
        for &dq in &users[ds] {
            let Some((spec, other)) = first_operand(branch, dq, ds) else { continue };
            let Some(spec) = rename(&spec, &spec.operands[0].clone(), &c.score.result) else { continue };
            let Some(kl) = through_permute(branch, other, c.k, &spec.operands[1]) else { continue };
            if spec.summed() != [c.roles.n] {
                continue;
            }
            let score_kl = &c.score.operands[1];
            let Some(d2) = kl.iter().zip(score_kl).find(|(_, y)| **y == c.roles.d).map(|(x, _)| *x) else {
                continue;
            };
            let fits = kl.iter().zip(score_kl).all(|(x, y)| if *y == c.roles.d { *x == d2 } else { x == y });
            let want: Vec<char> = c.roles.groups.iter().chain(&c.roles.rows).copied().chain([d2]).collect();
            if !fits || !same_set(&spec.result, &want) || !unique(&spec.result) {
                continue;
            }
            return Some(QueryHalf {
                dp,
                d_o,
                d_o_labels,
                e2,
                values: found,
                pdp,
                dsum,
                diff,
                ds0,
                ds,
                dq,
                dq_labels: spec.result.clone(),
                d2,
            });
        }
    }
    None
}

/// The plan for the softmax at `p`: its query half where the branch has
/// one, else the forward attention where `P` is contracted with values.
fn attention_plan(branch: &Branch, p: usize, users: &[Vec<usize>]) -> Option<(Plan, Vec<usize>)> {
    let c = core(branch, p)?;
    let nodes = &branch.nodes;
    let out = output(branch, &c, users);
    let half = query_half(branch, &c, users, out.as_ref().map(|(_, v, _)| v));
    if out.is_none() && half.is_none() {
        return None;
    }
    let values = half.as_ref().map(|h| h.values.clone()).or_else(|| out.as_ref().map(|(_, v, _)| v.clone()))?;
    let r = &c.roles;
    let (groups, rows) = (&r.groups, &r.rows);
    let mut sizes = Sizes(c.sizes.0.clone());
    sizes.add(&values.labels, &nodes[values.node].ty.shape)?;
    let gp = sizes.product(groups);
    let rp = sizes.product(rows);
    let (dk, dv) = (sizes.0[&r.d], sizes.0[&values.e]);
    let canonical = |tail: &[char]| -> Vec<char> { groups.iter().chain(rows).chain(tail).copied().collect() };
    let key_order: Vec<char> = std::iter::once(r.n).chain(groups.iter().copied()).chain([r.d]).collect();
    let value_order: Vec<char> = std::iter::once(r.n).chain(groups.iter().copied()).chain([values.e]).collect();
    let mut inputs = vec![
        Input { node: c.q, labels: c.score.operands[0].clone(), order: canonical(&[r.d]), shape: vec![1, gp, rp, dk] },
        Input { node: c.k, labels: c.score.operands[1].clone(), order: key_order, shape: vec![DYNAMIC, gp, dk] },
        Input { node: values.node, labels: values.labels.clone(), order: value_order, shape: vec![DYNAMIC, gp, dv] },
    ];
    let mut stat_labels = c.score.result.clone();
    stat_labels.remove(c.softmax.axis);
    let stat = |node: usize, offset: i64| Output {
        node,
        offset,
        width: 1,
        order: canonical(&[]),
        sizes: sizes.of(&canonical(&[])),
        labels: stat_labels.clone(),
    };
    let mut outputs = vec![stat(c.softmax.max, dv), stat(c.softmax.sum, dv + 1)];
    if let Some((o, _, labels)) = &out {
        let order = canonical(&[values.e]);
        outputs.push(Output { node: *o, offset: 0, width: dv, sizes: sizes.of(&order), order, labels: labels.clone() });
    }
    let mut internal = core_internal(&c);
    let part = match &half {
        Some(h) => {
            inputs.push(Input {
                node: h.d_o,
                labels: h.d_o_labels.clone(),
                order: canonical(&[h.e2]),
                shape: vec![1, gp, rp, dv],
            });
            outputs.push(stat(h.dsum, dv + 2));
            sizes.add(&[h.d2], &[dk])?;
            let order = canonical(&[h.d2]);
            outputs.push(Output {
                node: h.dq,
                offset: dv + 3,
                width: dk,
                sizes: sizes.of(&order),
                order,
                labels: h.dq_labels.clone(),
            });
            internal.extend([h.dp, h.pdp, h.diff, h.ds0]);
            if h.ds != h.ds0 {
                internal.push(h.ds);
            }
            FlashPart::Query
        }
        None => FlashPart::Forward,
    };
    let width = if part == FlashPart::Query { dv + 3 + dk } else { dv + 2 };
    let plan = Plan { part, inputs, scale: c.scale, result: vec![1, gp, rp, width], outputs, location: p };
    Some((plan, internal))
}

/// Whether the plan can replace its chain: the chain's intermediate
/// values (`internal`) read only by the chain, the fused op's inputs
/// computed without any of them or of the outputs.
fn replaceable(branch: &Branch, plan: &Plan, internal: &[usize], users: &[Vec<usize>]) -> bool {
    let outputs: Vec<usize> = plan.outputs.iter().map(|o| o.node).collect();
    let ours = |k: usize| internal.contains(&k) || outputs.contains(&k);
    if internal.iter().any(|&k| k == branch.result || users[k].iter().any(|&u| !ours(u))) {
        return false;
    }
    // The inputs' own inputs, transitively.
    let mut seen = vec![false; branch.nodes.len()];
    let mut stack: Vec<usize> = plan.inputs.iter().map(|i| i.node).chain(plan.scale).collect();
    while let Some(k) = stack.pop() {
        if std::mem::replace(&mut seen[k], true) {
            continue;
        }
        if ours(k) {
            return false;
        }
        stack.extend(operands(&branch.nodes[k].kind));
    }
    true
}

/// The first chain of `branch` that can be fused.
fn find(branch: &Branch) -> Option<Plan> {
    let users = users(branch);
    (0..branch.nodes.len()).find_map(|k| {
        let (plan, internal) = attention_plan(branch, k, &users).or_else(|| key::plan(branch, k, &users))?;
        replaceable(branch, &plan, &internal, &users).then_some(plan)
    })
}

/// Replaces the plan's chain: the fused op after its inputs, the outputs'
/// readers reading its result, the branch in dependence order again.
fn apply<'c>(branch: &mut Branch<'c>, plan: Plan) {
    let location = branch.nodes[plan.location].location;
    let element = branch.nodes[plan.location].ty.element;
    let old = branch.nodes.len();
    let mut nodes: Vec<Node<'c>> = branch.nodes.clone();
    let push = |nodes: &mut Vec<Node<'c>>, kind: NodeKind, shape: Vec<i64>| -> usize {
        nodes.push(Node { kind, ty: PointType { shape, element }, location });
        nodes.len() - 1
    };
    // Permutes `x` (labels `from`) to `to`, then reshapes it to `shape`.
    let arrange = |nodes: &mut Vec<Node<'c>>, x: usize, from: &[char], to: &[char], shape: Vec<i64>| -> usize {
        let order: Vec<usize> = to.iter().map(|c| from.iter().position(|x| x == c).expect("a label")).collect();
        let mut x = x;
        if order.iter().enumerate().any(|(i, &k)| i != k) {
            let permuted: Vec<i64> = order.iter().map(|&k| nodes[x].ty.shape[k]).collect();
            x = push(nodes, NodeKind::Move(Movement::Permute(order), vec![x]), permuted);
        }
        if nodes[x].ty.shape != shape {
            x = push(nodes, NodeKind::Move(Movement::Reshape, vec![x]), shape);
        }
        x
    };
    let mut operands: Vec<usize> =
        plan.inputs.iter().map(|i| arrange(&mut nodes, i.node, &i.labels, &i.order, i.shape.clone())).collect();
    let scale = match plan.scale {
        Some(s) => s,
        None => {
            let text = format!("dense<1.0> : tensor<{}>", element.mlir());
            let integers = crate::program::integers_of(&[1.0], element);
            push(
                &mut nodes,
                NodeKind::Constant { text: text.into(), values: [1.0].into(), integers: integers.into() },
                Vec::new(),
            )
        }
    };
    operands.push(scale);
    let flash = Flash { part: plan.part, band: Band::ALL };
    let fused = push(&mut nodes, NodeKind::FlashAttention(flash, operands), plan.result.clone());
    let mut replace: HashMap<usize, usize> = HashMap::new();
    for out in &plan.outputs {
        let mut offsets = vec![0; plan.result.len()];
        *offsets.last_mut().expect("rank") = out.offset;
        let mut size = plan.result.clone();
        *size.last_mut().expect("rank") = out.width;
        let part = push(&mut nodes, NodeKind::Move(Movement::Slice(offsets), vec![fused]), size);
        let shape = branch.nodes[out.node].ty.shape.clone();
        let unflat = push(&mut nodes, NodeKind::Move(Movement::Reshape, vec![part]), out.sizes.clone());
        let value = arrange(&mut nodes, unflat, &out.order, &out.labels, shape);
        replace.insert(out.node, value);
    }
    for node in nodes.iter_mut().take(old) {
        node.kind = map_operands(&node.kind, |a| replace.get(&a).copied().unwrap_or(a));
    }
    let result = replace.get(&branch.result).copied().unwrap_or(branch.result);
    // Dependence order: each node after its operands, the old order kept
    // where it allows.
    let mut order: Vec<usize> = Vec::with_capacity(nodes.len());
    let mut placed = vec![false; nodes.len()];
    for start in 0..nodes.len() {
        let mut stack = vec![(start, false)];
        while let Some((k, ready)) = stack.pop() {
            if placed[k] {
                continue;
            }
            if ready {
                placed[k] = true;
                order.push(k);
                continue;
            }
            stack.push((k, true));
            for a in crate::rewrite::operands(&nodes[k].kind).into_iter().rev() {
                if !placed[a] {
                    stack.push((a, false));
                }
            }
        }
    }
    let mut at = vec![0; nodes.len()];
    for (i, &k) in order.iter().enumerate() {
        at[k] = i;
    }
    branch.nodes = order
        .iter()
        .map(|&k| {
            let node = &nodes[k];
            Node { kind: map_operands(&node.kind, |a| at[a]), ty: node.ty.clone(), location: node.location }
        })
        .collect();
    branch.result = at[result];
    let live = live_nodes(branch);
    compact_branch(branch, &live);
}
