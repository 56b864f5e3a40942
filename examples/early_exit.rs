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
//! `boost[l]` is an input added to the logits, so a run can make the
//! samples confident from a chosen layer on and the cost of a forward pass
//! can be compared at several exit depths with the full stack.
//!
//! ```text
//! cargo run --release --example early_exit -- [--layers L] [--width D]
//!     [--batch B] [--exit-at K] [--repeat R] [--mlir [--full]]
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
    let boost = p.input("boost", &[&l], f32s(&[k]));
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

/// Seeded weights, and boosts that make every sample confident from layer
/// `exit_at` on (class 0 far ahead).
pub fn inputs(c: Config, layers: i64, exit_at: i64, seed: u64) -> Vec<HostArray> {
    let (d, k, b) = (c.width as usize, c.classes as usize, c.batch as usize);
    let random = |name: &str, shape: Vec<usize>, scale: f64, offset: u64| {
        let mut a = HostArray::random(name, shape, ElementType::F32, seed + offset);
        if let Data::F32(v) = &mut a.data {
            v.iter_mut().for_each(|x| *x = ((*x as f64 - 0.5) * 2.0 * scale) as f32);
        }
        a
    };
    let scale = 0.5 / (d as f64).sqrt();
    let mut boost = vec![0f32; layers as usize * k];
    for l in exit_at.max(0) as usize..layers as usize {
        boost[l * k] = 100.0;
    }
    vec![
        random("x", vec![b, d], 1.0, 1),
        random("W", vec![layers as usize, d, d], scale, 2),
        random("b", vec![layers as usize, d], 0.1, 3),
        // A weak classifier: confident only where `boost` says.
        random("Wc", vec![d, k], 0.01 * scale, 4),
        HostArray { name: "boost".into(), shape: vec![layers as usize, k], data: Data::F32(boost) },
    ]
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str, default: i64| run_common::flag(&args, name, default);
    let config = Config { width: value("--width", 256), classes: 16, batch: value("--batch", 8) };
    let (layers, exit_at, repeat) = (value("--layers", 48), value("--exit-at", 6), value("--repeat", 5).max(1));
    if args.iter().any(|a| a == "--mlir") {
        print!("{}", early_exit(config, !args.iter().any(|a| a == "--full")).to_mlir()?);
        return Ok(());
    }
    let inputs = inputs(config, layers, exit_at, 3);
    let bounds = [("L", layers)];
    let time = |program: &Program| -> Result<(Vec<HostArray>, f64), tempo::Error> {
        let mut runner = program.runner().bound("L", layers);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let (outputs, median, interpreted) = run_common::timed_and_interpreted(&runner, &bounds, &inputs, repeat)?;
        if interpreted.iter().zip(&outputs).any(|(i, c)| i.data != c.data) {
            eprintln!("error: the compiled stack differs from the interpreter's");
            std::process::exit(1);
        }
        Ok((outputs, median))
    };
    let (exiting, early) = time(&early_exit(config, true))?;
    let (full, all) = time(&early_exit(config, false))?;
    println!("predictions {:?} (the full stack: {:?})", exiting[0].data, full[0].data);
    println!("{:?} of {layers} layers computed", exiting[1].data);
    println!("early exit {:.3} ms, full stack {:.3} ms (median of {repeat})", early * 1e3, all * 1e3);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_stops_once_every_sample_has_exited() {
        let config = Config { width: 8, classes: 4, batch: 3 };
        for (layers, exit_at, expected) in [(10, 3, 4), (10, 0, 1), (5, 9, 5)] {
            let inputs = inputs(config, layers, exit_at, 2);
            let program = early_exit(config, true);
            let mut runner = program.runner().bound("L", layers);
            for input in &inputs {
                runner = runner.input(input.clone());
            }
            let (compiled, interpreted) = (runner.run().unwrap(), runner.interpret().unwrap());
            assert_eq!(compiled[0].data, interpreted[0].data);
            assert_eq!(compiled[1].data, Data::I64(vec![expected]), "exit at {exit_at} of {layers}");
        }
    }
}
