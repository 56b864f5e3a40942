//! Greedy decoding until the end-of-sequence token, with a data-dependent
//! stop: an RNN language model feeds each step's most likely token to the
//! next step, and the step dimension `t` ends where the token is `EOS`
//! (`temporal.stop`). Steps after it are not computed, and the output has
//! the tokens actually produced.
//!
//! ```text
//! prev[t] = BOS                        t = 0
//!         = tok[t-1]                   otherwise
//! h[t]    = tanh(E[prev[t]] Wx + h[t-1] Wh)      (h[-1] = 0)
//! tok[t]  = argmax(h[t] Wo + bias[t])
//! done[t] = tok[t] == EOS              (stop: t ends after the first)
//! ```
//!
//! `bias[t]` is an input added to the logits, so a run can make the model
//! end at a chosen step (a large bias on `EOS` from step `k` on) and the
//! cost of a decode can be compared at several lengths. The same model
//! decoded without the stop, for all `T` steps with every token after the
//! first `EOS` masked to `EOS` (what a fixed-length decode does), is
//! [`masked_decoder`].
//!
//! ```text
//! cargo run --release --example decode_until_eos -- [--steps T]
//!     [--width D] [--vocab V] [--eos-at K] [--repeat R] [--mlir [--masked]]
//! ```
//!
//! With `--mlir` it prints the program (the masked one with `--masked`),
//! for `tempo-run` with the inputs as `.npy` files (`bench/dynamic/`).
//!
//! It decodes `T` steps at most with seeded weights, compiled and with the
//! interpreter (which must agree exactly on the tokens), and prints the
//! tokens, how many were produced, and the median time of the decode until
//! `EOS` next to the masked fixed-length decode.

use tempo::{Data, ElementType, Expr, HostArray, Predicate, Program, f32s, i64s};

/// Token numbers of the toy vocabulary.
pub const BOS: i64 = 0;
pub const EOS: i64 = 1;

/// The model's shape.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub width: i64,
    pub vocab: i64,
}

/// The decoder; `stop` ends `t` at the first `EOS`, otherwise every step
/// runs and tokens after the first `EOS` are masked to `EOS`. The output is
/// `tok`.
fn decoder(c: Config, stop: bool) -> Program {
    let (d, v) = (c.width, c.vocab);
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let e = p.input("E", &[], f32s(&[v, d]));
    let wx = p.input("Wx", &[], f32s(&[d, d]));
    let wh = p.input("Wh", &[], f32s(&[d, d]));
    let wo = p.input("Wo", &[], f32s(&[d, v]));
    let bias = p.input("bias", &[&t], f32s(&[v]));
    let prev = p.tensor("prev", &[&t], i64s(&[]));
    let h = p.tensor("h", &[&t], f32s(&[1, d]));
    let tok = p.tensor("tok", &[&t], i64s(&[]));
    let eos = || Expr::splat_int(EOS, i64s(&[]));
    p.define(&prev, t.eq(0), Expr::splat_int(BOS, i64s(&[])));
    p.otherwise(&prev, tok.at([&t - 1]));
    let embedded = |prev: &Expr| e.here().gather(&prev.reshape(&[1]));
    p.define(&h, t.eq(0), embedded(&prev.here()).matmul(&wx.here()).tanh());
    p.otherwise(&h, (embedded(&prev.here()).matmul(&wx.here()) + h.at([&t - 1]).matmul(&wh.here())).tanh());
    let logits = h.here().matmul(&wo.here()).reshape(&[v]) + bias.here();
    let best = logits.argmax(0);
    if stop {
        p.define(&tok, t.ge(0), best);
        let done = p.tensor("done", &[&t], tempo::PointType { shape: vec![], element: ElementType::I1 });
        p.define(&done, t.ge(0), tok.here().compare(Predicate::Eq, &eos()));
        p.stop(&done, &t);
    } else {
        // After the first EOS every token is EOS (the masked decode).
        p.define(&tok, t.eq(0), best.clone());
        let ended = tok.at([&t - 1]).compare(Predicate::Eq, &eos());
        p.otherwise(&tok, ended.select(&eos(), &best));
    }
    p.output(&tok);
    p
}

/// The decoder that stops at the first `EOS`.
pub fn stopping_decoder(c: Config) -> Program {
    decoder(c, true)
}

