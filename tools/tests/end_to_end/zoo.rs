//! The model zoo (`examples/corpus/zoo_*.mlir`) against reference
//! implementations written here in plain f64 Rust, the way NumPy or PyTorch
//! code computes these models (PyTorch's LSTM and GRU cells, a Llama block
//! with rotate-half RoPE and `repeat_kv`-style grouped-query attention, a
//! GPT-2 block, an MLP): no network, no checked-in numbers. Each program
//! runs on random f32 weights (what `--seed` makes); the reference runs on
//! the same values widened to f64. The f32 program compiled at the default
//! level must agree with the reference within f32 rounding (tokens chosen
//! by argmax exactly); the same program in f64 (every `f32` of its text
//! made `f64`), interpreted and compiled, within 1e-12 (they agree bit for
//! bit but where the reference sums in another order).

use crate::{interpret, run};
use tempo_driver::{Data, HostArray};

/// Random inputs of a zoo program (uniform in [-1, 1], as `--seed` makes).
struct Inputs(Vec<HostArray>);

impl Inputs {
    fn new(seed: u64, specs: &[(&str, &[usize])]) -> Self {
        Inputs(
            specs
                .iter()
                .map(|(name, shape)| {
                    HostArray::random(name, shape.to_vec(), tempo_passes::program::ElementType::F32, seed)
                })
                .collect(),
        )
    }

    fn get(&self, name: &str) -> Vec<f64> {
        let a = self.0.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no input {name}"));
        (0..a.data.len()).map(|k| a.data.get_f64(k)).collect()
    }

    /// The same values as f64 arrays (exact).
    fn widened(&self) -> Vec<HostArray> {
        self.0
            .iter()
            .map(|a| HostArray {
                name: a.name.clone(),
                shape: a.shape.clone(),
                data: Data::F64((0..a.data.len()).map(|k| a.data.get_f64(k)).collect()),
            })
            .collect()
    }
}

/// `x W` for `x` of length `n` and `W` of `n` rows.
fn vm(x: &[f64], w: &[f64]) -> Vec<f64> {
    let cols = w.len() / x.len();
    (0..cols).map(|j| x.iter().enumerate().map(|(i, xi)| xi * w[i * cols + j]).sum()).collect()
}

/// `W x` for `W` of `rows` rows.
fn mv(w: &[f64], x: &[f64]) -> Vec<f64> {
    w.chunks(x.len()).map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum()).collect()
}

fn zip(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect()
}

fn add(a: &[f64], b: &[f64]) -> Vec<f64> {
    zip(a, b, |x, y| x + y)
}

fn mul(a: &[f64], b: &[f64]) -> Vec<f64> {
    zip(a, b, |x, y| x * y)
}

