//! Faults during a run (issue 40): a swap file that cannot be written (a
//! file size limit: what a full disk looks like to the program) and an
//! allocation the system refuses end the run with a clear error, free what
//! the run allocated, report no partial output, and leave the compiled
//! program ready: the next run in the same process gives the right
//! results. A Rust callback that panics ends its run with the panic's
//! message. One test function: the limits are the process's.

mod common;

use common::forward_then_backward;
use tempo::{Cond, Expr, HostArray, Program, f32s};

/// This process's virtual size in kB (`VmSize`).
fn virtual_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn set_file_size_limit(bytes: u64) {
    let limit = libc::rlimit { rlim_cur: bytes, rlim_max: libc::RLIM_INFINITY };
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &limit) }, 0);
}

#[test]
fn runs_that_fail_end_with_an_error_free_what_they_held_and_the_next_run_works() {
    let p = forward_then_backward();
    let steps = 100_000;
    let want = p.runner().seed(3).bound("I", 2).bound("T", steps).interpret().unwrap();
    let swapping = p.runner().seed(3).bound("I", 2).bound("T", steps).memory_budget(100_000).compile().unwrap();

    // A swap file that cannot grow past 64 KiB (SIGXFSZ ignored, so the
    // write fails with EFBIG as on a full disk).
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    set_file_size_limit(64 << 10);
    let failed = swapping.run(&[("I", 2), ("T", steps)], &[]).unwrap_err().to_string();
    assert!(failed.contains("the swap file of a store could not be made, written or read back"), "{failed}");
    assert!(failed.contains("File too large"), "{failed}");
    set_file_size_limit(libc::RLIM_INFINITY);
    assert_eq!(swapping.run(&[("I", 2), ("T", steps)], &[]).unwrap(), want, "the next run works");
    // and counts its own stores: none live at its end (the failed runs
    // left theirs counted live).
    let (_, report) = swapping.run_with_report(&[("I", 2), ("T", steps)], &[], None).unwrap();
    assert_eq!(report.memory.expect("compiled runs report memory").live_store_bytes_at_exit, 0);

    // An allocation refused (the fifth of the run: committing a block of
    // x's store after its 1.6 MB reservation), 30 times over: each run
    // fails with the reason, what it reserved is given back (the process
    // does not grow by 30 reservations), and the next run works.
    let before = virtual_kb();
    for _ in 0..30 {
        tempo_runtime::guard::fail_allocation_for_testing(4);
        let failed = swapping.run(&[("I", 2), ("T", steps)], &[]).unwrap_err().to_string();
        assert!(failed.contains("out of memory"), "{failed}");
        assert!(failed.contains("Cannot allocate memory"), "{failed}");
        assert_eq!(tempo_runtime::host_pool::cached_bytes(), 0, "a failed run leaves no blocks cached");
    }
    let grown = virtual_kb().saturating_sub(before);
    assert!(grown < 16 << 10, "30 failed runs grew the process by {grown} kB");
    assert_eq!(swapping.run(&[("I", 2), ("T", steps)], &[]).unwrap(), want, "the next run works");

    // A callback that panics: the run ends with its message, and the next
    // run (whose callback behaves) works.
    let mut q = Program::new();
    let t = q.dim("t", "T");
    let y = q.tensor("y", &[&t], f32s(&[2]));
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&calls);
    q.external("step", move |args: &[HostArray]| {
        if counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 2 {
            panic!("the environment broke");
        }
        Ok(args[0].clone())
    });
    q.define(&y, t.eq(0), Expr::splat(1.0, f32s(&[2])));
    q.define(&y, Cond::always(), Expr::call("step", &[&y.at([&t - 1])], f32s(&[2])));
    q.output(&y);
    let compiled = q.runner().compile().unwrap();
    let failed = compiled.run(&[("T", 5)], &[]).unwrap_err().to_string();
    assert!(failed.contains("the environment broke"), "{failed}");
    assert_eq!(compiled.run(&[("T", 5)], &[]).unwrap()[0].shape, vec![5, 2], "the next run works");
}
