//! Early exit over a stack of layers (as in Berxit or DeeBERT): each layer
//! `l` of a deep MLP has a small classifier; a sample exits at the
//! first layer whose classifier is confident enough, and the layer loop
//! stops (`temporal.stop` over `l`) once every sample of the batch has
//! exited, so the layers after that are not computed. The batch is in the
//! point (`[B, D]` rows, one product of `B` rows per layer), samples that
//! exited keep their prediction (masked).
//!
//! ```text
//! h[l]      = tanh(h[l-1] W[l] + b[l])                 (h[-1] = x)
//! logits[l] = h[l] Wc + boost[l]
//! conf[l]   = max(softmax(logits[l]))                  per sample
//! out[l]    = exited[l-1] ? out[l-1] : argmax(logits[l])
//! exited[l] = exited[l-1] | conf[l] > 0.9
//! done[l]   = all samples exited                       (stop: l ends there)
//! pred      = out[L - 1]                               (read after the stop)
//! ```
//!
//! `boost[l]` is an input added to the logits (a row per sample), so a run
//! can make each sample confident from a chosen layer on and the cost of
//! a forward pass can be compared at several exit depths with the full
//! stack.
//!
//! Per sample ([`early_exit_per_sample`]): the samples are the points of a
//! dimension `s` and the layer loop stops per sample (a ragged stop over
//! `done[s, l]`), so each sample runs exactly its own layers, with no
//! masking; its prediction is read at its own last layer (`L - 1` is, per
//! sample, where it exited):
//!
//! ```text
//! h[s, l]    = tanh(h[s, l-1] W[l] + b[l])             (h[s, -1] = x[s])
//! done[s, l] = max(softmax(h[s, l] Wc + boost[s, l])) > 0.9
//! pred[s]    = argmax(h[s, L-1] Wc + boost[s, L-1]),  depth[s] = L
//! ```
//!
//! ```text
//! cargo run --release --example early_exit -- [--layers L] [--width D]
//!     [--batch B] [--exit-at K] [--spread P] [--repeat R]
//!     [--mlir [--full | --per-sample]]
//! ```
//!
//! Sample `s` is confident from layer `K + s P` on (capped at the last).
//! ```text
//! ```

use tempo::{Data, ElementType, Expr, HostArray, Predicate, Program, f32s, i64s};

mod run_common;

/// The model's shape.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub width: i64,
    pub classes: i64,
    pub batch: i64,
}

/// The stack; with `stop`, the layers end once every sample has exited
/// (otherwise all `L` layers run). The outputs are `pred` (each sample's
/// prediction) and `depth` (the layers computed).
pub fn early_exit(c: Config, stop: bool) -> Program {
    let (d, k, b) = (c.width, c.classes, c.batch);
    let mut p = Program::new();
    let l = p.dim("l", "L");
    let x = p.input("x", &[], f32s(&[b, d]));
    let w = p.input("W", &[&l], f32s(&[d, d]));
    let bias = p.input("b", &[&l], f32s(&[d]));
    let wc = p.input("Wc", &[], f32s(&[d, k]));
    let boost = p.input("boost", &[&l], f32s(&[b, k]));
    let h = p.tensor("h", &[&l], f32s(&[b, d]));
    let out = p.tensor("out", &[&l], i64s(&[b]));
    let flags = tempo::PointType { shape: vec![b], element: ElementType::I1 };
    let exited = p.tensor("exited", &[&l], flags);
    let pred = p.tensor("pred", &[], i64s(&[b]));
    let depth = p.tensor("depth", &[], i64s(&[]));
    let layer = |input: Expr| (input.matmul(&w.here()) + bias.here()).tanh();
    p.define(&h, l.eq(0), layer(x.here()));
    p.otherwise(&h, layer(h.at([&l - 1])));
    let logits = h.here().matmul(&wc.here()) + boost.here();
    let confident = logits.softmax_along(1).max_along(1).compare(Predicate::Gt, &Expr::splat(0.9, f32s(&[])));
    let choice = logits.argmax(1);
    p.define(&out, l.eq(0), choice.clone());
    p.otherwise(&out, exited.at([&l - 1]).select(&out.at([&l - 1]), &choice));
    p.define(&exited, l.eq(0), confident.clone());
    p.otherwise(&exited, exited.at([&l - 1]).or(&confident));
    if stop {
        let done = p.tensor("done", &[&l], tempo::PointType { shape: vec![], element: ElementType::I1 });
        let count = exited.here().cast(ElementType::I64).sum(0);
        p.define(&done, l.ge(0), count.compare(Predicate::Eq, &Expr::splat_int(b, i64s(&[]))));
        p.stop(&done, &l);
    }
    p.define(&pred, tempo::Cond::always(), out.at([l.bound() - 1]));
    p.define(&depth, tempo::Cond::always(), l.bound_value(ElementType::I64));
    p.output(&pred);
    p.output(&depth);
    p
}

