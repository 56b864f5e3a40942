//! `temporal-autodiff`: replaces every `temporal.grad` by the adjoint
//! program, in the same dependence graph, and removes
//! `temporal.stop_gradient`. Afterwards the program is an ordinary one:
//! the verifier, the optimizations, the scheduler, store selection and the
//! lowerings see recurrent tensors and nothing else. It runs first in every
//! pipeline (`-O0` included) and before the interpreter.
//!
//! What `grad(of, wrt)` means (`dialects/README.md`): over `wrt`'s domain
//! with `wrt`'s point type, point `q` is the derivative of the sum of all
//! points of `of` (scalar float points) with respect to `wrt[q]`, zero
//! where no path joins them. Gradients flow through every read, a
//! tensor's own past included (back-propagation through time), except
//! where `wrt` is updated from this very gradient (a training loop:
//! `W[i] = W[i-1] - lr * stop_gradient(g[i-1])`): there `wrt`'s reads of
//! its own points pass no gradient, so the gradient at iteration `i` is
//! that of the loss through `W[i]` alone. (Without that rule such a
//! program has no meaning: `g[i-1]` would need the loss of iteration `i`,
//! which needs `W[i]`, which needs `g[i-1]`.)
//!
//! How: the tensors on a path from `wrt` to `of` get an adjoint `dX` (same
//! domain and point type). For each branch `b` of a reader `R` and each
//! read node `k` of such an `X` in it, a contribution tensor `C` over `R`'s
//! domain holds the read's cotangent where `b` defines `R`'s point (zero
//! where an earlier branch does, or none): a copy of the branch's forward
//! nodes, a read of `dR` at the point, and the vector-Jacobian products
//! from the result back to the read (`vjp`). The read's index reversed
//! (`pullback`) brings `C` to `X`'s points: directly where it is a
//! permutation of dimensions, else through a tensor whose branches say
//! which reader points read `q` (`t - 1` is read by `q + 1`; a weight read
//! at every `t` sums `C` over `t`). `dX` sums its contributions, plus one
//! where `X` is `of`. A recurrence's adjoint reads its own future, and the
//! scheduler runs it backward.
//!
//! Gradients marked `all_reduce` (data-parallel training) become the
//! reduction over the processes, those of one loss in one fused buffer per
//! point (`fused`).
//!
//! Reads of ranges take another road (`ranges`): their cotangents have a
//! dynamic length, so the gradient of each source point is computed at
//! that point from the reader's row values and cotangents, stashed over
//! the reader's domain. Fused ops (`temporal.attention`) are taken apart
//! in the adjoint's copies (`decompose`).
//!
//! Assumes a program `Program::from_module` accepts; refuses, at the op,
//! what it cannot differentiate yet: range reads the element frame cannot
//! follow (see `ranges`), coordinates it cannot reverse (`t mod 2`),
//! external calls without a gradient, `dynamic_slice` on a path, and a
//! branch whose gradient needs the value of an external call (it would
//! run twice).

mod body;
mod contribution;
mod cotangents;
mod decompose;
mod fused;
mod pullback;
mod ranges;
mod running_sums;
mod vjp;

pub(crate) use fused::pack as pack_all_reduce;

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::{PassDiagnostic, PassResult};
use crate::pass::{PassOptions, TempoPass};
use crate::program::{Branch, DYNAMIC, GradDecl, NodeKind, PointType, Program, ReduceKind, Tensor, UnaryKind};
use body::Body;
use contribution::contribution;
use cotangents::cotangents;
use melior::ir::{Location, OperationRef};
use std::collections::HashMap;

/// The `temporal-autodiff` pass.
pub struct TemporalAutodiff;

impl TempoPass for TemporalAutodiff {
    fn name(&self) -> &'static str {
        "temporal-autodiff"
    }
    fn summary(&self) -> &'static str {
        "Replace each temporal.grad by the adjoint program (recurrent tensors whose reads are the forward reads reversed; back-propagation through time) and remove temporal.stop_gradient"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let mut program = Program::from_module(op)?;
        if !expand(&mut program)? {
            return Ok(());
        }
        crate::emit::replace_program(op, &program)
    }
}

