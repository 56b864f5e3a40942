//! External calls that run compiled code themselves: a callback may run
//! another compiled program on the thread of the run that called it (the
//! Python front end's callbacks do, when a Python environment uses a
//! compiled policy), and both runs give their results; an error in the
//! inner run is the callback's error, at the outer call site.

use std::sync::{Arc, Mutex};
use tempo::{Cond, Data, Expr, HostArray, Program, f32s};

/// `y[t] = y[t-1] * 2 + 1` over `t`, with `y[0] = x`: a small compiled
/// program for the callback to run.
fn doubling() -> Program {
    let mut q = Program::new();
    let t = q.dim("t", "T");
    let x = q.input("x", &[], f32s(&[2]));
    let y = q.tensor("y", &[&t], f32s(&[2]));
    q.define(&y, t.eq(0), x.here());
    q.define(&y, Cond::always(), y.at([&t - 1]) * 2.0 + 1.0);
    q.output(&y);
    q
}

/// The outer program: `s[t] = inner(s[t-1])`, where `inner` runs the
/// doubling program for 3 steps from its argument and returns the last
/// (two doublings: `v -> 4 v + 3`).
fn outer(inner: Arc<Mutex<tempo::Compiled>>) -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    p.external("inner", move |args: &[HostArray]| {
        let start = HostArray { name: "x".into(), ..args[0].clone() };
        let compiled = inner.lock().map_err(|e| e.to_string())?;
        let out = compiled.run(&[("T", 3)], &[start]).map_err(|e| e.to_string())?;
        let Data::F32(values) = &out[0].data else { return Err("f32 expected".into()) };
        Ok(HostArray { name: "r".into(), shape: vec![2], data: Data::F32(values[4..6].to_vec()) })
    });
    let s = p.tensor("s", &[&t], f32s(&[2]));
    p.define(&s, t.eq(0), Expr::constant(vec![0.0, 1.0], f32s(&[2])));
    p.define(&s, Cond::always(), Expr::call("inner", &[&s.at([&t - 1])], f32s(&[2])));
    p.output(&s);
    p
}

#[test]
fn a_callback_may_run_compiled_code_on_the_calling_thread() {
    let inner = Arc::new(Mutex::new(doubling().runner().compile().unwrap()));
    let p = outer(Arc::clone(&inner));
    let compiled = p.runner().compile().unwrap();
    let out = compiled.run(&[("T", 4)], &[]).unwrap();
    let mut want = vec![0.0f32, 1.0];
    for _ in 1..4 {
        let last = &want[want.len() - 2..];
        let next: Vec<f32> = last.iter().map(|v| v * 4.0 + 3.0).collect();
        want.extend(next);
    }
    assert_eq!(out[0].data, Data::F32(want.clone()));
    assert_eq!(p.runner().bound("T", 4).interpret().unwrap()[0].data, Data::F32(want));
    // An inner run that fails (no bound would be a different error: give
    // it an input of the wrong shape) is the outer call's error, and the
    // outer program runs again afterwards.
    let mut bad = Program::new();
    let t = bad.dim("t", "T");
    let x = bad.input("x", &[], f32s(&[3]));
    let y = bad.tensor("y", &[&t], f32s(&[3]));
    bad.otherwise(&y, x.here());
    bad.output(&y);
    let failing = outer(Arc::new(Mutex::new(bad.runner().compile().unwrap())));
    let error = failing.runner().bound("T", 3).run().unwrap_err().to_string();
    assert!(error.contains("external function 'inner' failed"), "{error}");
    assert!(error.contains("externals.rs:"), "the outer call site is named: {error}");
    assert_eq!(compiled.run(&[("T", 2)], &[]).unwrap()[0].shape, vec![2, 2], "the outer program runs again");
}

