//! Vector-Jacobian products of data movement: permutations, flips,
//! reshapes, broadcasts, slices and concatenations (the inverse movement),
//! gathers (a scatter-add) and dynamic slices (zeros around the cotangent).

use super::{pad, shape_of, unsupported};
use crate::affine::AffineMap;
use crate::diagnostics::PassDiagnostic;
use crate::program::{BinaryKind, DYNAMIC, Movement, NodeKind, PointType, Predicate};
use crate::temporal_autodiff::body::Body;

/// Of a movement (permute, flip, reshape, expand, slice, concat) for
/// operand `i`: the inverse movement of the cotangent.
pub(super) fn movement<'c>(
    body: &mut Body<'c>,
    n: usize,
    i: usize,
    movement: Movement,
    ops: &[usize],
    c: usize,
) -> Result<usize, PassDiagnostic<'c>> {
    Ok({
        let a = ops[i];
        match movement {
            Movement::Permute(p) => {
                let mut inverse = vec![0; p.len()];
                for (k, &from) in p.iter().enumerate() {
                    inverse[from] = k;
                }
                body.permute(c, &inverse)
            }
            Movement::Flip(axis) => body.flip(c, axis),
            Movement::Reshape => {
                let shape = shape_of(body, a);
                if shape.contains(&DYNAMIC) && !crate::program::reshape_fits(&body.ty(c).shape, &shape) {
                    return Err(unsupported(body, n, "this reshape of a dynamic shape"));
                }
                body.reshape(c, &shape)
            }
            Movement::Expand => {
                let shape = shape_of(body, a);
                body.unbroadcast(c, &shape)
            }
            Movement::Slice(offsets) => {
                let full = shape_of(body, a);
                pad(body, c, &offsets, &full)
            }
            Movement::Concat(axis) => {
                let shape = shape_of(body, a);
                let mut offsets = vec![0; shape.len()];
                if i == 1 {
                    offsets[axis] = shape_of(body, ops[0])[axis];
                }
                body.slice(c, &offsets, &shape)
            }
            Movement::Arange => unreachable!("no operands"),
        }
    })
}

/// Of a gather of rows of `table` (operand 0): scatter-add as a product
/// with the one-hot rows of the indices.
pub(super) fn gather(body: &mut Body<'_>, table: usize, indices: usize, c: usize) -> usize {
    // Scatter-add as a product with the one-hot rows of the indices.
    let t = shape_of(body, table);
    let rows = t[0];
    let width: i64 = t[1..].iter().product();
    let count: i64 = shape_of(body, indices).iter().product();
    let index_element = body.ty(indices).element;
    let flat = body.reshape(indices, &[count, 1]);
    let last = body.scalar((rows - 1) as f64, index_element);
    let low = body.binary(BinaryKind::Min, flat, last);
    let zero = body.scalar(0.0, index_element);
    let clamped = body.binary(BinaryKind::Max, low, zero);
    let positions = body.arange(rows, index_element);
    let hits = body.compare(Predicate::Eq, clamped, positions);
    let one_hot = body.cast(hits, body.ty(c).element);
    let by_row = body.transpose_last(one_hot);
    let ct = body.reshape(c, &[count, width]);
    let summed = body.matmul(by_row, ct);
    body.reshape(summed, &t)
}

/// Of a dynamic slice of `a` at `offsets`.
pub(super) fn dynamic_slice(body: &mut Body<'_>, a: usize, offsets: &AffineMap, c: usize) -> usize {
    // Zeros around the cotangent at the offsets `o`, one dimension
    // at a time: padded with N zeros on each side, the window of
    // the operand's size N starts at N - o (a dynamic slice too).
    let full = shape_of(body, a);
    let element = body.ty(c).element;
    let mut value = c;
    for axis in 0..full.len() {
        let mut shape = body.ty(value).shape.clone();
        if shape[axis] == full[axis] {
            continue;
        }
        shape[axis] = full[axis];
        let zeros = body.zeros(&PointType { shape: shape.clone(), element });
        let before = body.concat(zeros, value, axis);
        let padded = body.concat(before, zeros, axis);
        let mut at: Vec<crate::affine::AffineExpr> = vec![crate::affine::AffineExpr::Constant(0); full.len()];
        at[axis] = crate::affine::AffineExpr::Add(
            Box::new(crate::affine::AffineExpr::Constant(full[axis])),
            Box::new(crate::affine::AffineExpr::Mul(
                Box::new(offsets.results[axis].clone()),
                Box::new(crate::affine::AffineExpr::Constant(-1)),
            )),
        );
        let map = crate::affine::AffineMap { results: at, ..offsets.clone() };
        value = body.push(NodeKind::DynamicSlice(padded, map), PointType { shape, element });
    }
    value
}
