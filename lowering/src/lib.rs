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

use tempo_passes::compile_options::CompileOptions;
use tempo_passes::pass::{OptionValue, PassRegistry};
use tempo_passes::pipeline::{Step, print_steps};

/// Upstream passes taking the loop-level code (the output of
/// `lower-store-to-memref`) to the LLVM dialect, each outermost spatial loop
/// nest first moved into a function of its own (`outline-loop-nests`), the
/// kernels' loop hints made loop metadata last (`llvm-loop-annotations`).
/// Parallel loops become OpenMP ones with `openmp` threads (`Some(0)`:
/// the OpenMP runtime chooses, one per core; `None`: no OpenMP, the loops
/// stay serial). The `canonicalize`
/// after `convert-to-llvm` folds the chains of
/// `llvm.insertvalue`/`llvm.extractvalue` that memref descriptors leave at
/// every call of a nest and every view: three quarters of the entry's
/// operations in the LSTM training step (8,985 -> 2,361 lines of LLVM IR),
/// which the translation to LLVM IR and LLVM's first passes otherwise
/// walked (translation 135 -> 30 ms).
pub fn loops_to_llvm(openmp: Option<usize>) -> Vec<Step> {
    let openmp = openmp.map(|threads| match threads {
        0 => Step::upstream("convert-scf-to-openmp", ""),
        n => Step::upstream("convert-scf-to-openmp", &format!("num-threads={n}")),
    });
    let mut steps = vec![
        Step::nested("func.func", vec![Step::upstream("convert-linalg-to-loops", "")]),
        Step::pass(outline_loop_nests::OutlineLoopNests),
    ];
    steps.extend(openmp);
    steps.extend(upstream(&[
        "canonicalize",
        "lower-affine",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "lower-affine",
        "convert-math-to-libm",
        "convert-to-llvm",
        "reconcile-unrealized-casts",
        "canonicalize",
    ]));
    steps.push(Step::pass(llvm_loop_annotations::LlvmLoopAnnotations));
    steps
}

/// Upstream passes without options, in order.
fn upstream(names: &[&str]) -> Vec<Step> {
    names.iter().map(|name| Step::upstream(name, "")).collect()
}

/// The passes every target's lowering starts with: gradients expanded, the
/// program verified and scheduled (`schedule`: a caller that writes the
/// schedule it already made into the module leaves it out).
fn temporal_front(schedule: bool) -> Vec<Step> {
    let mut steps = vec![
        Step::pass(tempo_passes::temporal_autodiff::TemporalAutodiff),
        Step::pass(tempo_passes::temporal_verify::VerifyTemporal),
    ];
    if schedule {
        steps.push(Step::pass(schedule_pass::TemporalSchedule));
    }
    steps
}

/// Flags of `lower-temporal-to-loops` and `lower-store-to-memref`.
fn flag(name: &'static str, on: bool) -> (&'static str, OptionValue) {
    (name, OptionValue::Flag(on))
}

/// The lowering of a temporal program to the LLVM dialect on the CPU with
/// the options of a compilation: fused multiply-add in contractions and
/// the runtime's GEMM for large products (fast math), fusion of the spatial
/// work, computing the points of one depth of a data group together
/// (depth batching), the number of threads (1: no parallel loops; 0: the
/// OpenMP runtime's default, one per core), and a memory budget with the
/// bound values: stores past it are swapped to a file
/// (`lower-temporal-to-loops{memory-budget=...}`); `mpi` is the MPI ABI the
/// code of a program using the processes of its run calls
/// (`mpi-implementation`: `OpenMPI` or `MPICH`). `schedule`: whether the
/// pipeline schedules the program itself (see [`temporal_front`]).
pub fn temporal_to_llvm(options: &CompileOptions, mpi: Option<&str>, schedule: bool) -> Vec<Step> {
    let mut given = vec![
        flag("fast-math", options.fast_math),
        // Large products call the runtime's GEMM, which tempo-run and the
        // Rust API register.
        flag("library-gemm", options.fast_math),
        flag("fuse", options.fusion()),
        flag("batch-by-depth", options.depth_batching()),
        flag("parallel", options.threads != 1),
    ];
    given.extend(mpi.map(|name| ("mpi-implementation", OptionValue::Text(name.to_string()))));
    if let Some(bytes) = options.memory_budget {
        given.push(("memory-budget", OptionValue::Unsigned(bytes)));
        given.push(("bounds", OptionValue::Bounds(options.bound_pairs())));
    }
    let mut steps = temporal_front(schedule);
    steps.push(Step::with(temporal_to_loops::LowerTemporalToLoops, given).expect("declared options"));
    steps.push(Step::pass(store_to_memref::LowerStoreToMemref));
    // (With one thread the lowering makes no parallel loops.)
    steps.extend(loops_to_llvm(Some(if options.threads > 1 { options.threads } else { 0 })));
    steps
}

