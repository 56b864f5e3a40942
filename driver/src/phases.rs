//! Compile time by phase: each phase of [`crate::Executable::compile`]
//! adds its wall time here as it ends (per thread: a compile runs on one).

use std::cell::RefCell;
use std::time::{Duration, Instant};

thread_local! {
    static PHASES: RefCell<Vec<(&'static str, Duration)>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f`, adding its wall time to phase `name`.
pub fn time<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
    let start = Instant::now();
    let result = f();
    add(name, start.elapsed());
    result
}

/// Adds `spent` to phase `name`.
pub fn add(name: &'static str, spent: Duration) {
    PHASES.with(|p| {
        let mut p = p.borrow_mut();
        match p.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 += spent,
            None => p.push((name, spent)),
        }
    });
}

/// The phases recorded since the last call, cleared.
pub fn take() -> Vec<(&'static str, Duration)> {
    PHASES.with(|p| std::mem::take(&mut *p.borrow_mut()))
}