/// The stack stopped per sample (see the module's doc): outputs `pred`
/// and `depth` (the layers each sample ran), `[B]` each.
pub fn early_exit_per_sample(c: Config) -> Program {
    let (d, k) = (c.width, c.classes);
    let mut p = Program::new();
    let s = p.dim("s", "S");
    let l = p.dim("l", "L");
    let x = p.input("x", &[&s], f32s(&[1, d]));
    let w = p.input("W", &[&l], f32s(&[d, d]));
    let bias = p.input("b", &[&l], f32s(&[d]));
    let wc = p.input("Wc", &[], f32s(&[d, k]));
    let boost = p.input("boost", &[&s, &l], f32s(&[1, k]));
    let h = p.tensor("h", &[&s, &l], f32s(&[1, d]));
    let done = p.tensor("done", &[&s, &l], tempo::PointType { shape: vec![], element: ElementType::I1 });
    let pred = p.tensor("pred", &[&s], i64s(&[]));
    let depth = p.tensor("depth", &[&s], i64s(&[]));
    let layer = |input: Expr| (input.matmul(&w.here()) + bias.here()).tanh();
    p.define(&h, l.eq(0), layer(x.here()));
    p.otherwise(&h, layer(h.at([tempo::Index::from(&s), &l - 1])));
    let logits = h.here().matmul(&wc.here()) + boost.here();
    let confident = logits.softmax_along(1).max_along(1).reshape(&[]);
    p.define(&done, l.ge(0), confident.compare(Predicate::Gt, &Expr::splat(0.9, f32s(&[]))));
    p.stop(&done, &l);
    let last = l.bound() - 1;
    let at_exit = [tempo::Index::from(&s), last];
    let exit_logits = h.at(at_exit.clone()).matmul(&wc.here()) + boost.at(at_exit);
    p.define(&pred, s.ge(0), exit_logits.argmax(1).reshape(&[]));
    p.define(&depth, s.ge(0), l.bound_value(ElementType::I64));
    p.output(&pred);
    p.output(&depth);
    p
}

/// The inputs of [`early_exit_per_sample`] for those of [`inputs`]: `x`
/// as one `[1, D]` point per sample, `boost` per sample and layer.
pub fn per_sample_inputs(inputs: &[HostArray]) -> Vec<HostArray> {
    let mut out = inputs.to_vec();
    let (b, d) = (out[0].shape[0], out[0].shape[1]);
    out[0].shape = vec![b, 1, d];
    let (layers, k) = (out[4].shape[0], out[4].shape[2]);
    if let Data::F32(boost) = &out[4].data {
        let mut each = vec![0f32; boost.len()];
        for l in 0..layers {
            for s in 0..b {
                let (from, to) = ((l * b + s) * k, (s * layers + l) * k);
                each[to..to + k].copy_from_slice(&boost[from..from + k]);
            }
        }
        out[4] = HostArray { name: "boost".into(), shape: vec![b, layers, 1, k], data: Data::F32(each) };
    }
    out
}

