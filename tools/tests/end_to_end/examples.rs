//! The bundled examples compiled and run against results computed
//! independently here, and snapshots of the IR each lowering step prints.

use crate::{context, example, run};
use melior::{ir::Module, pass::PassManager};
use tempo_driver::{Data, HostArray};
use tempo_passes::pipeline;

fn f32s(array: &HostArray) -> &[f32] {
    match &array.data {
        Data::F32(v) => v,
        other => panic!("expected f32 data, got {other:?}"),
    }
}

#[test]
fn counter_prints_zero_to_nine() {
    let out = run(&example("counter.mlir"), &[("T", 10)], vec![], None).unwrap();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].shape, vec![10]);
    assert_eq!(out[0].data, Data::I64((0..10).collect()));
}

#[test]
fn counter_runs_long_with_a_two_point_ring() {
    let t = 1_000_000;
    let out = run(&example("counter.mlir"), &[("T", t)], vec![], None).unwrap();
    let Data::I64(values) = &out[0].data else { panic!() };
    assert_eq!(values.len(), t as usize);
    assert!(values.iter().enumerate().all(|(i, &v)| v == i as i64));
}

#[test]
fn fibonacci_matches_the_recurrence() {
    let out = run(&example("fibonacci.mlir"), &[("T", 40)], vec![], None).unwrap();
    let mut expected = vec![0i64, 1];
    while expected.len() < 40 {
        let n = expected.len();
        expected.push(expected[n - 1] + expected[n - 2]);
    }
    assert_eq!(out[0].data, Data::I64(expected));
}

#[test]
fn running_sum_matches_a_prefix_sum() {
    let t = 7usize;
    let x = HostArray::random("x", vec![t, 3], tempo_passes::program::ElementType::F32, 11);
    let out = run(&example("running_sum.mlir"), &[("T", t as i64)], vec![x.clone()], None).unwrap();
    let xs = f32s(&x);
    let mut acc = [0f32; 3];
    for step in 0..t {
        for j in 0..3 {
            acc[j] += xs[step * 3 + j];
            assert_eq!(f32s(&out[0])[step * 3 + j], acc[j], "s[{step}][{j}]");
        }
    }
}

/// h[0] = tanh(U x[0]); h[t] = tanh(W h[t-1] + U x[t]), in f64.
fn rnn_reference(w: &[f32], u: &[f32], x: &[f32], t: usize) -> Vec<f64> {
    let mut h = vec![0f64; 4];
    let mut all = Vec::new();
    for step in 0..t {
        let mut next = vec![0f64; 4];
        for i in 0..4 {
            let mut acc = 0f64;
            if step > 0 {
                for k in 0..4 {
                    acc += w[i * 4 + k] as f64 * h[k];
                }
            }
            for k in 0..3 {
                acc += u[i * 3 + k] as f64 * x[step * 3 + k] as f64;
            }
            next[i] = acc.tanh();
        }
        h = next;
        all.extend_from_slice(&h);
    }
    all
}

#[test]
fn rnn_matches_an_independent_reference() {
    use tempo_passes::program::ElementType::F32;
    let t = 25usize;
    let w = HostArray::random("W", vec![4, 4], F32, 5);
    let u = HostArray::random("U", vec![4, 3], F32, 5);
    let x = HostArray::random("x", vec![t, 3], F32, 5);
    let out = run(&example("rnn.mlir"), &[("T", t as i64)], vec![w.clone(), u.clone(), x.clone()], None).unwrap();
    assert_eq!(out[0].shape, vec![t, 4]);
    let expected = rnn_reference(f32s(&w), f32s(&u), f32s(&x), t);
    for (i, (&got, &want)) in f32s(&out[0]).iter().zip(&expected).enumerate() {
        assert!((got as f64 - want).abs() < 1e-5, "h element {i}: {got} vs {want}");
    }
}

