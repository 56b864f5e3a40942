//! An agent acting in an environment written in Rust: the environment's
//! `step` is an external callback that the compiled program calls once per
//! time step, like a simulator in reinforcement learning.
//!
//! state[0] = (1, 0); action[t] = -sign(position) as a scalar;
//! state[t] = step(state[t-1], action[t-1]); reward[t] = -|position|;
//! returns[t] = sum of discounted future rewards (over t:T).
//!
//! cargo run --example environment -- [T]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tempo::{Data, ElementType, Expr, HostArray, Program, f32s};

/// A damped spring: velocity += action * 0.1 - position * 0.05; position += velocity.
fn step(args: &[HostArray]) -> Result<HostArray, String> {
    let (Data::F32(state), Data::F32(action)) = (&args[0].data, &args[1].data) else {
        return Err("step takes f32 arrays".into());
    };
    let velocity = state[1] * 0.9 + action[0] * 0.1 - state[0] * 0.05;
    let position = state[0] + velocity;
    Ok(HostArray { name: "state".into(), shape: vec![2], data: Data::F32(vec![position, velocity]) })
}

/// The program and a counter of calls to `step`.
fn environment() -> (Program, Arc<AtomicUsize>) {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    p.external("step", move |args| {
        counter.fetch_add(1, Ordering::Relaxed);
        step(args)
    });

    let state = p.tensor("state", &[&t], f32s(&[2]));
    let action = p.tensor("action", &[&t], f32s(&[]));
    let position = state.here().slice(&[0], &[1]).reshape(&[]);
    let negative = position.less(&Expr::splat(0.0, f32s(&[])));
    p.otherwise(&action, negative.select(&Expr::splat(1.0, f32s(&[])), &Expr::splat(-1.0, f32s(&[]))));
    p.define(&state, t.eq(0), Expr::constant(vec![1.0, 0.0], f32s(&[2])));
    p.otherwise(&state, Expr::call("step", &[&state.at([&t - 1]), &action.at([&t - 1])], f32s(&[2])));
    let reward = p.tensor("reward", &[&t], f32s(&[]));
    p.otherwise(&reward, -(state.here().slice(&[0], &[1]).reshape(&[]).abs()));
    let returns = p.discounted_sum("returns", &reward, &t, 0.9);
    p.output(&state);
    p.output(&returns);
    let _ = ElementType::F32;
    (p, calls)
}

fn main() -> Result<(), tempo::Error> {
    let steps: i64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(10);
    let (p, calls) = environment();
    if std::env::args().any(|a| a == "--mlir") {
        // The temporal-dialect program, for tempo-opt and tempo-run.
        print!("{}", p.to_mlir()?);
        return Ok(());
    }
    for output in p.runner().bound("T", steps).run()? {
        println!("{}", output.to_text());
    }
    println!("step was called {} times", calls.load(Ordering::Relaxed));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_and_interpreted_agree_and_step_runs_once_per_point() {
        let (p, calls) = environment();
        let compiled = p.runner().bound("T", 12).run().unwrap();
        assert_eq!(calls.swap(0, Ordering::Relaxed), 11);
        let interpreted = p.runner().bound("T", 12).interpret().unwrap();
        assert_eq!(calls.load(Ordering::Relaxed), 11);
        // An independent simulation of the first states.
        let mut state = HostArray { name: "s".into(), shape: vec![2], data: Data::F32(vec![1.0, 0.0]) };
        let Data::F32(states) = &compiled[0].data else { panic!("f32 states") };
        for t in 0..12 {
            let Data::F32(s) = &state.data else { unreachable!() };
            assert!((states[2 * t] - s[0]).abs() < 1e-6 && (states[2 * t + 1] - s[1]).abs() < 1e-6, "t = {t}");
            let action = if s[0] < 0.0 { 1.0 } else { -1.0 };
            let a = HostArray { name: "a".into(), shape: vec![], data: Data::F32(vec![action]) };
            state = step(&[state.clone(), a]).unwrap();
        }
        for (c, i) in compiled.iter().zip(&interpreted) {
            assert_eq!(c.shape, i.shape);
            for k in 0..c.data.len() {
                assert!((c.data.get_f64(k) - i.data.get_f64(k)).abs() < 1e-5);
            }
        }
    }

    #[test]
    fn callback_errors_and_wrong_results_stop_the_run() {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        p.external("bad", |_| Ok(HostArray { name: "r".into(), shape: vec![3], data: Data::F32(vec![0.0; 3]) }));
        p.external("fails", |_| Err("no".into()));
        let x = p.tensor("x", &[&t], f32s(&[2]));
        p.otherwise(&x, Expr::call("bad", &[], f32s(&[2])));
        let y = p.tensor("y", &[&t], f32s(&[2]));
        p.otherwise(&y, Expr::call("fails", &[&x.here()], f32s(&[2])));
        let z = p.tensor("z", &[&t], f32s(&[2]));
        p.otherwise(&z, Expr::call("missing", &[&x.here()], f32s(&[2])));
        p.output(&y);
        let run = p.runner().bound("T", 3).run().unwrap_err().to_string();
        assert!(run.contains("external function 'missing' is not registered"), "{run}");
        p.external("missing", |args| Ok(args[0].clone()));
        for error in [p.runner().bound("T", 3).run().unwrap_err(), p.runner().bound("T", 3).interpret().unwrap_err()] {
            let error = error.to_string();
            assert!(error.contains("external function 'bad' must return float32[2], returned float32[3]"), "{error}");
        }
    }
}
