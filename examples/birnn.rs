//! A bidirectional RNN over a batch of sequences of mixed lengths, as one
//! program over the batch's tokens: every token of every sequence is a
//! point of one dimension `n` (node 0 a zero state), and each token reads
//! its predecessor and its successor through data (`prev[n]`, `next[n]`, 0
//! at a sequence's ends). The compiled code orders the tokens by depth,
//! which here is the position in the sequence (from the start for the
//! forward states, from the end for the backward ones), and computes the
//! same position of every sequence together: a ragged batch whose work
//! follows the real lengths, with no padding.
//!
//! ```text
//! hf[n] = 0, hb[n] = 0                                     n = 0
//! hf[n] = tanh(x[n] Wx + hf[prev[n]] Wh + bf)              otherwise
//! hb[n] = tanh(x[n] Ux + hb[next[n]] Uh + bb)
//! s[n]  = (hf[n], hb[n])
//! ```
//!
//! ```text
//! cargo run --release --example birnn -- [--seqs B] [--hidden H]
//!     [--min-len A] [--max-len Z] [--seed S] [--repeat R] [--fast-math] [--mlir]
//! ```
//!
//! With `--mlir` it prints the program (for `tempo-run` with the inputs of
//! `bench/dynamic/birnn.py`); otherwise it runs a random batch compiled (`R`
//! times after a warm-up) and interpreted, compares them, and prints
//! `sequences/s N`.

use tempo::{Data, Expr, HostArray, Program, f32s, i64s};

mod run_common;

/// The BiRNN of hidden size `hidden`; the output is `s`, `[N, 2, H]`.
pub fn birnn(hidden: i64) -> Program {
    let h = hidden;
    let mut p = Program::new();
    let n = p.dim("n", "N");
    let x = p.input("x", &[&n], f32s(&[h]));
    let prev = p.input("prev", &[&n], i64s(&[]));
    let next = p.input("next", &[&n], i64s(&[]));
    let weight = |p: &mut Program, name: &str| p.input(name, &[], f32s(&[h, h]));
    let (wx, wh, ux, uh) = (weight(&mut p, "Wx"), weight(&mut p, "Wh"), weight(&mut p, "Ux"), weight(&mut p, "Uh"));
    let bf = p.input("bf", &[], f32s(&[h]));
    let bb = p.input("bb", &[], f32s(&[h]));
    let hf = p.tensor("hf", &[&n], f32s(&[1, h]));
    let hb = p.tensor("hb", &[&n], f32s(&[1, h]));
    let s = p.tensor("s", &[&n], f32s(&[2, h]));
    let zero = || Expr::splat(0.0, f32s(&[1, h]));
    let row = x.here().reshape(&[1, h]);
    p.define(&hf, n.eq(0), zero());
    p.otherwise(&hf, (row.matmul(&wx.here()) + hf.at_data([&prev.here()]).matmul(&wh.here()) + bf.here()).tanh());
    p.define(&hb, n.eq(0), zero());
    p.otherwise(&hb, (row.matmul(&ux.here()) + hb.at_data([&next.here()]).matmul(&uh.here()) + bb.here()).tanh());
    p.define(&s, n.ge(0), hf.here().concat(&hb.here(), 0));
    p.output(&s);
    p
}