fn map(a: &[f64], f: impl Fn(f64) -> f64) -> Vec<f64> {
    a.iter().map(|x| f(*x)).collect()
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn silu(x: f64) -> f64 {
    x * sigmoid(x)
}

/// GELU, tanh form (GPT-2's).
fn gelu(x: f64) -> f64 {
    0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh())
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn rms_norm(x: &[f64], gain: &[f64]) -> Vec<f64> {
    let r = (mean(&map(x, |v| v * v)) + 1e-5).sqrt();
    zip(x, gain, |v, g| v / r * g)
}

fn layer_norm(x: &[f64], gain: &[f64], shift: &[f64]) -> Vec<f64> {
    let mu = mean(x);
    let centred = map(x, |v| v - mu);
    let sd = (mean(&map(&centred, |v| v * v)) + 1e-5).sqrt();
    add(&zip(&centred, gain, |v, g| v / sd * g), shift)
}

fn softmax(x: &[f64]) -> Vec<f64> {
    let m = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let e = map(x, |v| (v - m).exp());
    let z: f64 = e.iter().sum();
    map(&e, |v| v / z)
}

/// Index of the first maximum (PyTorch's and the dialect's argmax).
fn argmax(x: &[f64]) -> usize {
    (0..x.len()).fold(0, |best, k| if x[k] > x[best] { k } else { best })
}

/// Row `k` of a table with rows of `width`.
fn row(table: &[f64], k: usize, width: usize) -> Vec<f64> {
    table[k * width..(k + 1) * width].to_vec()
}

/// Softmax attention of one query head over cached key and value heads:
/// `softmax(q k_n * scale) v` over every cached step `n`.
fn attend(q: &[f64], keys: &[Vec<f64>], values: &[Vec<f64>], scale: f64) -> Vec<f64> {
    let scores: Vec<f64> = keys.iter().map(|k| q.iter().zip(k).map(|(a, b)| a * b).sum::<f64>() * scale).collect();
    let p = softmax(&scores);
    (0..q.len()).map(|j| p.iter().zip(values).map(|(w, v)| w * v[j]).sum()).collect()
}

/// A named reference output, flattened.
type Outputs = Vec<(&'static str, Vec<f64>)>;

/// PyTorch's `nn.LSTM` cell decoding greedily from token 1.
fn lstm_lm(w: &Inputs, steps: usize) -> Outputs {
    let (d, h) = (16, 16);
    let (e, wx, wh, b, wout, bout) = (w.get("E"), w.get("Wx"), w.get("Wh"), w.get("b"), w.get("Wout"), w.get("bout"));
    let (mut tok, mut hs, mut cs) = (1usize, vec![0.0; h], vec![0.0; h]);
    let (mut toks, mut all_logits, mut all_h) = (vec![], vec![], vec![]);
    for _ in 0..steps {
        let x = row(&e, tok, d);
        let gates = add(&add(&vm(&x, &wx), &vm(&hs, &wh)), &b);
        let gate = |k: usize| &gates[k * h..(k + 1) * h];
        let (i, f, g, o) =
            (map(gate(0), sigmoid), map(gate(1), sigmoid), map(gate(2), f64::tanh), map(gate(3), sigmoid));
        cs = add(&mul(&f, &cs), &mul(&i, &g));
        hs = mul(&o, &map(&cs, f64::tanh));
        let logits = add(&vm(&hs, &wout), &bout);
        toks.push(tok as f64);
        tok = argmax(&logits);
        all_logits.extend(logits);
        all_h.extend(hs.clone());
    }
    vec![("tok", toks), ("logits", all_logits), ("h", all_h)]
}

/// PyTorch's `nn.GRU` cell over the input sequence (weights `[out, in]`),
/// then `Wy h`.
fn gru(w: &Inputs, steps: usize) -> Outputs {
    let (i_width, h) = (8, 16);
    let x = w.get("x");
    let get = |p: &str, g: char| w.get(&format!("{p}{g}"));
    let mut hs = vec![0.0; h];
    let (mut all_h, mut all_y) = (vec![], vec![]);
    for t in 0..steps {
        let xt = &x[t * i_width..(t + 1) * i_width];
        let part = |g: char| (add(&mv(&get("W", g), xt), &get("bi", g)), add(&mv(&get("U", g), &hs), &get("bh", g)));
        let (xr, hr) = part('r');
        let (xz, hz) = part('z');
        let (xn, hn) = part('n');
        let r = map(&add(&xr, &hr), sigmoid);
        let z = map(&add(&xz, &hz), sigmoid);
        let n = map(&add(&xn, &mul(&r, &hn)), f64::tanh);
        hs = add(&mul(&map(&z, |v| 1.0 - v), &n), &mul(&z, &hs));
        all_y.extend(mv(&w.get("Wy"), &hs));
        all_h.extend(hs.clone());
    }
    vec![("h", all_h), ("y", all_y)]
}

/// The MLP with a low-rank adapter, at every step.
fn mlp(w: &Inputs, steps: usize) -> Outputs {
    let x = w.get("x");
    let mut out = vec![];
    for t in 0..steps {
        let xt = &x[t * 16..(t + 1) * 16];
        let h1 = map(&add(&vm(xt, &w.get("W1")), &w.get("b1")), gelu);
        let h2 = map(&add(&mv(&w.get("W2"), &h1), &w.get("b2")), |v| v.max(0.0));
        let main = add(&vm(&h2, &w.get("W3")), &w.get("b3"));
        let lora = map(&vm(&vm(&h2, &w.get("A")), &w.get("B")), |v| 0.5 * v);
        out.extend(add(&main, &lora));
    }
    vec![("y", out)]
}

/// Llama's rotary embedding (rotate-half form) of heads of width 4 at `pos`.
fn rope(x: &[f64], pos: f64) -> Vec<f64> {
    let inv: Vec<f64> = (0..2).map(|i| (i as f64 * (-2.0 * 10000f64.ln() / 4.0)).exp()).collect();
    let angle = [pos * inv[0], pos * inv[1], pos * inv[0], pos * inv[1]];
    x.chunks(4)
        .flat_map(|q| {
            let rotated = [-q[2], -q[3], q[0], q[1]];
            (0..4).map(move |j| q[j] * angle[j].cos() + rotated[j] * angle[j].sin())
        })
        .collect()
}

/// The Llama-style block decoding greedily from token 1: 4 query heads, 2
/// key-value heads (query head `h` reads key-value head `h / 2`).
fn llama(w: &Inputs, steps: usize) -> Outputs {
    let d = 16;
    let e = w.get("E");
    let (mut tok, mut keys, mut values) = (1usize, vec![], vec![]);
    let (mut toks, mut all_logits, mut all_y) = (vec![], vec![], vec![]);
    for t in 0..steps {
        let pos = t as f64;
        let x = row(&e, tok, d);
        let xn = rms_norm(&x, &w.get("g_attn"));
        let k = rope(&vm(&xn, &w.get("Wk")), pos);
        keys.push(k.chunks(4).map(|c| c.to_vec()).collect::<Vec<_>>());
        values.push(vm(&xn, &w.get("Wv")).chunks(4).map(|c| c.to_vec()).collect::<Vec<_>>());
        let q = rope(&vm(&xn, &w.get("Wq")), pos);
        let heads: Vec<f64> = (0..4)
            .flat_map(|h| {
                let ks: Vec<Vec<f64>> = keys.iter().map(|k| k[h / 2].clone()).collect();
                let vs: Vec<Vec<f64>> = values.iter().map(|v| v[h / 2].clone()).collect();
                attend(&q[h * 4..(h + 1) * 4], &ks, &vs, 0.5)
            })
            .collect();
        let a = add(&x, &vm(&heads, &w.get("Wo")));
        let an = rms_norm(&a, &w.get("g_mlp"));
        let hidden = mul(&map(&vm(&an, &w.get("W1")), silu), &vm(&an, &w.get("W3")));
        let y = add(&a, &vm(&hidden, &w.get("W2")));
        let logits = mv(&w.get("W_lm"), &rms_norm(&y, &w.get("g_final")));
        toks.push(tok as f64);
        tok = argmax(&logits);
        all_logits.extend(logits);
        all_y.extend(y);
    }
    vec![("tok", toks), ("logits", all_logits), ("y", all_y)]
}

/// The GPT-2 block over the input embeddings (2 heads of width 8).
fn gpt(w: &Inputs, steps: usize) -> Outputs {
    let d = 16;
    let (x, wpe) = (w.get("x"), w.get("Wpe"));
    let (mut keys, mut values) = (vec![], vec![]);
    let (mut all_y, mut all_logits) = (vec![], vec![]);
    for t in 0..steps {
        let h0 = add(&x[t * d..(t + 1) * d], &row(&wpe, t.min(15), d));
        let n1 = layer_norm(&h0, &w.get("ln1_g"), &w.get("ln1_b"));
        let qkv = add(&vm(&n1, &w.get("Wqkv")), &w.get("bqkv"));
        keys.push(vec![qkv[16..24].to_vec(), qkv[24..32].to_vec()]);
        values.push(vec![qkv[32..40].to_vec(), qkv[40..48].to_vec()]);
        let heads: Vec<f64> = (0..2)
            .flat_map(|h| {
                let ks: Vec<Vec<f64>> = keys.iter().map(|k| k[h].clone()).collect();
                let vs: Vec<Vec<f64>> = values.iter().map(|v| v[h].clone()).collect();
                attend(&qkv[h * 8..(h + 1) * 8], &ks, &vs, 1.0 / 8f64.sqrt())
            })
            .collect();
        let a = add(&h0, &add(&vm(&heads, &w.get("Wo")), &w.get("bo")));
        let n2 = layer_norm(&a, &w.get("ln2_g"), &w.get("ln2_b"));
        let hidden = map(&add(&vm(&n2, &w.get("W1")), &w.get("b1")), gelu);
        let y = add(&a, &add(&vm(&hidden, &w.get("W2")), &w.get("b2")));
        let logits = vm(&layer_norm(&y, &w.get("lnf_g"), &w.get("lnf_b")), &w.get("W_head"));
        all_y.extend(y);
        all_logits.extend(logits);
    }
    vec![("y", all_y), ("logits", all_logits)]
}

/// The largest difference of `got` from `want`, relative to `1 + |want|`;
/// panics where names, sizes or integers differ.
fn worst(what: &str, got: &[HostArray], want: &Outputs) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: outputs");
    let mut worst: f64 = 0.0;
    for (g, (name, w)) in got.iter().zip(want) {
        assert_eq!(g.name, *name, "{what}: output order");
        assert_eq!(g.data.len(), w.len(), "{what}: {name} has {} values, the reference {}", g.data.len(), w.len());
        let integer = !matches!(g.data, Data::F32(_) | Data::F64(_));
        for (k, want) in w.iter().enumerate() {
            let got = g.data.get_f64(k);
            if integer {
                assert_eq!(got, *want, "{what}: {name}[{k}] (tokens are chosen by argmax)");
            }
            worst = worst.max((got - want).abs() / (1.0 + want.abs()));
        }
    }
    worst
}

type Reference = fn(&Inputs, usize) -> Outputs;

/// A zoo program: file, inputs and their shapes, reference.
type Model = (&'static str, Vec<(&'static str, Vec<usize>)>, Reference);

