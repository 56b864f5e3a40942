//! The reader's backward sweep: for one branch of a reader, the
//! cotangents of its point reads (and, for its range reads' element
//! frames, the row values they read) from one sweep through the branch,
//! packed by element type into tensors over the reader's domain
//! (`g$c$...`). The stored forward values the products need are read back
//! from the reader's point where that saves a matrix product
//! (`stored_parts`).

use super::body::Body;
use super::{compact, identity, live_nodes, push_tensor, ranges, universe, vjp, zero_branch};
use crate::diagnostics::PassDiagnostic;
use crate::program::{Branch, NodeKind, PointType, Program};
use melior::ir::Location;

/// What the reader's sweep made: where each point read's cotangent lies,
/// and the stash tensors of its range reads.
type Swept = (Vec<(usize, Packed)>, Vec<ranges::StashTensor>);

/// Where the cotangent of one read lives: tensor `c` over the reader's
/// domain with points `c_point`, whole or (`extract`) the flat elements
/// from an offset, reshaped to the read's point type.
pub(super) struct Packed {
    pub c: usize,
    pub c_point: PointType,
    pub extract: Option<(i64, PointType)>,
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
pub(super) fn cotangents<'c>(
    program: &mut Program<'c>,
    g_name: &str,
    r: usize,
    b: usize,
    branch: &Branch<'c>,
    wanted: &[usize],
    dr: Option<usize>,
    requests: &[ranges::Stash],
) -> Result<Swept, PassDiagnostic<'c>> {
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
    let (all, dots) = vjp::backprop_with_dots(&mut body, forward, &seeds, &sweep, vjp::softmax::Units::Found)?;
    let mut found: Vec<(usize, usize)> = wanted.iter().filter_map(|&k| all.get(&k).map(|&ct| (k, ct))).collect();
    let stashed = ranges::stash_values(&mut body, branch, requests, &all, &dots);
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
