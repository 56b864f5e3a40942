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
mod decompose;
mod fused;
mod pullback;
mod ranges;
mod running_sums;
mod vjp;

use crate::affine::{AffineExpr, AffineMap, IntegerSet};
use crate::diagnostics::{PassDiagnostic, PassResult};
use crate::pass::{PassOptions, TempoPass};
use crate::program::{Branch, DYNAMIC, GradDecl, NodeKind, PointType, Program, ReduceKind, Tensor, UnaryKind};
use body::Body;
use melior::ir::{Location, OperationRef};
use pullback::Coordinate;
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
        crate::print::replace_program(op, &program)
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

fn push_tensor<'c>(
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

/// Where the cotangent of one read lives: tensor `c` over the reader's
/// domain with points `c_point`, whole or (`extract`) the flat elements
/// from an offset, reshaped to the read's point type.
struct Packed {
    c: usize,
    c_point: PointType,
    extract: Option<(i64, PointType)>,
}

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

/// `values` of `body` packed by element type: per element type the node
/// holding them (one value whole, several flattened side by side), where
/// each lies in it (`None`: whole), and which of `values` they are.
type Packing = Vec<(usize, Vec<Option<(i64, PointType)>>, Vec<usize>)>;

fn pack(body: &mut Body, values: &[usize]) -> Packing {
    let mut elements: Vec<crate::program::ElementType> = Vec::new();
    for &v in values {
        if !elements.contains(&body.ty(v).element) {
            elements.push(body.ty(v).element);
        }
    }
    let mut out = Vec::new();
    for element in elements {
        let members: Vec<usize> = (0..values.len()).filter(|&m| body.ty(values[m]).element == element).collect();
        if let [m] = members[..] {
            out.push((values[m], vec![None], members));
            continue;
        }
        let mut offset = 0;
        let mut parts = Vec::new();
        let mut packed: Option<usize> = None;
        for &m in &members {
            let point = body.ty(values[m]).clone();
            let size = point.num_elements() as i64;
            let flat = body.reshape(values[m], &[size]);
            packed = Some(match packed {
                None => flat,
                Some(p) => body.concat(p, flat, 0),
            });
            parts.push(Some((offset, point)));
            offset += size;
        }
        out.push((packed.expect("a group has members"), parts, members));
    }
    out
}

/// A tensor over reader `r`'s domain computing `nodes` (up to `result`)
/// where branch `b` (here `branch`) defines `r`'s point, zero elsewhere;
/// refuses a body needing an external call's value (it would run twice).
#[allow(clippy::too_many_arguments)]
fn reader_tensor<'c>(
    program: &mut Program<'c>,
    name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    nodes: Vec<crate::program::Node<'c>>,
    result: usize,
    location: Location<'c>,
) -> Result<usize, PassDiagnostic<'c>> {
    let num_symbols = program.dims.len();
    let reader = program.tensors[r].clone();
    let point = nodes[result].ty.clone();
    let mut c_branch = Branch { when: branch.when.clone(), nodes, result, location: branch.location };
    let live = live_nodes(&c_branch);
    if let Some(call) =
        (0..c_branch.nodes.len()).find(|&n| live[n] && matches!(c_branch.nodes[n].kind, NodeKind::Call { .. }))
    {
        return Err(PassDiagnostic::new(
            c_branch.nodes[call].location,
            "temporal-autodiff: the gradient needs this external call's value, and a call runs once per point: \
             declare a tensor for its result and read that",
        ));
    }
    let identity_forward: Vec<usize> = (0..c_branch.nodes.len()).collect();
    compact(&mut c_branch, &live, &identity_forward);
    let dims = reader.domain.len();
    let mut branches: Vec<Branch<'c>> = reader.branches[..b]
        .iter()
        .map(|earlier| zero_branch(earlier.when.clone(), &point, earlier.location))
        .collect();
    let conditional = !branch.when.is_universe();
    branches.push(c_branch);
    if conditional {
        branches.push(zero_branch(universe(dims, num_symbols), &point, branch.location));
    }
    let c = push_tensor(program, name.to_string(), reader.domain.clone(), point, location);
    program.tensors[c].branches = branches;
    Ok(c)
}