/// Upstream passes (and `gpu-place-memory`) taking the loop-level code
/// (the output of `lower-store-to-memref` after `lower-temporal-to-loops{gpu=true}`)
/// to host code launching GPU kernels of `threads` threads per block (1
/// to 1024): `linalg` ops become parallel loops;
/// adjacent loops over the same points whose dependences stay at the same
/// point are fused (`scf-parallel-loop-fusion`: e.g. a fill and the
/// product that accumulates into it become one kernel; 48 launches a step
/// become 33 in a 2-layer GPT; checked on the CPU, where 4,000 random
/// programs lowered with the same fusion agreed with the interpreter); loops are
/// flattened to one dimension (`gpu-flatten-parallel-loops`) and tiled by
/// `threads` (a guard instead of a partial tile), the tiles mapped to blocks and
/// their points to threads, each loop nest outlined as a `gpu.func`; host
/// buffers go to device memory where only kernels use them, to managed memory
/// otherwise (`gpu-place-memory`).
pub fn loops_to_gpu(threads: u32) -> Vec<Step> {
    let tiling = format!("parallel-loop-tile-sizes={threads} no-min-max-bounds=true");
    vec![
        Step::nested("func.func", upstream(&["convert-linalg-to-parallel-loops", "scf-parallel-loop-fusion"])),
        Step::pass(gpu_flatten_parallel_loops::GpuFlattenParallelLoops),
        Step::nested(
            "func.func",
            vec![
                Step::upstream("scf-parallel-loop-tiling", &tiling),
                Step::upstream("gpu-map-parallel-loops", ""),
                Step::upstream("convert-parallel-loops-to-gpu", ""),
            ],
        ),
        Step::upstream("lower-affine", ""),
        Step::upstream("gpu-kernel-outlining", ""),
        Step::pass(gpu_share_kernels::GpuShareKernels),
        Step::pass(gpu_place_memory::GpuPlaceMemory),
    ]
}

pub use tempo_passes::compile_options::DEFAULT_THREADS_PER_BLOCK;

/// The default GPU architecture of the CUDA target.
pub const DEFAULT_CHIP: &str = "sm_90";

/// Kernels to PTX for `chip` (`gpu.binary` ops holding PTX text), linking
/// `libdevice` (the CUDA math library as LLVM bitcode) when given.
pub fn gpu_to_ptx(chip: &str, libdevice: Option<&str>) -> Vec<Step> {
    let link = libdevice.map(|l| format!(" l={l}")).unwrap_or_default();
    vec![
        Step::upstream("nvvm-attach-target", &format!("chip={chip} O=3{link}")),
        Step::nested(
            "gpu.module",
            upstream(&["convert-scf-to-cf", "convert-gpu-to-nvvm", "reconcile-unrealized-casts"]),
        ),
        Step::upstream("gpu-module-to-binary", "format=isa"),
    ]
}

/// Host code (loops, managed allocations, kernel launches) to the LLVM
/// dialect; launches call the `mgpu*` functions of the runtime, each with
/// the stack memory of its arguments given back after it
/// (`gpu-scope-launch-arguments`).
pub fn gpu_host_to_llvm() -> Vec<Step> {
    let mut steps = vec![Step::nested("func.func", upstream(&["convert-linalg-to-loops"]))];
    steps.extend(upstream(&[
        "lower-affine",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "lower-affine",
        "convert-math-to-libm",
        "gpu-to-llvm",
        "convert-to-llvm",
        "reconcile-unrealized-casts",
    ]));
    steps.push(Step::pass(gpu_scope_launch_arguments::GpuScopeLaunchArguments));
    steps
}

/// The temporal program to the loops of the CUDA target
/// (`lower-temporal-to-loops{gpu=true}`, with fast math where asked, and
/// `lower-store-to-memref{gpu=true}`).
fn temporal_to_gpu_loops(fast_math: bool, schedule: bool) -> Vec<Step> {
    let mut steps = temporal_front(schedule);
    let lowering = [flag("gpu", true), flag("fast-math", fast_math)];
    steps.push(Step::with(temporal_to_loops::LowerTemporalToLoops, lowering).expect("declared options"));
    steps.push(Step::with(store_to_memref::LowerStoreToMemref, [flag("gpu", true)]).expect("declared options"));
    steps
}

