//! Generators of random well-formed (and some ill-formed) temporal
//! programs for the differential tests: [`Generator`] over one dimension
//! (here), [`GeneralGenerator`] over two, with ranges, clamped and reversed
//! reads, and the forms the temporal optimizations rewrite (`general`),
//! [`ModelGenerator`] over `t` (and a batch `b`) from the layers real models
//! are made of: gates, MLPs, SwiGLU, LSTM and GRU cells, attention with
//! grouped heads and rotary embeddings, embeddings fed back from an argmax
//! (`model`), [`DynamicGenerator`] with dynamic structure: tree cells whose
//! children are read through data, loops with data-dependent stops
//! (`dynamic`), [`CollectiveGenerator`] with several all-reduces that do
//! or do not depend on each other (`collectives`).

use crate::differential::HEADER;
use rand::{Rng, SeedableRng, seq::IndexedRandom};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

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
pub(crate) struct Generator {
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

    pub(crate) fn program(seed: u64) -> String {
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

mod collectives;
mod dynamic;
mod general;
mod model;
pub(crate) use collectives::CollectiveGenerator;
pub(crate) use dynamic::DynamicGenerator;
pub(crate) use general::GeneralGenerator;
pub(crate) use model::ModelGenerator;