/// The cotangents of the point reads `reads` of branch `b` of `r` (here
/// `branch`, fused ops taken apart), at the reader's points, given `r`'s
/// adjoint `dr` (`None`: one everywhere): one backward sweep through the
/// branch for all of them, kept in one tensor per element type (where
/// several reads share one, their flattened cotangents side by side), zero
/// where another branch defines the point. Reads without a differentiable
/// path are left out. With them, the row values `requests` the element
/// frames of the branch's range reads need (forward values, cotangents of
/// collapsing nodes, ...) from the same sweep, packed in the same tensors:
/// the forward values and the softmax's products are computed once for
/// the reader's cotangents and the frames' (FlashAttention-2's dQ and the
/// row statistics of its dK and dV in one pass). Returns where each read's
/// cotangent and each request lies.
#[allow(clippy::too_many_arguments)]
fn cotangents<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    wanted: &[usize],
    dr: Option<usize>,
    requests: &[ranges::Stash],
) -> Result<(Vec<(usize, Packed)>, Vec<ranges::StashTensor>), PassDiagnostic<'c>> {
    if wanted.is_empty() && requests.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let num_symbols = program.dims.len();
    let reader = program.tensors[r].clone();
    let mut body = Body::new(branch.location);
    body.nodes = branch.nodes.clone();
    let forward = body.nodes.len();
    // The reader's adjoint at the point (`None`: one, the seed of `of`).
    let seed = match dr {
        Some(dr) => body.push(
            NodeKind::Read { source: dr, index: identity(reader.domain.len(), num_symbols) },
            reader.point.clone(),
        ),
        None => body.splat(1.0, &reader.point),
    };
    // The parts of the branch's result, read back from the point the
    // forward pass stored (see `stored_parts`), before the sweep.
    let parts = result_parts(&branch.nodes, branch.result);
    let mut stored: Vec<(usize, usize)> = Vec::new();
    if !parts.is_empty() {
        let read = body.push(
            NodeKind::Read { source: r, index: identity(reader.domain.len(), num_symbols) },
            reader.point.clone(),
        );
        for (n, offsets) in &parts {
            let shape = branch.nodes[*n].ty.shape.clone();
            let value = if *n == branch.result { read } else { body.slice(read, offsets, &shape) };
            stored.push((*n, value));
        }
    }
    let swept = body.nodes.len();
    let seeds = [(branch.result, seed)];
    let mut sweep: Vec<usize> = wanted.to_vec();
    sweep.extend(ranges::swept(requests));
    let all = vjp::backprop_seeds(&mut body, forward, &seeds, &sweep)?;
    let mut found: Vec<(usize, usize)> = wanted.iter().filter_map(|&k| all.get(&k).map(|&ct| (k, ct))).collect();
    let stashed = ranges::stash_values(&mut body, branch, requests, &all);
    let mut roots: Vec<(usize, usize)> = found.clone();
    roots.extend(stashed.iter().map(|&v| (usize::MAX, v)));
    stored_parts(&mut body, forward, swept, &stored, &mut roots);
    let stashed: Vec<usize> = roots[found.len()..].iter().map(|&(_, v)| v).collect();
    found.truncate(0);
    found.extend(roots.iter().take(roots.len() - stashed.len()).copied());
    // Values: the reads' cotangents, then the requests.
    let mut values: Vec<usize> = found.iter().map(|&(_, ct)| ct).collect();
    values.extend(&stashed);
    let mut out = Vec::new();
    let mut stash = Vec::new();
    for (result, parts, members) in pack(&mut body, &values) {
        let c_point = body.ty(result).clone();
        let (c_name, at) = match found.get(members[0]) {
            Some(&(first, _)) => (format!("{g_name}$c${}${}${}", reader.name, b, first), branch.nodes[first].location),
            None => (format!("{g_name}$f${}${}", reader.name, b), branch.location),
        };
        let c = reader_tensor(program, &c_name, r, b, branch, body.nodes.clone(), result, at)?;
        let mut items = Vec::new();
        for (m, extract) in members.into_iter().zip(parts) {
            match found.get(m) {
                Some(&(k, _)) => out.push((k, Packed { c, c_point: c_point.clone(), extract })),
                None => items.push((requests[m - found.len()], extract)),
            }
        }
        if !items.is_empty() {
            stash.push((c, items));
        }
    }
    Ok((out, stash))
}

