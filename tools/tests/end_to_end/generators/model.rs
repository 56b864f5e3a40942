//! [`ModelGenerator`]: random programs made of the layers real models are
//! made of, with random sizes: a residual stream (a vector `[D]` or a row
//! `[1, D]` per step, optionally per batch element `b` too) through 1 to 3
//! blocks drawn from gated layers (two products meeting elementwise: `x A *
//! x B`, `x Wx + h[t-1] Wh`, vector times matrix and matrix times vector),
//! MLPs whose products feed products (GELU, low-rank adapters), SwiGLU,
//! LSTM and GRU cells (fused gate weights sliced, or a weight per gate;
//! `c` and `h` reading `t-1`), softmax attention over the growing cache
//! `k[0:t+1]` or a window with grouped query heads (an einsum with a group
//! label, or keys expanded as `repeat_kv` does) and rotary embeddings
//! (`sin`/`cos` of a position counter, float or a cast of an integer one),
//! and sinusoidal position encodings; norms (RMS, layer) before products;
//! sometimes an embedding gather of a token fed back from the argmax of an
//! LM head's logits at `t-1`. Every program is well-formed; inputs are
//! random (`--seed`). Weights are inputs without a domain, shared by every
//! step (and batch element).

use super::*;

/// A value of a branch body: SSA name, shape (`-1`: a range's dynamic
/// length) and element type.
#[derive(Clone, Debug)]
struct Val {
    name: String,
    shape: Vec<i64>,
    el: &'static str,
}

fn tensor_type(shape: &[i64], el: &str) -> String {
    let dims: String = shape.iter().map(|&d| if d < 0 { "?x".to_string() } else { format!("{d}x") }).collect();
    format!("tensor<{dims}{el}>")
}

impl Val {
    fn ty(&self) -> String {
        tensor_type(&self.shape, self.el)
    }
}

/// A declared recurrent tensor (over the stream's domain) or weight (no
/// domain).
#[derive(Clone, Debug)]
struct Decl {
    name: String,
    shape: Vec<i64>,
    el: &'static str,
}

/// NumPy broadcasting of two shapes (dynamic sizes only meet their equal).
fn broadcast(a: &[i64], b: &[i64]) -> Vec<i64> {
    let n = a.len().max(b.len());
    let at = |s: &[i64], k: usize| if k + s.len() >= n { s[k + s.len() - n] } else { 1 };
    (0..n)
        .map(|k| match (at(a, k), at(b, k)) {
            (x, y) if x == y => x,
            (1, y) => y,
            (x, 1) => x,
            (x, y) => panic!("generator bug: cannot broadcast {x} with {y} ({a:?}, {b:?})"),
        })
        .collect()
}

/// A product with a weight: `x W` (`W` is `[n, out]`) or `W x` (`W` is
/// `[out, n]`, `x` a vector).
#[derive(Clone, Debug)]
struct Product {
    weight: Decl,
    transposed: bool,
}

/// A norm before a product: RMS (gain) or layer norm (gain and shift).
#[derive(Clone, Debug)]
struct Norm {
    gain: Decl,
    shift: Option<Decl>,
}

/// Where the position of rotary and sinusoidal encodings comes from.
#[derive(Clone, Debug)]
struct Position {
    tensor: Decl,
}

/// Activations of gates and hidden layers.
const ACTIVATIONS: [&str; 6] = ["sigmoid", "tanh", "relu", "silu", "gelu", "none"];

pub(crate) struct ModelGenerator {
    rng: ChaCha8Rng,
    /// The float element type of every value.
    float: &'static str,
    /// Tensors are over `[b, t]` (batch elements independent) instead of `[t]`.
    batched: bool,
    /// The stream is a row `[1, D]` instead of a vector `[D]`.
    row: bool,
    decls: String,
    defs: String,
    body: String,
    next_value: usize,
    next_name: usize,
    position: Option<Position>,
    /// Tensors worth an output besides the final stream.
    candidates: Vec<Decl>,
}

