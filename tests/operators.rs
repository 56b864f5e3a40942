//! Scalars on either side of an operator (`1.0 - x`, `2 * x`), and integer
//! constants kept exact (past 2^53, where `f64` would round them), and the
//! activations composed of other ops (GELU, SiLU) against their formulas.

use tempo::{Data, HostArray, Program, f32s, f64s, i64s};

#[test]
fn scalars_on_the_left_mean_what_they_say() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f32s(&[5]));
    let left = p.tensor("left", &[&t], f32s(&[5]));
    let right = p.tensor("right", &[&t], f32s(&[5]));
    // (1 - x) / (2 * x + 3), written with scalars on the left and on the right.
    p.otherwise(&left, (1.0 - x.here()) / (2.0 * x.here() + 3.0));
    p.otherwise(&right, (-x.here() + 1.0) / (x.here() * 2.0 + 3.0));
    p.output(&left);
    p.output(&right);
    let values: Vec<f32> = (0..10).map(|k| k as f32 * 0.25 - 1.0).collect();
    let input = HostArray { name: "x".into(), shape: vec![2, 5], data: Data::F32(values.clone()) };
    for outputs in [
        p.runner().bound("T", 2).input(input.clone()).run().unwrap(),
        p.runner().bound("T", 2).input(input.clone()).interpret().unwrap(),
    ] {
        let (Data::F32(a), Data::F32(b)) = (&outputs[0].data, &outputs[1].data) else { panic!("f32") };
        assert_eq!(a, b);
        for (k, v) in values.iter().enumerate() {
            assert_eq!(a[k], (1.0 - v) / (2.0 * v + 3.0), "element {k}");
        }
    }
}

#[test]
fn integer_constants_are_exact() {
    let big: i64 = (1 << 53) + 1;
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], i64s(&[3]));
    let y = p.tensor("y", &[&t], i64s(&[3]));
    p.otherwise(&y, big - (x.here() * 3) + 7);
    p.output(&y);
    let input = HostArray { name: "x".into(), shape: vec![1, 3], data: Data::I64(vec![1, -2, 5]) };
    let want: Vec<i64> = [1i64, -2, 5].iter().map(|v| big - v * 3 + 7).collect();
    for outputs in [
        p.runner().bound("T", 1).input(input.clone()).run().unwrap(),
        p.runner().bound("T", 1).input(input.clone()).interpret().unwrap(),
    ] {
        assert_eq!(outputs[0].data, Data::I64(want.clone()));
    }
}

#[test]
fn gelu_and_silu_are_their_formulas() {
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let x = p.input("x", &[&t], f64s(&[7]));
    let gelu = p.tensor("gelu", &[&t], f64s(&[7]));
    let silu = p.tensor("silu", &[&t], f64s(&[7]));
    p.otherwise(&gelu, x.here().gelu());
    p.otherwise(&silu, x.here().silu());
    p.output(&gelu);
    p.output(&silu);
    let values: Vec<f64> = (0..14).map(|k| k as f64 * 0.75 - 5.0).collect();
    let input = HostArray { name: "x".into(), shape: vec![2, 7], data: Data::F64(values.clone()) };
    for outputs in [
        p.runner().bound("T", 2).input(input.clone()).run().unwrap(),
        p.runner().bound("T", 2).input(input.clone()).interpret().unwrap(),
    ] {
        let (Data::F64(g), Data::F64(s)) = (&outputs[0].data, &outputs[1].data) else { panic!("f64") };
        for (k, &v) in values.iter().enumerate() {
            // GPT-2's GELU (tanh form) and x * sigmoid(x).
            let want_g = 0.5 * v * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (v + 0.044715 * v * v * v)).tanh());
            let want_s = v / (1.0 + (-v).exp());
            assert!((g[k] - want_g).abs() <= 1e-12, "gelu({v}) = {}, want {want_g}", g[k]);
            assert!((s[k] - want_s).abs() <= 1e-12, "silu({v}) = {}, want {want_s}", s[k]);
        }
    }
}
