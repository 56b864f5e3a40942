//! What runs: invoking compiled code ([`invoke`]: the JIT'd module, the
//! packed arguments), what the generated code calls (stores' memory, the
//! GEMM and attention kernels, external calls, ragged lengths, collectives,
//! the CUDA runtime), the reference interpreter, host arrays and `.npy`
//! input/output. The compiler (gradients, optimizations, lowering, code
//! generation) is the driver's (`tempo-driver`), which calls this crate;
//! this crate does not depend on the lowering.

pub mod array;
pub mod cuda;
pub mod cuda_driver;
pub mod cuda_memory;
pub mod cuda_profile;
pub mod depth_order;
pub mod externals;
pub mod flash;
pub mod gemm;
pub mod guard;
pub mod host_pool;
pub mod interpreter;
pub mod invoke;
pub mod ir;
pub mod memory;
pub mod mpi;
pub mod nccl;
pub mod npy;
pub mod orc;
pub mod ragged;

pub use array::{Data, HostArray};
pub use externals::{Callback, Externals, RawCallback};
pub use invoke::{ArrayView, ArrayViewMut, Input};
