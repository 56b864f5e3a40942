//! `Runner::fast_math` and `Runner::threads` reach the compiler: exact
//! compiled runs equal the interpreter bit for bit on any number of
//! threads; with fast math (polynomial tanh and exp, the library GEMM for
//! the 64 x 128 x 128 product) results stay within 1e-5 of the
//! interpreter's and are no longer all bit-identical to them.

use tempo::{Data, HostArray, Program, f32s};

fn program() -> Program {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[64, 128]));
    let w = p.input("w", &[], f32s(&[128, 128]));
    let y = p.tensor("y", &[&t], f32s(&[64, 128]));
    let h = x.here().matmul(&w.here()).tanh();
    p.otherwise(&y, &h * (&h * 0.5).exp());
    p.output(&y);
    p
}

fn floats(out: &[HostArray]) -> Vec<f32> {
    match &out[0].data {
        Data::F32(v) => v.clone(),
        other => panic!("not f32: {:?}", other.element()),
    }
}

#[test]
fn fast_math_and_threads_reach_the_compiler() {
    let p = program();
    let runner = || p.runner().bound("T", 2).seed(9);
    let reference = floats(&runner().interpret().unwrap());
    for threads in [1, 2] {
        let exact = floats(&runner().threads(threads).run().unwrap());
        assert!(exact.iter().zip(&reference).all(|(a, b)| a.to_bits() == b.to_bits()), "exact, {threads} threads");
        let fast = floats(&runner().threads(threads).fast_math(true).run().unwrap());
        let scale = reference.iter().fold(1f32, |m, v| m.max(v.abs()));
        let worst = fast.iter().zip(&reference).map(|(a, b)| (a - b).abs() / scale).fold(0f32, f32::max);
        assert!(worst < 1e-5, "fast math, {threads} threads: {worst}");
        assert!(fast.iter().zip(&reference).any(|(a, b)| a.to_bits() != b.to_bits()), "fast math had no effect");
    }
}
