//! An LSTM character language model trained with Adam on Shakespeare's
//! sonnets (`examples/data/sonnets.txt`), the whole training run one
//! program.
//!
//! The parameters are recurrent tensors over an iteration dimension `i`
//! (`tempo::optim::adam`: `w[i] = w[i-1] - lr * adam(g[i-1])`); inside each
//! iteration the LSTM runs forward over the characters `t` of a batch of
//! windows of the text and back-propagation through time runs backward
//! (`Program::grad`). The scheduler makes it a loop over `i` around a
//! forward loop over `t` and a backward one; the activations of one
//! iteration are kept (`T` steps), reused by the next.
//!
//! ```text
//! cargo run --release --example train_lstm -- --iterations 200
//!   [--hidden 32] [--seq-len 32] [--batch 8] [--lr 0.02] [--seed 1]
//!   [--threads N] [--data-parallel] [--params FILE] [--interpret] [--mlir]
//!   [--data FILE]
//! mpirun -np 2 --allow-run-as-root --oversubscribe \
//!   target/release/examples/train_lstm --data-parallel
//! ```
//!
//! `--data-parallel` splits the batch over the processes of an MPI run
//! (`Program::data_parallel`): each process trains on its `batch / P`
//! windows of every iteration, the same ones a single process would give
//! those places of its batch, and the gradients are the processes' mean,
//! all-reduced in one buffer per iteration; the parameters start equal
//! (the same seed) and stay equal, and the loss printed (by rank 0) is the
//! whole batch's. Without `mpirun` it is one process with the whole batch.
//! `--params FILE` writes the parameters of the last iteration (before its
//! update), one line per parameter, to `FILE` (with `.rank{R}` appended
//! when there are several processes).
//!
//! Prints one line per iteration, `iteration N loss X`: the mean
//! cross-entropy (nats per character) of that iteration's batch, before
//! its update. `--interpret` evaluates the program with the reference
//! interpreter instead of compiling it (slow); `--mlir` prints the
//! program's MLIR (for `tempo-opt` and `tempo-run`) instead of running it.
//!
//! The model, per window `b` of the batch and step `t` (tokens `x[i, t]`,
//! the next characters `y[i, t]`):
//! `z = wx[x] + h[t-1] wh + bias` (an embedding gather of the four gates),
//! `c[t] = sigmoid(z_f) c[t-1] + sigmoid(z_i) tanh(z_g)`,
//! `h[t] = sigmoid(z_o) tanh(c[t])`, `logits = h[t] wy + by`,
//! `loss[i, t] = mean_b(-log_softmax(logits)[y])`.

use tempo::optim::{self, Adam};
use tempo::{Collective, Coordinate, Data, ElementType, Expr, HostArray, Predicate, Program, Shard, f64s, i64s};

/// The bundled text.
const SONNETS: &str = include_str!("data/sonnets.txt");

#[derive(Clone, Debug)]
struct Config {
    iterations: usize,
    hidden: usize,
    seq_len: usize,
    batch: usize,
    lr: f64,
    seed: u64,
    data_parallel: bool,
    /// Threads of the compiled code's parallel loops (0: one per core).
    threads: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            iterations: 200,
            hidden: 32,
            seq_len: 32,
            batch: 8,
            lr: 0.02,
            seed: 1,
            data_parallel: false,
            threads: 0,
        }
    }
}

/// The characters of a text and its tokens (indices into them).
struct Corpus {
    vocabulary: Vec<char>,
    tokens: Vec<i64>,
}

impl Corpus {
    fn new(text: &str) -> Corpus {
        let mut vocabulary: Vec<char> = text.chars().collect();
        vocabulary.sort_unstable();
        vocabulary.dedup();
        let tokens = text.chars().map(|c| vocabulary.binary_search(&c).expect("in the vocabulary") as i64).collect();
        Corpus { vocabulary, tokens }
    }

