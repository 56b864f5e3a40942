//! Differential testing: compiled code against the reference interpreter.
//!
//! Every program of the corpus (the bundled examples and hand-written cases
//! below) and every randomly generated program is run both ways; the two
//! must agree: the same outputs (bit-exact for integers, a tight tolerance
//! for floats), or both an error. The generator is seeded and bounded; set
//! `TEMPO_RANDOM_PROGRAMS=N` (default 300) for a longer run, e.g.
//! `TEMPO_RANDOM_PROGRAMS=5000 cargo test -p tempo-tools --test end_to_end random`.

use crate::{example, interpret, run_optimized};
use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;
use tempo_runtime::{Data, HostArray, Optimization};

fn close_f64(a: f64, b: f64, tolerance: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tolerance * (1.0 + a.abs().max(b.abs()))
}

/// Compares outputs; `Err` describes the first difference.
fn compare(compiled: &[HostArray], interpreted: &[HostArray]) -> Result<(), String> {
    if compiled.len() != interpreted.len() {
        return Err(format!("{} outputs compiled, {} interpreted", compiled.len(), interpreted.len()));
    }
    for (c, i) in compiled.iter().zip(interpreted) {
        if c.name != i.name || c.shape != i.shape {
            return Err(format!("output {}{:?} vs {}{:?}", c.name, c.shape, i.name, i.shape));
        }
        let mismatch = match (&c.data, &i.data) {
            (Data::F32(a), Data::F32(b)) => a.iter().zip(b).position(|(&x, &y)| !close_f64(x as f64, y as f64, 1e-5)),
            (Data::F64(a), Data::F64(b)) => a.iter().zip(b).position(|(&x, &y)| !close_f64(x, y, 1e-12)),
            (a, b) if a == b => None,
            (a, b) if a.element() != b.element() => Some(0),
            (a, b) => (0..a.len()).position(|k| a.get_f64(k) != b.get_f64(k)),
        };
        if let Some(k) = mismatch {
            return Err(format!(
                "output {} differs at flat index {k}: compiled {} vs interpreted {}",
                c.name,
                c.data.get_f64(k),
                i.data.get_f64(k)
            ));
        }
    }
    Ok(())
}

/// Runs `source` both ways with `bounds`; panics (naming `what`: a file
/// name, or the program text itself) if only one side fails or the outputs
/// differ. Returns whether the program ran.
fn check_both(source: &str, bounds: &[(&str, i64)], seed: u64, what: &str) -> bool {
    check_optimized(source, bounds, seed, what, Optimization::default())
}

/// [`check_both`] with the compiled side optimized as `optimization` says.
fn check_optimized(source: &str, bounds: &[(&str, i64)], seed: u64, what: &str, optimization: Optimization) -> bool {
    let label = format!("-O{} without {:?}", optimization.level, optimization.disabled);
    let compiled = run_optimized(source, bounds, vec![], Some(seed), optimization);
    let interpreted = interpret(source, bounds, vec![], Some(seed));
    match (&compiled, &interpreted) {
        (Ok(c), Ok(i)) => {
            if let Err(e) = compare(c, i) {
                panic!("compiled ({label}) and interpreted results differ ({bounds:?}, seed={seed}): {e}\n{what}");
            }
            true
        }
        (Err(c), Err(i)) => {
            if std::env::var("TEMPO_SHOW_FAILURES").is_ok() {
                eprintln!(
                    "both failed (seed {seed}):\n  compiled: {}\n  interpreted: {}",
                    c.join(" | "),
                    i.join(" | ")
                );
            }
            false
        }
        _ => panic!(
            "only one side failed ({bounds:?}, seed={seed}, {label}):\ncompiled: {compiled:?}\ninterpreted: {interpreted:?}\n{what}"
        ),
    }
}

/// [`check_both`] for programs over one dimension `t < T`.
fn check(source: &str, bound: i64, seed: u64) -> bool {
    check_both(source, &[("T", bound)], seed, source)
}

#[test]
fn examples_agree_with_the_interpreter() {
    for name in [
        "counter.mlir",
        "fibonacci.mlir",
        "running_sum.mlir",
        "rnn.mlir",
        "returns.mlir",
        "causal_attention.mlir",
        "windowed_attention.mlir",
        "suffix_sum.mlir",
        "prefix_recurrence.mlir",
    ] {
        for bound in [0, 1, 2, 7, 30] {
            assert!(check(&example(name), bound, 3), "{name} with T={bound} failed both ways");
        }
    }
    // Examples over two dimensions.
    for (name, other) in [("batched_max.mlir", "B"), ("stacked_rnn.mlir", "L"), ("cumulative_sum.mlir", "")] {
        for (steps, size) in [(1, 1), (2, 3), (7, 1), (9, 4)] {
            let mut bounds = vec![("T", steps)];
            if !other.is_empty() {
                bounds.push((other, size));
            }
            assert!(check_both(&example(name), &bounds, 3, name), "{name} at {bounds:?} failed both ways");
        }
    }
}

const HEADER: &str = "\"temporal.dim\"() {sym_name = \"t\", bound = \"T\"} : () -> ()\n";

