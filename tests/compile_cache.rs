//! The compilation cache through the Rust API: a second compile of the same
//! program (as another process would) loads the stored code and computes
//! the same outputs; another bound is another entry. This file is its own
//! test binary, so the cache directory it sets reaches no other test.

mod common;

use tempo::Data;
use tempo_driver::cache::Outcome;

#[test]
fn a_second_compile_hits_the_cache_with_the_same_outputs() {
    let dir = std::env::temp_dir().join(format!("tempo-api-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    unsafe { std::env::set_var("TEMPO_CACHE_DIR", &dir) };
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
