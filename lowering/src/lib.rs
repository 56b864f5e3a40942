//! Lowering of temporal programs: to loops over the stores of the `store`
//! dialect ([`temporal_to_loops`]), the stores to `memref`
//! ([`store_to_memref`]), then through upstream MLIR to LLVM, and the
//! bound-dependent checks the runtime makes before executing
//! ([`point_checks`]).

pub mod check_points_pass;
pub mod gpu_flatten_parallel_loops;
pub mod gpu_place_memory;
pub mod gpu_scope_launch_arguments;
pub mod gpu_share_kernels;
pub mod ir_builder;
pub mod llvm_loop_annotations;
pub mod outline_loop_nests;
pub use temporal_to_loops::library_gemm;
pub mod point_checks;
pub mod print_schedule_pass;
pub mod ptx;
pub mod schedule;
pub use schedule::store_selection;
pub mod schedule_pass;
pub mod select_stores_pass;
pub mod store_to_memref;
pub mod temporal_to_loops;

use tempo_passes::pass::PassRegistry;

/// Upstream passes taking the loop-level code (the output of
/// `lower-store-to-memref`) to the LLVM dialect, each outermost spatial loop
/// nest first moved into a function of its own (`outline-loop-nests`), the
/// kernels' loop hints made loop metadata last (`llvm-loop-annotations`).
/// The `canonicalize` after `convert-to-llvm` folds the chains of
/// `llvm.insertvalue`/`llvm.extractvalue` that memref descriptors leave at
/// every call of a nest and every view: three quarters of the entry's
/// operations in the LSTM training step (8,985 -> 2,361 lines of LLVM IR),
/// which the translation to LLVM IR and LLVM's first passes otherwise
/// walked (translation 135 -> 30 ms).
pub const LOOPS_TO_LLVM: &str = "func.func(convert-linalg-to-loops), outline-loop-nests, convert-scf-to-openmp, canonicalize, lower-affine, convert-scf-to-cf, \
     expand-strided-metadata, lower-affine, convert-math-to-libm, convert-to-llvm, reconcile-unrealized-casts, canonicalize, llvm-loop-annotations";