/// Hand-written programs covering the conditions, read distances and ops of
/// the current lowering: `(name, body, T values that must succeed)`.
fn corpus() -> Vec<(&'static str, String)> {
    let define = |target: &str, when: &str, body: &str| {
        format!(
            "\"temporal.define\"({target}) ({{\n{body}\n}}) {{when = affine_set<(t)[T] : ({when})>}} : (!temporal.rtensor) -> ()\n"
        )
    };
    let tensor = |name: &str, ty: &str| {
        format!(
            "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [\"t\"], element = {ty}}} : () -> !temporal.rtensor\n"
        )
    };
    let read = |v: &str, src: &str, idx: &str, ty: &str| {
        format!(
            "  {v} = \"temporal.read\"({src}) {{index = affine_map<(t)[T] -> ({idx})>}} : (!temporal.rtensor) -> {ty}"
        )
    };
    let constant = |v: &str, value: &str, ty: &str| {
        format!("  {v} = \"temporal.constant\"() {{value = dense<{value}> : {ty}}} : () -> {ty}")
    };
    let yield_ = |v: &str, ty: &str| format!("  \"gpu.yield\"({v}) : ({ty}) -> ()");
    let mut programs = Vec::new();

    // Parity-dependent branches: even steps add, odd steps multiply.
    let f = "tensor<f64>";
    let mut p = String::from(HEADER) + &tensor("z", f);
    p += &define("%z", "t == 0", &[constant("%c", "1.5", f), yield_("%c", f)].join("\n"));
    p += &define(
        "%z",
        "t mod 2 == 0",
        &[
            read("%p", "%z", "t - 1", f),
            constant("%c", "0.25", f),
            "  %s = \"temporal.add\"(%p, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>".into(),
            yield_("%s", f),
        ]
        .join("\n"),
    );
    p += &define(
        "%z",
        "0 == 0",
        &[
            read("%p", "%z", "t - 1", f),
            constant("%c", "-1.1", f),
            "  %s = \"temporal.mul\"(%p, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>".into(),
            yield_("%s", f),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%z) : (!temporal.rtensor) -> ()\n";
    programs.push(("parity", p));

    // Two tensors feeding each other one step back, plus a same-step read.
    let v = "tensor<3xi32>";
    let mut p = String::from(HEADER) + &tensor("a", v) + &tensor("b", v);
    p += &define("%a", "-t >= 0", &[constant("%c", "[1, 2, 3]", v), yield_("%c", v)].join("\n"));
    p += &define(
        "%a",
        "0 == 0",
        &[
            read("%p", "%b", "t - 1", v),
            constant("%c", "2", v),
            "  %s = \"temporal.mul\"(%p, %c) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            yield_("%s", v),
        ]
        .join("\n"),
    );
    p += &define(
        "%b",
        "0 == 0",
        &[
            read("%p", "%a", "t", v),
            constant("%c", "-5", v),
            "  %s = \"temporal.add\"(%p, %c) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            "  %m = \"temporal.max\"(%s, %p) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>".into(),
            yield_("%m", v),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%a) : (!temporal.rtensor) -> ()\n\"temporal.output\"(%b) : (!temporal.rtensor) -> ()\n";
    programs.push(("ping-pong", p));

    // A window of three past values with a floating-point nonlinearity.
    let w = "tensor<2x2xf32>";
    let mut p = String::from(HEADER) + &tensor("q", w);
    p += &define("%q", "2 - t >= 0", &[constant("%c", "[[0.5, -0.5], [0.25, 1.0]]", w), yield_("%c", w)].join("\n"));
    p += &define(
        "%q",
        "0 == 0",
        &[
            read("%a", "%q", "t - 1", w),
            read("%b", "%q", "t - 3", w),
            "  %m = \"temporal.matmul\"(%a, %b) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            "  %s = \"temporal.sigmoid\"(%m) : (tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            "  %r = \"temporal.relu\"(%s) : (tensor<2x2xf32>) -> tensor<2x2xf32>".into(),
            yield_("%r", w),
        ]
        .join("\n"),
    );
    p += "\"temporal.output\"(%q) : (!temporal.rtensor) -> ()\n";
    programs.push(("window-of-three", p));
    programs
}

#[test]
fn corpus_agrees_with_the_interpreter() {
    for (name, program) in corpus() {
        for bound in [0, 1, 4, 11] {
            assert!(check(&program, bound, 1), "{name} with T={bound} failed both ways");
        }
    }
}

/// Conditions the generator uses, with their meaning for `t`.
#[derive(Clone, Copy, Debug)]
enum Condition {
    Equal(i64),
    AtLeast(i64),
    AtMost(i64),
    Even,
    Odd,
    Always,
}

impl Condition {
    fn holds(self, t: i64) -> bool {
        match self {
            Self::Equal(c) => t == c,
            Self::AtLeast(c) => t >= c,
            Self::AtMost(c) => t <= c,
            Self::Even => t % 2 == 0,
            Self::Odd => t % 2 == 1,
            Self::Always => true,
        }
    }
    fn text(self) -> String {
        match self {
            Self::Equal(c) => format!("t - {c} == 0"),
            Self::AtLeast(c) => format!("t - {c} >= 0"),
            Self::AtMost(c) => format!("{c} - t >= 0"),
            Self::Even => "t mod 2 == 0".into(),
            Self::Odd => "t mod 2 - 1 == 0".into(),
            Self::Always => "0 == 0".into(),
        }
    }
}

/// Generates well-formed programs in the scope of the current lowering: one
/// dimension, inputs over `t` and without a domain, 1-4 recurrent tensors
/// with 1-3 branches, reads at `t - k` of inputs, of earlier tensors (k >= 0)
/// and of itself or later tensors (k >= 1), elementwise ops and matmul.
/// Reads are usually guarded by the branch conditions; a few are not, and
/// then both sides must report an error.
struct Generator {
    rng: ChaCha8Rng,
    element: &'static str,
    point: String,
    square: Option<String>,
    next: usize,
    /// Shape of the points.
    shape: Vec<i64>,
}

impl Generator {
    fn is_float(&self) -> bool {
        self.element.starts_with('f')
    }

    fn fresh(&mut self) -> String {
        self.next += 1;
        format!("%v{}", self.next)
    }

    fn constant(&mut self, body: &mut String) -> String {
        let v = self.fresh();
        let value = if self.is_float() {
            format!("{:.2}", self.rng.random_range(-2.0..2.0f64))
        } else {
            self.rng.random_range(-3..=3i64).to_string()
        };
        let ty = &self.point;
        let _ = writeln!(body, "  {v} = \"temporal.constant\"() {{value = dense<{value}> : {ty}}} : () -> {ty}");
        v
    }

    fn read(&mut self, source: &str, offset: i64, body: &mut String) -> String {
        let v = self.fresh();
        let index = if offset == 0 { "t".to_string() } else { format!("t - {offset}") };
        let ty = &self.point;
        let _ = writeln!(
            body,
            "  {v} = \"temporal.read\"({source}) {{index = affine_map<(t)[T] -> ({index})>}} : (!temporal.rtensor) -> {ty}"
        );
        v
    }

    /// An expression over the reads allowed in a branch of tensor `me`.
    fn expression(
        &mut self,
        depth: usize,
        me: usize,
        tensors: usize,
        inputs: usize,
        reach: i64,
        body: &mut String,
    ) -> String {
        let leaf = depth == 0 || self.rng.random_bool(0.3);
        if leaf {
            let max_k = if self.rng.random_bool(0.05) { 3 } else { reach.min(3) };
            let choice = self.rng.random_range(0..4);
            return match choice {
                0 => self.constant(body),
                1 if inputs > 0 => {
                    let j = self.rng.random_range(0..inputs);
                    let k = self.rng.random_range(0..=max_k.min(2));
                    self.read(&format!("%x{j}"), k, body)
                }
                _ => {
                    let j = self.rng.random_range(0..tensors);
                    let min_k = if j < me { 0 } else { 1 };
                    if max_k < min_k {
                        return self.constant(body);
                    }
                    let k = self.rng.random_range(min_k..=max_k);
                    self.read(&format!("%y{j}"), k, body)
                }
            };
        }
        let ty = self.point.clone();
        let float = self.is_float();
        let kind = self.rng.random_range(0..10);
        if kind < 5 {
            let ops: &[&str] = if float {
                &["add", "sub", "mul", "max", "min", "div"]
            } else {
                &["add", "sub", "mul", "max", "min", "div"]
            };
            let op = *ops.choose(&mut self.rng).expect("non-empty");
            let a = self.expression(depth - 1, me, tensors, inputs, reach, body);
            let b = self.expression(depth - 1, me, tensors, inputs, reach, body);
            let v = self.fresh();
            if !self.shape.is_empty() && self.rng.random_bool(0.3) {
                // Broadcasting: one operand reduced along its last axis, as
                // a scalar, a missing leading dimension ([2] against
                // [2, 2]) or a size-1 dimension ([2, 1] against [2, 2]).
                let element = self.element;
                let mut reduced_shape = self.shape.clone();
                reduced_shape.pop();
                let dims: String = reduced_shape.iter().map(|d| format!("{d}x")).collect();
                let reduced_ty = format!("tensor<{dims}{element}>");
                let axis = self.shape.len() - 1;
                let r = self.fresh();
                let _ = writeln!(
                    body,
                    "  {r} = \"temporal.reduce_max\"({b}) {{axis = {axis} : i64}} : ({ty}) -> {reduced_ty}"
                );
                let (small, small_ty) = if self.shape.len() == 2 && self.rng.random_bool(0.5) {
                    let column = self.fresh();
                    let column_ty = format!("tensor<{}x1x{element}>", self.shape[0]);
                    let _ = writeln!(body, "  {column} = \"temporal.reshape\"({r}) : ({reduced_ty}) -> {column_ty}");
                    (column, column_ty)
                } else {
                    (r, reduced_ty)
                };
                if self.rng.random_bool(0.5) {
                    let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}, {small}) : ({ty}, {small_ty}) -> {ty}");
                } else {
                    let _ = writeln!(body, "  {v} = \"temporal.{op}\"({small}, {a}) : ({small_ty}, {ty}) -> {ty}");
                }
                return v;
            }
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}, {b}) : ({ty}, {ty}) -> {ty}");
            v
        } else if kind < 8 || self.square.is_none() {
            let ops: &[&str] = if float { &["neg", "relu", "tanh", "sigmoid", "exp"] } else { &["neg", "relu"] };
            let op = *ops.choose(&mut self.rng).expect("non-empty");
            let a = self.expression(depth - 1, me, tensors, inputs, reach, body);
            let v = self.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}) : ({ty}) -> {ty}");
            v
        } else {
            let square = self.square.clone().expect("checked");
            let w = self.fresh();
            let _ = writeln!(
                body,
                "  {w} = \"temporal.read\"(%W) {{index = affine_map<(t)[T] -> ()>}} : (!temporal.rtensor) -> {square}"
            );
            let a = self.expression(depth - 1, me, tensors, inputs, reach, body);
            let v = self.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.matmul\"({w}, {a}) : ({square}, {ty}) -> {ty}");
            v
        }
    }

    fn program(seed: u64) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let element = *["f32", "f64", "i32", "i64"].choose(&mut rng).expect("non-empty");
        let shape: &[i64] = [&[][..], &[2], &[3], &[2, 2]].choose(&mut rng).expect("non-empty");
        let dims: String = shape.iter().map(|d| format!("{d}x")).collect();
        let point = format!("tensor<{dims}{element}>");
        let square = match shape {
            [n] => Some(format!("tensor<{n}x{n}x{element}>")),
            [2, 2] => Some(format!("tensor<2x2x{element}>")),
            _ => None,
        }
        .filter(|_| rng.random_bool(0.6));
        let mut g = Generator { rng, element, point, square, next: 0, shape: shape.to_vec() };
        let inputs = g.rng.random_range(0..=2usize);
        let tensors = g.rng.random_range(1..=4usize);
        let mut text = String::from(HEADER);
        for j in 0..inputs {
            let _ = writeln!(
                text,
                "%x{j} = \"temporal.input\"() {{sym_name = \"x{j}\", domain = [\"t\"], element = {}}} : () -> !temporal.rtensor",
                g.point
            );
        }
        if let Some(square) = &g.square {
            let _ = writeln!(
                text,
                "%W = \"temporal.input\"() {{sym_name = \"W\", domain = [], element = {square}}} : () -> !temporal.rtensor"
            );
        }
        for j in 0..tensors {
            let _ = writeln!(
                text,
                "%y{j} = \"temporal.tensor\"() {{sym_name = \"y{j}\", domain = [\"t\"], element = {}}} : () -> !temporal.rtensor",
                g.point
            );
        }
        let choices = |rng: &mut ChaCha8Rng| -> Condition {
            match rng.random_range(0..5) {
                0 => Condition::Equal(rng.random_range(0..3)),
                1 => Condition::AtLeast(rng.random_range(1..4)),
                2 => Condition::AtMost(rng.random_range(0..3)),
                3 => Condition::Even,
                _ => Condition::Odd,
            }
        };
        for me in 0..tensors {
            let branches = g.rng.random_range(1..=3usize);
            let mut conditions: Vec<Condition> = (0..branches).map(|_| choices(&mut g.rng)).collect();
            if g.rng.random_bool(0.85) {
                conditions[branches - 1] = Condition::Always;
            }
            for b in 0..branches {
                // The earliest t this branch is chosen at bounds how far back
                // its reads may go.
                let reach = (0..64)
                    .find(|&t| conditions[b].holds(t) && conditions[..b].iter().all(|c| !c.holds(t)))
                    .unwrap_or(64);
                let mut body = String::new();
                let depth = g.rng.random_range(0..=3);
                let result = g.expression(depth, me, tensors, inputs, reach, &mut body);
                let _ = writeln!(
                    text,
                    "\"temporal.define\"(%y{me}) ({{\n{body}  \"gpu.yield\"({result}) : ({}) -> ()\n}}) {{when = affine_set<(t)[T] : ({})>}} : (!temporal.rtensor) -> ()",
                    g.point,
                    conditions[b].text()
                );
            }
        }
        let mut outputs: Vec<usize> = (0..tensors).filter(|_| g.rng.random_bool(0.6)).collect();
        if outputs.is_empty() {
            outputs.push(tensors - 1);
        }
        for o in outputs {
            let _ = writeln!(text, "\"temporal.output\"(%y{o}) : (!temporal.rtensor) -> ()");
        }
        text
    }
}