/// Expands the gradients of `program` and removes its stop_gradient nodes;
/// false when there was nothing to do.
pub fn expand<'c>(program: &mut Program<'c>) -> Result<bool, Vec<PassDiagnostic<'c>>> {
    let stops = program
        .tensors
        .iter()
        .flat_map(|t| &t.branches)
        .flat_map(|b| &b.nodes)
        .any(|n| matches!(n.kind, NodeKind::Unary(UnaryKind::StopGradient, _)));
    if program.grads.is_empty() && !stops {
        return Ok(false);
    }
    let grads = std::mem::take(&mut program.grads);
    // Gradients with no path to their loss (zero on every process).
    let zero: Vec<usize> = grads
        .iter()
        .filter(|g| g.all_reduce.is_some())
        .filter(|g| {
            let path = active(program, g.of, g.wrt);
            !path[g.of] || !path[g.wrt]
        })
        .map(|g| g.tensor)
        .collect();
    let mut sums = Vec::new();
    for group in groups(program, &grads) {
        differentiate(program, &group, &mut sums).map_err(|e| vec![e])?;
    }
    fused::all_reduce(program, &grads, &zero);
    for tensor in &mut program.tensors {
        for branch in &mut tensor.branches {
            remove_stop_gradients(branch);
        }
    }
    running_sums::orient(program, sums);
    Ok(true)
}

/// Uses of each stop_gradient become uses of its operand; the nodes go.
fn remove_stop_gradients(branch: &mut Branch) {
    let n = branch.nodes.len();
    let mut forward: Vec<usize> = (0..n).collect();
    for k in 0..n {
        if let NodeKind::Unary(UnaryKind::StopGradient, a) = branch.nodes[k].kind {
            forward[k] = forward[a];
        }
    }
    let keep: Vec<bool> = (0..n).map(|k| forward[k] == k).collect();
    compact(branch, &keep, &forward);
}

/// Keeps the nodes marked in `keep`, operands first sent through
/// `forward` (onto kept nodes), renumbered.
fn compact(branch: &mut Branch, keep: &[bool], forward: &[usize]) {
    let mut new_index = vec![usize::MAX; branch.nodes.len()];
    let mut nodes = Vec::new();
    for (k, node) in branch.nodes.iter().enumerate() {
        if keep[k] {
            new_index[k] = nodes.len();
            let mut node = node.clone();
            node.kind = crate::rewrite::map_operands(&node.kind, |a| new_index[forward[a]]);
            nodes.push(node);
        }
    }
    branch.result = new_index[forward[branch.result]];
    branch.nodes = nodes;
}

fn identity(num_dims: usize, num_symbols: usize) -> AffineMap {
    AffineMap { num_dims, num_symbols, results: (0..num_dims).map(AffineExpr::Dim).collect() }
}

fn universe(num_dims: usize, num_symbols: usize) -> IntegerSet {
    IntegerSet { num_dims, num_symbols, constraints: Vec::new() }
}

/// A branch computing zeros of `point`.
fn zero_branch<'c>(when: IntegerSet, point: &PointType, location: Location<'c>) -> Branch<'c> {
    let mut body = Body::new(location);
    let result = body.zeros(point);
    Branch { when, nodes: body.nodes, result, location }
}

/// The tensors on a differentiable path from `wrt` to `of`: through reads
/// whose value reaches the reader's result through ops that pass a
/// gradient (a read only under a `stop_gradient`, a comparison or an
/// integer value is no edge: a sampled action cuts a rollout's
/// observations off the policy's gradient).
fn active(program: &Program, of: usize, wrt: usize) -> Vec<bool> {
    ReadGraph::new(program).paths(of, wrt, true)
}

/// The reads of a program as a graph, along every read and along
/// differentiable ones only (see [`active`]): built once per program
/// state, then asked for many paths (a training program has a gradient
/// per parameter; rebuilding it per question made grouping them cubic).
struct ReadGraph {
    /// `[any, differentiable]`: per tensor, the tensors reading it, and
    /// the tensors it reads.
    readers: [Vec<Vec<usize>>; 2],
    sources: [Vec<Vec<usize>>; 2],
}

impl ReadGraph {
    fn new(program: &Program) -> Self {
        let n = program.tensors.len();
        let mut readers = [vec![Vec::new(); n], vec![Vec::new(); n]];
        let mut sources = [vec![Vec::new(); n], vec![Vec::new(); n]];
        for (r, t) in program.tensors.iter().enumerate() {
            for branch in &t.branches {
                let reaching = vjp::reaching(&branch.nodes, branch.result);
                for (k, node) in branch.nodes.iter().enumerate() {
                    if let Some(source) = crate::rewrite::source(&node.kind) {
                        readers[0][source].push(r);
                        sources[0][r].push(source);
                        if reaching[k] {
                            readers[1][source].push(r);
                            sources[1][r].push(source);
                        }
                    }
                }
            }
        }
        ReadGraph { readers, sources }
    }