/// The values of a branch that are its result or a part of it: the result
/// and, down concatenations, each operand with its offsets in the result
/// (cheap nodes left out: reads, constants and movements, computed again
/// for nothing).
fn result_parts(nodes: &[crate::program::Node], result: usize) -> Vec<(usize, Vec<i64>)> {
    let mut out = Vec::new();
    let mut stack = vec![(result, vec![0i64; nodes[result].ty.shape.len()])];
    while let Some((k, offsets)) = stack.pop() {
        match &nodes[k].kind {
            NodeKind::Move(crate::program::Movement::Concat(axis), operands) => {
                let mut at = offsets.clone();
                for &o in operands {
                    stack.push((o, at.clone()));
                    at[*axis] += nodes[o].ty.shape[*axis];
                }
            }
            NodeKind::Read { .. } | NodeKind::ReadRange { .. } | NodeKind::Constant { .. } | NodeKind::Move(..) => {}
            _ if nodes[k].ty.is_static() => out.push((k, offsets)),
            _ => {}
        }
    }
    out
}

/// The vector-Jacobian products of a contribution (nodes from `swept` on)
/// read the forward values in `stored` (the branch's result or parts of
/// it: a sigmoid's output, whose derivative is `y (1 - y)`) from the
/// reader's stored point instead of their forward nodes, where that leaves
/// a matrix product of the forward copy dead: an LSTM's gates are then
/// not computed again in the backward pass (two products of `B` rows per
/// step). Elsewhere the copy is kept (reading the point would make the
/// program keep it). The values are the same: the contribution's branch
/// holds exactly where the forward branch defines the point.
fn stored_parts(
    body: &mut Body,
    forward: usize,
    swept: usize,
    stored: &[(usize, usize)],
    found: &mut [(usize, usize)],
) {
    if stored.is_empty() {
        return;
    }
    let products_live = |nodes: &[crate::program::Node], roots: &[usize]| -> usize {
        let mut live = vec![false; nodes.len()];
        for &k in roots {
            live[k] = true;
        }
        for k in (0..nodes.len()).rev() {
            if live[k] {
                for a in crate::rewrite::operands(&nodes[k].kind) {
                    live[a] = true;
                }
            }
        }
        (0..forward)
            .filter(|&k| live[k] && matches!(nodes[k].kind, NodeKind::Matmul(..) | NodeKind::Einsum(..)))
            .count()
    };
    let substitute = |k: usize| stored.iter().find(|(n, _)| *n == k).map_or(k, |&(_, v)| v);
    let mut nodes = body.nodes.clone();
    for node in &mut nodes[swept..] {
        node.kind = crate::rewrite::map_operands(&node.kind, substitute);
    }
    let roots: Vec<usize> = found.iter().map(|&(_, ct)| ct).collect();
    let new_roots: Vec<usize> = roots.iter().map(|&k| substitute(k)).collect();
    if products_live(&nodes, &new_roots) < products_live(&body.nodes, &roots) {
        body.nodes = nodes;
        for (entry, root) in found.iter_mut().zip(new_roots) {
            entry.1 = root;
        }
    }
}

