//! The programs of the training benchmark (`bench/train/run.py`), built with
//! the Rust API and printed as MLIR for `tempo-run`.
//!
//! ```text
//! cargo run --release --example bench_train -- lstm --batch B --width H --vocab V [--iterations N] [--lr LR]
//! cargo run --release --example bench_train -- gpt --layers L --heads NH --width D --batch B --vocab V [--iterations N]
//! ```
//!
//! Each program is one training step of a language model over a sequence
//! of `T` tokens (a bound), batch `B` in the point shape: the forward pass
//! over `t`, the loss (softmax cross-entropy summed over `t` and the batch),
//! back-propagation through time (`Program::grad`, expanded by
//! `temporal-autodiff`), and Adam.
//!
//! - Without `--iterations` (or with 0) it is one step with no iteration
//!   dimension: parameters `P` and Adam's moments `m_P`, `v_P` are inputs,
//!   the gradients `g_P`, the updated parameters `P_new` and moments
//!   `m_P_new`, `v_P_new` and the loss of each step `loss[t]` are outputs.
//!   The bias corrections are those of Adam's first step (`--adam-step K`
//!   for another).
//! - With `--iterations N` it is a whole training run of `N` iterations
//!   over an iteration dimension `i` (bound `I`): parameters are recurrent
//!   tensors over `i` updated with `tempo::optim::adam` from their own
//!   gradient, on the same batch every iteration; the output is
//!   `loss[i, t]`.
//!
//! Inputs (as `.npy` files, `tempo-run --input NAME=FILE`): `tokens`
//! `[T, B]` int64, `targets` `[T, B, V]` float32 (one-hot next tokens), and
//! the initial parameters listed by `--list-params` (`NAME SHAPE` lines).
//!
//! The LSTM: `x = E[tokens[t]]`, `z = x Wx + h[t-1] Wh + b` (gates in the
//! order i, f, g, o, as PyTorch's `nn.LSTM`), `c[t] = f c[t-1] + i g`,
//! `h[t] = o tanh(c[t])`, logits `h Wo + bo`. The GPT-style model: `x =
//! E[tokens[t]]`, then `L` pre-norm blocks (RMS norm, multi-head causal
//! attention over the keys and values of steps `0..=t`, a SiLU MLP of
//! width `4D`, residuals), a final RMS norm and logits `u Wo`.

use tempo::optim::{self, Adam};
use tempo::{Dim, Expr, Program, Tensor, f32s, i64s};

/// A parameter: its name and shape.
struct Param {
    name: String,
    shape: Vec<i64>,
}

fn param(name: &str, shape: &[i64]) -> Param {
    Param { name: name.into(), shape: shape.to_vec() }
}

enum Model {
    Lstm { batch: i64, width: i64, vocab: i64 },
    Gpt { layers: i64, heads: i64, width: i64, batch: i64, vocab: i64 },
}

impl Model {
    fn params(&self) -> Vec<Param> {
        match *self {
            Model::Lstm { width: h, vocab: v, .. } => vec![
                param("E", &[v, h]),
                param("Wx", &[h, 4 * h]),
                param("Wh", &[h, 4 * h]),
                param("b", &[4 * h]),
                param("Wo", &[h, v]),
                param("bo", &[v]),
            ],
            Model::Gpt { layers, width: d, vocab: v, .. } => {
                let mut ps = vec![param("E", &[v, d])];
                for l in 0..layers {
                    for (name, shape) in [
                        ("Wq", [d, d]),
                        ("Wk", [d, d]),
                        ("Wv", [d, d]),
                        ("Wproj", [d, d]),
                        ("W1", [d, 4 * d]),
                        ("W2", [4 * d, d]),
                    ] {
                        ps.push(param(&format!("{name}{l}"), &shape));
                    }
                }
                ps.push(param("Wo", &[d, v]));
                ps
            }
        }
    }

    fn batch_and_vocab(&self) -> (i64, i64) {
        match *self {
            Model::Lstm { batch, vocab, .. } | Model::Gpt { batch, vocab, .. } => (batch, vocab),
        }
    }

