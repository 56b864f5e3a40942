//! The compilation cache through the Rust API: a second compile of the same
//! program (as another process would) loads the stored code and computes
//! the same outputs; another bound is another entry. This file is its own
//! test binary, so the cache directory it sets reaches no other test.

mod common;

use tempo::{Data, Expr, HostArray, Program, f32s};
use tempo_driver::cache::Outcome;

/// The tests here take turns: each sets the process's cache directory.
static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Takes this test's turn and makes an empty cache directory named after
/// `name` the process's; the guard ends the turn.
fn own_cache(name: &str) -> (std::sync::MutexGuard<'static, ()>, std::path::PathBuf) {
    let turn = TURN.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("tempo-api-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: the tests of this binary set it in turn (`TURN`).
    unsafe { std::env::set_var("TEMPO_CACHE_DIR", &dir) };
    (turn, dir)
}

#[test]
fn a_second_compile_hits_the_cache_with_the_same_outputs() {
    let (_turn, dir) = own_cache("cache-test");
    let p = common::rnn(4);
    let run = |bound: i64| p.runner().bound("T", bound).seed(7).run_with_report().expect("runs");
    let (first, cold) = run(5);
    let (second, warm) = run(5);
    assert!(matches!(cold.cache, Some(Outcome::Miss { stored: Ok(()), .. })), "{:?}", cold.cache);
    assert!(matches!(warm.cache, Some(Outcome::Hit(_))), "{:?}", warm.cache);
    let values = |o: &[tempo::HostArray]| match &o[0].data {
        Data::F32(v) => v.clone(),
        other => panic!("f32 outputs, not {other:?}"),
    };
    assert_eq!(values(&first), values(&second), "the loaded code computes the same bits");
    // The hit skipped everything before loading.
    let phases: Vec<&str> = warm.phases.iter().map(|(name, _)| *name).collect();
    assert!(!phases.contains(&"temporal optimizations") && phases.contains(&"loading"), "{phases:?}");
    let (_, other) = run(6);
    assert!(matches!(other.cache, Some(Outcome::Miss { .. })), "another bound, another entry: {:?}", other.cache);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A hit loads the optimized program, which has lost the calls nothing
/// demands; the program as written must still call only registered
/// functions, as a cold compile checks. (Without the check, a cached entry
/// let a run with an unregistered function go ahead.)
#[test]
fn a_hit_still_refuses_unregistered_functions() {
    let (_turn, dir) = own_cache("cache-calls");
    let program = |register_unused: bool| {
        let mut p = Program::new();
        let t = p.dim("t", "T");
        p.external("used", |_| Ok(HostArray { name: "r".into(), shape: vec![2], data: Data::F32(vec![1.0; 2]) }));
        if register_unused {
            p.external("unused", |args| Ok(args[0].clone()));
        }
        let x = p.tensor("x", &[&t], f32s(&[2]));
        p.otherwise(&x, Expr::call("used", &[], f32s(&[2])));
        // Nothing demands y: the optimizations remove it and its call.
        let y = p.tensor("y", &[&t], f32s(&[2]));
        p.otherwise(&y, Expr::call("unused", &[&x.here()], f32s(&[2])));
        p.output(&x);
        p
    };
    let (_, stored) = program(true).runner().bound("T", 3).run_with_report().expect("runs with both registered");
    assert!(matches!(stored.cache, Some(Outcome::Miss { stored: Ok(()), .. })), "{:?}", stored.cache);
    let refused = program(false).runner().bound("T", 3).run().unwrap_err().to_string();
    assert!(refused.contains("external function 'unused' is not registered"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
