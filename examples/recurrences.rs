//! Recurrences through the Rust API: a counter, Fibonacci (three ordered
//! branches), and a running sum of an input, each compiled and run.
//!
//! cargo run --example recurrences -- [T]

use tempo::{Cond, Expr, Program, f32s, i64s};

fn recurrences() -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");

    // x[0] = 0; x[t] = x[t-1] + 1
    let x = p.tensor("counter", &[&t], i64s(&[]));
    p.define(&x, t.eq(0), Expr::splat(0.0, i64s(&[])));
    p.define(&x, Cond::always(), x.at([&t - 1]) + 1.0);
    p.output(&x);

    // y[0] = 0; y[1] = 1; y[t] = y[t-1] + y[t-2]
    let y = p.tensor("fibonacci", &[&t], i64s(&[]));
    p.define(&y, t.eq(0), Expr::splat(0.0, i64s(&[])));
    p.define(&y, t.eq(1), Expr::splat(1.0, i64s(&[])));
    p.otherwise(&y, y.at([&t - 1]) + y.at([&t - 2]));
    p.output(&y);

    // s[0] = v[0]; s[t] = s[t-1] + v[t], for an input v
    let v = p.input("v", &[&t], f32s(&[2]));
    let s = p.tensor("running_sum", &[&t], f32s(&[2]));
    p.define(&s, t.eq(0), v.here());
    p.otherwise(&s, s.at([&t - 1]) + v.here());
    p.output(&s);
    p
}

fn main() -> Result<(), tempo::Error> {
    let steps: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let p = recurrences();
    if std::env::args().any(|a| a == "--mlir") {
        // The temporal-dialect program, for tempo-opt and tempo-run.
        print!("{}", p.to_mlir()?);
        return Ok(());
    }
    for output in p.runner().bound("T", steps).seed(1).run()? {
        println!("{}", output.to_text());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use tempo::Data;

    #[test]
    fn counter_fibonacci_and_running_sum() {
        let p = super::recurrences();
        let out = p.runner().bound("T", 10).seed(1).run().unwrap();
        assert_eq!(out[0].data, Data::I64((0..10).collect()));
        assert_eq!(out[1].data, Data::I64(vec![0, 1, 1, 2, 3, 5, 8, 13, 21, 34]));
        assert_eq!(out, p.runner().bound("T", 10).seed(1).interpret().unwrap());
    }
}