    /// Declares the forward pass and returns the loss tensor (over
    /// `outer` then `t`, scalar points). `params` are read with `here()`.
    fn forward(&self, p: &mut Program, outer: &[&Dim], t: &Dim, params: &[Tensor]) -> Tensor {
        let (b, v) = self.batch_and_vocab();
        let dims: Vec<&Dim> = outer.iter().copied().chain([t]).collect();
        let tokens = p.input("tokens", &[t], i64s(&[b]));
        let targets = p.input("targets", &[t], f32s(&[b, v]));
        let names = self.params();
        let get = |name: &str| {
            let k = names.iter().position(|s| s.name == name).expect("a parameter");
            params[k].here()
        };
        let logits = match *self {
            Model::Lstm { width: h, .. } => {
                let gates = p.tensor("gates", &dims, f32s(&[b, 4 * h]));
                let c = p.tensor("c", &dims, f32s(&[b, h]));
                let hidden = p.tensor("h", &dims, f32s(&[b, h]));
                let x = get("E").gather(&tokens.here());
                let input_part = x.matmul(&get("Wx")) + get("b");
                let activate = |z: Expr| {
                    let i = z.slice(&[0, 0], &[b, h]).sigmoid();
                    let f = z.slice(&[0, h], &[b, h]).sigmoid();
                    let g = z.slice(&[0, 2 * h], &[b, h]).tanh();
                    let o = z.slice(&[0, 3 * h], &[b, h]).sigmoid();
                    i.concat(&f, 1).concat(&g, 1).concat(&o, 1)
                };
                p.define(&gates, t.eq(0), activate(input_part.clone()));
                p.otherwise(&gates, activate(input_part + hidden.at_dims([(t, t - 1)]).matmul(&get("Wh"))));
                let gate = |k: i64| gates.here().slice(&[0, k * h], &[b, h]);
                p.define(&c, t.eq(0), gate(0) * gate(2));
                p.otherwise(&c, gate(1) * c.at_dims([(t, t - 1)]) + gate(0) * gate(2));
                p.otherwise(&hidden, gate(3) * c.here().tanh());
                hidden.here().matmul(&get("Wo")) + get("bo")
            }
            Model::Gpt { layers, heads, width: d, .. } => {
                let hd = d / heads;
                let bh = b * heads;
                let eps = 1e-5;
                let scale = 1.0 / (hd as f64).sqrt();
                let mut u = p.tensor("u_in", &dims, f32s(&[b, d]));
                p.otherwise(&u, get("E").gather(&tokens.here()));
                for l in 0..layers {
                    let w = |name: &str| get(&format!("{name}{l}"));
                    let a = p.tensor(&format!("a{l}"), &dims, f32s(&[b, d]));
                    p.otherwise(&a, u.here().rms_norm(eps));
                    let k = p.tensor(&format!("k{l}"), &dims, f32s(&[bh, hd]));
                    let vv = p.tensor(&format!("v{l}"), &dims, f32s(&[bh, hd]));
                    p.otherwise(&k, a.here().matmul(&w("Wk")).reshape(&[bh, hd]));
                    p.otherwise(&vv, a.here().matmul(&w("Wv")).reshape(&[bh, hd]));
                    let q = a.here().matmul(&w("Wq")).reshape(&[bh, 1, hd]);
                    let prefix = |x: &Tensor| x.read_box([(t, tempo::Coordinate::range(0, t + 1))]);
                    let scores = Expr::einsum("hqd,nhd->hqn", &[&q, &prefix(&k)]) * scale;
                    let attended = Expr::einsum("hqn,nhd->hqd", &[&scores.softmax(), &prefix(&vv)]).reshape(&[b, d]);
                    let r = p.tensor(&format!("r{l}"), &dims, f32s(&[b, d]));
                    p.otherwise(&r, u.here() + attended.matmul(&w("Wproj")));
                    let g = r.here().rms_norm(eps).matmul(&w("W1"));
                    let next = p.tensor(&format!("u{l}"), &dims, f32s(&[b, d]));
                    p.otherwise(&next, r.here() + (&g * g.sigmoid()).matmul(&w("W2")));
                    u = next;
                }
                u.here().rms_norm(eps).matmul(&get("Wo"))
            }
        };
        // Softmax cross-entropy of each row against the one-hot target,
        // summed over the batch: logsumexp(logits) - logits[target].
        let loss = p.tensor("loss", &dims, f32s(&[]));
        let top = logits.max_keepdims(1).stop_gradient();
        let lse = (&logits - &top).exp().sum(1).log() + top.reshape(&[b]);
        let picked = (&logits * targets.here()).sum(1);
        p.otherwise(&loss, (lse - picked).sum(0));
        loss
    }
}

