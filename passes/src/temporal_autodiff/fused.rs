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

/// Makes the gradients of `grads` that carry an `all_reduce` the reduction
/// of their values over the processes, each group in one buffer (see the
/// module's documentation). `zero` says which gradients have no path to
/// their loss.
pub(super) fn all_reduce<'c>(program: &mut Program<'c>, grads: &[GradDecl<'c>], zero: &[usize]) {
    let num_symbols = program.dims.len();
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
        let dims = domain.len();
        let location = members[0].location;
        // This process's gradients, as tensors of their own.
        let mut locals = Vec::new();
        for grad in &members {
            let t = &program.tensors[grad.tensor];
            let (name, point, loc) = (format!("{}$local", t.name), t.point.clone(), t.location);
            let branches = std::mem::take(&mut program.tensors[grad.tensor].branches);
            let local = push_tensor(program, name, domain.clone(), point.clone(), loc);
            program.tensors[local].branches = branches;
            locals.push((local, point));
        }
        // The buffer: their values flattened side by side, all-reduced.
        let mut body = Body::new(location);
        let mut values: Vec<usize> = locals
            .iter()
            .map(|(local, point)| {
                let read =
                    body.push(NodeKind::Read { source: *local, index: identity(dims, num_symbols) }, point.clone());
                let size = point.num_elements() as i64;
                body.reshape(read, &[size])
            })
            .collect();
        // Each gradient's offset in the buffer, in order.
        let offsets: Vec<i64> = locals
            .iter()
            .scan(0, |at, (_, point)| {
                let offset = *at;
                *at += point.num_elements() as i64;
                Some(offset)
            })
            .collect();
        // Concatenated pairwise, level by level (a balanced tree: each
        // element is copied about log2(n) times, not up to n times as the
        // first would be in a chain).
        while values.len() > 1 {
            values =
                values.chunks(2).map(|pair| if let [a, b] = *pair { body.concat(a, b, 0) } else { pair[0] }).collect();
        }
        let packed = values[0];
        let total = body.ty(packed).clone();
        let reduced = body.push(NodeKind::AllReduce(reduction, packed), total.clone());
        let name = fresh_name(program, &format!("{}$all_reduce", program.tensors[members[0].tensor].name));
        let buffer = push_tensor(program, name, domain.clone(), total.clone(), location);
        program.tensors[buffer].branches =
            vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result: reduced, location }];
        // Each gradient: its part of the buffer.
        for (k, grad) in members.iter().enumerate() {
            let point = program.tensors[grad.tensor].point.clone();
            let size = point.num_elements() as i64;
            let offset = offsets[k];
            let mut body = Body::new(grad.location);
            let read = body.push(NodeKind::Read { source: buffer, index: identity(dims, num_symbols) }, total.clone());
            let part = if size == total.shape[0] { read } else { body.slice(read, &[offset], &[size]) };
            let result = body.reshape(part, &point.shape);
            program.tensors[grad.tensor].branches =
                vec![Branch { when: universe(dims, num_symbols), nodes: body.nodes, result, location: grad.location }];
        }
        debug_assert!(members.iter().all(|g| program.tensors[g.tensor].point.element == element));
    }
}
