//! Running temporal programs: JIT compilation through the whole pipeline,
//! host arrays and `.npy` input/output.

pub mod array;
pub mod engine;

pub use array::{Data, HostArray};
pub use engine::{RunOptions, Timings, run_module, run_module_timed};