    /// The tensors on a path of reads from `wrt` to `of`: differentiable
    /// ones only, or any.
    fn paths(&self, of: usize, wrt: usize, differentiable: bool) -> Vec<bool> {
        let which = usize::from(differentiable);
        let reach = |start: usize, next: &[Vec<usize>]| {
            let mut seen = vec![false; next.len()];
            let mut stack = vec![start];
            seen[start] = true;
            while let Some(x) = stack.pop() {
                for &y in &next[x] {
                    if !seen[y] {
                        seen[y] = true;
                        stack.push(y);
                    }
                }
            }
            seen
        };
        let from = reach(wrt, &self.readers[which]);
        let to = reach(of, &self.sources[which]);
        from.iter().zip(&to).map(|(a, b)| *a && *b).collect()
    }
}

/// A tensor name not yet in `program`, from `base`.
fn fresh_name(program: &Program, base: &str) -> String {
    let base: String = base.chars().take(200).collect();
    let taken = |name: &str| program.tensors.iter().any(|t| t.name == name);
    if !taken(&base) {
        return base;
    }
    (1..).map(|k| format!("{base}${k}")).find(|n| !taken(n)).expect("a free name")
}

/// Appends a computed tensor of no branches yet, its name made fresh
/// from `name`; returns its index.
pub(crate) fn push_tensor<'c>(
    program: &mut Program<'c>,
    name: String,
    domain: Vec<usize>,
    point: PointType,
    location: Location<'c>,
) -> usize {
    let name = fresh_name(program, &name);
    program.tensors.push(Tensor { name, domain, point, is_input: false, branches: Vec::new(), location });
    program.tensors.len() - 1
}

/// Gradients of one `of` share one adjoint program (the adjoints of what
/// lies between do not depend on `wrt`), unless a `wrt` updated from its
/// own gradient lies on another's path (its self-reads pass no gradient
/// for its own gradient only).
fn groups<'c>(program: &Program<'c>, grads: &[GradDecl<'c>]) -> Vec<Vec<GradDecl<'c>>> {
    let graph = ReadGraph::new(program);
    let driven: HashMap<(usize, usize), bool> =
        grads.iter().map(|g| ((g.wrt, g.tensor), graph.paths(g.wrt, g.tensor, false)[g.wrt])).collect();
    let mut paths: HashMap<(usize, usize), Vec<bool>> = HashMap::new();
    for g in grads {
        paths.entry((g.of, g.wrt)).or_insert_with(|| graph.paths(g.of, g.wrt, true));
    }
    let is_driven = |m: &GradDecl| driven[&(m.wrt, m.tensor)];
    let mut out: Vec<Vec<GradDecl<'c>>> = Vec::new();
    for grad in grads {
        let fits = |group: &Vec<GradDecl<'c>>| {
            let mut members = group.clone();
            members.push(grad.clone());
            group[0].of == grad.of
                && members.iter().all(|m| {
                    !is_driven(m)
                        || members
                            .iter()
                            .all(|o| o.tensor == m.tensor || !paths[&(o.of, o.wrt)][m.wrt] || o.wrt == m.wrt)
                })
        };
        match out.iter_mut().find(|g| fits(g)) {
            Some(group) => group.push(grad.clone()),
            None => out.push(vec![grad.clone()]),
        }
    }
    out
}

/// Whether `wrt` is updated from this gradient (a training loop): read
/// through `stop_gradient`, so along any read.
fn driven(program: &Program, grad: &GradDecl) -> bool {
    ReadGraph::new(program).paths(grad.wrt, grad.tensor, false)[grad.wrt]
}