/// [`TEMPORAL_TO_LLVM`] with the options of a run: fused multiply-add in
/// contractions, fusion of the spatial work (`fuse`), computing the points
/// of one depth of a data group together (`batch_by_depth`), the number of
/// threads (1: no parallel loops; 0: the OpenMP runtime's default, one per
/// core), and a memory budget in bytes with the run's bound values
/// (`T=10,B=3`): stores past it are swapped to a file
/// (`lower-temporal-to-loops{memory-budget=...}`), and the MPI ABI the
/// code of a program using the processes of its run calls
/// (`mpi-implementation`: `OpenMPI` or `MPICH`).
pub fn temporal_to_llvm(
    fast_math: bool,
    fuse: bool,
    batch_by_depth: bool,
    threads: usize,
    memory_budget: Option<(u64, &str)>,
    mpi: Option<&str>,
) -> String {
    let mut options = Vec::new();
    let mpi = mpi.map(|name| format!("mpi-implementation={name}"));
    if let Some(mpi) = &mpi {
        options.push(mpi.as_str());
    }
    let budget = memory_budget.map(|(bytes, bounds)| format!("memory-budget={bytes} bounds={bounds}"));
    if let Some(budget) = &budget {
        options.push(budget.as_str());
    }
    if fast_math {
        options.push("fast-math=true");
        // Large products call the runtime's GEMM, which tempo-run and the
        // Rust API register.
        options.push("library-gemm=true");
    }
    if !fuse {
        options.push("fuse=false");
    }
    if !batch_by_depth {
        options.push("batch-by-depth=false");
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
pub const TEMPORAL_TO_LLVM: &str = "temporal-autodiff, temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm";

/// Upstream passes (and `gpu-place-memory`) taking the loop-level code
/// (the output of `lower-store-to-memref` after `lower-temporal-to-loops{gpu=true}`)
/// to host code launching GPU kernels: `linalg` ops become parallel loops;
/// adjacent loops over the same points whose dependences stay at the same
/// point are fused (`scf-parallel-loop-fusion`: e.g. a fill and the
/// product that accumulates into it become one kernel; 48 launches a step
/// become 33 in a 2-layer GPT; checked on the CPU, where 4,000 random
/// programs lowered with the same fusion agreed with the interpreter); loops are
/// flattened to one dimension (`gpu-flatten-parallel-loops`) and tiled by
/// 256 (a guard instead of a partial tile), the tiles mapped to blocks and
/// their points to threads, each loop nest outlined as a `gpu.func`; host
/// buffers go to device memory where only kernels use them, to managed memory
/// otherwise (`gpu-place-memory`).
pub const LOOPS_TO_GPU: &str = "func.func(convert-linalg-to-parallel-loops, scf-parallel-loop-fusion), gpu-flatten-parallel-loops, \
     func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true}, gpu-map-parallel-loops, \
     convert-parallel-loops-to-gpu), lower-affine, gpu-kernel-outlining, gpu-share-kernels, gpu-place-memory";

/// The threads per block of the mapped loops' kernels by default.
pub const DEFAULT_THREADS_PER_BLOCK: u32 = 256;

/// [`LOOPS_TO_GPU`] with `threads` threads per block (1 to 1024).
pub fn loops_to_gpu(threads: u32) -> String {
    LOOPS_TO_GPU.replace("parallel-loop-tile-sizes=256", &format!("parallel-loop-tile-sizes={threads}"))
}

/// The default GPU architecture of the CUDA target.
pub const DEFAULT_CHIP: &str = "sm_90";

/// Kernels to PTX for `chip` (`gpu.binary` ops holding PTX text), linking
/// `libdevice` (the CUDA math library as LLVM bitcode) when given.
pub fn gpu_to_ptx(chip: &str, libdevice: Option<&str>) -> String {
    let link = libdevice.map(|l| format!(" l={l}")).unwrap_or_default();
    format!(
        "nvvm-attach-target{{chip={chip} O=3{link}}}, gpu.module(convert-scf-to-cf, convert-gpu-to-nvvm, \
         reconcile-unrealized-casts), gpu-module-to-binary{{format=isa}}"
    )
}

/// Host code (loops, managed allocations, kernel launches) to the LLVM
/// dialect; launches call the `mgpu*` functions of the runtime, each with
/// the stack memory of its arguments given back after it
/// (`gpu-scope-launch-arguments`).
pub const GPU_HOST_TO_LLVM: &str = "func.func(convert-linalg-to-loops), lower-affine, convert-scf-to-cf, \
     expand-strided-metadata, lower-affine, convert-math-to-libm, gpu-to-llvm, convert-to-llvm, reconcile-unrealized-casts, \
     gpu-scope-launch-arguments";

/// The whole CUDA pipeline: the temporal program to host code in the LLVM
/// dialect with its kernels as PTX for `chip`, the mapped loops' kernels
/// with `threads_per_block` threads per block; with `fast_math`, matrix
/// products in fused multiply-adds.
pub fn temporal_to_cuda(chip: &str, threads_per_block: u32, libdevice: Option<&str>, fast_math: bool) -> String {
    let fast = if fast_math { " fast-math=true" } else { "" };
    format!(
        "temporal-autodiff, temporal-verify, temporal-schedule, lower-temporal-to-loops{{gpu=true{fast}}}, lower-store-to-memref{{gpu=true}}, {}, {}, {GPU_HOST_TO_LLVM}",
        loops_to_gpu(threads_per_block),
        gpu_to_ptx(chip, libdevice)
    )
}

/// The CUDA target's lowering up to its kernels, then the CPU's: every loop
/// that would become a kernel (including the one-point loops of single
/// values) runs as a parallel loop on `threads` CPU threads (1: none). For
/// checking the GPU lowering against the interpreter without a GPU; the
/// shared-memory matrix kernel (a `gpu.launch`) has no CPU lowering.
/// Returned in two parts: the lowering to loops, after which a caller may
/// look for `gpu.launch`, and the rest.
pub fn gpu_loops_on_cpu(threads: usize) -> (String, String) {
    let loops = match threads {
        1 => LOOPS_TO_LLVM.replace("convert-scf-to-openmp, ", ""),
        0 => LOOPS_TO_LLVM.to_string(),
        n => LOOPS_TO_LLVM.replace("convert-scf-to-openmp", &format!("convert-scf-to-openmp{{num-threads={n}}}")),
    };
    (
        "temporal-autodiff, temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}".into(),
        format!(
            "func.func(convert-linalg-to-parallel-loops, scf-parallel-loop-fusion), gpu-flatten-parallel-loops, {loops}"
        ),
    )
}

/// The CUDA math library (`libdevice.10.bc`): `$TEMPO_LIBDEVICE`, else where
/// `tools/setup-cuda.sh` installs it (`target/cuda-tools`, found from the
/// running executable's directories upward).
pub fn find_libdevice() -> Option<String> {
    if let Ok(path) = std::env::var("TEMPO_LIBDEVICE") {
        return std::path::Path::new(&path).is_file().then_some(path);
    }
    // (Binaries are in target/release, test binaries in target/release/deps.)
    let exe = std::env::current_exe().ok()?;
    exe.ancestors()
        .map(|dir| dir.join("cuda-tools/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"))
        .find(|path| path.is_file())
        .map(|path| path.to_string_lossy().into_owned())
}

/// The registry of every pass and named pipeline of the project.
pub fn registry() -> PassRegistry {
    let mut registry = PassRegistry::default();
    tempo_passes::register_passes(&mut registry);
    registry.add_pass(check_points_pass::CheckPoints);
    registry.add_pass(schedule_pass::TemporalSchedule);
    registry.add_pass(print_schedule_pass::PrintSchedule);
    registry.add_pass(select_stores_pass::SelectStores);
    registry.add_pass(temporal_to_loops::LowerTemporalToLoops);
    registry.add_pass(gpu_place_memory::GpuPlaceMemory);
    registry.add_pass(gpu_flatten_parallel_loops::GpuFlattenParallelLoops);
    registry.add_pass(gpu_scope_launch_arguments::GpuScopeLaunchArguments);
    registry.add_pass(gpu_share_kernels::GpuShareKernels);
    registry.add_pass(outline_loop_nests::OutlineLoopNests);
    registry.add_pass(llvm_loop_annotations::LlvmLoopAnnotations);
    registry.add_pass(store_to_memref::LowerStoreToMemref);
    registry.add_pipeline(
        "lower-loops-to-llvm",
        "Lower the loops/memref/linalg output of lower-store-to-memref to the LLVM dialect (upstream passes)",
        LOOPS_TO_LLVM,
    );
    registry.add_pipeline(
        "lower-loops-to-gpu",
        "Map the spatial loops of the output of lower-store-to-memref (lower-temporal-to-loops{gpu=true}) to GPU kernels launched from host loops, with buffers in device memory where only kernels use them (gpu-place-memory)",
        LOOPS_TO_GPU,
    );
    static CUDA: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let cuda = CUDA
        .get_or_init(|| temporal_to_cuda(DEFAULT_CHIP, DEFAULT_THREADS_PER_BLOCK, find_libdevice().as_deref(), false));
    registry.add_pipeline(
        "temporal-to-cuda",
        "The whole CUDA pipeline for sm_90: host code in the LLVM dialect launching kernels held as PTX (gpu.binary), libdevice linked when found",
        cuda,
    );
    registry.add_pipeline(
        "temporal-optimize",
        "The exact temporal optimizations of -O2 without bound values: temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-simplify, temporal-dedup, temporal-fuse-collectives, temporal-dce",
        "temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-simplify, temporal-dedup, temporal-fuse-collectives, temporal-dce",
    );
    registry.add_pipeline(
        "temporal-to-llvm",
        "The whole pipeline: temporal-autodiff, temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm",
        TEMPORAL_TO_LLVM,
    );
    registry
}