/// The contribution of read node `k` of branch `b` of `r` to its source's
/// adjoint, from its cotangent `packed`: the read (of `C`, or of the
/// tensor gathering `C` at the source's points) for the adjoint's body.
fn contribution<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    k: usize,
    packed: &Packed,
    sums: &mut Vec<running_sums::RunningSum<'c>>,
) -> Result<Contribution<'c>, PassDiagnostic<'c>> {
    let num_symbols = program.dims.len();
    let reader = program.tensors[r].clone();
    let read = &branch.nodes[k];
    let x = crate::rewrite::source(&read.kind).expect("a read");
    // Per source dimension: the lower terms and caps of its coordinate.
    let coordinates: Vec<(Vec<AffineExpr>, Vec<AffineExpr>)> = match &read.kind {
        NodeKind::Read { index, .. } => index.results.iter().map(|e| (vec![e.clone()], Vec::new())).collect(),
        NodeKind::ReadRange { lower, caps, .. } => {
            lower.iter().zip(caps).map(|(l, c)| (l.results.clone(), c.results.clone())).collect()
        }
        _ => unreachable!("a read"),
    };
    let dims = reader.domain.len();
    let (c, packed_point, extract) = (packed.c, packed.c_point.clone(), packed.extract.clone());
    // The read's own point type (what the adjoint adds up).
    let c_point = extract.as_ref().map_or(packed_point.clone(), |(_, p)| p.clone());
    // A read at `t mod k`: q collects every k-th reader point, summed by a
    // running sum along t with stride k, read at the first of them.
    let strided = coordinates.iter().enumerate().find_map(|(j, (lower, caps))| {
        let bounds = &reader.domain;
        let cases = pullback::cases(j, program.tensors[x].domain[j], lower, caps, bounds).ok()?;
        cases.iter().find_map(|case| match &case.assign {
            Some((rd, Coordinate::Strided(_, k))) => Some((*rd, *k)),
            _ => None,
        })
    });
    let (c, packed_point, extract) = match strided {
        None => (c, packed_point, extract),
        Some((rd, k)) => {
            let m_name = format!("{g_name}$m${}${}${}", reader.name, b, k);
            let dims = reader.domain.len();
            let m = push_tensor(program, m_name, reader.domain.clone(), c_point.clone(), read.location);
            let mut branches = Vec::new();
            for more in [true, false] {
                let mut body = Body::new(read.location);
                let whole =
                    body.push(NodeKind::Read { source: c, index: identity(dims, num_symbols) }, packed_point.clone());
                let here = unpack(&mut body, whole, extract.as_ref());
                let mut constraints = Vec::new();
                let result = if more {
                    // p_r + k <= extent - 1
                    let extent = AffineExpr::Symbol(reader.domain[rd]);
                    constraints.push(pullback::ge0(sub(
                        sub(extent, AffineExpr::Constant(1)),
                        add(AffineExpr::Dim(rd), AffineExpr::Constant(k)),
                    )));
                    let mut next: Vec<AffineExpr> = (0..dims).map(AffineExpr::Dim).collect();
                    next[rd] = add(AffineExpr::Dim(rd), AffineExpr::Constant(k));
                    let later = body.push(
                        NodeKind::Read { source: m, index: pullback::map(dims, num_symbols, next) },
                        c_point.clone(),
                    );
                    body.add(here, later)
                } else {
                    here
                };
                branches.push(Branch {
                    when: pullback::set(dims, num_symbols, constraints),
                    nodes: body.nodes,
                    result,
                    location: read.location,
                });
            }
            program.tensors[m].branches = branches;
            (m, c_point.clone(), None)
        }
    };
    // The read reversed, per source dimension.
    let source_domain = program.tensors[x].domain.clone();
    let bounds: Vec<usize> = reader.domain.clone();
    let mut per_dim: Vec<Vec<pullback::Case>> = Vec::new();
    let mut determined = vec![false; dims];
    for (j, (lower, caps)) in coordinates.iter().enumerate() {
        let cases = pullback::cases(j, source_domain[j], lower, caps, &bounds).map_err(|why| {
            PassDiagnostic::new(
                read.location,
                format!("temporal-autodiff: no gradient through this read of '{}' yet: {why}", program.tensors[x].name),
            )
        })?;
        let assigned: Vec<usize> = cases.iter().filter_map(|c| c.assign.as_ref().map(|(r, _)| *r)).collect();
        if let Some(&r) = assigned.first() {
            if determined[r] {
                return Err(PassDiagnostic::new(
                    read.location,
                    format!(
                        "temporal-autodiff: no gradient through this read of '{}' yet: one reader dimension in several coordinates",
                        program.tensors[x].name
                    ),
                ));
            }
            determined[r] = true;
        }
        per_dim.push(cases);
    }
    let x_dims = source_domain.len();
    // Every combination of cases, in order (the first that holds is the
    // right one in each dimension).
    let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
    for cases in &per_dim {
        combos =
            combos.into_iter().flat_map(|c| (0..cases.len()).map(move |i| [c.clone(), vec![i]].concat())).collect();
    }
    let mut a_branches: Vec<Branch<'c>> = Vec::new();
    for combo in &combos {
        let mut constraints = Vec::new();
        let mut coords: Vec<Option<Coordinate>> = vec![None; dims];
        for (j, &i) in combo.iter().enumerate() {
            let case = &per_dim[j][i];
            constraints.extend(case.constraints.iter().cloned());
            if let Some((rd, coordinate)) = &case.assign {
                coords[*rd] = Some(coordinate.clone());
            }
        }
        let coords: Vec<Coordinate> = coords
            .into_iter()
            .enumerate()
            .map(|(rd, c)| match c {
                Some(Coordinate::Strided(first, _)) => Coordinate::Point(first),
                Some(c) => c,
                None => Coordinate::Range(AffineExpr::Constant(0), AffineExpr::Symbol(bounds[rd])),
            })
            .collect();
        let mut body = Body::new(read.location);
        let ranges = coords.iter().filter(|c| matches!(c, Coordinate::Range(..))).count();
        // One reader dimension summed whole (a weight read at every step):
        // a running sum along it, backward, instead of a range of
        // contributions kept until the end.
        let free: Vec<usize> = (0..dims)
            .filter(|&rd| {
                matches!(&coords[rd], Coordinate::Range(lo, hi)
                    if *lo == AffineExpr::Constant(0) && *hi == AffineExpr::Symbol(bounds[rd]))
            })
            .collect();
        if let [f] = free[..]
            && ranges == 1
            && !source_domain.contains(&bounds[f])
        {
            let location = read.location;
            let s_name = format!("{g_name}$s${}${}${}", reader.name, b, k);
            let mut s_domain = source_domain.clone();
            s_domain.push(bounds[f]);
            let s = push_tensor(program, s_name, s_domain, c_point.clone(), location);
            let along = AffineExpr::Dim(x_dims);
            // Coordinates of C at (q, f); the combination's conditions on q.
            let points: Vec<AffineExpr> = coords
                .iter()
                .enumerate()
                .map(|(rd, c)| match c {
                    _ if rd == f => along.clone(),
                    Coordinate::Point(p) => p.clone(),
                    Coordinate::Range(..) | Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("one range"),
                })
                .collect();
            let c_at = pullback::map(x_dims + 1, num_symbols, points);
            let last = sub(AffineExpr::Symbol(bounds[f]), AffineExpr::Constant(1));
            // Backward (a suffix sum read at 0, what back-propagation
            // through time needs) or forward (a prefix sum read at the
            // end; chosen afterwards where the contributions need only a
            // bounded future, `running_sums`).
            let running = |forward: bool| {
                let (end, step) = if forward { (AffineExpr::Constant(0), -1) } else { (last.clone(), 1) };
                let mut branches = Vec::new();
                for (at_end, extra) in
                    [(true, pullback::eq0(sub(along.clone(), end))), (false, pullback::ge0(AffineExpr::Constant(0)))]
                {
                    let mut body = Body::new(location);
                    let whole = body.push(NodeKind::Read { source: c, index: c_at.clone() }, packed_point.clone());
                    let here = unpack(&mut body, whole, extract.as_ref());
                    let result = if at_end {
                        here
                    } else {
                        let mut next: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
                        next.push(add(along.clone(), AffineExpr::Constant(step)));
                        let index = pullback::map(x_dims + 1, num_symbols, next);
                        let later = body.push(NodeKind::Read { source: s, index }, c_point.clone());
                        body.add(here, later)
                    };
                    let mut constraints = constraints.clone();
                    constraints.push(extra);
                    branches.push(Branch {
                        when: pullback::set(x_dims + 1, num_symbols, constraints),
                        nodes: body.nodes,
                        result,
                        location,
                    });
                }
                branches.push(zero_branch(universe(x_dims + 1, num_symbols), &c_point, location));
                branches
            };
            program.tensors[s].branches = running(false);
            let mut at_last: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
            at_last.push(last.clone());
            sums.push(running_sums::RunningSum {
                sum: s,
                contribution: c,
                dim: bounds[f],
                forward: running(true),
                read_last: pullback::map(x_dims, num_symbols, at_last),
            });
            let mut first: Vec<AffineExpr> = (0..x_dims).map(AffineExpr::Dim).collect();
            first.push(AffineExpr::Constant(0));
            let node = body
                .push(NodeKind::Read { source: s, index: pullback::map(x_dims, num_symbols, first) }, c_point.clone());
            let mut constraints = constraints;
            constraints.push(pullback::ge0(last));
            a_branches.push(Branch {
                when: pullback::set(x_dims, num_symbols, constraints),
                nodes: body.nodes,
                result: node,
                location: read.location,
            });
            continue;
        }
        let node = if ranges == 0 {
            let points = coords.iter().map(|c| match c {
                Coordinate::Point(p) => p.clone(),
                Coordinate::Range(..) | Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("no ranges"),
            });
            let index = pullback::map(x_dims, num_symbols, points.collect());
            // A permutation of the reader's dimensions needs no tensor of its own.
            if combos.len() == 1 && constraints.is_empty() {
                return Ok((NodeKind::Read { source: c, index }, packed_point, extract, read.location));
            }
            let whole = body.push(NodeKind::Read { source: c, index }, packed_point.clone());
            unpack(&mut body, whole, extract.as_ref())
        } else {
            let mut lower = Vec::new();
            let mut upper = Vec::new();
            let mut caps = Vec::new();
            for (rd, coordinate) in coords.iter().enumerate() {
                match coordinate {
                    Coordinate::Point(p) => {
                        lower.push(pullback::map(x_dims, num_symbols, vec![p.clone()]));
                        upper.push(pullback::map(x_dims, num_symbols, Vec::new()));
                    }
                    Coordinate::Box(..) | Coordinate::Strided(..) => unreachable!("no boxes; strides read as points"),
                    Coordinate::Range(lo, hi) => {
                        let extent = AffineExpr::Symbol(bounds[rd]);
                        // Not empty once clipped to [0, extent).
                        for e in [
                            sub(hi.clone(), add(lo.clone(), AffineExpr::Constant(1))),
                            sub(hi.clone(), AffineExpr::Constant(1)),
                            sub(extent.clone(), add(lo.clone(), AffineExpr::Constant(1))),
                            sub(extent.clone(), AffineExpr::Constant(1)),
                        ] {
                            let constraint = crate::affine::Constraint { expr: e, is_equality: false };
                            if !constraints.contains(&constraint) {
                                constraints.push(constraint);
                            }
                        }
                        let zero = AffineExpr::Constant(0);
                        let lows = if *lo == zero { vec![zero] } else { vec![lo.clone(), zero] };
                        let highs = if *hi == extent { vec![extent] } else { vec![hi.clone(), extent] };
                        lower.push(pullback::map(x_dims, num_symbols, lows));
                        upper.push(pullback::map(x_dims, num_symbols, highs));
                    }
                }
                caps.push(pullback::map(x_dims, num_symbols, Vec::new()));
            }
            let mut shape = vec![DYNAMIC; ranges];
            shape.extend(&packed_point.shape);
            let ty = PointType { shape, element: packed_point.element };
            let read_range = body.push(NodeKind::ReadRange { source: c, lower, upper, caps }, ty);
            unpack(&mut body, read_range, extract.as_ref())
        };
        a_branches.push(Branch {
            when: pullback::set(x_dims, num_symbols, constraints),
            nodes: body.nodes,
            result: node,
            location: read.location,
        });
    }
    if a_branches.last().is_some_and(|b| !b.when.is_universe()) {
        a_branches.push(zero_branch(universe(x_dims, num_symbols), &c_point, read.location));
    }
    let a_name = format!("{g_name}$a${}${}${}", reader.name, b, k);
    let a = push_tensor(program, a_name, source_domain, c_point.clone(), read.location);
    program.tensors[a].branches = a_branches;
    Ok((NodeKind::Read { source: a, index: identity(x_dims, num_symbols) }, c_point, None, read.location))
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
