//! Running temporal programs: JIT compilation through the whole pipeline,
//! the reference interpreter, host arrays and `.npy` input/output.

pub mod array;
pub mod cache;
pub mod compiled;
pub mod cuda;
pub mod cuda_driver;
pub mod cuda_memory;
pub mod cuda_profile;
pub mod depth_order;
pub mod engine;
pub mod externals;
pub mod flash;
pub mod gemm;
pub mod guard;
pub mod host_pool;
pub mod interpreter;
pub mod ir;
pub mod memory;
pub mod mpi;
pub mod nccl;
pub mod npy;
pub mod orc;
pub mod ragged;

pub use array::{Data, HostArray};
pub use compiled::CompiledProgram;
pub use engine::{
    ArrayView, ArrayViewMut, CompileOptions, Executable, Front, Input, MemoryReport, RunOptions, RunReport,
    StoreReport, Target, emit_ptx, interpret_module, optimized_program_text, run_module, run_module_timed,
};
pub use externals::{Callback, Externals, RawCallback};
