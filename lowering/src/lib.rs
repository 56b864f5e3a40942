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
pub mod splice;
pub mod store_selection;
pub mod store_to_memref;
pub mod temporal_to_loops;

use tempo_passes::pass::PassRegistry;

/// Upstream passes taking the loop-level code (the output of
/// `lower-store-to-memref`) to the LLVM dialect.
pub const LOOPS_TO_LLVM: &str = "func.func(convert-linalg-to-loops), lower-affine, convert-scf-to-cf, \
     expand-strided-metadata, lower-affine, convert-math-to-libm, convert-to-llvm, reconcile-unrealized-casts";

/// [`TEMPORAL_TO_LLVM`] with the options of a run.
pub fn temporal_to_llvm(fast_math: bool) -> String {
    if fast_math {
        TEMPORAL_TO_LLVM.replace("lower-temporal-to-loops", "lower-temporal-to-loops{fast-math=true}")
    } else {
        TEMPORAL_TO_LLVM.to_string()
    }
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
        "temporal-to-llvm",
        "The whole pipeline: temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm",
        TEMPORAL_TO_LLVM,
    );
    registry
}
