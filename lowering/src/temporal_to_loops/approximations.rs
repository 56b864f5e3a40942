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

/// `out = a * b + c` as a multiply and an add that LLVM may contract
/// into one fused multiply-add (`fastmath<contract>`): `math.fma` would
/// become a call to libm's `fmaf` (`convert-math-to-libm`), and keep the
/// loop scalar.
fn fma(out: &str, a: &str, b: &str, c: &str) -> String {
    format!(
        "{out}_m = arith.mulf {a}, {b} fastmath<contract> : f32\n{out} = arith.addf {out}_m, {c} fastmath<contract> : f32"
    )
}

/// Lines computing `exp` of `x` into `%{out}` (temporaries prefixed by
/// `out`).
pub(super) fn exp_f32(x: &str, out: &str) -> String {
    let t = |name: &str| format!("%{out}_{name}");
    let mut s = String::new();
    let mut line = |text: String| {
        s.push_str(&text);
        s.push('\n');
    };
    for (name, value) in [
        ("lo", "-104.0"),
        ("hi", "89.0"),
        ("log2e", "1.44269502"),
        ("ln2hi", "0.693145752"),
        ("ln2lo", "1.42860677e-06"),
        ("one", "1.0"),
        ("c2", "0.5"),
        ("c3", "0.166666672"),
        ("c4", "0.0416666679"),
        ("c5", "0.00833333377"),
        ("c6", "0.00138888892"),
    ] {
        line(format!("{} = arith.constant {value} : f32", t(name)));
    }
    line(format!("{} = arith.constant 127 : i32", t("bias")));
    line(format!("{} = arith.constant 23 : i32", t("shift")));
    line(format!("{} = arith.constant 1 : i32", t("i1")));
    // Clamped; NaN goes through max/min as NaN and is selected at the end.
    line(format!("{} = arith.maxnumf {x}, {} : f32", t("xa"), t("lo")));
    line(format!("{} = arith.minnumf {}, {} : f32", t("xc"), t("xa"), t("hi")));
    line(format!("{} = arith.mulf {}, {} : f32", t("y"), t("xc"), t("log2e")));
    line(format!("{} = math.roundeven {} : f32", t("nf"), t("y")));
    line(format!("{} = arith.negf {} : f32", t("nn"), t("nf")));
    line(fma(&t("r1"), &t("nn"), &t("ln2hi"), &t("xc")));
    line(fma(&t("r"), &t("nn"), &t("ln2lo"), &t("r1")));
    // Horner: 1 + r (1 + r (1/2 + r (1/6 + r (1/24 + r (1/120 + r/720))))).
    line(fma(&t("p5"), &t("r"), &t("c6"), &t("c5")));
    line(fma(&t("p4"), &t("r"), &t("p5"), &t("c4")));
    line(fma(&t("p3"), &t("r"), &t("p4"), &t("c3")));
    line(fma(&t("p2"), &t("r"), &t("p3"), &t("c2")));
    line(fma(&t("p1"), &t("r"), &t("p2"), &t("one")));
    line(fma(&t("p0"), &t("r"), &t("p1"), &t("one")));
    // 2^n = 2^n1 2^n2 with n1 = n >> 1, n2 = n - n1, each a normal number.
    line(format!("{} = arith.fptosi {} : f32 to i32", t("n"), t("nf")));
    line(format!("{} = arith.shrsi {}, {} : i32", t("n1"), t("n"), t("i1")));
    line(format!("{} = arith.subi {}, {} : i32", t("n2"), t("n"), t("n1")));
    for k in ["1", "2"] {
        line(format!("{} = arith.addi {}, {} : i32", t(&format!("e{k}")), t(&format!("n{k}")), t("bias")));
        line(format!("{} = arith.shli {}, {} : i32", t(&format!("b{k}")), t(&format!("e{k}")), t("shift")));
        line(format!("{} = arith.bitcast {} : i32 to f32", t(&format!("s{k}")), t(&format!("b{k}"))));
    }
    line(format!("{} = arith.mulf {}, {} : f32", t("q1"), t("p0"), t("s1")));
    line(format!("{} = arith.mulf {}, {} : f32", t("q"), t("q1"), t("s2")));
    line(format!("{} = arith.cmpf uno, {x}, {x} : f32", t("nan")));
    line(format!("%{out} = arith.select {}, {x}, {} : f32", t("nan"), t("q")));
    s
}