#[test]
fn random_programs_agree_with_the_interpreter() {
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut succeeded = 0;
    for seed in 0..count {
        let program = Generator::program(seed);
        let bound = ChaCha8Rng::seed_from_u64(seed ^ 0xabcdef).random_range(0..12);
        if check(&program, bound, seed) {
            succeeded += 1;
        }
    }
    eprintln!("{succeeded} of {count} generated programs ran; the others failed both ways");
    if let Ok(seed) = std::env::var("TEMPO_SHOW_PROGRAM") {
        eprintln!("{}", Generator::program(seed.parse().expect("a seed")));
    }
    // Most generated programs are well-formed; both-error cases are a minority.
    assert!(succeeded * 10 >= count * 7, "only {succeeded} of {count} generated programs ran");
}

/// A coordinate of a generated read, for one source dimension.
#[derive(Clone, Copy, Debug)]
enum Coordinate {
    /// The reader's variable of the same dimension plus a shift.
    Shift(i64),
    /// `bound - 1 - v`.
    Reverse,
    /// A constant.
    Constant(i64),
    /// `v floordiv 2`.
    Half,
    /// `v mod 2`.
    Parity,
    /// `min(max(v + k, 0), bound - 1)`: a shift clamped into the extent
    /// (read through `temporal.read_range` with a cap).
    Clamped(i64),
}

/// A range over one source dimension of a generated range read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RangeForm {
    /// `0 : v + 1`
    Prefix,
    /// `v : bound`
    Suffix,
    /// `max(0, v - 1) : v + 1`
    Window,
    /// `0 : bound`
    All,
    /// `0 : v` (the strict past)
    Before,
    /// `v + 1 : bound` (the strict future)
    After,
}

impl RangeForm {
    fn interval(self, var: Option<i64>, bound: i64) -> (i64, i64) {
        match (self, var) {
            (RangeForm::Prefix, Some(v)) => (0, v + 1),
            (RangeForm::Suffix, Some(v)) => (v, bound),
            (RangeForm::Window, Some(v)) => ((v - 1).max(0), v + 1),
            (RangeForm::Before, Some(v)) => (0, v),
            (RangeForm::After, Some(v)) => (v + 1, bound),
            _ => (0, bound),
        }
    }
    /// Lower and upper map results.
    fn text(self, var: Option<&str>, bound: &str) -> (String, String) {
        match (self, var) {
            (RangeForm::Prefix, Some(v)) => ("0".into(), format!("{v} + 1")),
            (RangeForm::Suffix, Some(v)) => (v.into(), bound.into()),
            (RangeForm::Window, Some(v)) => (format!("0, {v} - 1"), format!("{v} + 1")),
            (RangeForm::Before, Some(v)) => ("0".into(), v.into()),
            (RangeForm::After, Some(v)) => (format!("{v} + 1"), bound.into()),
            _ => ("0".into(), bound.into()),
        }
    }
}

/// A condition on one dimension of the reader.
#[derive(Clone, Copy, Debug)]
enum DimCondition {
    Equal(i64),
    AtLeast(i64),
    AtMost(i64),
    /// `bound - 1 - v >= c`: at least `c` points after this one.
    BeforeEnd(i64),
    Even,
    Always,
}

/// Dimensions of generated general programs: `t < T` and `b < B`.
const DIMS: [(&str, &str); 2] = [("t", "T"), ("b", "B")];

struct GeneralGenerator {
    inner: Generator,
    /// Points of different `b` never depend on each other (what
    /// temporal-vectorize batches): reads of tensors over `b` from tensors
    /// over `b` are at the reader's own `b`, no condition mentions `b`,
    /// tensors without `b` read no computed tensor over `b`, and no seeded
    /// random values are made.
    independent_b: bool,
}

impl GeneralGenerator {
    fn coordinate_value(c: Coordinate, var: Option<i64>, bound: i64) -> i64 {
        match (c, var) {
            (Coordinate::Shift(k), Some(v)) => v + k,
            (Coordinate::Reverse, Some(v)) => bound - 1 - v,
            (Coordinate::Reverse, None) => bound - 1,
            (Coordinate::Constant(c), _) => c,
            (Coordinate::Half, Some(v)) => v.div_euclid(2),
            (Coordinate::Parity, Some(v)) => v.rem_euclid(2),
            (Coordinate::Clamped(k), Some(v)) => (v + k).max(0).min(bound - 1),
            _ => unreachable!("only constants and reverse without a variable"),
        }
    }

    fn coordinate_text(c: Coordinate, var: Option<&str>, bound: &str) -> String {
        match (c, var) {
            (Coordinate::Shift(0), Some(v)) => v.to_string(),
            (Coordinate::Shift(k), Some(v)) => format!("{v} + {k}"),
            (Coordinate::Reverse, Some(v)) => format!("{bound} - 1 - {v}"),
            (Coordinate::Reverse, None) => format!("{bound} - 1"),
            (Coordinate::Constant(c), _) => c.to_string(),
            (Coordinate::Half, Some(v)) => format!("{v} floordiv 2"),
            (Coordinate::Parity, Some(v)) => format!("{v} mod 2"),
            // The lower results; the cap is `bound - 1`.
            (Coordinate::Clamped(k), Some(v)) => format!("{v} + {k}, 0"),
            _ => unreachable!("only constants and reverse without a variable"),
        }
    }

    fn condition_holds(c: DimCondition, v: i64, bound: i64) -> bool {
        match c {
            DimCondition::Equal(k) => v == k,
            DimCondition::AtLeast(k) => v >= k,
            DimCondition::AtMost(k) => v <= k,
            DimCondition::BeforeEnd(k) => bound - 1 - v >= k,
            DimCondition::Even => v % 2 == 0,
            DimCondition::Always => true,
        }
    }

