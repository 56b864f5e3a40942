//! Running temporal programs: JIT compilation through the whole pipeline,
//! host arrays and `.npy` input/output.

pub mod array;
pub mod engine;

pub use array::{Data, HostArray};
pub use engine::{RunOptions, run_module};
