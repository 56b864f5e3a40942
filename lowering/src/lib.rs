//! Lowering of temporal programs: to loops over the stores of the `store`
//! dialect ([`temporal_to_loops`]), the stores to `memref`
//! ([`store_to_memref`]), then through upstream MLIR to LLVM, and the
//! bound-dependent checks the runtime makes before executing
//! ([`point_checks`]).

pub mod check_points_pass;
pub mod contraction;
pub mod point_checks;
pub mod print_schedule_pass;
pub mod schedule;
pub mod schedule_pass;
pub mod select_stores_pass;
pub use tempo_passes::splice;
pub mod store_selection;
pub mod store_to_memref;
pub mod temporal_to_loops;

use tempo_passes::pass::PassRegistry;

/// Upstream passes taking the loop-level code (the output of
/// `lower-store-to-memref`) to the LLVM dialect.
pub const LOOPS_TO_LLVM: &str = "func.func(convert-linalg-to-loops), convert-scf-to-openmp, canonicalize, lower-affine, convert-scf-to-cf, \
     expand-strided-metadata, lower-affine, convert-math-to-libm, convert-to-llvm, reconcile-unrealized-casts";

/// [`TEMPORAL_TO_LLVM`] with the options of a run: fused multiply-add in
/// contractions, and the number of threads (1: no parallel loops; 0: the
/// OpenMP runtime's default, one per core).
pub fn temporal_to_llvm(fast_math: bool, threads: usize) -> String {
    let mut options = Vec::new();
    if fast_math {
        options.push("fast-math=true");
    }
    if threads != 1 {
        options.push("parallel=true");
    }
    let lowering =
        if options.is_empty() { String::new() } else { format!("lower-temporal-to-loops{{{}}}", options.join(" ")) };
    let loops = if threads > 1 {
        LOOPS_TO_LLVM.replace("convert-scf-to-openmp", &format!("convert-scf-to-openmp{{num-threads={threads}}}"))
    } else {
        LOOPS_TO_LLVM.to_string()
    };
    let text = TEMPORAL_TO_LLVM.replace("lower-loops-to-llvm", &loops);
    if lowering.is_empty() { text } else { text.replace("lower-temporal-to-loops", &lowering) }
}

/// The whole compilation pipeline from the temporal dialect to LLVM.
pub const TEMPORAL_TO_LLVM: &str =
    "temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm";

/// The registry of every pass and named pipeline of the project.
pub fn registry() -> PassRegistry {
    let mut registry = PassRegistry::default();
    tempo_passes::register_passes(&mut registry);
    registry.add_pass(check_points_pass::CheckPoints);
    registry.add_pass(schedule_pass::TemporalSchedule);
    registry.add_pass(print_schedule_pass::PrintSchedule);
    registry.add_pass(select_stores_pass::SelectStores);
    registry.add_pass(temporal_to_loops::LowerTemporalToLoops);
    registry.add_pass(store_to_memref::LowerStoreToMemref);
    registry.add_pipeline(
        "lower-loops-to-llvm",
        "Lower the loops/memref/linalg output of lower-store-to-memref to the LLVM dialect (upstream passes)",
        LOOPS_TO_LLVM,
    );
    registry.add_pipeline(
        "temporal-optimize",
        "The exact temporal optimizations of -O2 without bound values: temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-simplify, temporal-dedup, temporal-dce",
        "temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-simplify, temporal-dedup, temporal-dce",
    );
    registry.add_pipeline(
        "temporal-to-llvm",
        "The whole pipeline: temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm",
        TEMPORAL_TO_LLVM,
    );
    registry
}