    fn condition_text(c: DimCondition, v: &str, bound: &str) -> String {
        match c {
            DimCondition::Equal(k) => format!("{v} - {k} == 0"),
            DimCondition::AtLeast(k) => format!("{v} - {k} >= 0"),
            DimCondition::AtMost(k) => format!("{k} - {v} >= 0"),
            DimCondition::BeforeEnd(k) => format!("{bound} - 1 - {v} - {k} >= 0"),
            DimCondition::Even => format!("{v} mod 2 == 0"),
            DimCondition::Always => "0 == 0".into(),
        }
    }

    /// A program over `t` and `b`: tensors over `[t]`, `[b, t]` or nothing,
    /// reads of inputs and earlier tensors with any coordinate form, self
    /// reads shifted in a direction fixed per tensor and dimension. Reads are
    /// kept when a brute-force check over small bounds finds them in bounds
    /// wherever their branch is chosen (and sometimes anyway).
    fn program(seed: u64) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let element = *["f32", "f64", "i32", "i64"].choose(&mut rng).expect("non-empty");
        let shape: &[i64] = [&[][..], &[2], &[2, 2]].choose(&mut rng).expect("non-empty");
        let dims_text: String = shape.iter().map(|d| format!("{d}x")).collect();
        let point = format!("tensor<{dims_text}{element}>");
        let mut rng = rng;
        let independent_b = rng.random_bool(0.3);
        let mut g = GeneralGenerator {
            inner: Generator { rng, element, point, square: None, next: 0, shape: shape.to_vec() },
            independent_b,
        };
        // Domains: indices into DIMS, in domain order.
        let domains: [&[usize]; 3] = [&[0], &[1, 0], &[]];
        let inputs: Vec<(String, Vec<usize>)> = vec![("x0".into(), vec![0]), ("x1".into(), vec![1, 0])];
        let count = g.inner.rng.random_range(1..=4usize);
        let tensors: Vec<(String, Vec<usize>)> = (0..count)
            .map(|i| (format!("y{i}"), domains.choose(&mut g.inner.rng).expect("non-empty").to_vec()))
            .collect();
        let mut text = String::new();
        for (name, bound) in DIMS {
            let _ = writeln!(text, "\"temporal.dim\"() {{sym_name = \"{name}\", bound = \"{bound}\"}} : () -> ()");
        }
        let domain_text = |d: &[usize]| d.iter().map(|&k| format!("\"{}\"", DIMS[k].0)).collect::<Vec<_>>().join(", ");
        for (name, domain) in &inputs {
            let _ = writeln!(
                text,
                "%{name} = \"temporal.input\"() {{sym_name = \"{name}\", domain = [{}], element = {}}} : () -> !temporal.rtensor",
                domain_text(domain),
                g.inner.point
            );
        }
        for (name, domain) in &tensors {
            let _ = writeln!(
                text,
                "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [{}], element = {}}} : () -> !temporal.rtensor",
                domain_text(domain),
                g.inner.point
            );
        }
        let samples: Vec<[i64; 2]> = [0, 1, 2, 3, 5, 8].iter().flat_map(|&t| [1, 2, 3].map(move |b| [t, b])).collect();
        // Definitions of each tensor, to copy for a duplicate.
        let mut definitions: Vec<String> = Vec::new();
        for (me, (name, domain)) in tensors.iter().enumerate() {
            let start = text.len();
            // A duplicate of an earlier tensor of the same domain (what
            // temporal-dedup merges): its definitions with the name changed.
            if let Some(original) = (0..me).find(|&o| tensors[o].1 == *domain && g.inner.rng.random_bool(0.3)) {
                let from = format!("%{})", tensors[original].0);
                let to = format!("%{name})");
                let copy = definitions[original].replace(&from, &to);
                text += &copy;
                definitions.push(copy);
                continue;
            }
            // Self reads go to the past along each dimension in this direction.
            let direction: Vec<i64> =
                domain.iter().map(|_| if g.inner.rng.random_bool(0.7) { -1 } else { 1 }).collect();
            let branches = g.inner.rng.random_range(1..=3usize);
            let mut conditions: Vec<Vec<DimCondition>> = Vec::new();
            for b in 0..branches {
                let last = b + 1 == branches;
                let condition: Vec<DimCondition> = domain
                    .iter()
                    .map(|&dim| {
                        if (last && g.inner.rng.random_bool(0.85)) || (g.independent_b && dim == 1) {
                            return DimCondition::Always;
                        }
                        match g.inner.rng.random_range(0..6) {
                            0 => DimCondition::Equal(g.inner.rng.random_range(0..3)),
                            1 => DimCondition::AtLeast(g.inner.rng.random_range(1..3)),
                            2 => DimCondition::AtMost(g.inner.rng.random_range(0..3)),
                            3 => DimCondition::BeforeEnd(g.inner.rng.random_range(1..3)),
                            4 => DimCondition::Even,
                            _ => DimCondition::Always,
                        }
                    })
                    .collect();
                conditions.push(condition);
            }
            // Points (per sample of bounds) where each branch is the chosen one.
            let chosen = |b: usize, bounds: &[i64; 2]| -> Vec<Vec<i64>> {
                let extents: Vec<i64> = domain.iter().map(|&d| bounds[d]).collect();
                points_of(&extents)
                    .into_iter()
                    .filter(|p| {
                        let holds = |c: &Vec<DimCondition>| {
                            c.iter().zip(domain).zip(p).all(|((&c, &d), &v)| Self::condition_holds(c, v, bounds[d]))
                        };
                        holds(&conditions[b]) && conditions[..b].iter().all(|c| !holds(c))
                    })
                    .collect()
            };
            for b in 0..branches {
                let mut body = String::new();
                let depth = g.inner.rng.random_range(0..=3);
                let points: Vec<([i64; 2], Vec<Vec<i64>>)> = samples.iter().map(|s| (*s, chosen(b, s))).collect();
                let result = g.expression(depth, me, &tensors, &inputs, domain, &direction, &points, &mut body);
                let header = format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                let condition: Vec<String> = conditions[b]
                    .iter()
                    .zip(domain)
                    .filter(|(c, _)| !matches!(c, DimCondition::Always))
                    .map(|(&c, &d)| Self::condition_text(c, DIMS[d].0, DIMS[d].1))
                    .collect();
                let condition = if condition.is_empty() { "0 == 0".to_string() } else { condition.join(", ") };
                let _ = writeln!(
                    text,
                    "\"temporal.define\"(%{name}) ({{\n{body}  \"gpu.yield\"({result}) : ({}) -> ()\n}}) {{when = affine_set<{header} : ({condition})>}} : (!temporal.rtensor) -> ()",
                    g.inner.point
                );
            }
            definitions.push(text[start..].to_string());
        }
        let mut outputs: Vec<usize> = (0..count).filter(|_| g.inner.rng.random_bool(0.6)).collect();
        if outputs.is_empty() {
            outputs.push(count - 1);
        }
        for o in outputs {
            let _ = writeln!(text, "\"temporal.output\"(%{}) : (!temporal.rtensor) -> ()", tensors[o].0);
        }
        text
    }

    #[allow(clippy::too_many_arguments)]
    fn expression(
        &mut self,
        depth: usize,
        me: usize,
        tensors: &[(String, Vec<usize>)],
        inputs: &[(String, Vec<usize>)],
        domain: &[usize],
        direction: &[i64],
        points: &[([i64; 2], Vec<Vec<i64>>)],
        body: &mut String,
    ) -> String {
        let independent = self.independent_b;
        // Reads of b by a reader over b stay at its own b.
        let own_b = independent && domain.contains(&1);
        let g = &mut self.inner;
        if depth == 0 || g.rng.random_bool(0.3) {
            if g.is_float() && !independent && g.rng.random_bool(0.08) {
                // Seeded random values: a pure function of seed, point and position.
                let v = g.fresh();
                let seed = g.rng.random_range(-5..5i64);
                let distribution = if g.rng.random_bool(0.5) { "uniform" } else { "normal" };
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.random\"() {{seed = {seed} : i64, distribution = \"{distribution}\"}} : () -> {}",
                    g.point
                );
                return v;
            }
            for _attempt in 0..8 {
                let pick = g.rng.random_range(0..3);
                let (source, source_domain, own) = match pick {
                    0 => {
                        let (n, d) = inputs.choose(&mut g.rng).expect("non-empty");
                        (n.clone(), d.clone(), false)
                    }
                    1 if me > 0 => {
                        let j = g.rng.random_range(0..me);
                        if independent && !domain.contains(&1) && tensors[j].1.contains(&1) {
                            continue;
                        }
                        (tensors[j].0.clone(), tensors[j].1.clone(), false)
                    }
                    2 if !domain.is_empty() => (tensors[me].0.clone(), tensors[me].1.clone(), true),
                    _ => break,
                };
                // Sometimes a reduction over a range of one source dimension;
                // of the tensor itself only over its strict past or future
                // (in its direction), so that the cycle stays schedulable.
                let ranged = (!source_domain.is_empty() && g.rng.random_bool(if own { 0.2 } else { 0.3 }))
                    .then(|| g.rng.random_range(0..source_domain.len()))
                    .filter(|&k| !(own_b && source_domain[k] == 1));
                let form = match ranged {
                    Some(k) if own => {
                        let p = domain.iter().position(|x| *x == source_domain[k]).expect("own domain");
                        if direction[p] < 0 { RangeForm::Before } else { RangeForm::After }
                    }
                    _ => *[RangeForm::Prefix, RangeForm::Suffix, RangeForm::Window, RangeForm::All]
                        .choose(&mut g.rng)
                        .expect("non-empty"),
                };
                let coordinates: Vec<Coordinate> = source_domain
                    .iter()
                    .map(|d| {
                        let position = domain.iter().position(|x| x == d);
                        if own_b && *d == 1 {
                            return Coordinate::Shift(0);
                        }
                        if own {
                            let p = position.expect("own domain");
                            let k = g.rng.random_range(0..=2i64);
                            return Coordinate::Shift(direction[p] * k);
                        }
                        match (position, g.rng.random_range(0..7)) {
                            (None, 0..3) => Coordinate::Constant(g.rng.random_range(0..2)),
                            (None, _) => Coordinate::Reverse,
                            (Some(_), 0 | 1) => Coordinate::Shift(g.rng.random_range(-2..=2)),
                            (Some(_), 2) => Coordinate::Reverse,
                            (Some(_), 3) => Coordinate::Constant(g.rng.random_range(0..2)),
                            (Some(_), 4) => Coordinate::Half,
                            (Some(_), 5) => Coordinate::Parity,
                            (Some(_), _) => Coordinate::Clamped(g.rng.random_range(-3..=3)),
                        }
                    })
                    .collect();
                // Often a prefix or suffix reduction at the reader's own
                // coordinates elsewhere: what temporal-lift-recurrences lifts.
                let mut coordinates = coordinates;
                if !own
                    && matches!(form, RangeForm::Prefix | RangeForm::Suffix | RangeForm::Window)
                    && source_domain.iter().all(|d| domain.contains(d))
                    && g.rng.random_bool(0.5)
                {
                    coordinates = source_domain.iter().map(|_| Coordinate::Shift(0)).collect();
                }
                // Or a whole range of a dimension the reader lacks, the others
                // at its own coordinates: what lifting incrementalizes.
                let whole_elsewhere = |k: usize| {
                    !domain.contains(&source_domain[k])
                        && source_domain.iter().enumerate().all(|(j, d)| j == k || domain.contains(d))
                };
                if !own && form == RangeForm::All && ranged.is_some_and(whole_elsewhere) && g.rng.random_bool(0.5) {
                    // (The ranged position's coordinate is not used.)
                    coordinates = (0..source_domain.len())
                        .map(|j| if Some(j) == ranged { Coordinate::Constant(0) } else { Coordinate::Shift(0) })
                        .collect();
                }
                if own && ranged.is_none() && coordinates.iter().all(|c| matches!(c, Coordinate::Shift(0))) {
                    continue;
                }
                let in_bounds = points.iter().all(|(bounds, chosen)| {
                    chosen.iter().all(|p| {
                        source_domain.iter().zip(&coordinates).enumerate().all(|(k, (&d, &c))| {
                            let var = domain.iter().position(|x| *x == d).map(|k| p[k]);
                            if ranged == Some(k) {
                                let (lo, hi) = form.interval(var, bounds[d]);
                                return hi <= lo || (lo >= 0 && hi <= bounds[d]);
                            }
                            let v = Self::coordinate_value(c, var, bounds[d]);
                            (0..bounds[d]).contains(&v)
                        })
                    })
                });
                if !in_bounds && !g.rng.random_bool(0.05) {
                    continue;
                }
                let results: Vec<String> = source_domain
                    .iter()
                    .zip(&coordinates)
                    .map(|(&d, &c)| {
                        let var = domain.contains(&d).then_some(DIMS[d].0);
                        Self::coordinate_text(c, var, DIMS[d].1)
                    })
                    .collect();
                let header = format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                let clamped = coordinates.iter().any(|c| matches!(c, Coordinate::Clamped(_)));
                if ranged.is_some() || clamped {
                    let mut lower = Vec::new();
                    let mut upper = Vec::new();
                    let mut caps = Vec::new();
                    for (j, ((&d, text), c)) in source_domain.iter().zip(&results).zip(&coordinates).enumerate() {
                        if ranged == Some(j) {
                            let (lo, hi) = form.text(domain.contains(&d).then_some(DIMS[d].0), DIMS[d].1);
                            lower.push(format!("affine_map<{header} -> ({lo})>"));
                            upper.push(format!("affine_map<{header} -> ({hi})>"));
                            caps.push(format!("affine_map<{header} -> ()>"));
                        } else {
                            lower.push(format!("affine_map<{header} -> ({text})>"));
                            upper.push(format!("affine_map<{header} -> ()>"));
                            let cap = if matches!(c, Coordinate::Clamped(_)) {
                                format!("{} - 1", DIMS[d].1)
                            } else {
                                String::new()
                            };
                            caps.push(format!("affine_map<{header} -> ({cap})>"));
                        }
                    }
                    let range = g.fresh();
                    let range_type =
                        if ranged.is_some() { g.point.replacen("tensor<", "tensor<?x", 1) } else { g.point.clone() };
                    let _ = writeln!(
                        body,
                        "  {range} = \"temporal.read_range\"(%{source}) {{caps = [{}], lower = [{}], upper = [{}]}} : (!temporal.rtensor) -> {range_type}",
                        caps.join(", "),
                        lower.join(", "),
                        upper.join(", ")
                    );
                    if ranged.is_none() {
                        return range;
                    }
                    let ops: &[&str] = if g.is_float() {
                        &[
                            "reduce_sum",
                            "reduce_max",
                            "reduce_mean",
                            "argmax",
                            "cumsum",
                            "reshaped",
                            "attention",
                            "mapped",
                        ]
                    } else {
                        &["reduce_sum", "reduce_max", "argmax", "cumsum", "reshaped", "mapped"]
                    };
                    let mut op = *ops.choose(&mut g.rng).expect("non-empty");
                    if op == "attention" && g.shape.is_empty() {
                        op = "reduce_max";
                    }
                    let v = g.fresh();
                    match op {
                        "reshaped" => {
                            // Reshape and expand of the range's dynamic
                            // length: [n, S] -> [n, S, 1] -> [n, S, 3], summed
                            // back over the last axis, then the maximum over n.
                            let inner: String = g.shape.iter().map(|d| format!("{d}x")).collect();
                            let column = format!("tensor<?x{inner}1x{}>", g.element);
                            let wide = format!("tensor<?x{inner}3x{}>", g.element);
                            let (c, w, r) = (g.fresh(), g.fresh(), g.fresh());
                            let last = g.shape.len() + 1;
                            let _ =
                                writeln!(body, "  {c} = \"temporal.reshape\"({range}) : ({range_type}) -> {column}");
                            let _ = writeln!(body, "  {w} = \"temporal.expand\"({c}) : ({column}) -> {wide}");
                            let _ = writeln!(
                                body,
                                "  {r} = \"temporal.reduce_sum\"({w}) {{axis = {last} : i64}} : ({wide}) -> {range_type}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.reduce_max\"({r}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        "attention" => {
                            // Softmax attention of a constant query over the
                            // range (scaled scores, softmax along the range,
                            // weighted sum of the range): what
                            // temporal-tile-ranges tiles.
                            let labels: String = ('a'..='z').filter(|c| *c != 'n').take(g.shape.len()).collect();
                            let scores_ty = format!("tensor<?x{}>", g.element);
                            let scalar = format!("tensor<{}>", g.element);
                            let query = g.constant(body);
                            let (s, c, x, m, d, e, z, p) = (
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                                g.fresh(),
                            );
                            let scale = format!("{:.2}", g.rng.random_range(0.1..2.0f64));
                            let _ = writeln!(
                                body,
                                "  {s} = \"temporal.einsum\"({query}, {range}) {{spec = \"{labels},n{labels}->n\"}} : ({}, {range_type}) -> {scores_ty}",
                                g.point
                            );
                            let _ = writeln!(
                                body,
                                "  {c} = \"temporal.constant\"() {{value = dense<{scale}> : {scalar}}} : () -> {scalar}"
                            );
                            let _ = writeln!(
                                body,
                                "  {x} = \"temporal.mul\"({s}, {c}) : ({scores_ty}, {scalar}) -> {scores_ty}"
                            );
                            // The maximum kept as a dimension of size 1, or not.
                            let kept = g.rng.random_bool(0.5);
                            let keep = |g: &mut Generator, r: String, body: &mut String| -> (String, String) {
                                if !kept {
                                    return (r, scalar.clone());
                                }
                                let one = format!("tensor<1x{}>", g.element);
                                let k = g.fresh();
                                let _ = writeln!(body, "  {k} = \"temporal.reshape\"({r}) : ({scalar}) -> {one}");
                                (k, one)
                            };
                            let _ = writeln!(
                                body,
                                "  {m} = \"temporal.reduce_max\"({x}) {{axis = 0 : i64}} : ({scores_ty}) -> {scalar}"
                            );
                            let (mk, mt) = keep(g, m, body);
                            let _ = writeln!(
                                body,
                                "  {d} = \"temporal.sub\"({x}, {mk}) : ({scores_ty}, {mt}) -> {scores_ty}"
                            );
                            let _ = writeln!(body, "  {e} = \"temporal.exp\"({d}) : ({scores_ty}) -> {scores_ty}");
                            let _ = writeln!(
                                body,
                                "  {z} = \"temporal.reduce_sum\"({e}) {{axis = 0 : i64}} : ({scores_ty}) -> {scalar}"
                            );
                            let (zk, zt) = keep(g, z, body);
                            let _ = writeln!(
                                body,
                                "  {p} = \"temporal.div\"({e}, {zk}) : ({scores_ty}, {zt}) -> {scores_ty}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.einsum\"({p}, {range}) {{spec = \"n,n{labels}->{labels}\"}} : ({scores_ty}, {range_type}) -> {}",
                                g.point
                            );
                        }
                        "mapped" => {
                            // An elementwise op of the range and a constant
                            // point, then its sum or maximum along the range:
                            // what temporal-lift-recurrences lifts with the
                            // expression.
                            let c = g.constant(body);
                            let m = g.fresh();
                            let binary = *["add", "sub", "mul"].choose(&mut g.rng).expect("non-empty");
                            let reduce = *["reduce_sum", "reduce_max"].choose(&mut g.rng).expect("non-empty");
                            let _ = writeln!(
                                body,
                                "  {m} = \"temporal.{binary}\"({range}, {c}) : ({range_type}, {}) -> {range_type}",
                                g.point
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.{reduce}\"({m}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        "argmax" => {
                            // Index of the maximum, cast back to the point's element type.
                            let indices = g.point.replace(g.element, "i64");
                            let a = g.fresh();
                            let _ = writeln!(
                                body,
                                "  {a} = \"temporal.argmax\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {indices}"
                            );
                            let _ = writeln!(body, "  {v} = \"temporal.cast\"({a}) : ({indices}) -> {}", g.point);
                        }
                        "cumsum" => {
                            // Running sums along the range, then their maximum.
                            let c = g.fresh();
                            let _ = writeln!(
                                body,
                                "  {c} = \"temporal.cumsum\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {range_type}"
                            );
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.reduce_max\"({c}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                        _ => {
                            let _ = writeln!(
                                body,
                                "  {v} = \"temporal.{op}\"({range}) {{axis = 0 : i64}} : ({range_type}) -> {}",
                                g.point
                            );
                        }
                    }
                    return v;
                }
                let v = g.fresh();
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.read\"(%{source}) {{index = affine_map<{header} -> ({})>}} : (!temporal.rtensor) -> {}",
                    results.join(", "),
                    g.point
                );
                return v;
            }
            return g.constant(body);
        }
        let ty = g.point.clone();
        let kind = g.rng.random_range(0..25);
        if kind >= 22 && !g.shape.is_empty() {
            // A contraction or a slice at point-dependent offsets that keeps
            // the point's type.
            let shape = g.shape.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let b = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let g = &mut self.inner;
            let v = g.fresh();
            let e = g.element;
            match (kind, shape.as_slice()) {
                (22, [_, _]) => {
                    let spec =
                        *["ij,jk->ik", "ij,kj->ik", "ji,jk->ik", "ij,ij->ji"].choose(&mut g.rng).expect("non-empty");
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.einsum\"({a}, {b}) {{spec = \"{spec}\"}} : ({ty}, {ty}) -> {ty}"
                    );
                }
                (22, _) => {
                    let spec = *["i,j->i", "i,i->i", "i->i"].choose(&mut g.rng).expect("non-empty");
                    let (operands, types) = if spec == "i->i" {
                        (a.clone(), ty.clone())
                    } else {
                        (format!("{a}, {b}"), format!("{ty}, {ty}"))
                    };
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.einsum\"({operands}) {{spec = \"{spec}\"}} : ({types}) -> {ty}"
                    );
                }
                (23, [_, _]) => {
                    // Rows of a against b with broadcast batch dimensions:
                    // [2, 1, 1, 2] x [1, 1, 2, 2] -> [2, 1, 1, 2].
                    let (l, r, m) = (g.fresh(), g.fresh(), g.fresh());
                    let left = format!("tensor<2x1x1x2x{e}>");
                    let right = format!("tensor<1x1x2x2x{e}>");
                    let _ = writeln!(body, "  {l} = \"temporal.reshape\"({a}) : ({ty}) -> {left}");
                    let _ = writeln!(body, "  {r} = \"temporal.reshape\"({b}) : ({ty}) -> {right}");
                    let _ = writeln!(body, "  {m} = \"temporal.matmul\"({l}, {r}) : ({left}, {right}) -> {left}");
                    let _ = writeln!(body, "  {v} = \"temporal.reshape\"({m}) : ({left}) -> {ty}");
                }
                _ => {
                    // Both side by side along the first axis, then the box at
                    // an offset of 0 to 2 chosen by the point.
                    let mut wide_shape = shape.clone();
                    wide_shape[0] *= 2;
                    let wide = format!("tensor<{}{e}>", wide_shape.iter().map(|d| format!("{d}x")).collect::<String>());
                    let c = g.fresh();
                    let _ = writeln!(
                        body,
                        "  {c} = \"temporal.concat\"({a}, {b}) {{axis = 0 : i64}} : ({ty}, {ty}) -> {wide}"
                    );
                    let var = domain.last().map_or("0".to_string(), |&d| format!("{} mod 3", DIMS[d].0));
                    let mut offsets = vec![var];
                    offsets.extend(shape[1..].iter().map(|_| "0".to_string()));
                    let header =
                        format!("({})[T, B]", domain.iter().map(|&d| DIMS[d].0).collect::<Vec<_>>().join(", "));
                    let _ = writeln!(
                        body,
                        "  {v} = \"temporal.dynamic_slice\"({c}) {{offsets = affine_map<{header} -> ({})>}} : ({wide}) -> {ty}",
                        offsets.join(", ")
                    );
                }
            }
            v
        } else if kind >= 20 && !g.shape.is_empty() {
            // A movement that keeps the point's type.
            let shape = g.shape.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let g = &mut self.inner;
            let v = g.fresh();
            if shape == [2, 2] && g.rng.random_bool(0.5) {
                let _ = writeln!(body, "  {v} = \"temporal.permute\"({a}) {{permutation = [1, 0]}} : ({ty}) -> {ty}");
            } else if shape.len() == 1 && shape[0] == 2 && g.rng.random_bool(0.5) {
                let half = ty.replacen("tensor<2x", "tensor<1x", 1);
                let (first, second) = (g.fresh(), g.fresh());
                let _ = writeln!(body, "  {first} = \"temporal.slice\"({a}) {{offsets = [0]}} : ({ty}) -> {half}");
                let _ = writeln!(body, "  {second} = \"temporal.slice\"({a}) {{offsets = [1]}} : ({ty}) -> {half}");
                let _ = writeln!(
                    body,
                    "  {v} = \"temporal.concat\"({second}, {first}) {{axis = 0 : i64}} : ({half}, {half}) -> {ty}"
                );
            } else {
                let axis = g.rng.random_range(0..shape.len());
                let _ = writeln!(body, "  {v} = \"temporal.flip\"({a}) {{axis = {axis} : i64}} : ({ty}) -> {ty}");
            }
            v
        } else if kind < 7 {
            let ops: &[&str] = if g.is_float() {
                &["neg", "relu", "tanh", "sigmoid", "sin", "cos", "abs"]
            } else {
                &["neg", "relu", "abs"]
            };
            let op = *ops.choose(&mut g.rng).expect("non-empty");
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}) : ({ty}) -> {ty}");
            v
        } else if kind < 10 {
            // where(cmp(a, b), c, d)
            let predicate = *["eq", "ne", "lt", "le", "gt", "ge"].choose(&mut g.rng).expect("non-empty");
            let flags = ty.replace(self.inner.element, "i1");
            let operands: Vec<String> = (0..4)
                .map(|_| self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body))
                .collect();
            let c = self.inner.fresh();
            let _ = writeln!(
                body,
                "  {c} = \"temporal.cmp\"({}, {}) {{predicate = \"{predicate}\"}} : ({ty}, {ty}) -> {flags}",
                operands[0], operands[1]
            );
            let v = self.inner.fresh();
            let _ = writeln!(
                body,
                "  {v} = \"temporal.select\"({c}, {}, {}) : ({flags}, {ty}, {ty}) -> {ty}",
                operands[2], operands[3]
            );
            v
        } else if kind < 11 {
            // A cast away and back: exact for the chosen pairs, or through booleans.
            let element = self.inner.element;
            let other = match (element, self.inner.rng.random_bool(0.3)) {
                (_, true) => "i1",
                ("f32", _) => "f64",
                ("f64", _) => "f32",
                ("i32", _) => "i64",
                _ => "i32",
            };
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let away = ty.replace(element, other);
            let middle = self.inner.fresh();
            let _ = writeln!(body, "  {middle} = \"temporal.cast\"({a}) : ({ty}) -> {away}");
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.cast\"({middle}) : ({away}) -> {ty}");
            v
        } else {
            let ops: &[&str] = if g.is_float() {
                &["add", "sub", "mul", "max", "min", "div", "pow"]
            } else {
                &["add", "sub", "mul", "max", "min", "div"]
            };
            let op = *ops.choose(&mut g.rng).expect("non-empty");
            // Sometimes both operands are the same subexpression written
            // twice (the same random choices replayed, with fresh names):
            // what temporal-dedup's common-subexpression merging removes.
            let twice = g.rng.random_bool(0.15);
            let replay = self.inner.rng.clone();
            let a = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
            let b = if twice {
                let after = std::mem::replace(&mut self.inner.rng, replay);
                let b = self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body);
                self.inner.rng = after;
                b
            } else {
                self.expression(depth - 1, me, tensors, inputs, domain, direction, points, body)
            };
            let v = self.inner.fresh();
            let _ = writeln!(body, "  {v} = \"temporal.{op}\"({a}, {b}) : ({ty}, {ty}) -> {ty}");
            v
        }
    }
}

