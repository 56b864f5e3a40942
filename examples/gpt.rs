//! A GPT-2-shaped decoder written as one temporal program over steps `t`
//! and layers `l`, with batch and heads in the point shape: RMS norm,
//! multi-head causal (or windowed) attention over the keys and values of
//! all earlier steps, a SiLU MLP, residuals, and the next step's input
//! `x[t+1] = tanh(h[t])` (no embedding or LM head). There is no
//! hand-written KV cache: `k[l, t]` and `v[l, t]` are recurrent tensors
//! read through ranges, and the compiler chooses their stores.
//!
//! ```text
//! u[t, l] = x0                    t = 0, l = 0
//!         = tanh(h[t-1, L-1])     l = 0
//!         = h[t, l-1]             otherwise
//! a[t, l] = rms_norm(u[t, l])
//! k[l, t] = a Wk[l],  v[l, t] = a Wv[l]          (as [B*H, hd])
//! h[t, l] = r + silu(rms_norm(r) W1[l]) W2[l],
//!           r = u + attention(a Wq[l], k[lo:t+1, l], v[lo:t+1, l]) Wo[l]
//! y[t]    = h[t, L-1]
//! ```
//!
//! `lo` is 0 (causal) or `max(0, t - w + 1)` (a window of `w` steps).
//! Weights are inputs over `l` (`Wq` is `[L, D, D]` as an array), `x0` is
//! `[B, D]`; the output `y` is `[T, B, D]`.
//!
//! ```text
//! cargo run --release --example gpt -- [--layers L] [--heads H] [--width D]
//!     [--batch B] [--window W] [--steps T] [--mlir]
//! ```
//!
//! With `--mlir` it prints the program (for `tempo-run`, which takes the
//! weights as `.npy` files with `--input`); otherwise it runs `T` steps on
//! seeded weights, compiled and with the reference interpreter, and
//! compares them.

use tempo::{Cond, Coordinate, Expr, Program, f32s};

/// The decoder's shape.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub layers: i64,
    pub heads: i64,
    pub width: i64,
    pub batch: i64,
    /// `None`: causal attention over every earlier step.
    pub window: Option<i64>,
    /// The batch as a temporal dimension `b` (bound `B`, every tensor over
    /// `(b, ...)`, points of one sequence) instead of in the point shape;
    /// `temporal-vectorize` turns it back into batched points.
    pub batch_dim: bool,
}