    /// The inputs `x` and targets `y` (the next characters) of every
    /// iteration, each `[iterations, seq_len, batch]`: window `b` of
    /// iteration `i` starts where the previous window ended, wrapping
    /// around the text (consecutive windows of one batch are `seq_len`
    /// apart, and each iteration takes the next `batch` windows). Only the
    /// windows of `shard` (this process's part of the batch), each where it
    /// lies in the whole batch.
    fn batches(&self, config: &Config, shard: &Shard) -> (HostArray, HostArray) {
        let (iterations, steps, batch) = (config.iterations, config.seq_len, shard.len);
        let starts = self.tokens.len() - steps - 1;
        let mut x = vec![0i64; iterations * steps * batch];
        let mut y = x.clone();
        for i in 0..iterations {
            for b in 0..batch {
                let start = ((i * config.batch + shard.start + b) * steps) % starts;
                for t in 0..steps {
                    x[(i * steps + t) * batch + b] = self.tokens[start + t];
                    y[(i * steps + t) * batch + b] = self.tokens[start + t + 1];
                }
            }
        }
        let shape = vec![iterations, steps, batch];
        (
            HostArray { name: "x".into(), shape: shape.clone(), data: Data::I64(x) },
            HostArray { name: "y".into(), shape, data: Data::I64(y) },
        )
    }
}

/// The training program and this process's part of the batch: outputs
/// `loss[i, t]`, the mean cross-entropy of step `t` over the batch in
/// iteration `i` (over the whole run's batch: all-reduced when data
/// parallel), then with `params` the parameters over `i`.
fn program(config: &Config, vocabulary: usize, params_out: bool) -> Result<(Program, Shard), tempo::Error> {
    let mut p = Program::new();
    let shard = if config.data_parallel {
        p.data_parallel(config.batch)?
    } else {
        Shard { rank: 0, processes: 1, start: 0, len: config.batch }
    };
    let (h_size, v, b) = (config.hidden as i64, vocabulary as i64, shard.len as i64);
    let i = p.dim("i", "I");
    let t = p.dim("t", "T");
    let x = p.input("x", &[&i, &t], i64s(&[b]));
    let y = p.input("y", &[&i, &t], i64s(&[b]));
    // Parameters, initialized uniformly in (-1/sqrt(H), 1/sqrt(H)) as
    // PyTorch does (the inputs `*_init` are uniform in [-1, 1)).
    let shapes = [
        ("wx", vec![v, 4 * h_size]),
        ("wh", vec![h_size, 4 * h_size]),
        ("bias", vec![4 * h_size]),
        ("wy", vec![h_size, v]),
        ("by", vec![v]),
    ];
    let params: Vec<_> = shapes
        .iter()
        .map(|(name, shape)| (p.input(&format!("{name}_init"), &[], f64s(shape)), p.tensor(name, &[&i], f64s(shape))))
        .collect();
    let [wx, wh, bias, wy, by] = [0, 1, 2, 3, 4].map(|k| params[k].1.clone());
    let z = p.tensor("z", &[&i, &t], f64s(&[b, 4 * h_size]));
    let c = p.tensor("c", &[&i, &t], f64s(&[b, h_size]));
    let h = p.tensor("h", &[&i, &t], f64s(&[b, h_size]));
    let gate = |k: i64| z.here().slice(&[0, k * h_size], &[b, h_size]);
    // Gates i, f, g, o, as PyTorch's LSTM stacks them.
    let input_gate = gate(0).sigmoid() * gate(2).tanh();
    let embedded = wx.here().gather(&x.here()) + bias.here();
    p.define(&z, t.eq(0), embedded.clone());
    p.otherwise(&z, embedded + h.at_dims([(&t, &t - 1)]).matmul(&wh.here()));
    p.define(&c, t.eq(0), input_gate.clone());
    p.otherwise(&c, gate(1).sigmoid() * c.at_dims([(&t, &t - 1)]) + input_gate);
    p.otherwise(&h, gate(3).sigmoid() * c.here().tanh());
    // Cross-entropy: -log_softmax(logits)[y], the maximum taken out first
    // (outside the gradient: it cancels).
    let logits = h.here().matmul(&wy.here()) + by.here();
    let shifted = &logits - logits.max_keepdims(1).stop_gradient();
    let log_probs = &shifted - shifted.exp().sum_keepdims(1).log();
    let target =
        Expr::arange(v, ElementType::I64).compare(Predicate::Eq, &y.here().reshape(&[b, 1])).cast(ElementType::F64);
    let loss = p.tensor("loss", &[&i, &t], f64s(&[]));
    p.otherwise(&loss, -(target * log_probs).sum(1).mean(0));
    // The whole batch's loss of each iteration, for the report: one
    // all-reduce of the mean over the iteration's steps.
    let reported = if config.data_parallel {
        let total = p.tensor("loss_all", &[&i], f64s(&[]));
        let steps = loss.read_box([(&t, Coordinate::range(0, t.bound()))]).mean(0);
        p.otherwise(&total, steps.all_reduce(Collective::Mean));
        total
    } else {
        loss.clone()
    };
    let adam = Adam::with_lr(config.lr);
    let scale = 1.0 / (h_size as f64).sqrt();
    for (init, param) in &params {
        let g = p.grad(&format!("g_{}", param.name()), &loss, param);
        optim::adam(&mut p, param, &g, &i, init.here() * scale, &adam);
    }
    p.output(&reported);
    if params_out {
        for (_, param) in &params {
            p.output(param);
        }
    }
    Ok((p, shard))
}

