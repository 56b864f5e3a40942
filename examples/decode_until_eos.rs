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
//!     [--width D] [--vocab V] [--eos-at K] [--batch B] [--repeat R]
//!     [--mlir [--masked]]
//! ```
//!
//! With `--batch B`, `B` sequences are decoded together (the batch in the
//! point, [`stopping_batch_decoder`]), sequence `i` ending at step
//! `K (i + 1) / B`: mixed lengths, the steps ending with the longest.
//! With `--mlir` it prints the program (the masked one with `--masked`),
//! for `tempo-run` with the inputs as `.npy` files (`bench/dynamic/`).
//!
//! It decodes `T` steps at most with seeded weights, compiled and with the
//! interpreter (which must agree exactly on the tokens), and prints the
//! tokens, how many were produced, and the median time of the decode until
//! `EOS` next to the masked fixed-length decode.

use tempo::{Data, ElementType, Expr, HostArray, Predicate, Program, f32s, i64s};

mod run_common;

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

/// A batch of `batch` sequences decoded together, the batch in the point
/// (`[B, D]` states, one product of `B` rows per step): each sequence's
/// tokens after its own `EOS` are masked to `EOS` (`fin[t]` says which
/// sequences have ended), and with `stop` the steps end once every
/// sequence has (`done[t] = all(fin[t])`): work follows the longest
/// sequence of the batch, lanes of ended sequences computed and masked.
fn batched_decoder(c: Config, batch: i64, stop: bool) -> Program {
    let (d, v, b) = (c.width, c.vocab, batch);
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let e = p.input("E", &[], f32s(&[v, d]));
    let wx = p.input("Wx", &[], f32s(&[d, d]));
    let wh = p.input("Wh", &[], f32s(&[d, d]));
    let wo = p.input("Wo", &[], f32s(&[d, v]));
    let bias = p.input("bias", &[&t], f32s(&[b, v]));
    let prev = p.tensor("prev", &[&t], i64s(&[b]));
    let h = p.tensor("h", &[&t], f32s(&[b, d]));
    let raw = p.tensor("raw", &[&t], i64s(&[b]));
    let flag = tempo::PointType { shape: vec![b], element: ElementType::I1 };
    let fin = p.tensor("fin", &[&t], flag);
    let tok = p.tensor("tok", &[&t], i64s(&[b]));
    let eos = || Expr::splat_int(EOS, i64s(&[]));
    p.define(&prev, t.eq(0), Expr::splat_int(BOS, i64s(&[b])));
    p.otherwise(&prev, raw.at([&t - 1]));
    let embedded = e.here().gather(&prev.here()).matmul(&wx.here());
    p.define(&h, t.eq(0), embedded.tanh());
    p.otherwise(&h, (embedded + h.at([&t - 1]).matmul(&wh.here())).tanh());
    p.define(&raw, t.ge(0), (h.here().matmul(&wo.here()) + bias.here()).argmax(1));
    let ends = raw.here().compare(Predicate::Eq, &eos());
    p.define(&fin, t.eq(0), ends.clone());
    p.otherwise(&fin, fin.at([&t - 1]).or(&ends));
    p.define(&tok, t.eq(0), raw.here());
    p.otherwise(&tok, fin.at([&t - 1]).select(&eos(), &raw.here()));
    if stop {
        let done = p.tensor("done", &[&t], tempo::PointType { shape: vec![], element: ElementType::I1 });
        let ended = fin.here().cast(ElementType::I64).sum(0);
        p.define(&done, t.ge(0), ended.compare(Predicate::Eq, &Expr::splat_int(b, i64s(&[]))));
        p.stop(&done, &t);
    }
    p.output(&tok);
    p
}

/// [`batched_decoder`] that stops once every sequence has ended.
pub fn stopping_batch_decoder(c: Config, batch: i64) -> Program {
    batched_decoder(c, batch, true)
}

/// [`batched_decoder`] for all `T` steps.
pub fn masked_batch_decoder(c: Config, batch: i64) -> Program {
    batched_decoder(c, batch, false)
}

/// The decoder that stops at the first `EOS`.
pub fn stopping_decoder(c: Config) -> Program {
    decoder(c, true)
}

/// The fixed-length decoder: all `T` steps, tokens after `EOS` masked.
pub fn masked_decoder(c: Config) -> Program {
    decoder(c, false)
}

