//! The Rust API on the CUDA target (`Runner::on_gpu`). Where a CUDA device
//! is present (`nvidia-smi -L` succeeds), compiled results must agree with
//! the reference interpreter; elsewhere the run must fail with the
//! runtime's error naming what is missing, not crash.

use tempo::{Cond, Program, Target, f32s};

fn rnn() -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let w = p.input("W", &[], f32s(&[16, 16]));
    let x = p.input("x", &[&t], f32s(&[16]));
    let h = p.tensor("h", &[&t], f32s(&[16]));
    p.define(&h, t.eq(0), x.here().tanh());
    p.define(&h, Cond::always(), (w.here().matmul(&h.at([&t - 1])) + x.here()).tanh());
    p.output(&h);
    p
}

fn has_cuda_device() -> bool {
    std::process::Command::new("nvidia-smi").arg("-L").output().is_ok_and(|o| o.status.success())
}

#[test]
fn gpu_runs_agree_with_the_interpreter_or_say_there_is_no_gpu() {
    let p = rnn();
    let on_gpu = p.runner().bound("T", 12).seed(5).on_gpu().run();
    if has_cuda_device() {
        let gpu = on_gpu.expect("a GPU run on a machine with a CUDA device");
        let interpreted = p.runner().bound("T", 12).seed(5).interpret().unwrap();
        for k in 0..gpu[0].data.len() {
            let (a, b) = (gpu[0].data.get_f64(k), interpreted[0].data.get_f64(k));
            assert!((a - b).abs() <= 1e-5 * (1.0 + b.abs()), "{a} and {b} differ");
        }
    } else {
        eprintln!("no CUDA device: checking the error instead of a GPU run");
        let error = on_gpu.expect_err("no CUDA device, so the GPU run must fail").to_string();
        assert!(error.contains("--target cuda:"), "unexpected error: {error}");
    }
}

#[test]
fn the_gpu_lowering_run_on_the_cpu_agrees_with_the_interpreter() {
    // Every machine: the CUDA target's loops (kernels of one point for
    // single values, fused and flattened parallel loops) run on the CPU.
    let p = rnn();
    let loops = p.runner().bound("T", 12).seed(5).target(Target::GpuLoopsOnCpu).run().unwrap();
    let interpreted = p.runner().bound("T", 12).seed(5).interpret().unwrap();
    assert_eq!(loops[0].data, interpreted[0].data, "bit-exact: the same sums in the same order");
}