/// A batch of `seqs` sequences of random lengths in `lengths`: the bound
/// `N` (tokens + 1) and the inputs of [`birnn`].
pub fn random_batch(seqs: usize, lengths: (usize, usize), hidden: i64, seed: u64) -> (i64, Vec<HostArray>) {
    let mut rng = run_common::Rng(seed);
    let sizes: Vec<usize> =
        (0..seqs).map(|_| lengths.0 + rng.below((lengths.1 - lengths.0 + 1) as u64) as usize).collect();
    let nodes = 1 + sizes.iter().sum::<usize>();
    let (mut prev, mut next) = (vec![0i64; nodes], vec![0i64; nodes]);
    let mut at = 1;
    for &len in &sizes {
        for k in 0..len {
            prev[at + k] = if k == 0 { 0 } else { (at + k - 1) as i64 };
            next[at + k] = if k + 1 == len { 0 } else { (at + k + 1) as i64 };
        }
        at += len;
    }
    let h = hidden as usize;
    let mut floats = |name: &str, shape: Vec<usize>, scale: f32| rng.floats(name, shape, scale);
    let a = 1.0 / (h as f32).sqrt();
    let inputs = vec![
        floats("x", vec![nodes, h], 1.0),
        HostArray { name: "prev".into(), shape: vec![nodes], data: Data::I64(prev) },
        HostArray { name: "next".into(), shape: vec![nodes], data: Data::I64(next) },
        floats("Wx", vec![h, h], a),
        floats("Wh", vec![h, h], a),
        floats("Ux", vec![h, h], a),
        floats("Uh", vec![h, h], a),
        floats("bf", vec![h], 0.1),
        floats("bb", vec![h], 0.1),
    ];
    (nodes as i64, inputs)
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let (seqs, hidden, seed, repeat) =
        (value("--seqs", 64), value("--hidden", 64), value("--seed", 1), value("--repeat", 5));
    let lengths = (value("--min-len", 10) as usize, value("--max-len", 50).max(value("--min-len", 10)) as usize);
    let program = birnn(hidden);
    if args.iter().any(|a| a == "--mlir") {
        print!("{}", program.to_mlir()?);
        return Ok(());
    }
    let fast_math = args.iter().any(|a| a == "--fast-math");
    let (nodes, inputs) = random_batch(seqs as usize, lengths, hidden, seed as u64);
    let mut runner = program.runner().bound("N", nodes).fast_math(fast_math);
    for input in &inputs {
        runner = runner.input(input.clone());
    }
    let bounds = [("N", nodes)];
    let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, &bounds, &inputs, repeat)?;
    let worst = (0..outputs[0].data.len())
        .map(|k| (outputs[0].data.get_f64(k) - interpreted[0].data.get_f64(k)).abs())
        .fold(0.0f64, f64::max);
    println!("{seqs} sequences, {} tokens, hidden {hidden}: s has shape {:?}", nodes - 1, outputs[0].shape);
    println!(
        "execute {:.3} ms per batch (median of {}); largest difference from the interpreter {worst:.2e}",
        median * 1e3,
        repeat.max(1)
    );
    println!("sequences/s {:.0}", seqs as f64 / median);
    let tolerance = if fast_math { 1e-4 } else { 0.0 };
    if worst > tolerance {
        eprintln!("error: the compiled program differs from the interpreter by {worst:.2e}");
        std::process::exit(1);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_and_interpreted_birnns_match_a_plain_loop() {
        let hidden = 4;
        let (nodes, inputs) = random_batch(3, (1, 5), hidden, 11);
        let program = birnn(hidden);
        let mut runner = program.runner().bound("N", nodes);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let f = |k: usize| match &inputs[k].data {
            Data::F32(v) => v.clone(),
            _ => unreachable!(),
        };
        let i = |k: usize| match &inputs[k].data {
            Data::I64(v) => v.clone(),
            _ => unreachable!(),
        };
        let (x, prev, next) = (f(0), i(1), i(2));
        let (wx, wh, ux, uh, bf, bb) = (f(3), f(4), f(5), f(6), f(7), f(8));
        let h = hidden as usize;
        let n = nodes as usize;
        let step = |state: &[f32], t: usize, w: &[f32], u: &[f32], bias: &[f32]| -> Vec<f32> {
            (0..h)
                .map(|j| {
                    let a: f32 = (0..h).map(|k| x[t * h + k] * w[k * h + j]).sum();
                    let b: f32 = (0..h).map(|k| state[k] * u[k * h + j]).sum();
                    (a + b + bias[j]).tanh()
                })
                .collect()
        };
        let (mut hf, mut hb) = (vec![vec![0f32; h]; n], vec![vec![0f32; h]; n]);
        for t in 1..n {
            hf[t] = step(&hf[prev[t] as usize].clone(), t, &wx, &wh, &bf);
        }
        for t in (1..n).rev() {
            hb[t] = step(&hb[next[t] as usize].clone(), t, &ux, &uh, &bb);
        }
        for outputs in [runner.run().unwrap(), runner.interpret().unwrap()] {
            assert_eq!(outputs[0].shape, vec![n, 2, h]);
            for t in 0..n {
                for j in 0..h {
                    let (f, b) = (outputs[0].data.get_f64(t * 2 * h + j), outputs[0].data.get_f64(t * 2 * h + h + j));
                    assert!((f - hf[t][j] as f64).abs() < 1e-5 && (b - hb[t][j] as f64).abs() < 1e-5, "token {t}");
                }
            }
        }
    }
}