/// Seeded weights, and a bias per sequence of a batch that makes `EOS` win
/// from step `eos_at[i]` on for sequence `i` (`[T, B, V]`; a single
/// sequence's is `[T, V]`).
pub fn batch_inputs(c: Config, steps: i64, eos_at: &[i64], seed: u64) -> Vec<HostArray> {
    let v = c.vocab as usize;
    let mut inputs = inputs(c, steps, 0, seed);
    let b = eos_at.len();
    let mut bias = vec![0f32; steps as usize * b * v];
    for t in 0..steps as usize {
        for (i, &at) in eos_at.iter().enumerate() {
            let row = (t * b + i) * v;
            bias[row + EOS as usize] = if (t as i64) < at { -1e4 } else { 1e4 };
            bias[row + BOS as usize] = -1e4;
        }
    }
    let shape = vec![steps as usize, b, v];
    inputs[4] = HostArray { name: "bias".into(), shape, data: Data::F32(bias) };
    inputs
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
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let config = Config { width: value("--width", 64), vocab: value("--vocab", 256) };
    let (steps, eos_at, repeat) = (value("--steps", 64), value("--eos-at", 12), value("--repeat", 5).max(1));
    let batch = value("--batch", 0);
    let masked = args.iter().any(|a| a == "--masked");
    if args.iter().any(|a| a == "--mlir") {
        let program = match (batch > 0, masked) {
            (false, false) => stopping_decoder(config),
            (false, true) => masked_decoder(config),
            (true, false) => stopping_batch_decoder(config, batch),
            (true, true) => masked_batch_decoder(config, batch),
        };
        print!("{}", program.to_mlir()?);
        return Ok(());
    }
    // A batch: sequence i ends at step eos_at * (i + 1) / B (mixed lengths).
    let (stopping, fixed_length, inputs) = if batch > 0 {
        let ends: Vec<i64> = (0..batch).map(|i| eos_at * (i + 1) / batch).collect();
        let inputs = batch_inputs(config, steps, &ends, 7);
        (stopping_batch_decoder(config, batch), masked_batch_decoder(config, batch), inputs)
    } else {
        (stopping_decoder(config), masked_decoder(config), inputs(config, steps, eos_at, 7))
    };
    let bounds = [("T", steps)];
    let time = |program: &Program| -> Result<(Vec<i64>, f64), tempo::Error> {
        let mut runner = program.runner().bound("T", steps);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, &bounds, &inputs, repeat)?;
        if interpreted[0].data != outputs[0].data || interpreted[0].shape != outputs[0].shape {
            eprintln!("error: the compiled decode differs from the interpreter's");
            std::process::exit(1);
        }
        let Data::I64(tokens) = &outputs[0].data else { unreachable!("tok is i64") };
        Ok((tokens.clone(), median))
    };
    let (tokens, until_eos) = time(&stopping)?;
    let (masked, fixed) = time(&fixed_length)?;
    let lanes = batch.max(1) as usize;
    let produced = tokens.len() / lanes;
    println!("tokens {tokens:?}");
    println!("{produced} steps of at most {steps} ({lanes} sequence(s); the last EOS at step {})", produced - 1);
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

    #[test]
    fn a_batch_of_mixed_lengths_stops_with_its_longest_sequence() {
        let config = Config { width: 8, vocab: 16 };
        let (steps, ends) = (12, [2, 7, 4]);
        let inputs = batch_inputs(config, steps, &ends, 5);
        let run = |program: &Program| {
            let mut runner = program.runner().bound("T", steps);
            for input in &inputs {
                runner = runner.input(input.clone());
            }
            let (compiled, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
            assert_eq!(compiled[0].data, interpreted[0].data);
            compiled.into_iter().next().unwrap()
        };
        let stopped = run(&stopping_batch_decoder(config, 3));
        let masked = run(&masked_batch_decoder(config, 3));
        assert_eq!(stopped.shape, vec![8, 3]);
        let (Data::I64(s), Data::I64(m)) = (&stopped.data, &masked.data) else { panic!() };
        assert_eq!(s[..], m[..s.len()]);
        for (lane, &end) in ends.iter().enumerate() {
            let first = (0..8).find(|&t| s[t * 3 + lane] == EOS);
            assert_eq!(first, Some(end as usize), "lane {lane}");
        }
    }
}