impl ModelGenerator {
    fn header(&self) -> &'static str {
        if self.batched { "(b, t)[T, B]" } else { "(t)[T, B]" }
    }

    /// The reader's own point shifted along `t`.
    fn at(&self, shift: i64) -> String {
        let t = if shift == 0 { "t".to_string() } else { format!("t - {}", -shift) };
        if self.batched { format!("b, {t}") } else { t }
    }

    fn vector(&self, n: i64) -> Vec<i64> {
        if self.row { vec![1, n] } else { vec![n] }
    }

    fn width(shape: &[i64]) -> i64 {
        *shape.last().expect("a vector or a row")
    }

    fn name(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    /// A recurrent tensor over the stream's domain.
    fn tensor(&mut self, prefix: &str, shape: Vec<i64>, el: &'static str) -> Decl {
        let name = self.name(prefix);
        let domain = if self.batched { "\"b\", \"t\"" } else { "\"t\"" };
        let _ = writeln!(
            self.decls,
            "%{name} = \"temporal.tensor\"() {{sym_name = \"{name}\", domain = [{domain}], element = {}}} : () -> !temporal.rtensor",
            tensor_type(&shape, el)
        );
        Decl { name, shape, el }
    }

    /// An input over the stream's domain (`stream`) or a weight (no domain).
    fn input(&mut self, prefix: &str, shape: Vec<i64>, stream: bool) -> Decl {
        let name = self.name(prefix);
        let domain = match (stream, self.batched) {
            (false, _) => "",
            (true, false) => "\"t\"",
            (true, true) => "\"b\", \"t\"",
        };
        let _ = writeln!(
            self.decls,
            "%{name} = \"temporal.input\"() {{sym_name = \"{name}\", domain = [{domain}], element = {}}} : () -> !temporal.rtensor",
            tensor_type(&shape, self.float)
        );
        Decl { name, shape, el: self.float }
    }

    fn weight(&mut self, shape: Vec<i64>) -> Decl {
        self.input("W", shape, false)
    }

    fn emit(&mut self, op: String, shape: Vec<i64>, el: &'static str) -> Val {
        self.next_value += 1;
        let v = Val { name: format!("%v{}", self.next_value), shape, el };
        let _ = writeln!(self.body, "  {} = {op} -> {}", v.name, v.ty());
        v
    }

    /// Ends the branch body being written as a definition of `d`.
    fn define(&mut self, d: &Decl, when: &str, result: &Val) {
        assert_eq!(result.shape, d.shape, "generator bug: {} defined with {}", d.name, result.ty());
        let body = std::mem::take(&mut self.body);
        let _ = writeln!(
            self.defs,
            "\"temporal.define\"(%{}) ({{\n{body}  \"gpu.yield\"({}) : ({}) -> ()\n}}) {{when = affine_set<{} : ({when})>}} : (!temporal.rtensor) -> ()",
            d.name,
            result.name,
            result.ty(),
            self.header()
        );
    }

    fn read(&mut self, d: &Decl, shift: i64) -> Val {
        let index = self.at(shift);
        let header = self.header();
        self.emit(
            format!(
                "\"temporal.read\"(%{}) {{index = affine_map<{header} -> ({index})>}} : (!temporal.rtensor)",
                d.name
            ),
            d.shape.clone(),
            d.el,
        )
    }

    fn read_weight(&mut self, d: &Decl) -> Val {
        let header = self.header();
        self.emit(
            format!("\"temporal.read\"(%{}) {{index = affine_map<{header} -> ()>}} : (!temporal.rtensor)", d.name),
            d.shape.clone(),
            d.el,
        )
    }

    /// `d[lo:t+1]` along `t` (at the reader's own `b`): the prefix `0:t+1`
    /// or the window `max(0, t-w+1):t+1`.
    fn read_range(&mut self, d: &Decl, window: Option<i64>) -> Val {
        let header = self.header();
        let lower_t = match window {
            None => "0".to_string(),
            Some(w) => format!("0, t - {}", w - 1),
        };
        let (caps, lower, upper) = if self.batched {
            (
                format!("affine_map<{header} -> ()>, affine_map<{header} -> ()>"),
                format!("affine_map<{header} -> (b)>, affine_map<{header} -> ({lower_t})>"),
                format!("affine_map<{header} -> ()>, affine_map<{header} -> (t + 1)>"),
            )
        } else {
            (
                format!("affine_map<{header} -> ()>"),
                format!("affine_map<{header} -> ({lower_t})>"),
                format!("affine_map<{header} -> (t + 1)>"),
            )
        };
        let mut shape = vec![-1];
        shape.extend(&d.shape);
        self.emit(
            format!(
                "\"temporal.read_range\"(%{}) {{caps = [{caps}], lower = [{lower}], upper = [{upper}]}} : (!temporal.rtensor)",
                d.name
            ),
            shape,
            d.el,
        )
    }

    fn constant(&mut self, value: f64) -> Val {
        let el = self.float;
        // (MLIR's float literals need a point before an exponent.)
        let mut text = format!("{value:?}");
        if let Some(e) = text.find('e').filter(|&e| !text[..e].contains('.')) {
            text.insert_str(e, ".0");
        }
        self.emit(format!("\"temporal.constant\"() {{value = dense<{text}> : tensor<{el}>}} : ()"), vec![], el)
    }

    fn unary(&mut self, op: &str, a: &Val) -> Val {
        self.emit(format!("\"temporal.{op}\"({}) : ({})", a.name, a.ty()), a.shape.clone(), a.el)
    }

    fn binary(&mut self, op: &str, a: &Val, b: &Val) -> Val {
        let shape = broadcast(&a.shape, &b.shape);
        self.emit(format!("\"temporal.{op}\"({}, {}) : ({}, {})", a.name, b.name, a.ty(), b.ty()), shape, a.el)
    }

    fn matmul(&mut self, a: &Val, b: &Val) -> Val {
        let shape = match (a.shape.as_slice(), b.shape.as_slice()) {
            ([n], [k, m]) if n == k => vec![*m],
            ([m, n], [k]) if n == k => vec![*m],
            ([m, n], [k, p]) if n == k => vec![*m, *p],
            _ => panic!("generator bug: matmul of {} and {}", a.ty(), b.ty()),
        };
        self.emit(format!("\"temporal.matmul\"({}, {}) : ({}, {})", a.name, b.name, a.ty(), b.ty()), shape, a.el)
    }

    fn reduce(&mut self, op: &str, a: &Val, axis: usize) -> Val {
        let mut shape = a.shape.clone();
        shape.remove(axis);
        let el = if op == "argmax" { "i64" } else { a.el };
        self.emit(format!("\"temporal.{op}\"({}) {{axis = {axis} : i64}} : ({})", a.name, a.ty()), shape, el)
    }

    fn reshape(&mut self, a: &Val, shape: Vec<i64>) -> Val {
        self.emit(format!("\"temporal.reshape\"({}) : ({})", a.name, a.ty()), shape, a.el)
    }

    fn slice(&mut self, a: &Val, offsets: &[i64], shape: Vec<i64>) -> Val {
        let offsets: Vec<String> = offsets.iter().map(|o| o.to_string()).collect();
        self.emit(
            format!("\"temporal.slice\"({}) {{offsets = [{}]}} : ({})", a.name, offsets.join(", "), a.ty()),
            shape,
            a.el,
        )
    }

    fn concat(&mut self, a: &Val, b: &Val, axis: usize) -> Val {
        let mut shape = a.shape.clone();
        shape[axis] += b.shape[axis];
        self.emit(
            format!("\"temporal.concat\"({}, {}) {{axis = {axis} : i64}} : ({}, {})", a.name, b.name, a.ty(), b.ty()),
            shape,
            a.el,
        )
    }

    fn cast(&mut self, a: &Val, el: &'static str) -> Val {
        self.emit(format!("\"temporal.cast\"({}) : ({})", a.name, a.ty()), a.shape.clone(), el)
    }

    fn einsum(&mut self, spec: &str, a: &Val, b: &Val, shape: Vec<i64>) -> Val {
        self.emit(
            format!("\"temporal.einsum\"({}, {}) {{spec = \"{spec}\"}} : ({}, {})", a.name, b.name, a.ty(), b.ty()),
            shape,
            a.el,
        )
    }

    /// Plans a product of a value of `shape` to `out` columns.
    fn plan_product(&mut self, shape: &[i64], out: i64) -> Product {
        let n = Self::width(shape);
        let transposed = shape.len() == 1 && self.rng.random_bool(0.35);
        let weight = if transposed { self.weight(vec![out, n]) } else { self.weight(vec![n, out]) };
        Product { weight, transposed }
    }

    fn product(&mut self, x: &Val, p: &Product) -> Val {
        let w = self.read_weight(&p.weight);
        if p.transposed { self.matmul(&w, x) } else { self.matmul(x, &w) }
    }

    /// Plans a product and maybe a bias.
    fn plan_affine(&mut self, shape: &[i64], out: i64) -> (Product, Option<Decl>) {
        let p = self.plan_product(shape, out);
        let bias = self.rng.random_bool(0.5).then(|| self.weight(vec![out]));
        (p, bias)
    }

    fn affine(&mut self, x: &Val, plan: &(Product, Option<Decl>)) -> Val {
        let y = self.product(x, &plan.0);
        match &plan.1 {
            Some(b) => {
                let b = self.read_weight(b);
                self.binary("add", &y, &b)
            }
            None => y,
        }
    }

    fn activation(&mut self, x: &Val, kind: &str) -> Val {
        match kind {
            "none" => x.clone(),
            "silu" => {
                let s = self.unary("sigmoid", x);
                self.binary("mul", x, &s)
            }
            "gelu" => {
                // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
                let x2 = self.binary("mul", x, x);
                let x3 = self.binary("mul", &x2, x);
                let c = self.constant(0.044715);
                let a = self.binary("mul", &x3, &c);
                let inner = self.binary("add", x, &a);
                let k = self.constant(0.7978845608028654);
                let s = self.binary("mul", &inner, &k);
                let th = self.unary("tanh", &s);
                let one = self.constant(1.0);
                let p = self.binary("add", &th, &one);
                let half = self.constant(0.5);
                let h = self.binary("mul", x, &half);
                self.binary("mul", &h, &p)
            }
            op => self.unary(op, x),
        }
    }

    fn plan_norm(&mut self, width: i64) -> Option<Norm> {
        if !self.rng.random_bool(0.6) {
            return None;
        }
        let gain = self.weight(vec![width]);
        let shift = self.rng.random_bool(0.4).then(|| self.weight(vec![width]));
        Some(Norm { gain, shift })
    }

    /// The mean of `x` along its last axis, kept as a size-1 axis for rows.
    fn mean_last(&mut self, x: &Val) -> Val {
        let m = self.reduce("reduce_mean", x, x.shape.len() - 1);
        if m.shape.is_empty() {
            return m;
        }
        let mut kept = m.shape.clone();
        kept.push(1);
        self.reshape(&m, kept)
    }

    /// RMS norm (no shift: `x / sqrt(mean(x^2) + eps) * g`) or layer norm
    /// (`(x - mean) / sqrt(var + eps) * g + s`).
    fn norm(&mut self, x: &Val, plan: &Option<Norm>) -> Val {
        let Some(plan) = plan else { return x.clone() };
        let centred = if plan.shift.is_some() {
            let m = self.mean_last(x);
            self.binary("sub", x, &m)
        } else {
            x.clone()
        };
        let sq = self.binary("mul", &centred, &centred);
        let ms = self.mean_last(&sq);
        let eps = self.constant(1e-5);
        let var = self.binary("add", &ms, &eps);
        let sd = self.unary("sqrt", &var);
        let n = self.binary("div", &centred, &sd);
        let g = self.read_weight(&plan.gain);
        let y = self.binary("mul", &n, &g);
        match &plan.shift {
            Some(s) => {
                let s = self.read_weight(s);
                self.binary("add", &y, &s)
            }
            None => y,
        }
    }

    /// The position of the current step as a float scalar, from a counter
    /// tensor made on first use: a float `pos[t] = pos[t-1] + 1`, or an
    /// integer one (from 0 or an offset) cast to float.
    fn position(&mut self) -> Val {
        if self.position.is_none() {
            let (el, start) = match self.rng.random_range(0..4) {
                0 | 1 => (self.float, 0),
                2 => ("i64", 0),
                _ => (*["i32", "i64"].choose(&mut self.rng).expect("non-empty"), self.rng.random_range(1..5)),
            };
            let tensor = self.tensor("pos", vec![], el);
            let saved = std::mem::take(&mut self.body);
            let constant = |g: &mut Self, v: i64| {
                let text = if el.starts_with('f') { format!("{v}.0") } else { v.to_string() };
                g.emit(format!("\"temporal.constant\"() {{value = dense<{text}> : tensor<{el}>}} : ()"), vec![], el)
            };
            let c = constant(self, start);
            self.define(&tensor, "t == 0", &c);
            let prev = self.read(&tensor, -1);
            let one = constant(self, 1);
            let next = self.binary("add", &prev, &one);
            self.define(&tensor, "0 == 0", &next);
            self.body = saved;
            self.candidates.push(tensor.clone());
            self.position = Some(Position { tensor });
        }
        let tensor = self.position.as_ref().expect("made above").tensor.clone();
        let p = self.read(&tensor, 0);
        if p.el == self.float { p } else { self.cast(&p, self.float) }
    }

    /// Angles `pos * base^(-2i/d)` for `i < half` (frequencies from arange).
    fn angles(&mut self, half: i64, d: i64, base: f64) -> Val {
        let pos = self.position();
        let el = self.float;
        let i = self.emit("\"temporal.arange\"() : ()".into(), vec![half], el);
        let c = self.constant(-2.0 * base.ln() / d as f64);
        let e = self.binary("mul", &i, &c);
        let inv = self.unary("exp", &e);
        self.binary("mul", &pos, &inv)
    }

    /// Rotary position embedding of `x` (`[heads, d]`, `d` even): Llama's
    /// rotate-half form or GPT-J's interleaved pairs.
    fn rope(&mut self, x: &Val, interleaved: bool, base: f64) -> Val {
        let (h, d) = (x.shape[0], x.shape[1]);
        let half = d / 2;
        let angles = self.angles(half, d, base);
        if !interleaved {
            let a = self.concat(&angles, &angles, 0);
            let cos = self.unary("cos", &a);
            let sin = self.unary("sin", &a);
            let x1 = self.slice(x, &[0, 0], vec![h, half]);
            let x2 = self.slice(x, &[0, half], vec![h, half]);
            let n2 = self.unary("neg", &x2);
            let rot = self.concat(&n2, &x1, 1);
            let xc = self.binary("mul", x, &cos);
            let rs = self.binary("mul", &rot, &sin);
            return self.binary("add", &xc, &rs);
        }
        let a = self.reshape(&angles, vec![half, 1]);
        let cos = self.unary("cos", &a);
        let sin = self.unary("sin", &a);
        let pairs = self.reshape(x, vec![h, half, 2]);
        let even = self.slice(&pairs, &[0, 0, 0], vec![h, half, 1]);
        let odd = self.slice(&pairs, &[0, 0, 1], vec![h, half, 1]);
        let ec = self.binary("mul", &even, &cos);
        let os = self.binary("mul", &odd, &sin);
        let first = self.binary("sub", &ec, &os);
        let es = self.binary("mul", &even, &sin);
        let oc = self.binary("mul", &odd, &cos);
        let second = self.binary("add", &es, &oc);
        let both = self.concat(&first, &second, 2);
        self.reshape(&both, vec![h, d])
    }

    fn plan_activation(&mut self) -> &'static str {
        ACTIVATIONS.choose(&mut self.rng).expect("non-empty")
    }

    /// Two products meeting elementwise: `act(x A) op act(z B)`, `z` being
    /// `x` itself (SwiGLU-like gates), the block's own output at `t-1` (an
    /// RNN gate `x Wx + h[t-1] Wh`) or an earlier stream tensor; maybe a
    /// bias, an outer activation and the residual.
    fn gated(&mut self, s: &Decl, earlier: &[Decl]) -> Decl {
        let width = Self::width(&s.shape);
        let norm = self.plan_norm(width);
        let first = self.plan_affine(&s.shape, width);
        let (a1, a2) = (self.plan_activation(), self.plan_activation());
        let same_width: Vec<Decl> = earlier.iter().filter(|d| d.shape == s.shape).cloned().collect();
        // 0: x itself, 1: own past, 2: an earlier tensor (at t or t-1).
        let source = match self.rng.random_range(0..3) {
            2 if !same_width.is_empty() => 2,
            2 => 0,
            k => k,
        };
        let other = same_width.choose(&mut self.rng).cloned();
        let other_shift = if self.rng.random_bool(0.5) { 0 } else { -1 };
        let second = self.plan_affine(&s.shape, width);
        let op = *["add", "mul", "sub", "max"].choose(&mut self.rng).expect("non-empty");
        let outer = *["none", "none", "tanh", "sigmoid", "relu"].choose(&mut self.rng).expect("non-empty");
        let residual = self.rng.random_bool(0.4);
        let y = self.tensor("gate", s.shape.clone(), self.float);
        let needs_past = source == 1 || (source == 2 && other_shift < 0);
        let branches: &[bool] = if needs_past { &[true, false] } else { &[false] };
        for &at_start in branches {
            let x = self.read(s, 0);
            let xn = self.norm(&x, &norm);
            let p1 = self.affine(&xn, &first);
            let g1 = self.activation(&p1, a1);
            let combined = if at_start {
                g1
            } else {
                let z = match source {
                    0 => xn.clone(),
                    1 => self.read(&y, -1),
                    _ => self.read(other.as_ref().expect("checked"), other_shift),
                };
                let p2 = self.affine(&z, &second);
                let g2 = self.activation(&p2, a2);
                self.binary(op, &g1, &g2)
            };
            let out = self.activation(&combined, outer);
            let out = if residual { self.binary("add", &x, &out) } else { out };
            self.define(&y, if needs_past && at_start { "t == 0" } else { "0 == 0" }, &out);
        }
        y
    }

    /// An MLP: `x + act(norm(x) W1 + b1) W2`, sometimes without the
    /// activation (a product feeding a product), sometimes with a low-rank
    /// adapter `0.5 (x A) B` beside the second product.
    fn mlp(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let hidden = *[2, 3, 4, 5, 8, 12, 16].choose(&mut self.rng).expect("non-empty");
        let norm = self.plan_norm(width);
        let up = self.plan_affine(&s.shape, hidden);
        let act = if self.rng.random_bool(0.25) { "none" } else { self.plan_activation() };
        let down = self.plan_affine(&self.vector(hidden), width);
        let lora = self.rng.random_bool(0.4).then(|| {
            let rank = self.rng.random_range(1..=3);
            let a = self.plan_product(&s.shape, rank);
            let b = self.plan_product(&self.vector(rank), width);
            (a, b)
        });
        let residual = self.rng.random_bool(0.6);
        let y = self.tensor("mlp", s.shape.clone(), self.float);
        let x = self.read(s, 0);
        let xn = self.norm(&x, &norm);
        let h = self.affine(&xn, &up);
        let h = self.activation(&h, act);
        let mut out = self.affine(&h, &down);
        if let Some((a, b)) = &lora {
            let xa = self.product(&xn, a);
            let xab = self.product(&xa, b);
            let half = self.constant(0.5);
            let scaled = self.binary("mul", &xab, &half);
            out = self.binary("add", &out, &scaled);
        }
        let out = if residual { self.binary("add", &x, &out) } else { out };
        self.define(&y, "0 == 0", &out);
        y
    }

    /// SwiGLU: `x + (silu(xn W1) * (xn W3)) W2`.
    fn swiglu(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let hidden = *[2, 4, 6, 8, 16].choose(&mut self.rng).expect("non-empty");
        let norm = self.plan_norm(width);
        let w1 = self.plan_product(&s.shape, hidden);
        let w3 = self.plan_product(&s.shape, hidden);
        let w2 = self.plan_product(&self.vector(hidden), width);
        let y = self.tensor("swiglu", s.shape.clone(), self.float);
        let x = self.read(s, 0);
        let xn = self.norm(&x, &norm);
        let a = self.product(&xn, &w1);
        let gate = self.activation(&a, "silu");
        let b = self.product(&xn, &w3);
        let h = self.binary("mul", &gate, &b);
        let down = self.product(&h, &w2);
        let out = self.binary("add", &x, &down);
        self.define(&y, "0 == 0", &out);
        y
    }

    /// Gate `k` (of width `h`) of a stacked gate vector or row.
    fn gate_slice(&mut self, gates: &Val, k: i64, h: i64) -> Val {
        if self.row { self.slice(gates, &[0, k * h], vec![1, h]) } else { self.slice(gates, &[k * h], vec![h]) }
    }

    /// An LSTM cell over the stream (PyTorch's gate order i, f, g, o):
    /// stacked gates `x Wx + h[t-1] Wh + b` in a tensor of their own,
    /// sliced, or a weight per gate computed where it is used; `c` and `h`
    /// read `t-1`. The stream continues with `h`.
    fn lstm(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let hidden = if self.rng.random_bool(0.5) { width } else { *[2, 3, 4, 8].choose(&mut self.rng).expect("ok") };
        let hs = self.vector(hidden);
        let fused = self.rng.random_bool(0.5);
        let c = self.tensor("c", hs.clone(), self.float);
        let h = self.tensor("h", hs.clone(), self.float);
        if fused {
            let wx = self.plan_affine(&s.shape, 4 * hidden);
            let wh = self.plan_product(&hs, 4 * hidden);
            let gates = self.tensor("gates", self.vector(4 * hidden), self.float);
            for at_start in [true, false] {
                let x = self.read(s, 0);
                let mut pre = self.affine(&x, &wx);
                if !at_start {
                    let hp = self.read(&h, -1);
                    let hw = self.product(&hp, &wh);
                    pre = self.binary("add", &pre, &hw);
                }
                self.define(&gates, if at_start { "t == 0" } else { "0 == 0" }, &pre);
            }
            for at_start in [true, false] {
                let g = self.read(&gates, 0);
                let i = self.gate_slice(&g, 0, hidden);
                let i = self.unary("sigmoid", &i);
                let gg = self.gate_slice(&g, 2, hidden);
                let gg = self.unary("tanh", &gg);
                let mut cell = self.binary("mul", &i, &gg);
                if !at_start {
                    let f = self.gate_slice(&g, 1, hidden);
                    let f = self.unary("sigmoid", &f);
                    let cp = self.read(&c, -1);
                    let fc = self.binary("mul", &f, &cp);
                    cell = self.binary("add", &fc, &cell);
                }
                self.define(&c, if at_start { "t == 0" } else { "0 == 0" }, &cell);
            }
            let g = self.read(&gates, 0);
            let o = self.gate_slice(&g, 3, hidden);
            let o = self.unary("sigmoid", &o);
            let ct = self.read(&c, 0);
            let tc = self.unary("tanh", &ct);
            let out = self.binary("mul", &o, &tc);
            self.define(&h, "0 == 0", &out);
            self.candidates.push(gates);
        } else {
            let plans: Vec<_> =
                (0..4).map(|_| (self.plan_affine(&s.shape, hidden), self.plan_product(&hs, hidden))).collect();
            // The gate `k` at this step (without h[t-1] at the first).
            let gate = |g: &mut Self, k: usize, at_start: bool, act: &str| {
                let x = g.read(s, 0);
                let mut pre = g.affine(&x, &plans[k].0);
                if !at_start {
                    let hp = g.read(&h, -1);
                    let hu = g.product(&hp, &plans[k].1);
                    pre = g.binary("add", &pre, &hu);
                }
                g.unary(act, &pre)
            };
            for at_start in [true, false] {
                let i = gate(self, 0, at_start, "sigmoid");
                let gg = gate(self, 2, at_start, "tanh");
                let mut cell = self.binary("mul", &i, &gg);
                if !at_start {
                    let f = gate(self, 1, at_start, "sigmoid");
                    let cp = self.read(&c, -1);
                    let fc = self.binary("mul", &f, &cp);
                    cell = self.binary("add", &fc, &cell);
                }
                self.define(&c, if at_start { "t == 0" } else { "0 == 0" }, &cell);
            }
            for at_start in [true, false] {
                let o = gate(self, 3, at_start, "sigmoid");
                let ct = self.read(&c, 0);
                let tc = self.unary("tanh", &ct);
                let out = self.binary("mul", &o, &tc);
                self.define(&h, if at_start { "t == 0" } else { "0 == 0" }, &out);
            }
        }
        self.candidates.push(c);
        h
    }

    /// A GRU cell (PyTorch's): `r`, `z` from `x Wi + bi + h[t-1] Wh + bh`,
    /// `n = tanh(x Win + bin + r * (h[t-1] Whn + bhn))`, `h = (1 - z) n + z
    /// h[t-1]`; stacked weights sliced or a weight per gate.
    fn gru(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let hidden = if self.rng.random_bool(0.5) { width } else { *[2, 3, 4, 8].choose(&mut self.rng).expect("ok") };
        let hs = self.vector(hidden);
        let fused = self.rng.random_bool(0.5);
        let h = self.tensor("h", hs.clone(), self.float);
        let (stacked_x, stacked_h, per_gate) = if fused {
            let x = self.plan_affine(&s.shape, 3 * hidden);
            let hh = self.plan_affine(&hs, 3 * hidden);
            (Some(x), Some(hh), vec![])
        } else {
            let per: Vec<_> =
                (0..3).map(|_| (self.plan_affine(&s.shape, hidden), self.plan_affine(&hs, hidden))).collect();
            (None, None, per)
        };
        for at_start in [true, false] {
            let x = self.read(s, 0);
            let hp = (!at_start).then(|| self.read(&h, -1));
            // Input and hidden parts of gate k (the hidden part is None at the
            // first step: h[-1] = 0, only its bias remains).
            let (xs, hsv) = if fused {
                let xs = self.affine(&x, stacked_x.as_ref().expect("fused"));
                let hsv = hp.as_ref().map(|hp| self.affine(hp, stacked_h.as_ref().expect("fused")));
                (Some(xs), hsv)
            } else {
                (None, None)
            };
            let parts: Vec<(Val, Option<Val>)> = (0..3)
                .map(|k| {
                    let xk = match &xs {
                        Some(xs) => self.gate_slice(xs, k as i64, hidden),
                        None => self.affine(&x, &per_gate[k].0),
                    };
                    let hk = match (&hsv, &hp) {
                        (Some(hsv), _) => Some(self.gate_slice(hsv, k as i64, hidden)),
                        (None, Some(hp)) if !fused => Some(self.affine(hp, &per_gate[k].1)),
                        _ => None,
                    };
                    (xk, hk)
                })
                .collect();
            let gate = |g: &mut Self, (xk, hk): &(Val, Option<Val>)| match hk {
                Some(hk) => {
                    let s = g.binary("add", xk, hk);
                    g.unary("sigmoid", &s)
                }
                None => g.unary("sigmoid", xk),
            };
            let r = gate(self, &parts[0]);
            let z = gate(self, &parts[1]);
            let npre = match &parts[2].1 {
                Some(hn) => {
                    let rh = self.binary("mul", &r, hn);
                    self.binary("add", &parts[2].0, &rh)
                }
                None => parts[2].0.clone(),
            };
            let n = self.unary("tanh", &npre);
            let one = self.constant(1.0);
            let keep = self.binary("sub", &one, &z);
            let new = self.binary("mul", &keep, &n);
            let out = match &hp {
                Some(hp) => {
                    let old = self.binary("mul", &z, hp);
                    self.binary("add", &new, &old)
                }
                None => new,
            };
            self.define(&h, if at_start { "t == 0" } else { "0 == 0" }, &out);
        }
        h
    }

    /// Softmax along `axis` (the maximum subtracted first).
    fn softmax(&mut self, x: &Val, axis: usize) -> Val {
        let kept = |v: &Val| {
            let mut s = v.shape.clone();
            s.insert(axis, 1);
            s
        };
        let m = self.reduce("reduce_max", x, axis);
        let mk = self.reshape(&m, kept(&m));
        let d = self.binary("sub", x, &mk);
        let e = self.unary("exp", &d);
        let z = self.reduce("reduce_sum", &e, axis);
        let zk = self.reshape(&z, kept(&z));
        self.binary("div", &e, &zk)
    }

    /// Causal softmax attention over the cache `k[0:t+1]` (or a window of
    /// it) with `kv` key-value heads shared by `group` query heads each
    /// (an einsum with the group label, or the keys expanded per query head
    /// as `repeat_kv` does), rotary embeddings on queries and keys or none,
    /// then the output projection and the residual.
    fn attention(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let rotary = self.rng.random_bool(0.6);
        let d = if rotary { *[2, 4].choose(&mut self.rng).expect("ok") } else { self.rng.random_range(1..=4) };
        let kv = self.rng.random_range(1..=2);
        let group = self.rng.random_range(1..=3);
        let heads = kv * group;
        let interleaved = self.rng.random_bool(0.4);
        let base = *[10000.0, 100.0].choose(&mut self.rng).expect("ok");
        let expanded = self.rng.random_bool(0.35);
        let window = self.rng.random_bool(0.25).then(|| self.rng.random_range(2..=4));
        let norm = self.plan_norm(width);
        // The normed stream as a tensor of its own (read by keys, values
        // and queries), or normed again in each.
        let shared_norm = norm.is_some() && self.rng.random_bool(0.5);
        let wq = self.plan_product(&s.shape, heads * d);
        let wk = self.plan_product(&s.shape, kv * d);
        let wv = self.plan_product(&s.shape, kv * d);
        let wo = self.plan_product(&self.vector(heads * d), width);
        let xn_tensor = shared_norm.then(|| {
            let t = self.tensor("xn", s.shape.clone(), self.float);
            let x = self.read(s, 0);
            let xn = self.norm(&x, &norm);
            self.define(&t, "0 == 0", &xn);
            t
        });
        let normed = |g: &mut Self| match &xn_tensor {
            Some(t) => g.read(t, 0),
            None => {
                let x = g.read(s, 0);
                g.norm(&x, &norm)
            }
        };
        let k = self.tensor("keys", vec![kv, d], self.float);
        let v = self.tensor("values", vec![kv, d], self.float);
        let xn = normed(self);
        let xk = self.product(&xn, &wk);
        let kh = self.reshape(&xk, vec![kv, d]);
        let kh = if rotary { self.rope(&kh, interleaved, base) } else { kh };
        self.define(&k, "0 == 0", &kh);
        let xn = normed(self);
        let xv = self.product(&xn, &wv);
        let vh = self.reshape(&xv, vec![kv, d]);
        self.define(&v, "0 == 0", &vh);
        let y = self.tensor("attn", s.shape.clone(), self.float);
        let x = self.read(s, 0);
        let xn = normed(self);
        let xq = self.product(&xn, &wq);
        let q = self.reshape(&xq, vec![heads, d]);
        let q = if rotary { self.rope(&q, interleaved, base) } else { q };
        let keys = self.read_range(&k, window);
        let values = self.read_range(&v, window);
        let scale = self.constant(1.0 / (d as f64).sqrt());
        let o = if expanded {
            // repeat_kv: [n, kv, d] -> [n, kv, 1, d] -> [n, kv, group, d] -> [n, heads, d]
            let repeat = |g: &mut Self, r: &Val| {
                let one = g.reshape(r, vec![-1, kv, 1, d]);
                let wide = g.emit(
                    format!("\"temporal.expand\"({}) : ({})", one.name, one.ty()),
                    vec![-1, kv, group, d],
                    one.el,
                );
                g.reshape(&wide, vec![-1, heads, d])
            };
            let keys = repeat(self, &keys);
            let values = repeat(self, &values);
            let scores = self.einsum("hd,nhd->hn", &q, &keys, vec![heads, -1]);
            let scaled = self.binary("mul", &scores, &scale);
            let p = self.softmax(&scaled, 1);
            self.einsum("hn,nhd->hd", &p, &values, vec![heads, d])
        } else {
            let qg = self.reshape(&q, vec![kv, group, d]);
            let scores = self.einsum("gqd,ngd->gqn", &qg, &keys, vec![kv, group, -1]);
            let scaled = self.binary("mul", &scores, &scale);
            let p = self.softmax(&scaled, 2);
            self.einsum("gqn,ngd->gqd", &p, &values, vec![kv, group, d])
        };
        let flat = self.reshape(&o, self.vector(heads * d));
        let proj = self.product(&flat, &wo);
        let out = self.binary("add", &x, &proj);
        self.define(&y, "0 == 0", &out);
        self.candidates.push(k);
        y
    }

    /// Sinusoidal position encoding added to the stream (even widths):
    /// `x + [sin(pos f), cos(pos f)]`.
    fn positional(&mut self, s: &Decl) -> Decl {
        let width = Self::width(&s.shape);
        let y = self.tensor("pe", s.shape.clone(), self.float);
        let x = self.read(s, 0);
        let a = self.angles(width / 2, width, 10000.0);
        let sin = self.unary("sin", &a);
        let cos = self.unary("cos", &a);
        let pe = self.concat(&sin, &cos, 0);
        let pe = if self.row { self.reshape(&pe, vec![1, width]) } else { pe };
        let out = self.binary("add", &x, &pe);
        self.define(&y, "0 == 0", &out);
        y
    }

    pub(crate) fn program(seed: u64) -> String {
        Self::program_in(seed, None)
    }

    /// The program of `seed` with every float value of element `float`
    /// (`"f64"` for the gradient checks' finite differences) instead of the
    /// drawn one; otherwise the same program as [`Self::program`] makes.
    pub(crate) fn program_in(seed: u64, float: Option<&'static str>) -> String {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6d6f_6465_6c73);
        let drawn = if rng.random_bool(0.8) { "f32" } else { "f64" };
        let float = float.unwrap_or(drawn);
        let batched = rng.random_bool(0.2);
        let row = rng.random_bool(0.3);
        let mut g = ModelGenerator {
            rng,
            float,
            batched,
            row,
            decls: String::new(),
            defs: String::new(),
            body: String::new(),
            next_value: 0,
            next_name: 0,
            position: None,
            candidates: Vec::new(),
        };
        let width = *[2, 3, 4, 6, 8].choose(&mut g.rng).expect("non-empty");
        // A language model: the stream starts from the embedding of a token
        // fed back from the argmax of the logits at t-1.
        let lm = g.rng.random_bool(0.35).then(|| {
            let vocab = g.rng.random_range(3..=12);
            let index = if g.rng.random_bool(0.7) { "i64" } else { "i32" };
            let table = g.weight(vec![vocab, width]);
            let ids = if g.row { vec![1] } else { vec![] };
            let token = g.tensor("tok", ids.clone(), index);
            let x = g.tensor("emb", g.vector(width), float);
            let t = g.read_weight(&table);
            let id = g.read(&token, 0);
            let e = g.emit(
                format!("\"temporal.gather\"({}, {}) : ({}, {})", t.name, id.name, t.ty(), id.ty()),
                g.vector(width),
                float,
            );
            g.define(&x, "0 == 0", &e);
            (vocab, token, x)
        });
        let mut stream = match &lm {
            Some((_, _, x)) => x.clone(),
            None => g.input("x", g.vector(width), true),
        };
        let mut earlier: Vec<Decl> = Vec::new();
        for _ in 0..g.rng.random_range(1..=3) {
            let width = Self::width(&stream.shape);
            let next = match g.rng.random_range(0..13) {
                0 | 1 => g.gated(&stream, &earlier),
                2 | 3 => g.mlp(&stream),
                4 | 5 => g.swiglu(&stream),
                6 | 7 => g.lstm(&stream),
                8 => g.gru(&stream),
                9..=11 => g.attention(&stream),
                _ if width % 2 == 0 => g.positional(&stream),
                _ => g.gated(&stream, &earlier),
            };
            earlier.push(stream);
            stream = next;
        }
        let mut outputs = vec![stream.name.clone()];
        if let Some((vocab, token, _)) = &lm {
            let width = Self::width(&stream.shape);
            let norm = g.plan_norm(width);
            let head = g.plan_product(&stream.shape, *vocab);
            let logits = g.tensor("logits", g.vector(*vocab), float);
            let x = g.read(&stream, 0);
            let xn = g.norm(&x, &norm);
            let l = g.product(&xn, &head);
            g.define(&logits, "0 == 0", &l);
            let first = g.rng.random_range(0..*vocab);
            let ids = token.shape.clone();
            let value = if ids.is_empty() { first.to_string() } else { format!("[{first}]") };
            let c = g.emit(
                format!("\"temporal.constant\"() {{value = dense<{value}> : {}}} : ()", tensor_type(&ids, token.el)),
                ids.clone(),
                token.el,
            );
            g.define(token, "t == 0", &c);
            let prev = g.read(&logits, -1);
            let a = g.reduce("argmax", &prev, prev.shape.len() - 1);
            let a = if token.el == "i64" { a } else { g.cast(&a, token.el) };
            g.define(token, "0 == 0", &a);
            outputs.push(token.name.clone());
            outputs.push(logits.name.clone());
        }
        for d in earlier.iter().chain(&g.candidates.clone()) {
            if g.rng.random_bool(0.25) && !outputs.contains(&d.name) && !d.name.starts_with('x') {
                outputs.push(d.name.clone());
            }
        }
        let mut text = String::new();
        let _ = writeln!(text, "\"temporal.dim\"() {{sym_name = \"t\", bound = \"T\"}} : () -> ()");
        let _ = writeln!(text, "\"temporal.dim\"() {{sym_name = \"b\", bound = \"B\"}} : () -> ()");
        text += &g.decls;
        text += &g.defs;
        for o in outputs {
            let _ = writeln!(text, "\"temporal.output\"(%{o}) : (!temporal.rtensor) -> ()");
        }
        text
    }
}
