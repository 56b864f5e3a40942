//! A nested RNN over a batch of samples (the NestedRNN workload of
//! ACRoBat, MLSys'24): each sample is a sequence of `I` inner sequences of
//! mixed lengths; an inner RNN runs over each inner sequence's tokens and
//! an outer RNN over the inner sequences' final states. The inner loop over
//! tokens `j` stops per sample and inner sequence (`temporal.stop` over
//! `done[n, i, j]`, a ragged stop): its work follows the real lengths, and
//! the outer step reads each inner sequence's last state at its own length.
//!
//! ```text
//! h[n, i, j] = tanh(x[n, i, j] W + h[n, i, j-1] U + bh)   (h[n, i, -1] = 0)
//! done[n, i, j] = j + 1 >= len[n, i]                       (stop: j ends there)
//! g[n, i]    = tanh(h[n, i, J-1] V + g[n, i-1] Z + bg)     (g[n, -1] = 0)
//! ```
//!
//! `J - 1` in the outer step is, per `(n, i)`, the last token of that inner
//! sequence. Each inner sequence runs its tokens one by one
//! ([`nested_rnn`]).
//!
//! The same model batched as ACRoBat batches it ([`nested_rnn_by_depth`]):
//! the tokens of every inner sequence of every sample are the points of
//! one dimension `k` (node 0 a zero state), each reading its predecessor
//! through data, and the inner sequences the points of a dimension `m`,
//! each reading its last token and the previous inner sequence of its
//! sample through data. The compiled code orders both by depth (a token's
//! position, an inner sequence's) and computes each depth's points
//! together: one product of all the batch's tokens at position `j` by `U`,
//! with no padding.
//!
//! ```text
//! h[k] = tanh(x[k] W + h[prev[k]] U + bh)          (h[0] = 0)
//! g[m] = tanh(h[last[m]] V + g[before[m]] Z + bg)  (g[0] = 0)
//! ```
//!
//! ```text
//! cargo run --release --example nested_rnn -- [--samples N] [--outer I]
//!     [--min-len A] [--max-len Z] [--hidden H] [--seed S] [--repeat R]
//!     [--fast-math] [--mlir [--by-depth]]
//! ```
//!
//! With `--mlir` it prints the program (`--by-depth`: the batched one) for
//! `tempo-run` with the inputs of `bench/dynamic/nested_rnn.py`; otherwise
//! it runs a random batch with both programs compiled (`R` times after a
//! warm-up) and interpreted, compares them, and prints `samples/s N` of
//! the batched one.

use tempo::{Data, ElementType, Expr, HostArray, Index, Predicate, Program, f32s, i64s};

mod run_common;

/// The nested RNN of hidden size `hidden`; the output is `g`, `[N, I, 1, H]`.
pub fn nested_rnn(hidden: i64) -> Program {
    let h = hidden;
    let mut p = Program::new();
    let n = p.dim("n", "N");
    let i = p.dim("i", "I");
    let j = p.dim("j", "J");
    let x = p.input("x", &[&n, &i, &j], f32s(&[1, h]));
    let len = p.input("len", &[&n, &i], i64s(&[]));
    let weight = |p: &mut Program, name: &str| p.input(name, &[], f32s(&[h, h]));
    let (w, u, v, z) = (weight(&mut p, "W"), weight(&mut p, "U"), weight(&mut p, "V"), weight(&mut p, "Z"));
    let bh = p.input("bh", &[], f32s(&[h]));
    let bg = p.input("bg", &[], f32s(&[h]));
    let inner = p.tensor("h", &[&n, &i, &j], f32s(&[1, h]));
    let done = p.tensor("done", &[&n, &i, &j], tempo::PointType { shape: vec![], element: ElementType::I1 });
    let outer = p.tensor("g", &[&n, &i], f32s(&[1, h]));
    let input = x.here().matmul(&w.here()) + bh.here();
    p.define(&inner, j.eq(0), input.clone().tanh());
    p.otherwise(&inner, (input + inner.at([Index::from(&n), Index::from(&i), &j - 1]).matmul(&u.here())).tanh());
    let next = j.position(ElementType::I64) + Expr::splat_int(1, i64s(&[]));
    p.define(&done, j.ge(0), next.compare(Predicate::Ge, &len.here()));
    p.stop(&done, &j);
    let last = inner.at([Index::from(&n), Index::from(&i), j.bound() - 1]).matmul(&v.here()) + bg.here();
    p.define(&outer, i.eq(0), last.clone().tanh());
    p.otherwise(&outer, (last + outer.at([Index::from(&n), &i - 1]).matmul(&z.here())).tanh());
    p.output(&outer);
    p
}

