//! Vector-Jacobian products of elementwise ops: unary functions, binary
//! arithmetic (unbroadcast to each operand's shape), select and cast.

use super::shape_of;
use crate::program::{BinaryKind, Predicate, UnaryKind};
use crate::temporal_autodiff::body::Body;

/// Of `op(a)` (its result `n`) for `a`, from the cotangent `c`.
pub(super) fn unary(body: &mut Body<'_>, n: usize, op: UnaryKind, a: usize, c: usize) -> usize {
    match op {
        UnaryKind::Neg => body.neg(c),
        UnaryKind::Exp => body.mul(c, n),
        UnaryKind::Log => body.div(c, a),
        UnaryKind::Sqrt => {
            let twice = body.mul_scalar(n, 2.0);
            body.div(c, twice)
        }
        UnaryKind::Tanh => {
            let square = body.mul(n, n);
            let d = body.rsub_scalar(1.0, square);
            body.mul(c, d)
        }
        UnaryKind::Sigmoid => {
            let rest = body.rsub_scalar(1.0, n);
            let d = body.mul(n, rest);
            body.mul(c, d)
        }
        UnaryKind::Relu => {
            let positive = body.compare_scalar(Predicate::Gt, a, 0.0);
            body.mask(positive, c)
        }
        UnaryKind::Sin => {
            let cos = body.unary(UnaryKind::Cos, a);
            body.mul(c, cos)
        }
        UnaryKind::Cos => {
            let sin = body.unary(UnaryKind::Sin, a);
            let d = body.mul(c, sin);
            body.neg(d)
        }
        UnaryKind::Abs => {
            let positive = body.compare_scalar(Predicate::Gt, a, 0.0);
            let negative = body.compare_scalar(Predicate::Lt, a, 0.0);
            let minus = body.neg(c);
            let down = body.mask(negative, minus);
            body.select(positive, c, down)
        }
        // Flat but at zero: no gradient.
        UnaryKind::Sign => {
            let ty = body.ty(a).clone();
            body.zeros(&ty)
        }
        UnaryKind::Not | UnaryKind::StopGradient => unreachable!("no gradient passes"),
    }
}

/// Of `op(a, b)` (its result `n`) for operand `i`, unbroadcast to its shape.
pub(super) fn binary(body: &mut Body<'_>, n: usize, i: usize, op: BinaryKind, a: usize, b: usize, c: usize) -> usize {
    let g = match (op, i) {
        (BinaryKind::Add, _) => c,
        (BinaryKind::Sub, 0) => c,
        (BinaryKind::Sub, _) => body.neg(c),
        (BinaryKind::Mul, 0) => body.mul(c, b),
        (BinaryKind::Mul, _) => body.mul(c, a),
        (BinaryKind::Div, 0) => body.div(c, b),
        (BinaryKind::Div, _) => {
            // d(a/b)/db = -(a/b)/b
            let q = body.mul(c, n);
            let d = body.div(q, b);
            body.neg(d)
        }
        (BinaryKind::Max | BinaryKind::Min, _) => {
            // Ties go to the left operand.
            let predicate = if op == BinaryKind::Max { Predicate::Ge } else { Predicate::Le };
            let left = body.compare(predicate, a, b);
            let zero = body.scalar(0.0, body.ty(c).element);
            if i == 0 { body.select(left, c, zero) } else { body.select(left, zero, c) }
        }
        (BinaryKind::Pow, 0) => {
            // b * a^(b - 1)
            let one = body.scalar(1.0, body.ty(b).element);
            let less = body.binary(BinaryKind::Sub, b, one);
            let power = body.binary(BinaryKind::Pow, a, less);
            let d = body.mul(b, power);
            body.mul(c, d)
        }
        (BinaryKind::Pow, _) => {
            // a^b * log(a)
            let log = body.unary(UnaryKind::Log, a);
            let d = body.mul(n, log);
            body.mul(c, d)
        }
        (BinaryKind::And | BinaryKind::Or, _) => unreachable!("no gradient passes"),
    };
    let target = shape_of(body, if i == 0 { a } else { b });
    body.unbroadcast(g, &target)
}

/// Of `select(condition, a, b)` for operand `i` (1 or 2).
pub(super) fn select(body: &mut Body<'_>, i: usize, condition: usize, a: usize, b: usize, c: usize) -> usize {
    let zero = body.scalar(0.0, body.ty(c).element);
    let g = if i == 1 { body.select(condition, c, zero) } else { body.select(condition, zero, c) };
    let target = shape_of(body, if i == 1 { a } else { b });
    body.unbroadcast(g, &target)
}

/// Of a cast of `a`: the cotangent cast back.
pub(super) fn cast(body: &mut Body<'_>, a: usize, c: usize) -> usize {
    let element = body.ty(a).element;
    body.cast(c, element)
}