fn points_of(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &e in extents {
        all = all.into_iter().flat_map(|p: Vec<i64>| (0..e).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

/// [`check_both`] for general programs over `t < T` and `b < B`.
fn check_general(source: &str, t: i64, b: i64, seed: u64) -> bool {
    check_both(source, &[("T", t), ("B", b)], seed, source)
}

#[test]
fn random_general_programs_agree_with_the_interpreter() {
    let count: u64 = std::env::var("TEMPO_RANDOM_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(300);
    let mut succeeded = 0;
    for seed in 0..count {
        let program = GeneralGenerator::program(seed);
        if std::env::var("TEMPO_TRACE").is_ok() {
            eprintln!("general program {seed}");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        if check_general(&program, t, b, seed) {
            succeeded += 1;
        }
    }
    eprintln!("{succeeded} of {count} general programs ran; the others failed both ways");
    if let Ok(seed) = std::env::var("TEMPO_SHOW_GENERAL_PROGRAM") {
        eprintln!("{}", GeneralGenerator::program(seed.parse().expect("a seed")));
    }
    assert!(succeeded * 10 >= count * 6, "only {succeeded} of {count} general programs ran");
}

/// Every program in `examples/corpus/` (first line `// bounds: T=9 B=3`)
/// runs both ways with its bounds, and with each bound set to 1.
#[test]
fn corpus_directory_agrees_with_the_interpreter() {
    let dir = format!("{}/../examples/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus directory").map(|e| e.expect("entry").path()).collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable");
        let name = path.display().to_string();
        let header = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// bounds:"))
            .unwrap_or_else(|| panic!("{name}: the first line must be `// bounds: NAME=VALUE ...`"));
        let bounds: Vec<(String, i64)> = header
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("NAME=VALUE");
                (k.to_string(), v.parse().expect("an integer bound"))
            })
            .collect();
        fn as_refs(b: &[(String, i64)]) -> Vec<(&str, i64)> {
            b.iter().map(|(k, v)| (k.as_str(), *v)).collect()
        }
        assert!(check_both(&source, &as_refs(&bounds), 1, &name), "{name} must run with its own bounds");
        for k in 0..bounds.len() {
            let mut small = bounds.clone();
            small[k].1 = 1;
            check_both(&source, &as_refs(&small), 2, &name);
        }
    }
}

/// Every optimization configuration the differential tests try besides the
/// default: no temporal passes, level 1, level 3 (inexact rules and attention
/// tiling, compared within tolerance; also without the tiling), and level 2 with each pass left out.
fn optimization_variants() -> Vec<Optimization> {
    let mut out = vec![
        Optimization { level: 0, disabled: vec![] },
        Optimization { level: 1, disabled: vec![] },
        Optimization { level: 3, disabled: vec![] },
        Optimization { level: 3, disabled: vec!["temporal-tile-ranges".to_string()] },
    ];
    for pass in tempo_passes::optimize::unique(tempo_passes::optimize::O2_PASSES) {
        out.push(Optimization { level: 2, disabled: vec![pass.to_string()] });
    }
    out
}

/// Generated programs and the corpus directory agree with the interpreter
/// with each temporal pass turned off, at the other levels too. CI runs a
/// sample (`TEMPO_PASS_SAMPLE`, default 20 generated programs); every
/// combination over many programs is
/// `TEMPO_PASS_SAMPLE=600 cargo test --release --test end_to_end optimization_variants`.
#[test]
fn optimization_variants_agree_with_the_interpreter() {
    let sample: u64 = std::env::var("TEMPO_PASS_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(20);
    let variants = optimization_variants();
    for seed in 0..sample {
        let program = GeneralGenerator::program(seed);
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        for variant in &variants {
            check_optimized(&program, &[("T", t), ("B", b)], seed, &program, variant.clone());
        }
    }
    let dir = format!("{}/../examples/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus directory").map(|e| e.expect("entry").path()).collect();
    files.sort();
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable");
        let name = path.display().to_string();
        let bounds: Vec<(String, i64)> = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// bounds:"))
            .expect("a bounds line")
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("NAME=VALUE");
                (k.to_string(), v.parse().expect("an integer bound"))
            })
            .collect();
        let refs: Vec<(&str, i64)> = bounds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        for variant in &variants {
            assert!(check_optimized(&source, &refs, 1, &name, variant.clone()), "{name} must run");
        }
    }
}