/// The zoo: file, steps, inputs and their shapes (`x` over the steps),
/// reference.
fn models(steps: usize) -> Vec<Model> {
    let s = steps;
    vec![
        (
            "zoo_lstm_lm.mlir",
            vec![
                ("E", vec![24, 16]),
                ("Wx", vec![16, 64]),
                ("Wh", vec![16, 64]),
                ("b", vec![64]),
                ("Wout", vec![16, 24]),
                ("bout", vec![24]),
            ],
            lstm_lm as Reference,
        ),
        (
            "zoo_gru.mlir",
            [("x", vec![s, 8])]
                .into_iter()
                .chain(["Wr", "Wz", "Wn"].map(|n| (n, vec![16, 8])))
                .chain(["Ur", "Uz", "Un"].map(|n| (n, vec![16, 16])))
                .chain(["bir", "biz", "bin", "bhr", "bhz", "bhn"].map(|n| (n, vec![16])))
                .chain([("Wy", vec![4, 16])])
                .collect(),
            gru,
        ),
        (
            "zoo_mlp.mlir",
            vec![
                ("x", vec![s, 16]),
                ("W1", vec![16, 32]),
                ("b1", vec![32]),
                ("W2", vec![12, 32]),
                ("b2", vec![12]),
                ("W3", vec![12, 8]),
                ("b3", vec![8]),
                ("A", vec![12, 4]),
                ("B", vec![4, 8]),
            ],
            mlp,
        ),
        (
            "zoo_llama.mlir",
            vec![
                ("E", vec![32, 16]),
                ("g_attn", vec![16]),
                ("Wq", vec![16, 16]),
                ("Wk", vec![16, 8]),
                ("Wv", vec![16, 8]),
                ("Wo", vec![16, 16]),
                ("g_mlp", vec![16]),
                ("W1", vec![16, 32]),
                ("W3", vec![16, 32]),
                ("W2", vec![32, 16]),
                ("g_final", vec![16]),
                ("W_lm", vec![32, 16]),
            ],
            llama,
        ),
        (
            "zoo_gpt.mlir",
            vec![
                ("x", vec![s, 1, 16]),
                ("Wpe", vec![16, 16]),
                ("ln1_g", vec![16]),
                ("ln1_b", vec![16]),
                ("Wqkv", vec![16, 48]),
                ("bqkv", vec![48]),
                ("Wo", vec![16, 16]),
                ("bo", vec![16]),
                ("ln2_g", vec![16]),
                ("ln2_b", vec![16]),
                ("W1", vec![16, 32]),
                ("b1", vec![32]),
                ("W2", vec![32, 16]),
                ("b2", vec![16]),
                ("lnf_g", vec![16]),
                ("lnf_b", vec![16]),
                ("W_head", vec![16, 24]),
            ],
            gpt,
        ),
    ]
}

