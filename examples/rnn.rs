//! An RNN cell through the Rust API: h[0] = tanh(U x[0]); h[t] = tanh(W h[t-1] + U x[t]).
//! Compiles it, runs it, checks it against the reference interpreter, and
//! prints the temporal-dialect MLIR it builds with `--mlir`.
//!
//! cargo run --example rnn -- [--mlir] [T]

use tempo::{Cond, Program, f32s};

fn rnn() -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let w = p.input("W", &[], f32s(&[4, 4]));
    let u = p.input("U", &[], f32s(&[4, 3]));
    let x = p.input("x", &[&t], f32s(&[3]));
    let h = p.tensor("h", &[&t], f32s(&[4]));
    p.define(&h, t.eq(0), u.here().matmul(&x.here()).tanh());
    p.define(&h, Cond::always(), (w.here().matmul(&h.at([&t - 1])) + u.here().matmul(&x.here())).tanh());
    p.output(&h);
    p
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let steps: i64 = args.iter().find_map(|a| a.parse().ok()).unwrap_or(8);
    let p = rnn();
    if args.iter().any(|a| a == "--mlir") {
        print!("{}", p.to_mlir()?);
        return Ok(());
    }
    let compiled = p.runner().bound("T", steps).seed(42).run()?;
    let interpreted = p.runner().bound("T", steps).seed(42).interpret()?;
    println!("{}", compiled[0].to_text());
    println!("matches the reference interpreter: {}", compiled == interpreted);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn compiled_rnn_matches_the_interpreter() {
        let p = super::rnn();
        let compiled = p.runner().bound("T", 20).seed(1).run().unwrap();
        assert_eq!(compiled, p.runner().bound("T", 20).seed(1).interpret().unwrap());
        assert_eq!(compiled[0].shape, vec![20, 4]);
    }
}