/// A training run's losses (one per iteration) and, when asked for, the
/// parameters of the last iteration (name, values).
type Trained = (Vec<f64>, Vec<(String, Vec<f64>)>);

/// Trains on `text`: the mean loss of each iteration, compiled or
/// interpreted.
fn train(config: &Config, text: &str, interpret: bool, params_out: bool) -> Result<Trained, tempo::Error> {
    let corpus = Corpus::new(text);
    if corpus.tokens.len() < config.seq_len + 2 {
        return Err(tempo::Error(vec![format!(
            "the text has {} characters; --seq-len {} needs at least {}",
            corpus.tokens.len(),
            config.seq_len,
            config.seq_len + 2
        )]));
    }
    let (p, shard) = program(config, corpus.vocabulary.len(), params_out)?;
    let (x, y) = corpus.batches(config, &shard);
    let runner = p
        .runner()
        .bound("I", config.iterations as i64)
        .bound("T", config.seq_len as i64)
        .seed(config.seed)
        .threads(config.threads)
        .input(x.clone())
        .input(y.clone());
    let out = if interpret {
        runner.interpret()?
    } else {
        // Compiled, then run once every process has compiled (a data-
        // parallel run's timing leaves out the others' compilation).
        let start = std::time::Instant::now();
        let compiled = runner.compile()?;
        let compile = start.elapsed().as_secs_f64();
        tempo::barrier()?;
        let bounds = [("I", config.iterations as i64), ("T", config.seq_len as i64)];
        let (out, report) = compiled.run_with_report(&bounds, &[x, y], Some(config.seed))?;
        eprintln!("train_lstm: compile {compile:.2} s, execute {:.4} s", report.execute.as_secs_f64());
        out
    };
    let loss = &out[0];
    // Per step, or (data parallel) per iteration.
    let steps = loss.data.len() / config.iterations;
    let losses = (0..config.iterations)
        .map(|k| (0..steps).map(|s| loss.data.get_f64(k * steps + s)).sum::<f64>() / steps as f64)
        .collect();
    // Each parameter's values at the last iteration.
    let params = out[1..]
        .iter()
        .map(|a| {
            let each = a.data.len() / config.iterations;
            let last = (config.iterations - 1) * each;
            (a.name.clone(), (last..last + each).map(|k| a.data.get_f64(k)).collect())
        })
        .collect();
    Ok((losses, params))
}

fn usage() -> ! {
    eprintln!(
        "usage: train_lstm [--iterations N] [--hidden H] [--seq-len T] [--batch B] [--lr LR] [--seed S] [--threads N] [--data-parallel] [--params FILE] [--interpret] [--mlir] [--data FILE]"
    );
    std::process::exit(2)
}

