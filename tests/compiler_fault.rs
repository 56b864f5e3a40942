//! A compiler fault through the Rust API: reported at the program's op the
//! lowering was working on (the Rust line that built it), named a
//! compiler fault, with the generated module written to the directory of
//! `Runner::dump_on_error` rather than put in the message. The fault is
//! injected with `TEMPO_TEST_FAULT` (the lowering's `test-fault` option);
//! this file is its own test binary, so the variable reaches no other test.

use tempo::{Program, f32s};

#[test]
fn a_fault_names_the_op_and_writes_the_generated_module_to_a_file() {
    let dir = std::env::temp_dir().join(format!("tempo-fault-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The x W * x V gate of the fusion bug of issue 22.
    let mut p = Program::new();
    let t = p.dim("t", "T");
    let w = p.input("w", &[], f32s(&[4, 6]));
    let v = p.input("v", &[], f32s(&[4, 6]));
    let x = p.input("x", &[&t], f32s(&[4]));
    let y = p.tensor("y", &[&t], f32s(&[6]));
    let xt = x.here();
    let mul_line = line!() + 1;
    p.otherwise(&y, xt.matmul(&w.here()) * xt.matmul(&v.here()));
    p.output(&y);
    let runner = || p.runner().bound("T", 3).seed(1);
    let fine = runner().run().expect("compiles without a fault");
    unsafe { std::env::set_var("TEMPO_TEST_FAULT", "verify:temporal.mul") };
    let error = runner().dump_on_error(&dir).run().expect_err("the injected fault fails the compilation").to_string();
    unsafe { std::env::remove_var("TEMPO_TEST_FAULT") };
    assert!(error.contains("error: compiler fault while lowering 'temporal.mul'"), "{error}");
    // The op's location is the Rust line that built it.
    assert!(error.starts_with(&format!("tests/compiler_fault.rs:{mul_line}:")), "at the user's line: {error}");
    assert!(!error.contains("func.func"), "the generated module stays out of the message: {error}");
    let dumped: Vec<_> = std::fs::read_dir(&dir).expect("the directory was made").flatten().collect();
    assert_eq!(dumped.len(), 1);
    let path = dumped[0].path();
    assert!(error.contains(&path.display().to_string()), "the message names {}: {error}", path.display());
    assert!(std::fs::read_to_string(&path).unwrap().contains("sym_name = \"tempo_main\""));
    assert_eq!(fine.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}
