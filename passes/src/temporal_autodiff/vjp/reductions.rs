//! Vector-Jacobian products of reductions along an axis: sum, mean (of a
//! static or a range's length), maximum (to every element equal to it)
//! and the running sum.

use crate::program::{DYNAMIC, Predicate, ReduceKind};
use crate::temporal_autodiff::body::Body;

/// Of a reduction of `a` along `axis` (its result `n`).
pub(super) fn reduce(body: &mut Body<'_>, n: usize, kind: ReduceKind, a: usize, axis: usize, c: usize) -> usize {
    match kind {
        ReduceKind::Sum => body.restore_axis(c, a, axis),
        ReduceKind::Mean if body.ty(a).shape[axis] == DYNAMIC => {
            // The length of a range: a sum of ones along it.
            let element = body.ty(c).element;
            let ones = body.like(a, 1.0, element);
            let count = body.reduce(ReduceKind::Sum, ones, axis);
            let share = body.div(c, count);
            body.restore_axis(share, a, axis)
        }
        ReduceKind::Mean => {
            let length = body.ty(a).shape[axis];
            let spread = body.restore_axis(c, a, axis);
            body.mul_scalar(spread, 1.0 / length.max(1) as f64)
        }
        ReduceKind::Max => {
            // To every element equal to the maximum.
            let maximum = body.restore_axis(n, a, axis);
            let at = body.compare(Predicate::Eq, a, maximum);
            let spread = body.restore_axis(c, a, axis);
            body.mask(at, spread)
        }
        ReduceKind::CumSum => {
            let flipped = body.flip(c, axis);
            let sums = body.reduce(ReduceKind::CumSum, flipped, axis);
            body.flip(sums, axis)
        }
        ReduceKind::ArgMax => unreachable!("no gradient passes"),
    }
}