/// The fixed-length decoder: all `T` steps, tokens after `EOS` masked.
pub fn masked_decoder(c: Config) -> Program {
    decoder(c, false)
}

/// Seeded weights, and a bias that makes `EOS` win from step `eos_at` on.
pub fn inputs(c: Config, steps: i64, eos_at: i64, seed: u64) -> Vec<HostArray> {
    let (d, v) = (c.width as usize, c.vocab as usize);
    let scale = 1.0 / (d as f64).sqrt();
    let weight = |name: &str, shape: Vec<usize>, k: u64| {
        let mut w = HostArray::random(name, shape, ElementType::F32, seed + k);
        if let Data::F32(values) = &mut w.data {
            values.iter_mut().for_each(|x| *x = ((*x as f64 - 0.5) * 2.0 * scale * 2.0) as f32);
        }
        w
    };
    let mut bias = vec![0f32; steps as usize * v];
    for t in 0..steps as usize {
        // EOS is unlikely before `eos_at`, certain from it on.
        bias[t * v + EOS as usize] = if (t as i64) < eos_at { -1e4 } else { 1e4 };
        bias[t * v + BOS as usize] = -1e4;
    }
    vec![
        weight("E", vec![v, d], 1),
        weight("Wx", vec![d, d], 2),
        weight("Wh", vec![d, d], 3),
        weight("Wo", vec![d, v], 4),
        HostArray { name: "bias".into(), shape: vec![steps as usize, v], data: Data::F32(bias) },
    ]
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
    let config = Config { width: value("--width", 64), vocab: value("--vocab", 256) };
    let (steps, eos_at, repeat) = (value("--steps", 64), value("--eos-at", 12), value("--repeat", 5).max(1));
    if args.iter().any(|a| a == "--mlir") {
        let masked = args.iter().any(|a| a == "--masked");
        print!("{}", if masked { masked_decoder(config) } else { stopping_decoder(config) }.to_mlir()?);
        return Ok(());
    }
    let inputs = inputs(config, steps, eos_at, 7);
    let bounds = [("T", steps)];
    let time = |program: &Program| -> Result<(Vec<i64>, f64), tempo::Error> {
        let mut runner = program.runner().bound("T", steps);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let compiled = runner.compile()?;
        let mut outputs = compiled.run(&bounds, &inputs)?;
        let mut times = Vec::new();
        for _ in 0..repeat {
            let start = std::time::Instant::now();
            outputs = compiled.run(&bounds, &inputs)?;
            times.push(start.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let interpreted = runner.interpret()?;
        if interpreted[0].data != outputs[0].data || interpreted[0].shape != outputs[0].shape {
            eprintln!("error: the compiled decode differs from the interpreter's");
            std::process::exit(1);
        }
        let Data::I64(tokens) = &outputs[0].data else { unreachable!("tok is i64") };
        Ok((tokens.clone(), times[times.len() / 2]))
    };
    let (tokens, until_eos) = time(&stopping_decoder(config))?;
    let (masked, fixed) = time(&masked_decoder(config))?;
    println!("tokens {tokens:?}");
    println!("{} tokens produced of at most {steps} (EOS at step {})", tokens.len(), tokens.len() - 1);
    println!(
        "decode until EOS {:.3} ms, masked fixed-length decode of {steps} steps {:.3} ms (median of {repeat})",
        until_eos * 1e3,
        fixed * 1e3
    );
    if masked[..tokens.len()] != tokens[..] {
        eprintln!("error: the masked decode's tokens differ before EOS");
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_stops_at_the_first_eos_compiled_and_interpreted() {
        let config = Config { width: 8, vocab: 16 };
        for (steps, eos_at) in [(10, 3), (10, 0), (5, 9)] {
            let inputs = inputs(config, steps, eos_at, 3);
            let program = stopping_decoder(config);
            let mut runner = program.runner().bound("T", steps);
            for input in &inputs {
                runner = runner.input(input.clone());
            }
            let compiled = runner.run().unwrap();
            let interpreted = runner.interpret().unwrap();
            let expected = (eos_at + 1).min(steps) as usize;
            assert_eq!(compiled[0].shape, vec![expected]);
            assert_eq!(compiled[0].data, interpreted[0].data);
            let Data::I64(tokens) = &compiled[0].data else { panic!() };
            assert_eq!(tokens.iter().position(|&k| k == EOS), (eos_at < steps).then_some(expected - 1));
        }
    }
}
