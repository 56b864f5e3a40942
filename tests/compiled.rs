//! `Runner::compile` compiles once; `Compiled::run` runs that code many
//! times with new bounds and inputs, agreeing bit for bit with the
//! interpreter at each, and every run reports the one compilation's time
//! (nothing compiled again). Errors of the Rust API name the API's methods,
//! not tempo-run's flags.

mod common;

use tempo::{Data, HostArray, Program};

fn rnn() -> Program {
    common::rnn(8)
}

fn array(name: &str, shape: &[usize], seed: u32) -> HostArray {
    let n: usize = shape.iter().product();
    let values: Vec<f32> = (0..n).map(|k| ((k as f32 + 1.0) * 0.37 + seed as f32).sin() * 0.5).collect();
    HostArray { name: name.into(), shape: shape.to_vec(), data: Data::F32(values) }
}

#[test]
fn compiled_once_runs_many_times_at_new_bounds() {
    let p = rnn();
    let compiled = p.runner().compile().expect("compiles");
    assert_eq!(compiled.bounds().unwrap(), vec!["T".to_string()]);
    let mut compile_times = Vec::new();
    for (run, steps) in [3usize, 11, 1, 7].into_iter().enumerate() {
        let inputs = [array("x", &[steps, 8], run as u32), array("w", &[8, 8], 40 + run as u32)];
        let (outputs, report) = compiled.run_with_report(&[("T", steps as i64)], &inputs, None).expect("runs");
        compile_times.push(report.compile);
        let mut runner = p.runner().bound("T", steps as i64);
        for input in &inputs {
            runner = runner.input(input.clone());
        }
        let reference = runner.interpret().unwrap();
        assert_eq!(outputs[0].shape, vec![steps, 8]);
        let (Data::F32(got), Data::F32(want)) = (&outputs[0].data, &reference[0].data) else { panic!("f32") };
        assert!(got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "run {run} (T = {steps})");
    }
    assert!(compile_times.windows(2).all(|w| w[0] == w[1]), "one compilation: {compile_times:?}");
}

#[test]
fn api_errors_name_the_api() {
    let p = rnn();
    let missing_bound = p.runner().seed(1).run().unwrap_err().to_string();
    assert!(missing_bound.contains(".bound(\"T\", N)"), "{missing_bound}");
    assert!(!missing_bound.contains("--bound"), "{missing_bound}");
    let compiled = p.runner().compile().unwrap();
    let missing_input = compiled.run(&[("T", 2)], &[array("w", &[8, 8], 1)]).unwrap_err().to_string();
    assert!(missing_input.contains("missing input 'x'") && missing_input.contains(".input("), "{missing_input}");
    assert!(!missing_input.contains("--input"), "{missing_input}");
}

#[test]
fn an_unused_dimension_needs_no_bound() {
    let mut p = rnn();
    // Declared, but no tensor, read or condition depends on it.
    let _layers = p.dim("l", "L");
    let inputs = [array("x", &[2, 8], 1), array("w", &[8, 8], 2)];
    let mut runner = p.runner().bound("T", 2);
    for input in &inputs {
        runner = runner.input(input.clone());
    }
    let compiled = runner.run().expect("runs without L");
    assert_eq!(compiled[0].data, runner.interpret().expect("interprets without L")[0].data);
    // A dimension that is used still needs its bound.
    let missing = p.runner().bound("L", 2).seed(1).run().unwrap_err().to_string();
    assert!(missing.contains("missing bound T"), "{missing}");
}

#[test]
fn inputs_read_in_place_are_the_arrays() {
    let p = rnn();
    let compiled = p.runner().compile().unwrap();
    let x = array("x", &[4, 8], 5);
    let w = array("w", &[8, 8], 6);
    let view =
        |a: &HostArray| tempo::ArrayView { shape: a.shape.clone(), element: a.data.element(), data: a.data.as_ptr() };
    let views = vec![("x".to_string(), view(&x)), ("w".to_string(), view(&w))];
    // SAFETY: the views point into `x` and `w`, alive and unchanged here.
    let (in_place, _) = unsafe { compiled.run_in_place(&[("T", 4)], views, Vec::new(), None) }.unwrap();
    let copied = compiled.run(&[("T", 4)], &[x.clone(), w.clone()]).unwrap();
    assert_eq!(in_place[0].data, copied[0].data);
    // A view of the wrong shape is refused like an array would be.
    let short =
        vec![("x".to_string(), tempo::ArrayView { shape: vec![3, 8], ..view(&x) }), ("w".to_string(), view(&w))];
    let error = unsafe { compiled.run_in_place(&[("T", 4)], short, Vec::new(), None) }.unwrap_err().to_string();
    assert!(error.contains("input 'x' must be float32[4, 8], got float32[3, 8]"), "{error}");
}

#[test]
fn outputs_written_in_place_are_the_arrays() {
    let p = rnn();
    let compiled = p.runner().compile().unwrap();
    let (x, w) = (array("x", &[5, 8], 8), array("w", &[8, 8], 9));
    let copied = compiled.run(&[("T", 5)], &[x.clone(), w.clone()]).unwrap();
    let (name, point, domain) = compiled.outputs().unwrap().remove(0);
    assert_eq!((name.as_str(), point.shape.as_slice(), domain.as_slice()), ("h", &[8i64][..], &[0usize][..]));
    let view =
        |a: &HostArray| tempo::ArrayView { shape: a.shape.clone(), element: a.data.element(), data: a.data.as_ptr() };
    let views = vec![("x".to_string(), view(&x)), ("w".to_string(), view(&w))];
    let mut memory = vec![0f32; 5 * 8];
    let target = |memory: &mut Vec<f32>, shape: Vec<usize>| tempo::ArrayViewMut {
        shape,
        element: tempo::ElementType::F32,
        data: memory.as_mut_ptr() as *mut u8,
    };
    let outputs = vec![("h".to_string(), target(&mut memory, vec![5, 8]))];
    // SAFETY: the views point into `x` and `w`, the output into `memory`,
    // all alive and otherwise unused until the run returns.
    let (returned, _) = unsafe { compiled.run_in_place(&[("T", 5)], views.clone(), outputs, None) }.unwrap();
    assert_eq!(returned[0].shape, vec![5, 8]);
    assert!(returned[0].data.is_empty(), "an output written in place comes back without data");
    assert_eq!(Data::F32(memory.clone()), copied[0].data);
    // Memory of the wrong shape is refused.
    let wrong = vec![("h".to_string(), target(&mut memory, vec![4, 8]))];
    let error = unsafe { compiled.run_in_place(&[("T", 5)], views, wrong, None) }.unwrap_err().to_string();
    assert!(error.contains("output 'h' is float32[5, 8], its memory is for float32[4, 8]"), "{error}");
}