/// Lines computing `tanh` of `x` into `%{out}`.
pub(super) fn tanh_f32(x: &str, out: &str) -> String {
    let t = |name: &str| format!("%{out}_{name}");
    let mut s = String::new();
    let mut line = |text: String| {
        s.push_str(&text);
        s.push('\n');
    };
    for (name, value) in [
        ("clamp", "7.90531111"),
        ("nclamp", "-7.90531111"),
        ("tiny", "4.0e-04"),
        ("a1", "4.89352455891786e-03"),
        ("a3", "6.37261928875436e-04"),
        ("a5", "1.48572235717979e-05"),
        ("a7", "5.12229709037114e-08"),
        ("a9", "-8.60467152213735e-11"),
        ("a11", "2.00018790482477e-13"),
        ("a13", "-2.76076847742355e-16"),
        ("b0", "4.89352518554385e-03"),
        ("b2", "2.26843463243900e-03"),
        ("b4", "1.18534705686654e-04"),
        ("b6", "1.19825839466702e-06"),
    ] {
        line(format!("{} = arith.constant {value} : f32", t(name)));
    }
    line(format!("{} = arith.maximumf {x}, {} : f32", t("xa"), t("nclamp")));
    line(format!("{} = arith.minimumf {}, {} : f32", t("xc"), t("xa"), t("clamp")));
    line(format!("{} = arith.mulf {}, {} : f32", t("x2"), t("xc"), t("xc")));
    // Numerator x P(x^2), denominator Q(x^2), both by Horner.
    line(fma(&t("p11"), &t("x2"), &t("a13"), &t("a11")));
    line(fma(&t("p9"), &t("x2"), &t("p11"), &t("a9")));
    line(fma(&t("p7"), &t("x2"), &t("p9"), &t("a7")));
    line(fma(&t("p5"), &t("x2"), &t("p7"), &t("a5")));
    line(fma(&t("p3"), &t("x2"), &t("p5"), &t("a3")));
    line(fma(&t("p1"), &t("x2"), &t("p3"), &t("a1")));
    line(format!("{} = arith.mulf {}, {} : f32", t("num"), t("xc"), t("p1")));
    line(fma(&t("q4"), &t("x2"), &t("b6"), &t("b4")));
    line(fma(&t("q2"), &t("x2"), &t("q4"), &t("b2")));
    line(fma(&t("q0"), &t("x2"), &t("q2"), &t("b0")));
    line(format!("{} = arith.divf {}, {} : f32", t("ratio"), t("num"), t("q0")));
    line(format!("{} = math.absf {x} : f32", t("abs")));
    line(format!("{} = arith.cmpf olt, {}, {} : f32", t("small"), t("abs"), t("tiny")));
    line(format!("%{out} = arith.select {}, {x}, {} : f32", t("small"), t("ratio")));
    s
}

/// Lines computing `1 / (1 + exp(-x))` into `%{out}`.
pub(super) fn sigmoid_f32(x: &str, out: &str) -> String {
    let mut s = format!("%{out}_neg = arith.negf {x} : f32\n");
    s += &exp_f32(&format!("%{out}_neg"), &format!("{out}_e"));
    s += &format!(
        "%{out}_one = arith.constant 1.0 : f32\n%{out}_d = arith.addf %{out}_one, %{out}_e : f32\n%{out} = arith.divf %{out}_one, %{out}_d : f32\n"
    );
    s
}

use crate::ir_builder::{Builder, FloatCompare};
use melior::ir::{Attribute, Type, Value};

type Built<T> = Result<T, String>;

/// `a * b + c` as a multiply and an add that LLVM may contract into one
/// fused multiply-add (`fastmath<contract>`; see `fma` above).
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