#[test]
fn seeded_inputs_are_reproducible() {
    let a = run(&example("rnn.mlir"), &[("T", 4)], vec![], Some(9)).unwrap();
    let b = run(&example("rnn.mlir"), &[("T", 4)], vec![], Some(9)).unwrap();
    let c = run(&example("rnn.mlir"), &[("T", 4)], vec![], Some(10)).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn run_errors_are_reported_not_panicked() {
    let missing = run(&example("counter.mlir"), &[], vec![], None).unwrap_err();
    assert!(missing[0].contains("missing bound T"), "{missing:?}");
    let input = run(&example("rnn.mlir"), &[("T", 3)], vec![], None).unwrap_err();
    assert!(input[0].contains("missing input 'W'"), "{input:?}");
    let shape = run(
        &example("running_sum.mlir"),
        &[("T", 3)],
        vec![HostArray::random("x", vec![2, 3], tempo_passes::program::ElementType::F32, 0)],
        None,
    )
    .unwrap_err();
    assert!(shape[0].contains("must be float32[3, 3], got float32[2, 3]"), "{shape:?}");
}

/// Runs `pipeline_text` on an example and returns the printed module.
fn lower(name: &str, pipeline_text: &str) -> String {
    let context = context();
    let mut module = Module::parse(&context, &example(name)).expect("example parses");
    let manager = PassManager::new(&context);
    let steps = pipeline::parse_steps(&tempo_lowering::registry(), pipeline_text).unwrap();
    pipeline::add_to_pass_manager(&manager, &steps).unwrap();
    manager.run(&mut module).expect("pipeline succeeds");
    module.as_operation().to_string()
}

#[test]
fn snapshot_counter_to_loops() {
    insta::assert_snapshot!(lower("counter.mlir", "lower-temporal-to-loops"));
}

#[test]
fn snapshot_rnn_to_loops() {
    insta::assert_snapshot!(lower("rnn.mlir", "lower-temporal-to-loops"));
}

#[test]
fn snapshot_counter_to_llvm() {
    insta::assert_snapshot!(lower("counter.mlir", "temporal-to-llvm"));
}

#[test]
fn returns_run_backward_and_match_the_definition() {
    use tempo_passes::program::ElementType::F32;
    let t = 9usize;
    let r = HostArray::random("r", vec![t], F32, 21);
    let out = run(&example("returns.mlir"), &[("T", t as i64)], vec![r.clone()], None).unwrap();
    let rs = f32s(&r);
    let mut expected = vec![0f32; t];
    for step in (0..t).rev() {
        expected[step] = if step == t - 1 { rs[step] } else { rs[step] + 0.9f32 * expected[step + 1] };
    }
    assert_eq!(f32s(&out[0]), expected.as_slice());
}

#[test]
fn batched_max_matches_per_sequence_maxima() {
    use tempo_passes::program::ElementType::F32;
    let (b, t) = (3usize, 6usize);
    let x = HostArray::random("x", vec![b, t], F32, 8);
    let out = run(&example("batched_max.mlir"), &[("B", b as i64), ("T", t as i64)], vec![x.clone()], None).unwrap();
    let xs = f32s(&x);
    for seq in 0..b {
        let mut running = f32::NEG_INFINITY;
        for step in 0..t {
            running = running.max(xs[seq * t + step]);
            assert_eq!(f32s(&out[0])[seq * t + step], running);
        }
        assert_eq!(f32s(&out[1])[seq], running);
    }
}

/// softmax(k[lo..=t] q[t]) v[lo..=t] per step, in f64, with `lo = max(0, t + 1 - window)`.
fn attention_reference(x: &[f32], wq: &[f32], wk: &[f32], wv: &[f32], steps: usize, window: usize) -> Vec<f64> {
    let project = |w: &[f32], t: usize| -> Vec<f64> {
        (0..4).map(|i| (0..4).map(|j| w[i * 4 + j] as f64 * x[t * 4 + j] as f64).sum()).collect()
    };
    let mut out = Vec::new();
    for t in 0..steps {
        let q = project(wq, t);
        let lo = (t + 1).saturating_sub(window);
        let scores: Vec<f64> =
            (lo..=t).map(|s| project(wk, s).iter().zip(&q).map(|(a, b)| a * b).sum::<f64>()).collect();
        let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
        let z: f64 = e.iter().sum();
        for i in 0..4 {
            out.push((lo..=t).zip(&e).map(|(s, w)| w / z * project(wv, s)[i]).sum());
        }
    }
    out
}

#[test]
fn causal_and_windowed_attention_match_a_reference() {
    use tempo_passes::program::ElementType::F32;
    let steps = 12usize;
    let x = HostArray::random("x", vec![steps, 4], F32, 31);
    let wq = HostArray::random("Wq", vec![4, 4], F32, 32);
    let wk = HostArray::random("Wk", vec![4, 4], F32, 33);
    let wv = HostArray::random("Wv", vec![4, 4], F32, 34);
    for (name, window) in [("causal_attention.mlir", steps), ("windowed_attention.mlir", 3)] {
        let inputs = vec![x.clone(), wq.clone(), wk.clone(), wv.clone()];
        let out = run(&example(name), &[("T", steps as i64)], inputs, None).unwrap();
        let expected = attention_reference(f32s(&x), f32s(&wq), f32s(&wk), f32s(&wv), steps, window);
        for (k, (&got, &want)) in f32s(&out[0]).iter().zip(&expected).enumerate() {
            assert!((got as f64 - want).abs() < 1e-4, "{name}: element {k}: {got} vs {want}");
        }
    }
}

#[test]
fn suffix_sum_reads_the_future() {
    use tempo_passes::program::ElementType::F64;
    let steps = 10usize;
    let r = HostArray::random("r", vec![steps], F64, 3);
    let out = run(&example("suffix_sum.mlir"), &[("T", steps as i64)], vec![r.clone()], None).unwrap();
    let Data::F64(rs) = &r.data else { panic!() };
    let Data::F64(rest) = &out[0].data else { panic!() };
    for t in 0..steps {
        let expected: f64 = rs[t..].iter().sum();
        assert!((rest[t] - expected).abs() < 1e-12, "rest[{t}]");
    }
}
