//! The compiler driver: what a front end calls to compile a temporal
//! program and run it.
//!
//! A front end (`tempo-run`, `tempo-opt`'s callers, the Rust API, the C
//! API, Python) makes one [`RunOptions`] holding one [`CompileOptions`];
//! [`Executable::compile`] expands gradients, runs the temporal
//! optimizations, checks and schedules the program, lowers it for the
//! target and JIT-compiles it (with the compilation cache), keeping the
//! plans it made (schedule, stores, swaps) for every run;
//! [`Executable::run`] checks a run's bounds and inputs and invokes the
//! compiled code through the runtime (`tempo_runtime::invoke`).
//!
//! Layers: tools and front ends -> driver -> passes, lowering -> dialects;
//! the runtime (what runs: invocation, what generated code calls) beside
//! the compiler, called by the driver, depending on no lowering.
//!
//! - [`options`]: [`RunOptions`], [`Front`];
//! - [`checks`]: what the compilation and the interpreter share;
//! - [`compile`]: the compilation and its phases ([`phases`]), the cache
//!   ([`cache`]);
//! - [`executable`]: the executable and its runs, [`interpret_module`];
//! - [`stops`]: data-dependent stops in a run's outputs;
//! - [`compiled`]: an executable with its own MLIR context.

pub mod cache;
pub mod checks;
pub mod compile;
pub mod compiled;
pub mod executable;
pub mod options;
pub mod phases;
pub mod stops;

pub use compile::{emit_ptx, module_text, optimized_program_text};
pub use compiled::CompiledProgram;
pub use executable::{
    Executable, MemoryReport, Prepared, RunReport, StoreReport, interpret_module, prepare, run_module, run_module_timed,
};
pub use options::{CompileOptions, Front, RunOptions, Target};
// What a front end hands a run and gets back, from the runtime.
pub use tempo_runtime::{ArrayView, ArrayViewMut, Callback, Data, Externals, HostArray, Input, RawCallback};