/// A callback on the call's own buffers (`Program::external_raw`): it
/// reads the arguments' bytes and writes the result's, compiled and
/// interpreted alike; its error ends the run at the call.
#[test]
fn raw_callbacks_read_and_write_the_calls_buffers() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    p.external_raw("step", move |args, ty, out| {
        let [(state_type, state), (_, scale)] = args else { return Err("two arguments".into()) };
        log.lock().unwrap().push((state_type.to_string(), ty.to_string()));
        let scale = f64::from_ne_bytes(scale[..8].try_into().unwrap());
        for (k, chunk) in out.chunks_exact_mut(8).enumerate() {
            let v = f64::from_ne_bytes(state[8 * k..8 * k + 8].try_into().unwrap());
            if v > 100.0 {
                return Err(format!("{v} is too large"));
            }
            chunk.copy_from_slice(&(v * scale + k as f64).to_ne_bytes());
        }
        Ok(())
    });
    let s = p.tensor("s", &[&t], tempo::f64s(&[3]));
    p.define(&s, t.eq(0), Expr::constant(vec![1.0, 2.0, 3.0], tempo::f64s(&[3])));
    let scale = Expr::splat(2.0, tempo::f64s(&[]));
    p.define(&s, Cond::always(), Expr::call("step", &[&s.at([&t - 1]), &scale], tempo::f64s(&[3])));
    p.output(&s);
    let compiled = p.runner().bound("T", 3).run().unwrap();
    let want = Data::F64(vec![1.0, 2.0, 3.0, 2.0, 5.0, 8.0, 4.0, 11.0, 18.0]);
    assert_eq!(compiled[0].data, want);
    assert_eq!(p.runner().bound("T", 3).interpret().unwrap()[0].data, want);
    assert_eq!(seen.lock().unwrap()[0], ("tensor<3xf64>".to_string(), "tensor<3xf64>".to_string()));
    let error = p.runner().bound("T", 8).run().unwrap_err().to_string();
    assert!(error.contains("external function 'step' failed: 158 is too large"), "{error}");
}

/// `s[b, t] = step(s[b, t-1], 2)` over a batch `b` of independent points,
/// `step` doubling each row and adding the shared argument; `batched`
/// marks the call with `Expr::call_batched`. Returns the program and the
/// shapes of the first argument of every call.
fn batch_program(batched: bool) -> (Program, Arc<Mutex<Vec<Vec<usize>>>>) {
    let mut p = Program::new();
    let b = p.dim("b", "B");
    let t = p.dim("t", "T");
    let shapes = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&shapes);
    p.external("step", move |args: &[HostArray]| {
        log.lock().unwrap().push(args[0].shape.clone());
        let (Data::F32(state), Data::F32(k)) = (&args[0].data, &args[1].data) else { return Err("f32".into()) };
        // The shared argument: one value per row of a batch, or one.
        let rows = if args[0].shape.len() == 2 { args[0].shape[0] } else { 1 };
        if k.len() != rows {
            return Err(format!("{} values of k for {rows} rows", k.len()));
        }
        let out = (0..state.len()).map(|e| state[e] * 2.0 + k[e / 2]).collect();
        Ok(HostArray { name: "r".into(), shape: args[0].shape.clone(), data: Data::F32(out) })
    });
    let x = p.input("x", &[&b], f32s(&[2]));
    let s = p.tensor("s", &[&b, &t], f32s(&[2]));
    p.define(&s, t.eq(0), x.here());
    let k = Expr::splat(2.0, f32s(&[]));
    let call = if batched { Expr::call_batched } else { Expr::call };
    p.define(&s, Cond::always(), call("step", &[&s.at_dims([(&t, &t - 1)]), &k], f32s(&[2])));
    p.output(&s);
    (p, shapes)
}

/// A batched call (`Expr::call_batched`) where `temporal-vectorize`
/// batches its dimension (compiled with the bound values) takes the whole
/// batch at once: one call per step with `[B, 2]`, not `B` calls with
/// `[2]`; the interpreter calls it per point; the results are the same.
/// Without the mark the batch stays a loop of calls.
#[test]
fn a_batched_call_gets_the_whole_batch_where_its_dimension_is_vectorized() {
    let x = HostArray { name: "x".into(), shape: vec![3, 2], data: Data::F32(vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]) };
    let (p, shapes) = batch_program(true);
    let compiled = p.runner().bound("B", 3).bound("T", 4).input(x.clone()).run().unwrap();
    assert_eq!(*shapes.lock().unwrap(), vec![vec![3, 2]; 3], "one call per step, with the batch");
    shapes.lock().unwrap().clear();
    let interpreted = p.runner().bound("B", 3).bound("T", 4).input(x.clone()).interpret().unwrap();
    assert_eq!(shapes.lock().unwrap().len(), 9, "per point");
    assert_eq!(compiled[0].data, interpreted[0].data);
    // s[b, t] = 2 s[b, t-1] + 2.
    assert_eq!(compiled[0].data.get_f64(2 * 3 + 1), ((1.0 * 2.0 + 2.0) * 2.0 + 2.0) * 2.0 + 2.0);
    let (q, shapes) = batch_program(false);
    let unbatched = q.runner().bound("B", 3).bound("T", 4).input(x).run().unwrap();
    assert_eq!(*shapes.lock().unwrap(), vec![vec![2]; 9], "a call per point");
    assert_eq!(unbatched[0].data, compiled[0].data);
}