/// How many of the first 200 generated programs `f` (a rewrite of the
/// program model) says it changed.
fn count_generated(f: impl Fn(&mut tempo_passes::program::Program) -> bool) -> usize {
    let context = crate::context();
    (0..200)
        .filter(|&seed| {
            let source = GeneralGenerator::program(seed);
            let module = melior::ir::Module::parse(&context, &source).expect("generated programs parse");
            tempo_passes::program::Program::from_module(module.as_operation().into()).is_ok_and(|mut p| f(&mut p))
        })
        .count()
}

/// The generator makes softmax attention over ranges that grow with a
/// dimension (what temporal-tile-ranges tiles) in a fair share of programs,
/// so the -O3 variants above exercise the tiled lowering.
#[test]
fn generated_programs_exercise_attention_tiling() {
    let tiled = count_generated(|program| tempo_passes::temporal_tile_ranges::tile_ranges(program, 2));
    eprintln!("{tiled} of 200 tiled");
    assert!(tiled >= 10, "only {tiled} of 200 generated programs have attention to tile");
}

/// The generator reduces whole ranges after their loop (what lifting
/// incrementalizes) in a fair share of programs too.
#[test]
fn generated_programs_exercise_incrementalization() {
    let lifted = count_generated(|program| {
        let before: usize = program.tensors.iter().map(|t| t.branches.len()).sum();
        tempo_passes::temporal_lift_recurrences::lift_recurrences(program, false);
        // Each recurrence tensor made brings two branches; incrementalizing
        // also splits the reader's branch in two.
        let made =
            program.tensors.iter().filter(|t| ["_prefix_", "_suffix_", "_window"].iter().any(|n| t.name.contains(n)));
        let after: usize = program.tensors.iter().map(|t| t.branches.len()).sum();
        after > before + 2 * made.count()
    });
    eprintln!("{lifted} of 200 incrementalized");
    assert!(lifted >= 5, "only {lifted} of 200 generated programs reduce a whole range after its loop");
    // Reductions of an elementwise expression of ranges are lifted with it.
    let mapped = count_generated(|program| {
        tempo_passes::temporal_lift_recurrences::lift_recurrences(program, false);
        program.tensors.iter().any(|t| t.name.contains("_mapped_"))
    });
    eprintln!("{mapped} of 200 lift a reduction of an expression");
    assert!(mapped >= 5, "only {mapped} of 200 generated programs lift a reduction of an expression");
}