/// Builds the decoder; the output is `y`.
pub fn decoder(c: Config) -> Program {
    let (d, h) = (c.width, c.heads);
    // Sequences per point.
    let b = if c.batch_dim { 1 } else { c.batch };
    let hd = d / h;
    let bh = b * h;
    let ffn = 4 * d;
    let eps = 1e-5;
    let mut p = Program::new();
    let batch = c.batch_dim.then(|| p.dim("b", "B"));
    let t = p.dim("t", "T");
    let l = p.dim("l", "L");
    // A domain, with the batch dimension first when there is one.
    let over =
        |dims: &[&tempo::Dim]| -> Vec<tempo::Dim> { batch.iter().chain(dims.iter().copied()).cloned().collect() };
    let x0 = p.input("x0", &over(&[]).iter().collect::<Vec<_>>(), f32s(&[b, d]));
    let wq = p.input("Wq", &[&l], f32s(&[d, d]));
    let wk = p.input("Wk", &[&l], f32s(&[d, d]));
    let wv = p.input("Wv", &[&l], f32s(&[d, d]));
    let wo = p.input("Wo", &[&l], f32s(&[d, d]));
    let w1 = p.input("W1", &[&l], f32s(&[d, ffn]));
    let w2 = p.input("W2", &[&l], f32s(&[ffn, d]));

    let refs = |dims: Vec<tempo::Dim>| dims;
    let (tl, lt, only_t) = (refs(over(&[&t, &l])), refs(over(&[&l, &t])), refs(over(&[&t])));
    fn domain(dims: &[tempo::Dim]) -> Vec<&tempo::Dim> {
        dims.iter().collect()
    }
    let u = p.tensor("u", &domain(&tl), f32s(&[b, d]));
    let a = p.tensor("a", &domain(&tl), f32s(&[b, d]));
    // Keys and values over (l, t): a store of all steps then keeps each
    // layer's steps together, as a KV cache [L, T, ...] does.
    let k = p.tensor("k", &domain(&lt), f32s(&[bh, hd]));
    let v = p.tensor("v", &domain(&lt), f32s(&[bh, hd]));
    let hidden = p.tensor("h", &domain(&tl), f32s(&[b, d]));
    let y = p.tensor("y", &domain(&only_t), f32s(&[b, d]));

    p.define(&u, t.eq(0).and(l.eq(0)), x0.here());
    p.define(&u, l.eq(0), hidden.at_dims([(&t, &t - 1), (&l, l.bound() - 1)]).tanh());
    p.otherwise(&u, hidden.at_dims([(&l, &l - 1)]));
    p.define(&a, Cond::always(), u.here().rms_norm(eps));
    p.define(&k, Cond::always(), a.here().matmul(&wk.here()).reshape(&[bh, hd]));
    p.define(&v, Cond::always(), a.here().matmul(&wv.here()).reshape(&[bh, hd]));

    // Keys and values of the steps attended to: [n, B*H, hd].
    let keys_and_values = |tensor: &tempo::Tensor| match c.window {
        None => tensor.read_box([(&t, Coordinate::range(0, &t + 1))]),
        Some(w) => tensor.read_box([(&t, Coordinate::clamped(vec![0.into(), &t - (w - 1)], vec![&t + 1]))]),
    };
    let q = a.here().matmul(&wq.here()).reshape(&[bh, 1, hd]);
    // Per head h: q [h, 1, hd] against the keys [n, h, hd] -> [h, 1, n]
    // (a batched matmul of transposed views: no copy of the cache).
    let scores = Expr::einsum("hqd,nhd->hqn", &[&q, &keys_and_values(&k)]) * (1.0 / (hd as f64).sqrt());
    // [h, 1, n] against the values [n, h, hd] -> [h, 1, hd]
    let attended = Expr::einsum("hqn,nhd->hqd", &[&scores.softmax(), &keys_and_values(&v)]).reshape(&[b, d]);
    let r = u.here() + attended.matmul(&wo.here());
    let g = r.rms_norm(eps).matmul(&w1.here());
    let silu = &g * &g.sigmoid();
    p.define(&hidden, Cond::always(), r + silu.matmul(&w2.here()));
    p.define(&y, Cond::always(), hidden.at_dims([(&l, l.bound() - 1)]));
    p.output(&y);
    p
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str, default: i64| -> i64 {
        args.iter()
            .position(|a| a == flag)
            .and_then(|k| args.get(k + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let config = Config {
        layers: value("--layers", 2),
        heads: value("--heads", 2),
        width: value("--width", 64),
        batch: value("--batch", 1),
        window: args.iter().any(|a| a == "--window").then(|| value("--window", 64)),
        batch_dim: args.iter().any(|a| a == "--batch-dim"),
    };
    if config.width % config.heads != 0 {
        eprintln!("error: --width must be a multiple of --heads");
        std::process::exit(2);
    }
    let program = decoder(config);
    if args.iter().any(|a| a == "--mlir") {
        print!("{}", program.to_mlir()?);
        return Ok(());
    }
    let steps = value("--steps", 8);
    let mut runner = program.runner().bound("T", steps).bound("L", config.layers).seed(1);
    if config.batch_dim {
        runner = runner.bound("B", config.batch);
    }
    let (compiled, report) = runner.run_with_report()?;
    let interpreted = runner.interpret()?;
    let worst = (0..compiled[0].data.len())
        .map(|k| (compiled[0].data.get_f64(k) - interpreted[0].data.get_f64(k)).abs())
        .fold(0.0f64, f64::max);
    println!("{config:?}, T = {steps}: y has shape {:?}", compiled[0].shape);
    println!(
        "compile {:.1} ms, execute {:.3} ms ({:.3} ms/token); largest difference from the interpreter {worst:.2e}",
        report.compile.as_secs_f64() * 1e3,
        report.execute.as_secs_f64() * 1e3,
        report.execute.as_secs_f64() * 1e3 / steps.max(1) as f64
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoder_matches_the_interpreter() {
        for (batch, window, batch_dim) in [(1, None, false), (2, Some(3), false), (3, Some(3), true), (2, None, true)] {
            let config = Config { layers: 2, heads: 2, width: 8, batch, window, batch_dim };
            let program = decoder(config);
            let mut runner = program.runner().bound("T", 6).bound("L", 2).seed(3);
            if batch_dim {
                runner = runner.bound("B", batch);
            }
            let compiled = runner.run().unwrap();
            let interpreted = runner.interpret().unwrap();
            let shape = if batch_dim { vec![batch as usize, 6, 1, 8] } else { vec![6, batch as usize, 8] };
            assert_eq!(compiled[0].shape, shape);
            for k in 0..compiled[0].data.len() {
                let (x, y) = (compiled[0].data.get_f64(k), interpreted[0].data.get_f64(k));
                assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{config:?}, element {k}: {x} vs {y}");
            }
        }
    }

    #[test]
    fn the_batch_as_a_dimension_is_vectorized() {
        let base = Config { layers: 2, heads: 2, width: 8, batch: 3, window: None, batch_dim: false };
        let as_dim = Config { batch_dim: true, ..base };
        let report = |config: Config| {
            let program = decoder(config);
            let mut runner = program.runner().bound("T", 5).bound("L", 2).seed(4);
            if config.batch_dim {
                runner = runner.bound("B", 3);
            }
            runner.run_with_report().unwrap().1
        };
        // Vectorized: every store holds batched points of 3 sequences, and
        // the output copies its slices out of y_batched.
        let kinds: Vec<(String, String)> = report(as_dim)
            .memory
            .expect("a compiled run")
            .stores
            .iter()
            .map(|s| (s.tensor.clone(), s.kind.clone()))
            .collect();
        assert!(kinds.iter().any(|(name, _)| name == "y_batched"), "{kinds:?}");
        assert!(report(base).memory.expect("a compiled run").stores.iter().all(|s| s.tensor != "y_batched"));
    }
}