fn check<'c>(program: &Program<'c>, grad: &GradDecl<'c>) -> Result<(), PassDiagnostic<'c>> {
    let GradDecl { of, wrt, location, .. } = *grad;
    let of_point = &program.tensors[of].point;
    if !of_point.shape.is_empty() || !of_point.element.is_float() {
        return Err(PassDiagnostic::new(
            location,
            format!(
                "temporal.grad: the gradient is of the sum of the points of '{}', which must be scalar floats (tensor<f32> or tensor<f64>), not {}",
                program.tensors[of].name, of_point
            ),
        ));
    }
    if !program.tensors[wrt].point.element.is_float() {
        return Err(PassDiagnostic::new(
            location,
            format!(
                "temporal.grad: '{}' has {} points; gradients are with respect to floats",
                program.tensors[wrt].name, program.tensors[wrt].point
            ),
        ));
    }
    let on_paths = active(program, of, wrt);
    for (r, tensor) in program.tensors.iter().enumerate().filter(|(r, _)| on_paths[*r]) {
        for branch in &tensor.branches {
            let reaching = vjp::reaching(&branch.nodes, branch.result);
            for (node, _) in branch.nodes.iter().zip(reaching).filter(|(_, reaches)| *reaches) {
                if let NodeKind::ReadAt { source, .. } = node.kind
                    && on_paths[source]
                {
                    return Err(PassDiagnostic::new(
                        node.location,
                        format!(
                            "temporal.grad: not yet: the gradient of '{}' with respect to '{}' passes through this read                              through data of '{}' by '{}'",
                            program.tensors[of].name,
                            program.tensors[wrt].name,
                            program.tensors[source].name,
                            program.tensors[r].name
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Expands the gradients of `group` (one `of`) with one adjoint program.
fn differentiate<'c>(
    program: &mut Program<'c>,
    group: &[GradDecl<'c>],
    sums: &mut Vec<running_sums::RunningSum<'c>>,
) -> Result<(), PassDiagnostic<'c>> {
    let num_symbols = program.dims.len();
    for grad in group {
        check(program, grad)?;
    }
    let of = group[0].of;
    let g_name = program.tensors[group[0].tensor].name.clone();
    let n = program.tensors.len();
    let mut is_active = vec![false; n];
    let mut members = Vec::new();
    for grad in group {
        let path = active(program, of, grad.wrt);
        if !path[of] || !path[grad.wrt] {
            // No path: zero everywhere.
            let t = &program.tensors[grad.tensor];
            let (dims, point) = (t.domain.len(), t.point.clone());
            program.tensors[grad.tensor].branches =
                vec![zero_branch(universe(dims, num_symbols), &point, grad.location)];
            continue;
        }
        for (k, on) in path.into_iter().enumerate() {
            is_active[k] |= on;
        }
        members.push(grad.clone());
    }
    if members.is_empty() {
        return Ok(());
    }
    // A `wrt` updated from its gradient (a training loop): its own
    // recurrence passes no gradient (see the module's documentation).
    let cut: Vec<usize> = members.iter().filter(|m| driven(program, m)).map(|m| m.wrt).collect();
    // The adjoints.
    let forward_count = program.tensors.len();
    let mut adjoint = vec![usize::MAX; forward_count];
    // Where nothing on the path reads `of`, its adjoint is one everywhere:
    // the cotangents start from a constant, not from a tensor of ones.
    let of_read = (0..forward_count).any(|r| {
        is_active[r]
            && program.tensors[r]
                .branches
                .iter()
                .flat_map(|b| &b.nodes)
                .any(|n| crate::rewrite::source(&n.kind) == Some(of))
    });
    for x in 0..forward_count {
        if is_active[x] && (x != of || of_read) {
            let t = &program.tensors[x];
            let (name, domain, point, loc) =
                (format!("{g_name}$d${}", t.name), t.domain.clone(), t.point.clone(), t.location);
            adjoint[x] = push_tensor(program, name, domain, point, loc);
        }
    }
    // Contributions to each adjoint: nodes of its body (reads of C or A).
    let mut contributions: Vec<Vec<Contribution<'c>>> = vec![Vec::new(); forward_count];
    for r in 0..forward_count {
        if !is_active[r] || program.tensors[r].is_input {
            continue;
        }
        for b in 0..program.tensors[r].branches.len() {
            // Fused ops taken apart, so that each step has its product.
            let branch = decompose::decompose(&program.tensors[r].branches[b]);
            let reads: Vec<usize> = (0..branch.nodes.len())
                .filter(|&k| {
                    let node = &branch.nodes[k];
                    crate::rewrite::source(&node.kind).is_some_and(|x| is_active[x] && !(r == x && cut.contains(&x)))
                })
                .collect();
            let (ranges, points): (Vec<usize>, Vec<usize>) =
                reads.into_iter().partition(|&k| is_range(&branch.nodes[k].kind));
            let dr = (adjoint[r] != usize::MAX).then_some(adjoint[r]);
            // The range reads' element frames read row values (the stash)
            // that the reader's own backward sweep computes beside the
            // cotangents of its point reads, in the same tensors.
            let reaching = vjp::reaching(&branch.nodes, branch.result);
            let ranges: Vec<usize> = ranges.into_iter().filter(|&k| reaching[k]).collect();
            let planned =
                if ranges.is_empty() { None } else { Some(ranges::prepare(program, r, b, &branch, &ranges)?) };
            let requests = planned.as_ref().map_or(&[][..], |p| &p.requests[..]);
            let (points, stash) = cotangents(program, &g_name, r, b, &branch, &points, dr, requests)?;
            for (k, packed) in points {
                let x = crate::rewrite::source(&branch.nodes[k].kind).expect("a read");
                contributions[x].push(contribution(program, &g_name, r, b, &branch, k, &packed, sums)?);
            }
            if let Some(planned) = planned {
                for (x, c) in ranges::contributions(program, &g_name, r, b, &branch, planned, stash)? {
                    contributions[x].push(c);
                }
            }
        }
    }
    // The adjoints' bodies: the sum of their contributions (plus one at `of`).
    for x in 0..forward_count {
        if adjoint[x] == usize::MAX {
            continue;
        }
        let t = &program.tensors[x];
        let (point, loc, dims) = (t.point.clone(), t.location, t.domain.len());
        let mut body = Body::new(loc);
        let mut total: Option<usize> = None;
        if x == of {
            total = Some(body.splat(1.0, &point));
        }
        for (kind, ty, extract, at) in std::mem::take(&mut contributions[x]) {
            let read = body.push(kind, ty);
            body.nodes[read].location = at;
            let value = unpack(&mut body, read, extract.as_ref());
            total = Some(match total {
                Some(sum) => body.add(sum, value),
                None => value,
            });
        }
        let result = total.unwrap_or_else(|| body.zeros(&point));
        program.tensors[adjoint[x]].branches =
            vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result, location: loc }];
    }
    // Each gradient reads the adjoint of its `wrt`.
    for grad in &members {
        let t = &program.tensors[grad.tensor];
        let (dims, point) = (t.domain.len(), t.point.clone());
        let mut body = Body::new(grad.location);
        let result = body.push(NodeKind::Read { source: adjoint[grad.wrt], index: identity(dims, num_symbols) }, point);
        program.tensors[grad.tensor].branches =
            vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result, location: grad.location }];
    }
    Ok(())
}

/// Sums a range read's leading dimensions away.
fn reduce_ranges(body: &mut Body, read: usize) -> usize {
    let mut value = read;
    while body.ty(value).shape.first() == Some(&DYNAMIC) {
        value = body.reduce(ReduceKind::Sum, value, 0);
    }
    value
}

/// A term of an adjoint's body: a read (kind, type), the part of a packed
/// value it is (see [`Packed`]), and the read's location.
type Contribution<'c> = (NodeKind, PointType, Option<(i64, PointType)>, Location<'c>);

/// The value of the read `read` of a packed tensor: its ranges summed, then
/// its part cut out.
fn unpack(body: &mut Body, read: usize, extract: Option<&(i64, PointType)>) -> usize {
    let value = reduce_ranges(body, read);
    match extract {
        None => value,
        Some((offset, point)) => {
            let size = point.num_elements() as i64;
            let part = body.slice(value, &[*offset], &[size]);
            body.reshape(part, &point.shape)
        }
    }
}

/// Whether a read node reads a range (some dimension has an upper bound).
fn is_range(kind: &NodeKind) -> bool {
    matches!(kind, NodeKind::ReadRange { upper, .. } if upper.iter().any(|u| !u.results.is_empty()))
}

fn add(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    AffineExpr::Add(Box::new(a), Box::new(b))
}

fn sub(a: AffineExpr, b: AffineExpr) -> AffineExpr {
    add(a, AffineExpr::Mul(Box::new(b), Box::new(AffineExpr::Constant(-1))))
}

/// Nodes whose values reach the branch's result.
fn live_nodes(branch: &Branch) -> Vec<bool> {
    let mut live = vec![false; branch.nodes.len()];
    live[branch.result] = true;
    for k in (0..branch.nodes.len()).rev() {
        if live[k] {
            for a in crate::rewrite::operands(&branch.nodes[k].kind) {
                live[a] = true;
            }
        }
    }
    live
}