/// The nested RNN batched by depth (see the module's doc); the output is
/// `g`, `[M, 1, H]` (row `1 + n I + i` is `g[n, i]` of [`nested_rnn`]).
pub fn nested_rnn_by_depth(hidden: i64) -> Program {
    let h = hidden;
    let mut p = Program::new();
    let k = p.dim("k", "K");
    let m = p.dim("m", "M");
    let x = p.input("xk", &[&k], f32s(&[1, h]));
    let prev = p.input("prev", &[&k], i64s(&[]));
    let last = p.input("last", &[&m], i64s(&[]));
    let before = p.input("before", &[&m], i64s(&[]));
    let weight = |p: &mut Program, name: &str| p.input(name, &[], f32s(&[h, h]));
    let (w, u, v, z) = (weight(&mut p, "W"), weight(&mut p, "U"), weight(&mut p, "V"), weight(&mut p, "Z"));
    let bh = p.input("bh", &[], f32s(&[h]));
    let bg = p.input("bg", &[], f32s(&[h]));
    let inner = p.tensor("h", &[&k], f32s(&[1, h]));
    let outer = p.tensor("g", &[&m], f32s(&[1, h]));
    let zero = || Expr::splat(0.0, f32s(&[1, h]));
    p.define(&inner, k.eq(0), zero());
    let token = x.here().matmul(&w.here()) + inner.at_data([&prev.here()]).matmul(&u.here()) + bh.here();
    p.otherwise(&inner, token.tanh());
    p.define(&outer, m.eq(0), zero());
    let step = inner.at_data([&last.here()]).matmul(&v.here()) + outer.at_data([&before.here()]).matmul(&z.here());
    p.otherwise(&outer, (step + bg.here()).tanh());
    p.output(&outer);
    p
}