/// The whole CUDA pipeline: the temporal program to host code in the LLVM
/// dialect with its kernels as PTX for `chip`, the mapped loops' kernels
/// with `threads_per_block` threads per block; with `fast_math`, matrix
/// products in fused multiply-adds. `schedule` as for [`temporal_to_llvm`].
pub fn temporal_to_cuda(
    chip: &str,
    threads_per_block: u32,
    libdevice: Option<&str>,
    fast_math: bool,
    schedule: bool,
) -> Vec<Step> {
    let mut steps = temporal_to_gpu_loops(fast_math, schedule);
    steps.extend(loops_to_gpu(threads_per_block));
    steps.extend(gpu_to_ptx(chip, libdevice));
    steps.extend(gpu_host_to_llvm());
    steps
}

/// The CUDA target's lowering up to its kernels, then the CPU's: every loop
/// that would become a kernel (including the one-point loops of single
/// values) runs as a parallel loop on `threads` CPU threads (1: none). For
/// checking the GPU lowering against the interpreter without a GPU; the
/// shared-memory matrix kernel (a `gpu.launch`) has no CPU lowering.
/// Returned in two parts: the lowering to loops, after which a caller may
/// look for `gpu.launch`, and the rest. `schedule` as for
/// [`temporal_to_llvm`].
pub fn gpu_loops_on_cpu(threads: usize, schedule: bool) -> (Vec<Step>, Vec<Step>) {
    let mut rest = vec![
        Step::nested("func.func", upstream(&["convert-linalg-to-parallel-loops", "scf-parallel-loop-fusion"])),
        Step::pass(gpu_flatten_parallel_loops::GpuFlattenParallelLoops),
    ];
    rest.extend(loops_to_llvm((threads != 1).then_some(threads)));
    (temporal_to_gpu_loops(false, schedule), rest)
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
    // Named pipelines are text, for tools that take pipeline text
    // (tempo-opt, mlir-opt): the builders' steps, printed once.
    static TEXTS: std::sync::OnceLock<[String; 4]> = std::sync::OnceLock::new();
    let [llvm, gpu, cuda, whole] = TEXTS.get_or_init(|| {
        let cuda = temporal_to_cuda(DEFAULT_CHIP, DEFAULT_THREADS_PER_BLOCK, find_libdevice().as_deref(), false, true);
        let mut whole = temporal_front(true);
        whole.push(Step::pass(temporal_to_loops::LowerTemporalToLoops));
        whole.push(Step::pass(store_to_memref::LowerStoreToMemref));
        whole.push(Step::upstream("lower-loops-to-llvm", ""));
        [
            print_steps(&loops_to_llvm(Some(0))),
            print_steps(&loops_to_gpu(DEFAULT_THREADS_PER_BLOCK)),
            print_steps(&cuda),
            print_steps(&whole),
        ]
    });
    registry.add_pipeline(
        "lower-loops-to-llvm",
        "Lower the loops/memref/linalg output of lower-store-to-memref to the LLVM dialect (upstream passes)",
        llvm,
    );
    registry.add_pipeline(
        "lower-loops-to-gpu",
        "Map the spatial loops of the output of lower-store-to-memref (lower-temporal-to-loops{gpu=true}) to GPU kernels launched from host loops, with buffers in device memory where only kernels use them (gpu-place-memory)",
        gpu,
    );
    registry.add_pipeline(
        "temporal-to-cuda",
        "The whole CUDA pipeline for sm_90: host code in the LLVM dialect launching kernels held as PTX (gpu.binary), libdevice linked when found",
        cuda,
    );
    registry.add_pipeline(
        "temporal-optimize",
        "The exact temporal optimizations of -O2 without bound values: temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-drop-pinned-dims, temporal-simplify, temporal-dedup, temporal-fuse-collectives, temporal-dce",
        "temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-drop-pinned-dims, temporal-simplify, temporal-dedup, temporal-fuse-collectives, temporal-dce",
    );
    registry.add_pipeline(
        "temporal-to-llvm",
        "The whole pipeline: temporal-autodiff, temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref, lower-loops-to-llvm",
        whole,
    );
    registry
}