/// NVIDIA's ptxas, where `tools/setup-cuda.sh` installs it.
fn ptxas() -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/cuda-tools/nvidia/cuda_nvcc/bin/ptxas");
    path.is_file().then_some(path)
}

/// Random programs compile for the CUDA target (the same temporal
/// optimizations, then kernels, device and managed memory, PTX), and ptxas assembles
/// every kernel: the GPU pipeline handles general input, not only the
/// examples. Programs the compiler refuses for the CPU may be refused here
/// too, with diagnostics, never a crash.
#[test]
fn random_programs_compile_to_ptx_that_ptxas_accepts() {
    let Some(ptxas) = ptxas() else {
        panic!("ptxas is missing: run tools/setup-cuda.sh (tools/test.sh does)");
    };
    let scratch = std::env::temp_dir().join(format!("tempo-ptx-{}", std::process::id()));
    let count: u64 = std::env::var("TEMPO_PTX_SAMPLE").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
    let (mut compiled, mut kernels) = (0, 0);
    for seed in 0..count {
        let source = GeneralGenerator::program(seed);
        let context = crate::context();
        let mut module = melior::ir::Module::parse(&context, &source).expect("generated programs parse");
        let directory = scratch.join(seed.to_string());
        let options = crate::options(&[], vec![], Some(seed));
        let Ok(n) = tempo_runtime::emit_ptx(&context, &mut module, &options, 90, directory.to_str().unwrap()) else {
            continue;
        };
        compiled += 1;
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            let out = std::process::Command::new(&ptxas)
                .arg("-arch=sm_90")
                .arg(&path)
                .arg("-o")
                .arg("/dev/null")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "ptxas rejects {} (seed {seed}):\n{}\n{source}",
                path.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            kernels += 1;
        }
        assert_eq!(n, std::fs::read_dir(&directory).unwrap().count());
    }
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!("{compiled} of {count} random programs compiled for CUDA; ptxas accepts all {kernels} kernels");
    assert!(compiled * 2 > count as usize, "only {compiled} of {count} random programs compiled for CUDA");
}

