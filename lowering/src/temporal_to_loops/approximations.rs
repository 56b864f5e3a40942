//! Polynomial approximations of `exp`, `tanh` and `sigmoid` on `f32`,
//! used by `lower-temporal-to-loops{fast-math}` on the CPU in place of the
//! libm calls (`expf`, `tanhf`) the `math` dialect lowers to: straight-line
//! arithmetic that LLVM vectorizes with the loop around it, where a call
//! keeps the loop scalar. An LSTM's training step spent a quarter of its
//! time in `tanhf` and `expf` before.
//!
//! - `exp(x)`: `x` clamped to [-104, 89] (results 0 and +inf beyond),
//!   `n = round(x log2 e)`, `r = x - n ln 2` in two parts (Cody and
//!   Waite), `exp(r)` by its degree-6 Taylor polynomial on |r| <= ln2/2
//!   (truncation below 1.2e-7 relative), scaled by `2^n` as two powers of
//!   two built from exponent bits (so `n` down to -150 gives subnormals
//!   and up to 128 gives +inf). NaN stays NaN.
//! - `tanh(x)`: the odd rational minimax approximation of degree 13 / 6
//!   used by Eigen's vectorized `tanh` (its published coefficients), on `x`
//!   clamped to +-7.9053 where `tanh` rounds to +-1 in `f32`; `x` itself
//!   below 4e-4 in magnitude.
//! - `sigmoid(x) = 1 / (1 + exp(-x))` with the `exp` above.
//!
//! Measured against `f64` references over [-20, 20] by the lit test
//! `test/lowering/temporal-to-loops/fast-math-approximations.mlir`: within
//! a few units in the last place. Not bit-exact with the interpreter (which
//! calls libm): only under `fast-math`, whose contractions already fuse
//! multiply and add.

use crate::ir_builder::{Builder, FloatCompare};
use melior::ir::{Attribute, Type, Value};

type Built<T> = Result<T, String>;

/// `a * b + c` as a multiply and an add that LLVM may contract into one
/// fused multiply-add (`fastmath<contract>`): `math.fma` would become a
/// call to libm's `fmaf` (`convert-math-to-libm`), and keep the loop
/// scalar.
fn fused<'c, 'a>(b: &Builder<'c, 'a>, x: Value<'c, 'a>, y: Value<'c, 'a>, z: Value<'c, 'a>) -> Built<Value<'c, 'a>> {
    let contract =
        Attribute::parse(b.context(), "#arith.fastmath<contract>").ok_or("compiler fault: the fastmath flags")?;
    let f32 = Type::float32(b.context());
    let product = b.value("arith.mulf", &[x, y], f32, &[("fastmath", contract)])?;
    b.value("arith.addf", &[product, z], f32, &[("fastmath", contract)])
}

/// `exp(x)` on `f32` (see the module's notes), built.
pub(super) fn exp<'c, 'a>(b: &Builder<'c, 'a>, x: Value<'c, 'a>) -> Built<Value<'c, 'a>> {
    let f32 = Type::float32(b.context());
    let i32 = b.integer_type(32);
    let c = |value: f64| b.float(value, f32);
    // Clamped; NaN goes through max/min as NaN and is selected at the end.
    let clamped = b.arith("minnumf", b.arith("maxnumf", x, c(-104.0)?)?, c(89.0)?)?;
    let n = b.unary("math.roundeven", b.arith("mulf", clamped, c(1.44269502)?)?)?;
    let minus_n = b.unary("arith.negf", n)?;
    let r = fused(b, minus_n, c(0.693145752)?, clamped)?;
    let r = fused(b, minus_n, c(1.42860677e-06)?, r)?;
    // Horner: 1 + r (1 + r (1/2 + r (1/6 + r (1/24 + r (1/120 + r/720))))).
    let mut p = c(0.00138888892)?;
    for coefficient in [0.00833333377, 0.0416666679, 0.166666672, 0.5, 1.0, 1.0] {
        p = fused(b, r, p, c(coefficient)?)?;
    }
    // 2^n = 2^n1 2^n2 with n1 = n >> 1, n2 = n - n1, each a normal number.
    let whole = b.convert("arith.fptosi", n, i32)?;
    let n1 = b.arith("shrsi", whole, b.constant(1, i32)?)?;
    let n2 = b.arith("subi", whole, n1)?;
    let power = |k: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
        let biased = b.arith("addi", k, b.constant(127, i32)?)?;
        b.convert("arith.bitcast", b.arith("shli", biased, b.constant(23, i32)?)?, f32)
    };
    let q = b.arith("mulf", b.arith("mulf", p, power(n1)?)?, power(n2)?)?;
    let nan = b.compare_floats(FloatCompare::Uno, x, x)?;
    b.select(nan, x, q)
}

/// `tanh(x)` on `f32` (see the module's notes), built.
pub(super) fn tanh<'c, 'a>(b: &Builder<'c, 'a>, x: Value<'c, 'a>) -> Built<Value<'c, 'a>> {
    let f32 = Type::float32(b.context());
    let c = |value: f64| b.float(value, f32);
    let clamped = b.arith("minimumf", b.arith("maximumf", x, c(-7.90531111)?)?, c(7.90531111)?)?;
    let x2 = b.arith("mulf", clamped, clamped)?;
    // Numerator x P(x^2), denominator Q(x^2), both by Horner.
    let mut p = c(-2.76076847742355e-16)?;
    for a in [2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08, 1.48572235717979e-05] {
        p = fused(b, x2, p, c(a)?)?;
    }
    for a in [6.37261928875436e-04, 4.89352455891786e-03] {
        p = fused(b, x2, p, c(a)?)?;
    }
    let numerator = b.arith("mulf", clamped, p)?;
    let mut q = c(1.19825839466702e-06)?;
    for coefficient in [1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03] {
        q = fused(b, x2, q, c(coefficient)?)?;
    }
    let ratio = b.arith("divf", numerator, q)?;
    let small = b.compare_floats(FloatCompare::Olt, b.unary("math.absf", x)?, c(4.0e-04)?)?;
    b.select(small, x, ratio)
}

/// `1 / (1 + exp(-x))` on `f32` with the `exp` above, built.
pub(super) fn sigmoid<'c, 'a>(b: &Builder<'c, 'a>, x: Value<'c, 'a>) -> Built<Value<'c, 'a>> {
    let e = exp(b, b.unary("arith.negf", x)?)?;
    let one = b.float(1.0, Type::float32(b.context()))?;
    b.arith("divf", one, b.arith("addf", one, e)?)
}
