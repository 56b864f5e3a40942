//! All-reduced gradients in one fused buffer (data-parallel training, the
//! tensor fusion of Horovod): after `temporal-autodiff` has given every
//! gradient its body, the gradients whose `temporal.grad` carries
//! `all_reduce = "mean"` (or `"sum"`) become that reduction over the
//! processes of the run, and those of one loss (`of`) over one domain, of
//! one element type and one reduction travel together: per point of the
//! domain (an iteration `i` of a training loop), ONE
//! `temporal.all_reduce` of their values flattened and concatenated, so
//! one `mpi.allreduce` on one flat buffer per iteration instead of one per
//! parameter.
//!
//! For gradients `g1 .. gn` of one group:
//! - each `gk`'s body (this process's gradient) moves to a new tensor
//!   `gk$local`;
//! - a new tensor `g1$all_reduce` over the same domain, with 1-D points of
//!   the sum of their sizes, is `all_reduce(concat(reshape(g1$local),
//!   ..., reshape(gn$local)))`;
//! - `gk` reads its part back: a slice of `g1$all_reduce` at its offset,
//!   reshaped to its point type.
//!
//! A gradient with no path to its loss is zero on every process (all
//! processes run the same program), so its all-reduce is itself: it keeps
//! its zero body and stays out of the buffer. Gradients of different
//! losses are never fused: one loss's gradients may feed the parameters
//! another loss reads at the same point (several PPO epochs per
//! iteration), and one buffer for both would make a cycle.

use super::body::Body;
use super::{fresh_name, identity, push_tensor, universe};
use crate::program::{Branch, Collective, GradDecl, NodeKind, Program};
use melior::ir::Location;

/// Makes the gradients of `grads` that carry an `all_reduce` the reduction
/// of their values over the processes, each group in one buffer (see the
/// module's documentation). `zero` says which gradients have no path to
/// their loss.
pub(super) fn all_reduce<'c>(program: &mut Program<'c>, grads: &[GradDecl<'c>], zero: &[usize]) {
    // Groups in the order of their first gradient (so the printed program
    // is deterministic): (of, domain, element, reduction) -> members.
    let mut groups: Vec<((usize, Vec<usize>, crate::program::ElementType, Collective), Vec<&GradDecl<'c>>)> =
        Vec::new();
    for grad in grads {
        let Some(reduction) = grad.all_reduce else { continue };
        if zero.contains(&grad.tensor) {
            continue;
        }
        let t = &program.tensors[grad.tensor];
        let key = (grad.of, t.domain.clone(), t.point.element, reduction);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, members)) => members.push(grad),
            None => groups.push((key, vec![grad])),
        }
    }
    for ((_, domain, element, reduction), members) in groups {
        let location = members[0].location;
        // This process's gradients, as tensors of their own.
        let mut parts = Vec::new();
        for grad in &members {
            let t = &program.tensors[grad.tensor];
            let (name, point, loc) = (format!("{}$local", t.name), t.point.clone(), t.location);
            let branches = std::mem::take(&mut program.tensors[grad.tensor].branches);
            let local = push_tensor(program, name, domain.clone(), point, loc);
            program.tensors[local].branches = branches;
            parts.push((grad.tensor, local, grad.location));
        }
        let name = format!("{}$all_reduce", program.tensors[members[0].tensor].name);
        pack(program, &parts, &domain, reduction, &name, location);
        debug_assert!(members.iter().all(|g| program.tensors[g.tensor].point.element == element));
    }
}

/// One all-reduce for several tensors over `domain` of one element type:
/// for each `(tensor, local, location)` of `parts`, `local` holds this
/// process's values (the tensor's point type) and `tensor` (its branches
/// replaced) becomes its part of the reduction. Adds the buffer tensor,
/// `name` (made fresh), whose point `p` is `reduction` over the processes
/// of every `local[p]` flattened and concatenated in order; each `tensor`
/// reads its slice back, reshaped to its point. Returns the buffer.
pub(crate) fn pack<'c>(
    program: &mut Program<'c>,
    parts: &[(usize, usize, Location<'c>)],
    domain: &[usize],
    reduction: Collective,
    name: &str,
    location: Location<'c>,
) -> usize {
    let (dims, num_symbols) = (domain.len(), program.dims.len());
    let mut body = Body::new(location);
    let mut values: Vec<usize> = parts
        .iter()
        .map(|&(_, local, _)| {
            let point = program.tensors[local].point.clone();
            let read = body.push(NodeKind::Read { source: local, index: identity(dims, num_symbols) }, point.clone());
            body.reshape(read, &[point.num_elements() as i64])
        })
        .collect();
    // Each part's offset in the buffer, in order.
    let offsets: Vec<i64> = parts
        .iter()
        .scan(0, |at, &(_, local, _)| {
            let offset = *at;
            *at += program.tensors[local].point.num_elements() as i64;
            Some(offset)
        })
        .collect();
    // Concatenated pairwise, level by level (a balanced tree: each element
    // is copied about log2(n) times, not up to n times as the first would
    // be in a chain).
    while values.len() > 1 {
        values = values.chunks(2).map(|pair| if let [a, b] = *pair { body.concat(a, b, 0) } else { pair[0] }).collect();
    }
    let packed = values[0];
    let total = body.ty(packed).clone();
    let reduced = body.push(NodeKind::AllReduce(reduction, packed), total.clone());
    let name = fresh_name(program, name);
    let buffer = push_tensor(program, name, domain.to_vec(), total.clone(), location);
    program.tensors[buffer].branches =
        vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result: reduced, location }];
    // Each tensor: its part of the buffer.
    for (&(tensor, _, location), &offset) in parts.iter().zip(&offsets) {
        let point = program.tensors[tensor].point.clone();
        let size = point.num_elements() as i64;
        let mut body = Body::new(location);
        let read = body.push(NodeKind::Read { source: buffer, index: identity(dims, num_symbols) }, total.clone());
        let part = if size == total.shape[0] { read } else { body.slice(read, &[offset], &[size]) };
        let result = body.reshape(part, &point.shape);
        program.tensors[tensor].branches =
            vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result, location }];
    }
    buffer
}