/// How a program fared with the CUDA target's lowering run on the CPU.
#[derive(Debug, PartialEq, Eq)]
enum GpuLoopsOutcome {
    /// It ran, with the interpreter's results.
    Agreed,
    /// Both sides refused it (an ill-formed program).
    BothFailed,
    /// It takes the shared-memory matrix kernel, which has no CPU lowering.
    NeedsGpu,
}

/// Runs `source` with the CUDA target's lowering on the CPU
/// ([`tempo_runtime::Target::GpuLoopsOnCpu`]) and with the interpreter;
/// panics if they disagree.
fn check_gpu_loops(source: &str, bounds: &[(&str, i64)], seed: u64, threads: usize, what: &str) -> GpuLoopsOutcome {
    let context = crate::context();
    let mut module = melior::ir::Module::parse(&context, source).expect("program parses");
    let options = tempo_runtime::RunOptions {
        target: tempo_runtime::Target::GpuLoopsOnCpu,
        threads,
        ..crate::options(bounds, vec![], Some(seed))
    };
    let compiled = tempo_runtime::run_module(&context, &mut module, &options);
    let interpreted = interpret(source, bounds, vec![], Some(seed));
    match (&compiled, &interpreted) {
        (Ok(c), Ok(i)) => {
            if let Err(e) = compare(c, i) {
                panic!(
                    "the GPU lowering (on the CPU) and the interpreter differ ({bounds:?}, seed={seed}): {e}\n{what}"
                );
            }
            GpuLoopsOutcome::Agreed
        }
        (Err(c), _) if c.iter().any(|line| line.contains("shared-memory matrix kernel")) => GpuLoopsOutcome::NeedsGpu,
        (Err(_), Err(_)) => GpuLoopsOutcome::BothFailed,
        _ => panic!(
            "only one side failed ({bounds:?}, seed={seed}, GPU lowering on the CPU):\ncompiled: {compiled:?}\ninterpreted: {interpreted:?}\n{what}"
        ),
    }
}

/// The CUDA target's lowering (one-point kernels for single values, the
/// fused and flattened parallel loops that become kernels, constants copied
/// to memory kernels can read) computes what the interpreter computes: run
/// on the CPU, each future kernel a parallel loop, over the examples, the
/// corpus and random programs, on one thread and on several.
#[test]
fn gpu_lowering_run_on_the_cpu_agrees_with_the_interpreter() {
    let mut outcomes = Vec::new();
    for name in [
        "counter.mlir",
        "fibonacci.mlir",
        "running_sum.mlir",
        "rnn.mlir",
        "returns.mlir",
        "causal_attention.mlir",
        "windowed_attention.mlir",
        "suffix_sum.mlir",
        "prefix_recurrence.mlir",
    ] {
        for bound in [0, 1, 7] {
            outcomes.push(check_gpu_loops(&example(name), &[("T", bound)], 3, 1, name));
        }
    }
    for (name, other) in [("batched_max.mlir", "B"), ("stacked_rnn.mlir", "L"), ("cumulative_sum.mlir", "")] {
        let mut bounds = vec![("T", 5)];
        if !other.is_empty() {
            bounds.push((other, 3));
        }
        outcomes.push(check_gpu_loops(&example(name), &bounds, 3, 2, name));
    }
    let dir = format!("{}/../examples/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).expect("corpus directory").map(|e| e.expect("entry").path()).collect();
    files.sort();
    for path in files {
        let source = std::fs::read_to_string(&path).expect("readable");
        let bounds: Vec<(String, i64)> = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// bounds:"))
            .expect("a bounds line")
            .split_whitespace()
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("NAME=VALUE");
                (k.to_string(), v.parse().expect("an integer bound"))
            })
            .collect();
        let bounds: Vec<(&str, i64)> = bounds.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        // (One thread: the per-row buffers of tiled attention are allocas,
        // which an OpenMP loop body of several blocks cannot hold.)
        let outcome = check_gpu_loops(&source, &bounds, 1, 1, &path.display().to_string());
        assert_ne!(outcome, GpuLoopsOutcome::BothFailed, "{} must run", path.display());
        outcomes.push(outcome);
    }
    let count: u64 = std::env::var("TEMPO_GPU_LOOPS_PROGRAMS").ok().and_then(|v| v.parse().ok()).unwrap_or(120);
    for seed in 0..count {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9e37);
        let (t, b) = (rng.random_range(0..9), rng.random_range(1..4));
        let threads = if seed % 2 == 0 { 1 } else { 2 };
        let program = GeneralGenerator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t), ("B", b)], seed, threads, &program));
        let program = Generator::program(seed);
        outcomes.push(check_gpu_loops(&program, &[("T", t)], seed, threads, &program));
    }
    let agreed = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::Agreed).count();
    let needs_gpu = outcomes.iter().filter(|o| **o == GpuLoopsOutcome::NeedsGpu).count();
    eprintln!(
        "GPU lowering on the CPU: {agreed} of {} programs agreed, {needs_gpu} need the GPU's matrix kernel",
        outcomes.len()
    );
    assert!(agreed * 10 >= outcomes.len() * 6, "only {agreed} of {} programs ran", outcomes.len());
}