/// One step: gradients and Adam's update with no iteration dimension.
fn one_step(model: &Model, config: &Adam, adam_step: i32) -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let specs = model.params();
    let params: Vec<Tensor> = specs.iter().map(|s| p.input(&s.name, &[], f32s(&s.shape))).collect();
    let loss = model.forward(&mut p, &[], &t, &params);
    let (b1, b2) = (config.beta1, config.beta2);
    let (c1, c2) = (1.0 - b1.powi(adam_step), 1.0 - b2.powi(adam_step));
    p.output(&loss);
    for (s, w) in specs.iter().zip(&params) {
        let ty = f32s(&s.shape);
        let m = p.input(&format!("m_{}", s.name), &[], ty.clone());
        let v = p.input(&format!("v_{}", s.name), &[], ty.clone());
        let g = p.grad(&format!("g_{}", s.name), &loss, w);
        let m_new = p.tensor(&format!("m_{}_new", s.name), &[], ty.clone());
        let v_new = p.tensor(&format!("v_{}_new", s.name), &[], ty.clone());
        let w_new = p.tensor(&format!("{}_new", s.name), &[], ty);
        let gh = g.here().stop_gradient();
        p.otherwise(&m_new, m.here() * b1 + &gh * (1.0 - b1));
        p.otherwise(&v_new, v.here() * b2 + &gh * &gh * (1.0 - b2));
        let update = (m_new.here() * (1.0 / c1)) / ((v_new.here() * (1.0 / c2)).sqrt() + config.eps);
        p.otherwise(&w_new, w.here() - update * config.lr);
        for out in [&g, &w_new, &m_new, &v_new] {
            p.output(out);
        }
    }
    p
}

/// A whole training run of `I` iterations on the same batch: parameters
/// `NAME_i` over `i` start from the inputs `NAME` and follow Adam.
fn training_run(model: &Model, config: &Adam) -> Program {
    let mut p = Program::new();
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let specs = model.params();
    let inits: Vec<Tensor> = specs.iter().map(|s| p.input(&s.name, &[], f32s(&s.shape))).collect();
    let params: Vec<Tensor> = specs.iter().map(|s| p.tensor(&format!("{}_i", s.name), &[&i], f32s(&s.shape))).collect();
    let loss = model.forward(&mut p, &[&i], &t, &params);
    for ((s, w), init) in specs.iter().zip(&params).zip(&inits) {
        let g = p.grad(&format!("g_{}", s.name), &loss, w);
        optim::adam(&mut p, w, &g, &i, init.here(), config);
    }
    p.output(&loss);
    p
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: f64| -> f64 {
        args.iter()
            .position(|a| a == flag)
            .and_then(|k| args.get(k + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let int = |flag: &str, default: i64| value(flag, default as f64) as i64;
    let model = match args.first().map(String::as_str) {
        Some("lstm") => Model::Lstm { batch: int("--batch", 16), width: int("--width", 64), vocab: int("--vocab", 64) },
        Some("gpt") => Model::Gpt {
            layers: int("--layers", 2),
            heads: int("--heads", 2),
            width: int("--width", 64),
            batch: int("--batch", 16),
            vocab: int("--vocab", 64),
        },
        _ => {
            eprintln!(
                "usage: bench_train (lstm|gpt) [--batch B] [--width W] [--vocab V] [--layers L] [--heads H] [--iterations N] [--lr LR] [--adam-step K] [--list-params]"
            );
            std::process::exit(2);
        }
    };
    if let Model::Gpt { width, heads, .. } = model
        && width % heads != 0
    {
        eprintln!("error: --width must be a multiple of --heads");
        std::process::exit(2);
    }
    if args.iter().any(|a| a == "--list-params") {
        for s in model.params() {
            println!("{} {}", s.name, s.shape.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
        }
        return Ok(());
    }
    let config = Adam::with_lr(value("--lr", 1e-3));
    let iterations = int("--iterations", 0);
    let program = if iterations > 0 {
        training_run(&model, &config)
    } else {
        one_step(&model, &config, int("--adam-step", 1) as i32)
    };
    print!("{}", program.to_mlir()?);
    Ok(())
}