/// The inputs of [`nested_rnn_by_depth`] for those of [`nested_rnn`] (x,
/// len, then the weights), and its bounds: tokens numbered sample by
/// sample, inner sequence by inner sequence, from 1.
pub fn by_depth_inputs(inputs: &[HostArray], hidden: i64) -> (Vec<(&'static str, i64)>, Vec<HostArray>) {
    let (Data::F32(x), Data::I64(len)) = (&inputs[0].data, &inputs[1].data) else { panic!("x f32, len i64") };
    let (n, o, j, h) = (inputs[0].shape[0], inputs[0].shape[1], inputs[0].shape[2], hidden as usize);
    let tokens: usize = len.iter().map(|&l| l as usize).sum();
    let (mut xk, mut prev) = (vec![0f32; (tokens + 1) * h], vec![0i64; tokens + 1]);
    let (mut last, mut before) = (vec![0i64; n * o + 1], vec![0i64; n * o + 1]);
    let mut at = 1;
    for sample in 0..n {
        for step in 0..o {
            let m = 1 + sample * o + step;
            let length = len[sample * o + step] as usize;
            for t in 0..length {
                let from = ((sample * o + step) * j + t) * h;
                xk[(at + t) * h..(at + t + 1) * h].copy_from_slice(&x[from..from + h]);
                prev[at + t] = if t == 0 { 0 } else { (at + t - 1) as i64 };
            }
            last[m] = (at + length - 1) as i64;
            before[m] = if step == 0 { 0 } else { (m - 1) as i64 };
            at += length;
        }
    }
    let mut out = vec![
        HostArray { name: "xk".into(), shape: vec![tokens + 1, 1, h], data: Data::F32(xk) },
        HostArray { name: "prev".into(), shape: vec![tokens + 1], data: Data::I64(prev) },
        HostArray { name: "last".into(), shape: vec![n * o + 1], data: Data::I64(last) },
        HostArray { name: "before".into(), shape: vec![n * o + 1], data: Data::I64(before) },
    ];
    out.extend(inputs[2..].iter().cloned());
    (vec![("K", tokens as i64 + 1), ("M", (n * o) as i64 + 1)], out)
}

/// A random batch: `samples` samples of `outer` inner sequences whose
/// lengths are uniform in `lengths`; the bounds (`J` the longest length)
/// and the inputs of [`nested_rnn`].
pub fn random_batch(
    samples: i64,
    outer: i64,
    lengths: (i64, i64),
    hidden: i64,
    seed: u64,
) -> (Vec<(&'static str, i64)>, Vec<HostArray>) {
    let mut rng = run_common::Rng(seed);
    let span = (lengths.1 - lengths.0 + 1).max(1) as u64;
    let len: Vec<i64> = (0..samples * outer).map(|_| lengths.0 + rng.below(span) as i64).collect();
    let longest = len.iter().copied().max().unwrap_or(1).max(1);
    let (n, o, j, h) = (samples as usize, outer as usize, longest as usize, hidden as usize);
    let a = 1.0 / (hidden as f32).sqrt();
    let inputs = vec![
        rng.floats("x", vec![n, o, j, 1, h], 1.0),
        HostArray { name: "len".into(), shape: vec![n, o], data: Data::I64(len) },
        rng.floats("W", vec![h, h], a),
        rng.floats("U", vec![h, h], a),
        rng.floats("V", vec![h, h], a),
        rng.floats("Z", vec![h, h], a),
        rng.floats("bh", vec![h], 0.1),
        rng.floats("bg", vec![h], 0.1),
    ];
    (vec![("N", samples), ("I", outer), ("J", longest)], inputs)
}

/// Compiles `program` once, runs it `repeat` times after a warm-up and
/// interprets it: the compiled `g`, the median seconds and the largest
/// difference from the interpreter's.
fn time(
    program: &Program,
    bounds: &[(&str, i64)],
    inputs: &[HostArray],
    repeat: i64,
    fast_math: bool,
) -> Result<(Vec<f32>, f64, f32), tempo::Error> {
    let mut runner = program.runner().fast_math(fast_math);
    for &(name, bound) in bounds {
        runner = runner.bound(name, bound);
    }
    for input in inputs {
        runner = runner.input(input.clone());
    }
    let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, bounds, inputs, repeat)?;
    let (Data::F32(c), Data::F32(r)) = (&outputs[0].data, &interpreted[0].data) else {
        return Err(tempo::Error(vec!["error: g is not f32".into()]));
    };
    let error = c.iter().zip(r).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    Ok((c.clone(), median, if c.len() == r.len() { error } else { f32::INFINITY }))
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let hidden = value("--hidden", 64);
    if args.iter().any(|a| a == "--mlir") {
        let by_depth = args.iter().any(|a| a == "--by-depth");
        print!("{}", if by_depth { nested_rnn_by_depth(hidden) } else { nested_rnn(hidden) }.to_mlir()?);
        return Ok(());
    }
    let (samples, outer) = (value("--samples", 16), value("--outer", 4));
    let lengths = (value("--min-len", 2), value("--max-len", 12));
    let repeat = value("--repeat", 5).max(1);
    let (bounds, inputs) = random_batch(samples, outer, lengths, hidden, value("--seed", 1) as u64);
    let fast_math = args.iter().any(|a| a == "--fast-math");
    let (g, stopped, error) = time(&nested_rnn(hidden), &bounds, &inputs, repeat, fast_math)?;
    let (depth_bounds, depth_inputs) = by_depth_inputs(&inputs, hidden);
    let (gd, batched, depth_error) =
        time(&nested_rnn_by_depth(hidden), &depth_bounds, &depth_inputs, repeat, fast_math)?;
    let across = g.iter().zip(&gd[hidden as usize..]).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    if error > 1e-4 || depth_error > 1e-4 || across > 1e-4 {
        eprintln!(
            "error: compiled and interpreted nested RNNs differ ({error:e}, {depth_error:e}; {across:e} between the two)"
        );
        std::process::exit(1);
    }
    let tokens = depth_bounds[0].1 - 1;
    println!("{samples} samples of {outer} inner sequences, {tokens} tokens, hidden {hidden}");
    println!("max |compiled - interpreted| = {:e}, between the two programs {across:e}", error.max(depth_error));
    println!(
        "stopped loops {:.3} ms, batched by depth {:.3} ms per batch (median of {repeat})",
        stopped * 1e3,
        batched * 1e3
    );
    println!("samples/s {:.0}", samples as f64 / batched);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_sequences_stop_at_their_own_lengths() {
        let (bounds, inputs) = random_batch(3, 2, (1, 5), 4, 7);
        let program = nested_rnn(4);
        let mut runner = program.runner();
        for &(name, bound) in &bounds {
            runner = runner.bound(name, bound);
        }
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let (compiled, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
        let (Data::F32(c), Data::F32(r)) = (&compiled[0].data, &interpreted[0].data) else { panic!("f32") };
        assert_eq!(compiled[0].shape, vec![3, 2, 1, 4]);
        assert!(c.iter().zip(r).all(|(a, b)| (a - b).abs() < 1e-5), "{c:?} vs {r:?}");
        // The batched program computes the same states.
        let (bounds, inputs) = by_depth_inputs(&inputs, 4);
        let program = nested_rnn_by_depth(4);
        let mut runner = program.runner();
        for &(name, bound) in &bounds {
            runner = runner.bound(name, bound);
        }
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let batched = runner.run().unwrap();
        let Data::F32(d) = &batched[0].data else { panic!("f32") };
        assert!(c.iter().zip(&d[4..]).all(|(a, b)| (a - b).abs() < 1e-5), "{c:?} vs {d:?}");
    }
}
