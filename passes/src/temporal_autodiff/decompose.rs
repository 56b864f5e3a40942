//! Fused ops taken apart for differentiation: `temporal.attention` becomes
//! the steps it is defined by (score einsum, scale, maximum, `exp` of the
//! difference, sum, division, combine einsum), in the interpreter's order,
//! so that every step has its vector-Jacobian product and ranges of keys
//! and values flow through ordinary reductions and contractions. Only the
//! copies the adjoint program makes are decomposed: the forward tensors
//! keep the fused op.

use super::body::Body;
use crate::program::{Branch, NodeKind, PointType, ReduceKind, UnaryKind};

/// `branch` with every attention node replaced by its steps (node numbers
/// change; reads keep their order).
pub(super) fn decompose<'c>(branch: &Branch<'c>) -> Branch<'c> {
    if !branch.nodes.iter().any(|n| matches!(n.kind, NodeKind::Attention(..))) {
        return branch.clone();
    }
    let mut body = Body::new(branch.location);
    let mut new_index = Vec::with_capacity(branch.nodes.len());
    for node in &branch.nodes {
        body.location = node.location;
        let v = match &node.kind {
            NodeKind::Attention(spec, [q, k, v, scale]) => {
                let (q, k, v, scale) = (new_index[*q], new_index[*k], new_index[*v], new_index[*scale]);
                let shapes = [body.ty(q).shape.clone(), body.ty(k).shape.clone()];
                let sizes = spec.score.label_sizes(&[&shapes[0], &shapes[1]]).expect("verified attention");
                let size = |c: &char| sizes.iter().find(|(x, _)| x == c).expect("a label").1;
                let ty = PointType { shape: spec.score.result.iter().map(size).collect(), element: node.ty.element };
                let scores = body.push(NodeKind::Einsum(spec.score.clone(), vec![q, k]), ty);
                let scaled = body.mul(scores, scale);
                let axis = spec.axis();
                let keep = |body: &mut Body<'c>, r: usize| {
                    let mut shape = body.ty(r).shape.clone();
                    shape.insert(axis, 1);
                    body.reshape(r, &shape)
                };
                let maximum = body.reduce(ReduceKind::Max, scaled, axis);
                let maximum = keep(&mut body, maximum);
                let shifted = body.binary(crate::program::BinaryKind::Sub, scaled, maximum);
                let e = body.unary(UnaryKind::Exp, shifted);
                let total = body.reduce(ReduceKind::Sum, e, axis);
                let total = keep(&mut body, total);
                let p = body.div(e, total);
                body.push(NodeKind::Einsum(spec.combine.clone(), vec![p, v]), node.ty.clone())
            }
            kind => {
                let kind = crate::rewrite::map_operands(kind, |a| new_index[a]);
                let v = body.push(kind, node.ty.clone());
                body.nodes[v].location = node.location;
                v
            }
        };
        new_index.push(v);
    }
    Branch { when: branch.when.clone(), nodes: body.nodes, result: new_index[branch.result], location: branch.location }
}
