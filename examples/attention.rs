//! Causal and windowed self-attention through the Rust API:
//! o[t] = softmax(k[lo:t+1] q[t]) v[lo:t+1], with lo = 0 (causal) or
//! lo = max(0, t - w + 1) (a window of w steps). Compiles both, runs them,
//! and checks them against the reference interpreter.
//!
//! cargo run --example attention -- [T] [--mlir [--window]]

use tempo::{Cond, Coordinate, Program, Tensor, f32s};

/// Builds attention over `x` with an optional window.
fn attention(window: Option<i64>) -> (Program, Tensor) {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[8]));
    let wq = p.input("Wq", &[], f32s(&[8, 8]));
    let wk = p.input("Wk", &[], f32s(&[8, 8]));
    let wv = p.input("Wv", &[], f32s(&[8, 8]));
    let k = p.tensor("k", &[&t], f32s(&[8]));
    let v = p.tensor("v", &[&t], f32s(&[8]));
    let o = p.tensor("o", &[&t], f32s(&[8]));
    p.define(&k, Cond::always(), wk.here().matmul(&x.here()));
    p.define(&v, Cond::always(), wv.here().matmul(&x.here()));
    let keys_and_values = |tensor: &Tensor| match window {
        None => tensor.range(0, &t + 1),
        Some(w) => tensor.read_box([(&t, Coordinate::clamped(vec![0.into(), &t - (w - 1)], vec![&t + 1]))]),
    };
    let q = wq.here().matmul(&x.here());
    let scores = keys_and_values(&k).matmul(&q) * (1.0 / 8f64.sqrt());
    p.define(&o, Cond::always(), scores.softmax().matmul(&keys_and_values(&v)));
    p.output(&o);
    (p, o)
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps: i64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(16);
    if args.iter().any(|a| a == "--mlir") {
        // One program: the windowed one with --window.
        let window = args.iter().any(|a| a == "--window").then_some(4);
        print!("{}", attention(window).0.to_mlir()?);
        return Ok(());
    }
    for (name, window) in [("causal", None), ("window of 4", Some(4))] {
        let (program, _) = attention(window);
        let compiled = program.runner().bound("T", steps).seed(7).run()?;
        let interpreted = program.runner().bound("T", steps).seed(7).interpret()?;
        let last = &compiled[0];
        let row = &last.values_text();
        println!("{name}: o has shape {:?}; first values {}", last.shape, &row[..row.len().min(60)]);
        println!("{name}: matches the reference interpreter: {}", compiled == interpreted);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn causal_and_windowed_attention_match_the_interpreter() {
        for window in [None, Some(1), Some(3)] {
            let (program, _) = super::attention(window);
            let compiled = program.runner().bound("T", 9).seed(2).run().unwrap();
            let interpreted = program.runner().bound("T", 9).seed(2).interpret().unwrap();
            assert_eq!(compiled[0].shape, vec![9, 8]);
            for k in 0..compiled[0].data.len() {
                let (a, b) = (compiled[0].data.get_f64(k), interpreted[0].data.get_f64(k));
                assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "window {window:?}, element {k}: {a} vs {b}");
            }
        }
    }
}