fn main() {
    let mut config = Config::default();
    let (mut interpret, mut mlir, mut data, mut params_file) = (false, false, None, None::<String>);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| usage());
        fn parse<T: std::str::FromStr>(flag: &str, text: String) -> T {
            text.parse().unwrap_or_else(|_| {
                eprintln!("train_lstm: {flag} takes a number, got '{text}'");
                std::process::exit(2)
            })
        }
        match arg.as_str() {
            "--iterations" => config.iterations = parse(&arg, value()),
            "--hidden" => config.hidden = parse(&arg, value()),
            "--seq-len" => config.seq_len = parse(&arg, value()),
            "--batch" => config.batch = parse(&arg, value()),
            "--lr" => config.lr = parse(&arg, value()),
            "--seed" => config.seed = parse(&arg, value()),
            "--data" => data = Some(value()),
            "--params" => params_file = Some(value()),
            "--data-parallel" => config.data_parallel = true,
            "--threads" => config.threads = parse(&arg, value()),
            "--interpret" => interpret = true,
            "--mlir" => mlir = true,
            "--help" | "-h" => usage(),
            _ => {
                eprintln!("train_lstm: unknown argument '{arg}'");
                usage()
            }
        }
    }
    if config.iterations == 0 || config.hidden == 0 || config.seq_len == 0 || config.batch == 0 {
        eprintln!("train_lstm: --iterations, --hidden, --seq-len and --batch must be positive");
        std::process::exit(2)
    }
    let text = match &data {
        Some(path) => std::fs::read_to_string(path).unwrap_or_else(|e| {
            eprintln!("train_lstm: cannot read '{path}': {e}");
            std::process::exit(1)
        }),
        None => SONNETS.to_string(),
    };
    let fail = |e: tempo::Error| -> ! {
        eprintln!("{e}");
        // Under mpirun, the others would wait for this process.
        tempo::abort_processes(1);
        std::process::exit(1)
    };
    if mlir {
        let vocabulary = Corpus::new(&text).vocabulary.len();
        match program(&config, vocabulary, false).and_then(|(p, _)| p.to_mlir()) {
            Ok(text) => print!("{text}"),
            Err(e) => fail(e),
        }
        return;
    }
    // The processes of a data-parallel run (MPI is not touched otherwise).
    let (rank, processes) = if config.data_parallel { tempo::processes().unwrap_or_else(|e| fail(e)) } else { (0, 1) };
    match train(&config, &text, interpret, params_file.is_some()) {
        Ok((losses, params)) => {
            if rank == 0 {
                for (k, loss) in losses.iter().enumerate() {
                    println!("iteration {k} loss {loss:.6}");
                }
            }
            if let Some(file) = &params_file {
                let file = if processes > 1 { format!("{file}.rank{rank}") } else { file.clone() };
                let text: String = params
                    .iter()
                    .map(|(name, values)| {
                        let values: Vec<String> = values.iter().map(|v| format!("{v:e}")).collect();
                        format!("{name} {}\n", values.join(" "))
                    })
                    .collect();
                if let Err(e) = std::fs::write(&file, text) {
                    fail(tempo::Error(vec![format!("train_lstm: cannot write '{file}': {e}")]));
                }
            }
        }
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small model: the loss falls within 40 iterations, and the
    /// compiled program's losses are the interpreter's.
    #[test]
    fn the_loss_falls_and_compiled_agrees_with_the_interpreter() {
        let config = Config {
            iterations: 40,
            hidden: 16,
            seq_len: 12,
            batch: 4,
            lr: 0.05,
            seed: 1,
            data_parallel: false,
            threads: 0,
        };
        let losses = train(&config, SONNETS, false, false).unwrap().0;
        let (first, last) = (losses[0], *losses.last().unwrap());
        let vocabulary = Corpus::new(SONNETS).vocabulary.len() as f64;
        // An untrained model is close to uniform: ln(V) nats.
        assert!((first - vocabulary.ln()).abs() < 0.2, "first loss {first}, ln(V) = {}", vocabulary.ln());
        let tail: f64 = losses[30..].iter().sum::<f64>() / 10.0;
        assert!(tail < 0.85 * first, "loss {first} -> {last} (mean of the last 10: {tail})");
        let short = Config { iterations: 3, hidden: 8, seq_len: 6, batch: 2, ..config };
        let compiled = train(&short, SONNETS, false, true).unwrap();
        let interpreted = train(&short, SONNETS, true, true).unwrap();
        assert_eq!(compiled, interpreted);
    }

    /// Data parallel in one process (started without mpirun): the
    /// gradients' all-reduce is the identity, so the run is the plain one,
    /// parameters and losses alike.
    #[test]
    fn data_parallel_in_one_process_is_the_plain_run() {
        let config = Config {
            iterations: 3,
            hidden: 8,
            seq_len: 6,
            batch: 2,
            lr: 0.05,
            seed: 1,
            data_parallel: false,
            threads: 0,
        };
        let plain = train(&config, SONNETS, false, true).unwrap();
        let parallel = train(&Config { data_parallel: true, ..config }, SONNETS, false, true).unwrap();
        assert_eq!(plain.1, parallel.1);
        assert_eq!(plain.1.len(), 5);
        for (a, b) in plain.0.iter().zip(&parallel.0) {
            assert!((a - b).abs() <= 1e-12 * a.abs(), "loss {a} against {b}");
        }
    }
}
