//! Discounted returns over a batch of episodes, two ways, through the Rust API:
//!   by a range over the future:  G[b, t] = sum(r[b, t:T] * d[0:T-t]),  d[i] = gamma^i
//!   by a backward recurrence:    R[b, T-1] = r[b, T-1];  R[b, t] = r[b, t] + gamma R[b, t+1]
//! Both are compiled and run; they agree up to rounding.
//!
//! cargo run --example discounted_returns -- [B] [T]

use tempo::{Cond, Coordinate, Expr, Program, f64s};

fn returns_program(gamma: f64) -> Program {
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let r = p.input("r", &[&b, &t], f64s(&[]));

    // Discount factors d[i] = gamma^i, as a recurrence over t.
    let d = p.tensor("d", &[&t], f64s(&[]));
    p.define(&d, t.eq(0), Expr::splat(1.0, f64s(&[])));
    p.otherwise(&d, d.at([&t - 1]) * gamma);

    // Returns from a range over the future.
    let g = p.tensor("G", &[&b, &t], f64s(&[]));
    let future = r.read_box([(&t, Coordinate::range(t.var(), t.bound()))]);
    let discounts = d.range(0, t.bound() - t.var());
    p.otherwise(&g, (future * discounts).sum(0));
    p.output(&g);

    // The same by a backward recurrence.
    let returns = p.tensor("R", &[&b, &t], f64s(&[]));
    p.define(&returns, t.eq(t.bound() - 1), r.here());
    p.define(&returns, Cond::always(), r.here() + returns.at_dims([(&t, &t + 1)]) * gamma);
    p.output(&returns);
    p
}

fn main() -> Result<(), tempo::Error> {
    let args: Vec<i64> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let (episodes, steps) = (args.first().copied().unwrap_or(3), args.get(1).copied().unwrap_or(8));
    let p = returns_program(0.9);
    if std::env::args().any(|a| a == "--mlir") {
        // The temporal-dialect program, for tempo-opt and tempo-run.
        print!("{}", p.to_mlir()?);
        return Ok(());
    }
    let out = p.runner().bound("B", episodes).bound("T", steps).seed(3).run()?;
    println!("{}", out[0].to_text());
    let largest_difference =
        (0..out[0].data.len()).map(|k| (out[0].data.get_f64(k) - out[1].data.get_f64(k)).abs()).fold(0.0, f64::max);
    println!("largest difference between the two formulations: {largest_difference:e}");
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_formulations_agree_compiled_and_interpreted() {
        let p = super::returns_program(0.8);
        for (episodes, steps) in [(1, 1), (2, 5), (3, 11)] {
            let compiled = p.runner().bound("B", episodes).bound("T", steps).seed(5).run().unwrap();
            let interpreted = p.runner().bound("B", episodes).bound("T", steps).seed(5).interpret().unwrap();
            for k in 0..compiled[0].data.len() {
                let (g, r) = (compiled[0].data.get_f64(k), compiled[1].data.get_f64(k));
                assert!((g - r).abs() < 1e-12, "G and R differ at {k}: {g} vs {r}");
                assert!((g - interpreted[0].data.get_f64(k)).abs() < 1e-12);
            }
        }
    }
}
