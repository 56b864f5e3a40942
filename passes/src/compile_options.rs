//! What a compilation is asked for, as one typed value.
//!
//! Every front end (`tempo-run`'s flags, the Rust API's builder, the C
//! API's option text, Python's keywords) makes one [`CompileOptions`]; the
//! compiler builds its pipelines from it as values
//! ([`crate::optimize::optimization_steps`], the lowering's
//! `tempo_lowering::lowering_steps`), each pass receiving its options as
//! typed [`crate::pass::PassOptions`]. Pipeline text exists only where a
//! user hands it in (`tempo-opt`, `mlir-opt`, the C API's pipeline entry),
//! parsed once by [`crate::pipeline::parse_steps`].

use indexmap::IndexMap;

/// The threads per block of the mapped loops' kernels of the CUDA target
/// by default.
pub const DEFAULT_THREADS_PER_BLOCK: u32 = 256;

/// Where compiled code runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Target {
    /// The host CPU (LLVM JIT, OpenMP threads).
    #[default]
    Cpu,
    /// An NVIDIA GPU: kernels as PTX for this architecture (`sm_90`),
    /// launched from host loops (`tempo_lowering::temporal_to_cuda`).
    /// The kernels of mapped loops run `threads_per_block` threads per
    /// block ([`Target::cuda`]: 256).
    Cuda { chip: u32, threads_per_block: u32 },
    /// The CUDA target's lowering run on the CPU: the same loops, one-point
    /// kernels and fused parallel loops, each future kernel a parallel loop
    /// (OpenMP threads) instead of a launch
    /// (`tempo_lowering::gpu_loops_on_cpu`). It checks the GPU lowering
    /// against the interpreter on machines without a GPU. Products that
    /// take the shared-memory kernel (16 rows or more) are refused.
    GpuLoopsOnCpu,
}

impl Target {
    /// The CUDA target for `chip` (`sm_90` is 90) with the default threads
    /// per block.
    pub fn cuda(chip: u32) -> Target {
        Target::Cuda { chip, threads_per_block: DEFAULT_THREADS_PER_BLOCK }
    }
}

/// The name `--disable-pass` takes for the fusion of
/// `lower-temporal-to-loops` (not a temporal pass: an option of the
/// lowering, `fuse`).
pub const FUSION: &str = "fusion";

/// The name `--disable-pass` takes for the batching of data groups by
/// `lower-temporal-to-loops` (its `batch-by-depth` option): without it,
/// the points of one depth run one by one.
pub const DEPTH_BATCHING: &str = "depth-batching";

/// One compilation's options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileOptions {
    /// The optimization level, 0 to 3 (2 by default: every exact temporal
    /// pass): the temporal passes' ([`crate::optimize`]) and LLVM's
    /// ([`Self::llvm_level`]).
    pub level: u8,
    /// Passes of the level left out, by name (and [`FUSION`],
    /// [`DEPTH_BATCHING`]).
    pub disabled: Vec<String>,
    /// A memory budget in bytes: at level 2 the temporaries of attention
    /// over a range are tiled where they could exceed it
    /// (`temporal-tile-ranges`, inexact), and at every level stores written
    /// by a forward loop and read back by a backward one are swapped to a
    /// file where the stores exceed it (exact); `None`: neither.
    pub memory_budget: Option<u64>,
    /// Contractions with fused multiply-add (one rounding instead of two)
    /// and the runtime's GEMM for large products; off, compiled results
    /// are bit-exact with the interpreter's order.
    pub fast_math: bool,
    /// Threads for the parallel loops of a step: 1 runs everything on the
    /// calling thread, 0 (the default) one per core.
    pub threads: usize,
    /// Where the code runs.
    pub target: Target,
    /// Bound values the size-dependent optimizations specialize for
    /// (vectorization, a memory budget's tiling and swapping), by bound
    /// name; the code stays correct at any bounds. Empty: none known (no
    /// vectorization).
    pub bounds: IndexMap<String, i64>,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            level: 2,
            disabled: Vec::new(),
            memory_budget: None,
            fast_math: false,
            threads: 0,
            target: Target::Cpu,
            bounds: IndexMap::new(),
        }
    }
}

impl CompileOptions {
    /// LLVM's optimization and code generation level: the same number as
    /// the temporal level (`-O0` to `-O3`), in every front end (`tempo-run`,
    /// the Rust API, the C API, Python).
    pub fn llvm_level(&self) -> usize {
        usize::from(self.level.min(3))
    }

    /// Whether `lower-temporal-to-loops` fuses the spatial work: at levels
    /// 1 to 3, unless [`FUSION`] is disabled.
    pub fn fusion(&self) -> bool {
        self.level >= 1 && !self.is_disabled(FUSION)
    }

    /// Whether `lower-temporal-to-loops` computes the points of one depth
    /// of a data group together: at every level (it changes no result),
    /// unless [`DEPTH_BATCHING`] is disabled.
    pub fn depth_batching(&self) -> bool {
        !self.is_disabled(DEPTH_BATCHING)
    }

    /// Whether `name` is left out.
    pub fn is_disabled(&self, name: &str) -> bool {
        self.disabled.iter().any(|d| d == name)
    }

    /// The bound values as the passes' `bounds` options hold them.
    pub fn bound_pairs(&self) -> Vec<(String, i64)> {
        self.bounds.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    /// Whether the code runs on the CPU (its own lowering, not the GPU's
    /// run on the CPU).
    pub fn cpu(&self) -> bool {
        self.target == Target::Cpu
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_decide_fusion_and_llvm() {
        let at = |level| CompileOptions { level, ..Default::default() };
        assert!(!at(0).fusion());
        assert!(at(1).fusion() && at(3).fusion());
        assert_eq!(at(0).llvm_level(), 0);
        assert_eq!(at(2).llvm_level(), 2);
        let off = CompileOptions { disabled: vec![FUSION.into(), DEPTH_BATCHING.into()], ..Default::default() };
        assert!(!off.fusion() && !off.depth_batching());
        assert!(CompileOptions::default().depth_batching());
    }
}