#[test]
fn model_zoo_agrees_with_f64_reference_implementations() {
    let steps = 12;
    for (file, specs, reference) in models(steps) {
        let source = std::fs::read_to_string(format!("{}/../examples/corpus/{file}", env!("CARGO_MANIFEST_DIR")))
            .expect("the zoo program");
        let bounds = [("T", steps as i64)];
        for seed in [1, 7] {
            let specs: Vec<(&str, &[usize])> = specs.iter().map(|(n, s)| (*n, s.as_slice())).collect();
            let inputs = Inputs::new(seed, &specs);
            let want = reference(&inputs, steps);
            let compiled = run(&source, &bounds, inputs.0.clone(), None).unwrap_or_else(|e| panic!("{file}: {e:?}"));
            let f32_error = worst(&format!("{file} (f32, compiled, seed {seed})"), &compiled, &want);
            let wide = source.replace("f32", "f64");
            let interpreted =
                interpret(&wide, &bounds, inputs.widened(), None).unwrap_or_else(|e| panic!("{file}: {e:?}"));
            let interpreted_error = worst(&format!("{file} (f64, interpreted, seed {seed})"), &interpreted, &want);
            let compiled = run(&wide, &bounds, inputs.widened(), None).unwrap_or_else(|e| panic!("{file}: {e:?}"));
            let f64_error = worst(&format!("{file} (f64, compiled, seed {seed})"), &compiled, &want);
            eprintln!(
                "{file} seed {seed}: f32 compiled {f32_error:.1e}, f64 interpreted {interpreted_error:.1e}, f64 compiled {f64_error:.1e}"
            );
            assert!(f32_error <= 1e-4, "{file} (seed {seed}): f32 differs from the reference by {f32_error:e}");
            assert!(
                interpreted_error <= 1e-12,
                "{file} (seed {seed}): the f64 interpreter differs by {interpreted_error:e}"
            );
            assert!(f64_error <= 1e-12, "{file} (seed {seed}): f64 compiled differs by {f64_error:e}");
        }
    }
}