/// Seeded weights, and boosts that make sample `s` confident from layer
/// `exit_at + s spread` on (class 0 far ahead).
pub fn inputs(c: Config, layers: i64, exit_at: i64, spread: i64, seed: u64) -> Vec<HostArray> {
    let (d, k, b) = (c.width as usize, c.classes as usize, c.batch as usize);
    let random = |name: &str, shape: Vec<usize>, scale: f64, offset: u64| {
        let mut a = HostArray::random(name, shape, ElementType::F32, seed + offset);
        if let Data::F32(v) = &mut a.data {
            v.iter_mut().for_each(|x| *x = ((*x as f64 - 0.5) * 2.0 * scale) as f32);
        }
        a
    };
    let scale = 0.5 / (d as f64).sqrt();
    let mut boost = vec![0f32; layers as usize * b * k];
    for s in 0..b {
        let from = (exit_at + s as i64 * spread).clamp(0, layers) as usize;
        for l in from..layers as usize {
            boost[(l * b + s) * k] = 100.0;
        }
    }
    vec![
        random("x", vec![b, d], 1.0, 1),
        random("W", vec![layers as usize, d, d], scale, 2),
        random("b", vec![layers as usize, d], 0.1, 3),
        // A weak classifier: confident only where `boost` says.
        random("Wc", vec![d, k], 0.01 * scale, 4),
        HostArray { name: "boost".into(), shape: vec![layers as usize, b, k], data: Data::F32(boost) },
    ]
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let config = Config { width: value("--width", 256), classes: 16, batch: value("--batch", 8) };
    let (layers, exit_at, repeat) = (value("--layers", 48), value("--exit-at", 6), value("--repeat", 5).max(1));
    if args.iter().any(|a| a == "--mlir") {
        let program = if args.iter().any(|a| a == "--per-sample") {
            early_exit_per_sample(config)
        } else {
            early_exit(config, !args.iter().any(|a| a == "--full"))
        };
        print!("{}", program.to_mlir()?);
        return Ok(());
    }
    let inputs = inputs(config, layers, exit_at, value("--spread", 0), 3);
    let bounds = [("L", layers)];
    let time_with = |program: &Program, bounds: &[(&str, i64)], inputs: &[HostArray]| {
        let mut runner = program.runner();
        for &(name, bound) in bounds {
            runner = runner.bound(name, bound);
        }
        for input in inputs {
            runner = runner.input(input.clone());
        }
        let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, bounds, inputs, repeat)?;
        if interpreted.iter().zip(&outputs).any(|(i, c)| i.data != c.data) {
            eprintln!("error: the compiled stack differs from the interpreter's");
            std::process::exit(1);
        }
        Ok::<_, tempo::Error>((outputs, median))
    };
    let time = |program: &Program| time_with(program, &bounds, &inputs);
    let (exiting, early) = time(&early_exit(config, true))?;
    let (full, all) = time(&early_exit(config, false))?;
    let per_sample_bounds = [("S", config.batch), ("L", layers)];
    let (each, per_sample) =
        time_with(&early_exit_per_sample(config), &per_sample_bounds, &per_sample_inputs(&inputs))?;
    if each[0].data != exiting[0].data {
        eprintln!("error: the per-sample stack predicts {:?}, the batch {:?}", each[0].data, exiting[0].data);
        std::process::exit(1);
    }
    println!("predictions {:?} (the full stack: {:?})", exiting[0].data, full[0].data);
    println!("{:?} of {layers} layers computed", exiting[1].data);
    println!("per sample: {:?} layers computed", each[1].data);
    println!(
        "early exit {:.3} ms, per sample {:.3} ms, full stack {:.3} ms (median of {repeat})",
        early * 1e3,
        per_sample * 1e3,
        all * 1e3
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_stops_once_every_sample_has_exited() {
        let config = Config { width: 8, classes: 4, batch: 3 };
        for (layers, exit_at, expected) in [(10, 3, 4), (10, 0, 1), (5, 9, 5)] {
            let inputs = inputs(config, layers, exit_at, 0, 2);
            let program = early_exit(config, true);
            let mut runner = program.runner().bound("L", layers);
            for input in &inputs {
                runner = runner.input(input.clone());
            }
            let (compiled, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
            assert_eq!(compiled[0].data, interpreted[0].data);
            assert_eq!(compiled[1].data, Data::I64(vec![expected]), "exit at {exit_at} of {layers}");
            // Per sample: the same predictions, each sample at its layer.
            let program = early_exit_per_sample(config);
            let mut runner = program.runner().bound("S", 3).bound("L", layers);
            for input in per_sample_inputs(&inputs) {
                runner = runner.input(input);
            }
            let (each, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
            assert_eq!(each[0].data, compiled[0].data);
            assert_eq!(each[1].data, interpreted[1].data);
            assert_eq!(each[1].data, Data::I64(vec![expected; 3]));
        }
        // Samples exiting at layers 2, 4 and 6 of 10: the batch stops with
        // the last, each sample on its own.
        let inputs = inputs(config, 10, 1, 2, 2);
        let stack = early_exit(config, true);
        let mut runner = stack.runner().bound("L", 10);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let batch = runner.run().unwrap();
        assert_eq!(batch[1].data, Data::I64(vec![6]));
        let program = early_exit_per_sample(config);
        let mut runner = program.runner().bound("S", 3).bound("L", 10);
        for input in per_sample_inputs(&inputs) {
            runner = runner.input(input);
        }
        let (each, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
        assert_eq!(each[0].data, batch[0].data);
        assert_eq!(each[1].data, Data::I64(vec![2, 4, 6]));
        assert_eq!(interpreted[1].data, each[1].data);
    }
}
