//! Compiling a temporal program to native code with MLIR's ExecutionEngine
//! and running it on host arrays.

use crate::array::{Data, HostArray};
use crate::externals::{CURRENT, CallContext, Externals, tempo_external_call};
use crate::memory::{bytes_of, check_fits, human};
use indexmap::IndexMap;
use melior::{Context, ir::Module, pass::PassManager};
use tempo_lowering::{
    point_checks::check_points,
    schedule::{Schedule, Storage},
    store_selection::Slicing,
    temporal_to_loops::{ENTRY, MEMORY_STATS},
};
pub use tempo_passes::compile_options::{CompileOptions, Target};
use tempo_passes::{
    diagnostics::{DiagnosticCollector, PassDiagnostic, render_location},
    pipeline::{self, Step},
    program::{ElementType, PointType, Program},
    verify::verify_program,
};

/// Who runs a program, so that messages name what that caller can change
/// (a command-line flag, a method, an argument).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Front {
    /// `tempo-run`: flags.
    #[default]
    CommandLine,
    /// The Rust API (`Runner`, `Compiled`).
    Rust,
    /// The C API (`tempoRun`).
    C,
    /// The Python package.
    Python,
}

impl Front {
    /// How to give bound `name`.
    fn give_bound(self, name: &str) -> String {
        match self {
            Front::CommandLine => format!("give it with --bound {name}=N"),
            Front::Rust => format!("give it with .bound(\"{name}\", N)"),
            Front::C => format!("give it in tempoRun's bounds, {{\"{name}\", N}}"),
            Front::Python => format!("give it as {name}=N"),
        }
    }

    /// How to give input `name`.
    fn give_input(self, name: &str) -> String {
        match self {
            Front::CommandLine => format!("give it with --input {name}=FILE.npy or pass --seed N for random values"),
            Front::Rust => format!("give it with .input(HostArray named \"{name}\") or .seed(N) for random values"),
            Front::C => "give it in tempoRun's inputs, in the program's order".to_string(),
            Front::Python => format!("give it as {name}=array or seed=N for random values"),
        }
    }
}

/// An input in the caller's memory: row-major elements of `element` at
/// `data`, of `shape`. Whoever puts one in [`RunOptions::input_views`]
/// keeps the memory alive and unchanged until the run returns.
#[derive(Clone, Debug)]
pub struct ArrayView {
    pub shape: Vec<usize>,
    pub element: ElementType,
    pub data: *const u8,
}

/// Memory of the caller an output is written into: room for `shape`'s
/// elements of `element`, row-major, at `data`, which whoever puts it in
/// [`RunOptions::output_views`] keeps alive until the run returns.
#[derive(Clone, Debug)]
pub struct ArrayViewMut {
    pub shape: Vec<usize>,
    pub element: ElementType,
    pub data: *mut u8,
}

/// An input of a run: an array, or a view of the caller's memory.
pub enum Input<'o> {
    Array(std::borrow::Cow<'o, HostArray>),
    View(&'o ArrayView),
}

impl Input<'_> {
    /// The first element's address.
    fn data(&self) -> *const u8 {
        match self {
            Input::Array(a) => a.data.as_ptr(),
            Input::View(v) => v.data,
        }
    }
    fn shape(&self) -> &[usize] {
        match self {
            Input::Array(a) => &a.shape,
            Input::View(v) => &v.shape,
        }
    }
    fn bytes(&self) -> usize {
        match self {
            Input::Array(a) => a.data.len() * a.data.element().byte_size(),
            Input::View(v) => v.shape.iter().product::<usize>() * v.element.byte_size(),
        }
    }
    /// The elements, copied.
    pub fn to_data(&self) -> Data {
        match self {
            Input::Array(a) => a.data.clone(),
            Input::View(v) => {
                // SAFETY: the view's owner keeps `bytes` bytes at `data`
                // alive during the run (`ArrayView`).
                let bytes = unsafe { std::slice::from_raw_parts(v.data, self.bytes()) };
                Data::from_bytes(v.element, bytes).unwrap_or_else(|_| Data::zeros(v.element, 0))
            }
        }
    }
    /// The input as an array (a view's elements copied).
    pub fn to_array(&self, name: &str) -> std::borrow::Cow<'_, HostArray> {
        match self {
            Input::Array(a) => std::borrow::Cow::Borrowed(a.as_ref()),
            Input::View(v) => std::borrow::Cow::Owned(HostArray {
                name: name.to_string(),
                shape: v.shape.clone(),
                data: self.to_data(),
            }),
        }
    }
}

/// What a run needs besides the program.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Who runs it (how messages phrase what to change).
    pub front: Front,
    /// Bound values by bound name (`T` -> 10).
    pub bounds: IndexMap<String, i64>,
    /// Input arrays by tensor name.
    pub inputs: IndexMap<String, HostArray>,
    /// Inputs read in place from the caller's memory (not copied), by
    /// tensor name: what a front end passes for its arrays (NumPy's).
    pub input_views: IndexMap<String, ArrayView>,
    /// Outputs written straight into the caller's memory (not allocated
    /// and copied), by tensor name; such an output comes back from the run
    /// with its shape and no data.
    pub output_views: IndexMap<String, ArrayViewMut>,
    /// Seed for inputs not given in `inputs`; without it they are an error.
    pub seed: Option<u64>,
    /// Name of the program's source in diagnostics (locations of text
    /// parsed from a string carry MLIR's `-`).
    pub source_name: String,
    /// Callbacks for the program's `temporal.call`s.
    pub externals: Externals,
    /// Write the JIT-compiled object code to this file (for profilers and
    /// disassemblers).
    pub dump_object: Option<String>,
    /// What the compilation is asked for: optimization level, passes left
    /// out, fast math, threads (without the LLVM OpenMP runtime, `libomp`,
    /// runs use one), target, memory budget, and the bound values the
    /// size-dependent optimizations specialize for ([`run_module`]: the
    /// run's).
    pub compile: CompileOptions,
    /// Where a compiler fault writes the generated module it names
    /// (process-wide while compiling; `None`: the system's temporary
    /// directory). See `tempo_passes::fault`.
    pub dump_on_error: Option<std::path::PathBuf>,
    /// Report compile time by pass too: each MLIR pipeline of the
    /// compilation prints MLIR's execution time report (every temporal and
    /// upstream pass) to stderr. The phases ([`RunReport::phases`]) are
    /// measured either way.
    pub pass_timings: bool,
    /// Verify the module after every pass of the compilation (MLIR's
    /// `verify-each`), not only once after each pipeline: a pass that
    /// leaves invalid IR is then named. Off by default: verifying the
    /// lowered module after each of its 15 upstream passes was half of the
    /// MLIR lowering's time (the GPT training step: 839 -> 371 ms). The
    /// test suite's compiled runs turn it on.
    pub verify_each: bool,
}

impl RunOptions {
    /// These options without the run's data (inputs, input and output
    /// views): what a compilation keeps, copied without copying arrays.
    fn settings(&self) -> RunOptions {
        RunOptions {
            front: self.front,
            bounds: self.bounds.clone(),
            inputs: IndexMap::new(),
            input_views: IndexMap::new(),
            output_views: IndexMap::new(),
            seed: self.seed,
            source_name: self.source_name.clone(),
            externals: self.externals.clone(),
            dump_object: self.dump_object.clone(),
            compile: self.compile.clone(),
            dump_on_error: self.dump_on_error.clone(),
            pass_timings: self.pass_timings,
            verify_each: self.verify_each,
        }
    }
}

/// The LLVM OpenMP runtime (Debian's `libomp-22-dev`), loaded into the JIT
/// for parallel loops.
pub const OPENMP_RUNTIME: &str = "/usr/lib/llvm-22/lib/libomp.so";

/// An input or output of a program.
#[derive(Clone, Debug)]
struct Slot {
    name: String,
    domain: Vec<usize>,
    point: PointType,
}

fn render(diagnostics: &[PassDiagnostic], source_name: &str) -> Vec<String> {
    diagnostics.iter().map(|d| format!("{}: error: {}", render_location(&d.location, source_name), d.message)).collect()
}

/// Wall-clock time spent in each phase of a run.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Everything before the compiled code runs: gradient expansion,
    /// temporal optimizations, verification, checks, store sizing, lowering
    /// and JIT compilation.
    pub compile: std::time::Duration,
    /// Executing the compiled program.
    pub execute: std::time::Duration,
    /// Stores and the memory they took (compiled runs only).
    pub memory: Option<MemoryReport>,
    /// The GPU the run used (CUDA target).
    pub device: Option<String>,
    /// Where the CUDA target put its buffers, and the device memory mapped
    /// under growing block stores.
    pub device_memory: Option<crate::cuda_memory::DeviceMemory>,
    /// Per data-dependent stop (`temporal.stop`, in program order), where
    /// its dimension ended: one length, or for a ragged stop one per point
    /// of its batch dimensions (row-major). Compiled runs only.
    pub stop_lengths: Vec<Vec<i64>>,
    /// Compile time by phase, in order (see [`phases`]).
    pub phases: Vec<(&'static str, std::time::Duration)>,
    /// What the compilation cache did ([`crate::cache`]); `None` when it
    /// was not used (off, the CUDA target, `--dump-object`,
    /// `--pass-timings`, a program that demands nothing).
    pub cache: Option<crate::cache::Outcome>,
    /// How many objects the CPU code was compiled to (its partitions,
    /// `TEMPO_COMPILE_PARTITIONS`); `None` for MLIR's ExecutionEngine.
    pub objects: Option<usize>,
}

/// Compile time by phase: each phase of [`Executable::compile`] adds its
/// wall time here as it ends (per thread: a compile runs on one).
pub mod phases {
    use std::cell::RefCell;
    use std::time::{Duration, Instant};

    thread_local! {
        static PHASES: RefCell<Vec<(&'static str, Duration)>> = const { RefCell::new(Vec::new()) };
    }

    /// Runs `f`, adding its wall time to phase `name`.
    pub fn time<R>(name: &'static str, f: impl FnOnce() -> R) -> R {
        let start = Instant::now();
        let result = f();
        add(name, start.elapsed());
        result
    }

    /// Adds `spent` to phase `name`.
    pub fn add(name: &'static str, spent: Duration) {
        PHASES.with(|p| {
            let mut p = p.borrow_mut();
            match p.iter_mut().find(|(n, _)| *n == name) {
                Some(entry) => entry.1 += spent,
                None => p.push((name, spent)),
            }
        });
    }

    /// The phases recorded since the last call, cleared.
    pub fn take() -> Vec<(&'static str, Duration)> {
        PHASES.with(|p| std::mem::take(&mut *p.borrow_mut()))
    }
}

/// An output over a ragged stop's dimension and batch dimensions: its
/// number, the stopped dimension's axis, the batch dimensions' axes and
/// bounds (in the stop's order), and the stop's number.
struct RaggedOutput {
    output: usize,
    axis: usize,
    batch_axes: Vec<usize>,
    batch_extents: Vec<usize>,
    stop: usize,
}

/// The stores of a compiled run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryReport {
    /// The largest number of bytes held by live stores at once, counted by
    /// the compiled code as it allocates and frees them (inputs, outputs
    /// and per-point temporaries are not stores).
    pub peak_store_bytes: u64,
    /// Bytes still held by stores when the program returned (0: every store
    /// was freed).
    pub live_store_bytes_at_exit: u64,
    /// Every tensor's store, in program order.
    pub stores: Vec<StoreReport>,
}

/// Where one tensor lived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreReport {
    pub tensor: String,
    /// `input`, `output`, `point`, `ring<k>`, `window<w>` or `full`.
    pub kind: String,
    /// Bytes of the store for this run's bounds (`None` for inputs and
    /// outputs, which live in the caller's arrays).
    pub bytes: Option<u64>,
}

/// Bound values, input arrays and zeroed output arrays for a run, checked
/// against the program: every bound given and non-negative, no unknown
/// bound or input, inputs of the right dtype and shape (`[domain bounds...,
/// point shape...]`), or seeded random ones, and enough host memory.
pub struct Prepared<'o> {
    /// One value per dimension, in dimension order.
    pub bounds: Vec<i64>,
    /// One array per input tensor, in declaration order.
    /// One array per input tensor, in declaration order: the caller's
    /// arrays or memory themselves (weights are used in place, never
    /// copied), or seeded random ones.
    pub inputs: Vec<Input<'o>>,
    /// Name, shape and element type of each output, in output order.
    pub outputs: Vec<(String, Vec<usize>, ElementType)>,
}

/// Checks and gathers what a run of `program` needs; errors are rendered lines.
pub fn prepare<'o>(program: &Program, options: &'o RunOptions) -> Result<Prepared<'o>, Vec<String>> {
    // Bounds: every bound given, nothing unknown, non-negative.
    let mut bounds = Vec::new();
    for (d, dim) in program.dims.iter().enumerate() {
        match options.bounds.get(&dim.bound) {
            Some(&v) if v >= 0 => bounds.push(v),
            Some(&v) => return Err(vec![format!("error: bound {} = {v} must be >= 0", dim.bound)]),
            // Nothing depends on it: any value does.
            None if !program.uses_bound(d) => bounds.push(0),
            None => {
                // At the dimension declaring the bound.
                let at = program.dim_locations.get(bounds.len()).map(|l| render_location(l, &options.source_name));
                let at = at.map_or(String::new(), |l| format!("{l}: "));
                return Err(vec![format!(
                    "{at}error: missing bound {} ({})",
                    dim.bound,
                    options.front.give_bound(&dim.bound)
                )]);
            }
        }
    }
    for name in options.bounds.keys() {
        if !program.dims.iter().any(|d| &d.bound == name) {
            let known: Vec<&str> = program.dims.iter().map(|d| d.bound.as_str()).collect();
            // At the program, which declares no such bound.
            let at = program
                .location
                .as_ref()
                .map_or(String::new(), |l| format!("{}: ", render_location(l, &options.source_name)));
            return Err(vec![format!(
                "{at}error: unknown bound '{name}' (the program's bounds: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )]);
        }
    }
    check_externals(program, options)?;
    let shape_of = |slot: &Slot| -> Vec<usize> {
        slot.domain.iter().map(|&d| bounds[d] as usize).chain(slot.point.shape.iter().map(|&d| d as usize)).collect()
    };
    let input_slots: Vec<Slot> = program
        .tensors
        .iter()
        .filter(|t| t.is_input)
        .map(|t| Slot { name: t.name.clone(), domain: t.domain.clone(), point: t.point.clone() })
        .collect();
    let output_slots: Vec<Slot> = program
        .outputs
        .iter()
        .map(|&i| {
            let t = &program.tensors[i];
            Slot { name: t.name.clone(), domain: t.domain.clone(), point: t.point.clone() }
        })
        .collect();
    // Inputs are allocated here (random ones) or already are (given ones);
    // outputs and stores are checked by the caller.
    let input_bytes = input_slots.iter().try_fold(0u64, |total, slot| {
        bytes_of(shape_of(slot).iter().map(|&d| d as u64), slot.point.element.byte_size() as u64)
            .and_then(|bytes| total.checked_add(bytes))
    });
    check_fits(input_bytes, "the program's inputs for these bounds").map_err(|e| vec![format!("error: {e}")])?;
    for name in options.inputs.keys().chain(options.input_views.keys()) {
        if !input_slots.iter().any(|s| &s.name == name) {
            let known: Vec<&str> = input_slots.iter().map(|s| s.name.as_str()).collect();
            return Err(vec![format!(
                "error: '{name}' is not an input of the program (inputs: {})",
                if known.is_empty() { "none".into() } else { known.join(", ") }
            )]);
        }
    }
    let mut inputs = Vec::new();
    for slot in &input_slots {
        let shape = shape_of(slot);
        if let Some(view) = options.input_views.get(&slot.name) {
            if view.shape != shape || view.element != slot.point.element {
                return Err(vec![format!(
                    "error: input '{}' must be {}{:?}, got {}{:?}",
                    slot.name,
                    slot.point.element.numpy(),
                    shape,
                    view.element.numpy(),
                    view.shape
                )]);
            }
            inputs.push(Input::View(view));
            continue;
        }
        let array = match (options.inputs.get(&slot.name), options.seed) {
            (Some(a), _) => {
                if a.shape != shape || a.data.element() != slot.point.element {
                    return Err(vec![format!(
                        "error: input '{}' must be {}{:?}, got {}{:?}",
                        slot.name,
                        slot.point.element.numpy(),
                        shape,
                        a.data.element().numpy(),
                        a.shape
                    )]);
                }
                Input::Array(std::borrow::Cow::Borrowed(a))
            }
            (None, Some(seed)) => {
                Input::Array(std::borrow::Cow::Owned(HostArray::random(&slot.name, shape, slot.point.element, seed)))
            }
            (None, None) => {
                return Err(vec![format!(
                    "error: missing input '{}' ({}{:?}): {}",
                    slot.name,
                    slot.point.element.numpy(),
                    shape,
                    options.front.give_input(&slot.name)
                )]);
            }
        };
        inputs.push(array);
    }
    let outputs = output_slots
        .iter()
        .map(|slot| {
            let shape = shape_of(slot);
            (slot.name.clone(), shape, slot.point.element)
        })
        .collect();
    Ok(Prepared { bounds, inputs, outputs })
}

/// Compiles `module` (a temporal program) and runs it. Errors come back as
/// rendered diagnostic lines.
pub fn run_module(context: &Context, module: &mut Module, options: &RunOptions) -> Result<Vec<HostArray>, Vec<String>> {
    run_module_timed(context, module, options).map(|(outputs, _)| outputs)
}

/// Every external function the program calls is registered.
fn check_externals(program: &Program, options: &RunOptions) -> Result<(), Vec<String>> {
    let missing: Vec<String> = options
        .externals
        .missing(&program.call_sites)
        .iter()
        .map(|site| {
            format!(
                "{}: error: external function '{}' is not registered (register a callback under this name)",
                render_location(&site.location, &options.source_name),
                site.callee
            )
        })
        .collect();
    if missing.is_empty() { Ok(()) } else { Err(missing) }
}

/// The temporal optimization steps of `options`.
fn optimization_steps(options: &CompileOptions) -> Result<Vec<Step>, Vec<String>> {
    tempo_passes::optimize::optimization_steps(options).map_err(|e| vec![format!("error: {e}")])
}

/// Runs `steps` on `module`, collecting diagnostics (the
/// collector stays attached for the caller); on failure, the diagnostics
/// then `failure`.
fn run_pipeline<'c>(
    context: &'c Context,
    module: &mut Module,
    steps: &[Step],
    source_name: &str,
    failure: &str,
    options: &RunOptions,
) -> Result<DiagnosticCollector<'c>, Vec<String>> {
    let collector = DiagnosticCollector::attach_for_source(context, source_name);
    let manager = PassManager::new(context);
    manager.enable_verifier(options.verify_each);
    if options.pass_timings {
        // MLIR's report, printed to stderr when the manager is dropped.
        unsafe { mlir_sys::mlirPassManagerEnableTiming(manager.to_raw()) };
    }
    pipeline::add_to_pass_manager(&manager, steps).map_err(|e| vec![format!("error: {e}")])?;
    if manager.run(module).is_err() {
        let mut lines = collector.take();
        lines.push(format!("error: {failure}"));
        return Err(lines);
    }
    // Without `verify_each`, the pipeline's result is verified once here
    // (what the next pipeline or the translation to LLVM IR assumes).
    if !options.verify_each && !melior::ir::operation::OperationLike::verify(&module.as_operation()) {
        let mut lines = collector.take();
        lines.push(format!(
            "error: {failure}: the compiler produced invalid IR (a compiler fault; --verify-each names the pass)"
        ));
        return Err(lines);
    }
    Ok(collector)
}

/// Expands `temporal.grad` (and removes `temporal.stop_gradient`) in place:
/// what a program with gradients means, for the compiler and the
/// interpreter alike.
fn expand_gradients(module: &Module, source_name: &str) -> Result<(), Vec<String>> {
    use tempo_passes::pass::TempoPass;
    tempo_passes::temporal_autodiff::TemporalAutodiff
        .run(module.as_operation(), &Default::default())
        .map_err(|d| render(&d, source_name))
}

/// Like [`run_module`], also reporting how long compiling and executing
/// took. Compiled for one run, the program is specialized for that run's
/// bounds: they replace `options.compile.bounds`.
pub fn run_module_timed(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
) -> Result<(Vec<HostArray>, RunReport), Vec<String>> {
    let compile = CompileOptions { bounds: options.bounds.clone(), ..options.compile.clone() };
    let once = RunOptions { compile, ..options.settings() };
    Executable::compile(context, module, &once)?.run(options)
}

/// A temporal program compiled once, to be run many times with new bounds
/// and inputs ([`Executable::run`]). The code is the same for any bounds
/// (they are arguments of the compiled function); the bounds given when
/// compiling only steer optimizations that depend on sizes (a memory
/// budget's tiling and swapping), which are correct at any bounds.
pub struct Executable<'c> {
    /// The optimized temporal program as the passes read it, verified once (each run checks
    /// its bounds and inputs against it), and its schedule: built once,
    /// not on every run.
    checked: Program<'c>,
    schedule: Schedule,
    /// The compiled code; `None` when the program demands nothing.
    engine: Option<Engine>,
    /// The options compiled with (target, externals, source name).
    options: RunOptions,
    /// The external call sites: callee, argument and result types, and
    /// where each is in the user's source.
    sites: Vec<(String, Vec<PointType>, PointType)>,
    site_locations: Vec<String>,
    /// Outputs that are inputs (output position, input position): copies
    /// of the input arrays, which the compiled code does not touch.
    input_outputs: Vec<(usize, usize)>,
    compile: std::time::Duration,
    phases: Vec<(&'static str, std::time::Duration)>,
    cache: Option<crate::cache::Outcome>,
    /// The location of each read through data, rendered (for its run-time
    /// errors, [`crate::depth_order`]).
    read_locations: Vec<String>,
}

impl<'c> Executable<'c> {
    /// Compiles `module` (a temporal program, transformed in place: the
    /// optimizations, then the lowering to LLVM) with `options` (their
    /// bounds and inputs are not needed yet).
    pub fn compile(context: &Context, module: &mut Module<'c>, options: &RunOptions) -> Result<Self, Vec<String>> {
        // Compile time: everything before the entry runs (gradients,
        // optimizations, lowering, code generation).
        let compile_start = std::time::Instant::now();
        phases::take();
        // A program using the processes of its run opens them (MPI under
        // a launcher) before anything is compiled for them.
        crate::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
        // The compilation cache (CPU only): the key of the program as
        // given and the options; a hit replaces the program with the
        // optimized one it was compiled from and skips to loading.
        let cache = cache_for(module, options);
        let cached = cache.as_ref().and_then(|(cache, key)| {
            let entry = phases::time("cache lookup", || cache.load(key))?;
            let parsed = phases::time("cache lookup", || module_from_bytecode(context, &entry.program))?;
            *module = parsed;
            Some(entry)
        });
        if cached.is_none() {
            optimize(context, module, options)?;
        } else {
            // The optimized program may hold collectives the program as
            // given did not (a gradient's `all_reduce` becomes one in
            // temporal-autodiff): it opens the processes, as a cold
            // compile's lowering does, so that linking finds MPI's
            // symbols.
            crate::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
        }
        let (program, schedule) = phases::time("verification and schedule", || {
            let fail = |d: Vec<PassDiagnostic>| render(&d, &options.source_name);
            let program = verify_program(module.as_operation()).map_err(fail)?;
            // A cached program holds the schedule it was compiled with
            // (`@tempo_schedule`): checked, not searched for again.
            let found = match cached {
                Some(_) => {
                    tempo_lowering::schedule_pass::read_schedule(module.as_operation(), &program).map_err(fail)?
                }
                None => None,
            };
            let schedule = match found {
                Some((nests, location)) => Schedule::with_nests(&program, nests, location).map_err(fail)?,
                None => Schedule::new(&program).map_err(fail)?,
            };
            check_externals(&program, options)?;
            Ok::<_, Vec<String>>((program, schedule))
        })?;
        let input_outputs: Vec<(usize, usize)> = program
            .outputs
            .iter()
            .enumerate()
            .filter(|&(_, &t)| program.tensors[t].is_input)
            .map(|(k, &t)| (k, program.tensors[..t].iter().filter(|x| x.is_input).count()))
            .collect();
        let site_locations: Vec<String> =
            program.call_sites.iter().map(|s| render_location(&s.location, &options.source_name)).collect();
        let read_locations: Vec<String> = tempo_passes::data_reads::read_sites(&program)
            .iter()
            .map(|&(t, k, n)| render_location(&program.tensors[t].branches[k].nodes[n].location, &options.source_name))
            .collect();
        let sites: Vec<(String, Vec<PointType>, PointType)> =
            program.call_sites.iter().map(|s| (s.callee.clone(), s.args.clone(), s.result.clone())).collect();
        let demands = !program.outputs.is_empty();
        // The lowering follows this schedule (written into the module as
        // `@tempo_schedule`, so the cache keeps it too) rather than
        // scheduling the program once more.
        if cached.is_none() && demands {
            tempo_lowering::schedule_pass::insert_schedule(module.as_operation(), &program, &schedule)
                .map_err(|d| render(&d, &options.source_name))?;
        }
        // The optimized program's text for a new cache entry, before the
        // lowering transforms the module.
        let printing = std::time::Instant::now();
        let optimized_text = match (&cache, &cached) {
            (Some(_), None) if demands => Some(module_bytecode(module.as_operation())),
            _ => None,
        };
        let printing = printing.elapsed();
        // Nothing is demanded, so nothing runs (as in the interpreter).
        let engine = match demands {
            true => {
                let (engine, _entry) = match &cached {
                    Some(entry) => load_cached(entry, options, !sites.is_empty())?,
                    None => jit(context, module, options, !sites.is_empty())?,
                };
                if matches!(options.compile.target, Target::Cuda { .. }) {
                    // Loads the kernel modules (global constructors of the host code).
                    if let Backend::Mlir(raw) = &engine.backend {
                        unsafe { mlir_sys::mlirExecutionEngineInitialize(*raw) };
                    }
                }
                Some(engine)
            }
            false => None,
        };
        let outcome = match (cache, &engine) {
            (Some((cache, key)), Some(engine)) => Some(match cached {
                Some(_) => crate::cache::Outcome::Hit(cache.path(&key)),
                None => {
                    let stored = match &engine.backend {
                        Backend::Orc(_, objects, openmp) => phases::time("cache store", || {
                            phases::add("cache store", printing);
                            let program = optimized_text.unwrap_or_default();
                            let entry = crate::cache::Entry { program, openmp: *openmp, objects: objects.clone() };
                            cache.store(&key, &entry)
                        }),
                        Backend::Mlir(_) => Err("compiled by MLIR's ExecutionEngine".into()),
                    };
                    crate::cache::Outcome::Miss { entry: cache.path(&key), stored }
                }
            }),
            _ => None,
        };
        let compiled = options.settings();
        let mut schedule = schedule;
        if let (Target::Cpu, Some(budget)) = (&options.compile.target, options.compile.memory_budget) {
            // The swap plan the lowering made (lower-temporal-to-loops{memory-budget}
            // at the compile's bounds), kept for every run: the stores the
            // runs report and check are the compiled code's.
            let values: Vec<Option<i64>> =
                program.dims.iter().map(|d| options.compile.bounds.get(&d.bound).copied()).collect();
            schedule.plan_swaps(&program, budget, &values);
        }
        Ok(Self {
            cache: outcome,
            checked: program,
            schedule,
            engine,
            options: compiled,
            sites,
            site_locations,
            read_locations,
            input_outputs,
            compile: compile_start.elapsed(),
            phases: phases::take(),
        })
    }

    /// The program's bound names, in dimension order.
    pub fn bounds(&self) -> Result<Vec<String>, Vec<String>> {
        let program = &self.checked;
        Ok(program.dims.iter().map(|d| d.bound.clone()).collect())
    }

    /// The program's inputs (name, element type, shape at `bounds`, in
    /// declaration order) and outputs (the same, in output order).
    #[allow(clippy::type_complexity)]
    pub fn interface(
        &self,
    ) -> Result<(Vec<(String, PointType, Vec<usize>)>, Vec<(String, PointType, Vec<usize>)>), Vec<String>> {
        let program = &self.checked;
        let slot = |t: &tempo_passes::program::Tensor| (t.name.clone(), t.point.clone(), t.domain.clone());
        let inputs = program.tensors.iter().filter(|t| t.is_input).map(slot);
        let outputs = program.outputs.iter().map(|&i| slot(&program.tensors[i]));
        let as_dims = |(name, point, domain): (String, PointType, Vec<usize>)| (name, point, domain);
        Ok((inputs.map(as_dims).collect(), outputs.map(as_dims).collect()))
    }

    /// Runs the compiled code with `run`'s bounds, inputs and seed (the
    /// rest of `run` is as compiled): the outputs, and how long compiling
    /// (once) and this run took.
    pub fn run(&self, run: &RunOptions) -> Result<(Vec<HostArray>, RunReport), Vec<String>> {
        let program = &self.checked;
        // The schedule, stores and swap plan the code was compiled with.
        let schedule = &self.schedule;
        let Prepared { bounds, inputs, outputs } = prepare(&program, run)?;
        // Across processes, the same collectives in every one (`crate::mpi`).
        crate::mpi::check_same_collectives(program, &bounds).map_err(|e| vec![format!("error: {e}")])?;
        let Some(engine) = &self.engine else { return Ok((Vec::new(), RunReport::default())) };
        let cuda = matches!(self.options.compile.target, Target::Cuda { .. });
        let stores = store_reports(&program, schedule, &bounds);
        let targets = output_targets(&outputs, run)?;
        let viewed: Vec<&str> = run.output_views.keys().map(String::as_str).collect();
        let mut outputs = allocate_outputs(&stores, outputs, &viewed)?;
        check_points(&program, schedule, &bounds).map_err(|e| {
            vec![format!("{}: error: {}", render_location(&e.location(&program), &self.options.source_name), e.message)]
        })?;
        let layout = self.stop_layout(&bounds);
        let mut arguments = Arguments::new(&bounds, &inputs, &mut outputs, &targets, cuda)?;
        let execute_start = std::time::Instant::now();
        let externals = run.externals.clone();
        let sites = self.sites.clone();
        CURRENT.with(|c| *c.borrow_mut() = Some(CallContext { externals, sites, error: None }));
        crate::depth_order::clear_error();
        crate::ragged::clear();
        // Each run counts its own live and peak store bytes (a run that
        // failed may have left stores counted live).
        if !cuda && let Some(p) = engine.lookup(MEMORY_STATS) {
            // SAFETY: the global is a `memref<2xi64>`: two i64 words.
            unsafe { std::ptr::write_bytes(p as *mut i64, 0, 2) };
        }
        // Where the GPU lowering's all-reduce finds its buffers (`crate::nccl`).
        crate::nccl::set_device_buffers(cuda);
        let invoked = if cuda {
            engine.invoke(ENTRY, &mut arguments.arguments)
        } else {
            engine.invoke_guarded(ENTRY, &mut arguments.arguments)
        };
        let call_error = CURRENT.with(|c| c.borrow_mut().take()).and_then(|c| c.error);
        let data_error = crate::depth_order::take_error();
        let undefined = crate::ragged::take_undefined();
        if cuda {
            arguments.copy_back(&mut outputs, &targets, inputs.len())?;
        }
        // (A read through data's error first: it may be why the run ended.)
        if let Some((site, e)) = data_error {
            return Err(vec![match self.read_locations.get(site) {
                Some(location) => format!("{location}: error: {e}"),
                None => format!("error: {e}"),
            }]);
        }
        invoked.map_err(|e| vec![format!("error: {e}")])?;
        // The GPU lowering's all-reduce run on the CPU records its failure
        // as the CUDA runtime's functions do (`crate::nccl`).
        if self.options.compile.target == Target::GpuLoopsOnCpu
            && let Some(e) = crate::cuda::take_error()
        {
            return Err(vec![format!("error: {e}")]);
        }
        if let Some((stop, t, flat)) = undefined
            && let Some(tensor) = layout.stop_tensors.get(stop)
        {
            return Err(vec![tensor.undefined_point(t, flat)]);
        }
        if let Some((site, e)) = call_error {
            return Err(vec![match site.and_then(|k| self.site_locations.get(k)) {
                Some(location) => format!("{location}: error: {e}"),
                None => format!("error: {e}"),
            }]);
        }
        let stats = engine.lookup(MEMORY_STATS).map(|p| {
            // SAFETY: the global is a `memref<2xi64>`: two i64 words.
            unsafe { (*(p as *const i64), *(p as *const i64).add(1)) }
        });
        let memory = stats.map(|(live, peak)| MemoryReport {
            peak_store_bytes: peak as u64,
            live_store_bytes_at_exit: live as u64,
            stores,
        });
        let device = cuda.then(crate::cuda::device_name);
        let device_memory = cuda.then(crate::cuda_memory::device_memory);
        let timings = RunReport {
            compile: self.compile,
            execute: execute_start.elapsed(),
            memory,
            device,
            device_memory,
            stop_lengths: Vec::new(),
            phases: self.phases.clone(),
            cache: self.cache.clone(),
            objects: match &engine.backend {
                Backend::Orc(_, objects, _) => Some(objects.len()),
                Backend::Mlir(_) => None,
            },
        };
        let mut timings = timings;
        drop(arguments);
        for &(output, input) in &self.input_outputs {
            match targets[output] {
                // SAFETY: the target holds the output's bytes, which are the
                // input's (same shape and type).
                Some(target) => unsafe {
                    std::ptr::copy_nonoverlapping(inputs[input].data(), target, inputs[input].bytes())
                },
                None => outputs[output].data = inputs[input].to_data(),
            }
        }
        if !layout.stop_tensors.is_empty() {
            timings.stop_lengths = finish_stops(engine, &layout, &mut outputs, &targets);
        }
        Ok((outputs, timings))
    }

    /// Where the outputs meet the program's stops, at `bounds`.
    fn stop_layout(&self, bounds: &[i64]) -> StopLayout {
        let program = &self.checked;
        // Outputs over a stopped dimension: (output, axis, stop).
        let stopped: Vec<(usize, usize, usize)> = program
            .outputs
            .iter()
            .enumerate()
            .flat_map(|(o, &t)| {
                let domain = &program.tensors[t].domain;
                program
                    .stops
                    .iter()
                    .enumerate()
                    .filter_map(move |(k, s)| domain.iter().position(|&d| d == s.dim).map(|axis| (o, axis, k)))
            })
            .collect();
        // Outputs over a ragged stop's dimension and batch dimensions.
        let ragged: Vec<RaggedOutput> = program
            .outputs
            .iter()
            .enumerate()
            .filter(|(_, t)| !program.tensors[**t].is_input)
            .flat_map(|(o, &t)| {
                let domain = &program.tensors[t].domain;
                let program = &program;
                let bounds = &bounds;
                program.stops.iter().enumerate().filter(|(_, s)| s.is_ragged(program)).filter_map(move |(k, s)| {
                    let axis = domain.iter().position(|&d| d == s.dim)?;
                    let batch = s.batch(program);
                    let axes = batch.iter().map(|b| domain.iter().position(|d| d == b)).collect::<Option<Vec<_>>>()?;
                    let extents = batch.iter().map(|&b| bounds[b].max(0) as usize).collect();
                    Some(RaggedOutput { output: o, axis, batch_axes: axes, batch_extents: extents, stop: k })
                })
            })
            .collect();
        let domain_lengths: Vec<usize> = program.outputs.iter().map(|&t| program.tensors[t].domain.len()).collect();
        let stop_tensors: Vec<StopTensor> = program
            .stops
            .iter()
            .map(|s| {
                let done = &program.tensors[s.done];
                let batch = s.batch(&program);
                StopTensor {
                    location: render_location(&done.location, &self.options.source_name),
                    name: done.name.clone(),
                    domain: done
                        .domain
                        .iter()
                        .map(|&d| (program.dims[d].name.clone(), batch.iter().position(|&b| b == d)))
                        .collect(),
                    batch_extents: batch.iter().map(|&b| bounds[b].max(0)).collect(),
                }
            })
            .collect();
        StopLayout { stopped, ragged, domain_lengths, stop_tensors }
    }
}

/// Where the outputs meet the program's stops: what a run does to its
/// outputs after the code ran ([`finish_stops`]).
struct StopLayout {
    /// Outputs over a stopped dimension: (output, axis, stop).
    stopped: Vec<(usize, usize, usize)>,
    /// Outputs over a ragged stop's dimension and batch dimensions.
    ragged: Vec<RaggedOutput>,
    /// Each output's number of domain dimensions.
    domain_lengths: Vec<usize>,
    /// Each stop's `done` tensor, for its errors.
    stop_tensors: Vec<StopTensor>,
}

/// Outputs written into the caller's memory (`run.output_views`), each
/// checked against the output's shape and type like an input.
fn output_targets(
    outputs: &[(String, Vec<usize>, ElementType)],
    run: &RunOptions,
) -> Result<Vec<Option<*mut u8>>, Vec<String>> {
    let mut targets: Vec<Option<*mut u8>> = Vec::new();
    for (name, shape, element) in outputs {
        targets.push(match run.output_views.get(name) {
            Some(view) if &view.shape == shape && view.element == *element => Some(view.data),
            Some(view) => {
                return Err(vec![format!(
                    "error: output '{name}' is {}{shape:?}, its memory is for {}{:?}",
                    element.numpy(),
                    view.element.numpy(),
                    view.shape
                )]);
            }
            None => None,
        });
    }
    if let Some(name) = run.output_views.keys().find(|n| !outputs.iter().any(|(o, _, _)| o == *n)) {
        return Err(vec![format!("error: '{name}' is not an output of the program")]);
    }
    Ok(targets)
}

/// After a run of a program with stops: each stop's lengths (per batch
/// point for a ragged stop), the points past a ragged stop's lengths
/// zeroed, and outputs over a stopped dimension cut at its length.
fn finish_stops(
    engine: &Engine,
    layout: &StopLayout,
    outputs: &mut [HostArray],
    targets: &[Option<*mut u8>],
) -> Vec<Vec<i64>> {
    let StopLayout { stopped, ragged, domain_lengths, stop_tensors } = layout;
    let stops = stop_tensors.len();
    let lengths = engine.lookup(tempo_lowering::temporal_to_loops::stops::STOP_LENGTHS).map(|p| {
        // SAFETY: the global is a `memref<Kxi64>`, one word per stop.
        (0..stops).map(|k| unsafe { *(p as *const i64).add(k) }).collect::<Vec<i64>>()
    });
    let handed = crate::ragged::take();
    let stop_lengths: Vec<Vec<i64>> = (0..stops)
        .map(|k| match handed.iter().find(|(s, _)| *s == k) {
            Some((_, per_point)) => per_point.clone(),
            None => lengths.as_ref().and_then(|l| l.get(k)).map(|&l| vec![l]).unwrap_or_default(),
        })
        .collect();
    // Points past a ragged stop's lengths are zero (the code did
    // not compute them), in the full layout before truncation.
    for RaggedOutput { output: o, axis, batch_axes: axes, batch_extents: extents, stop: k } in ragged {
        let Some((_, per_point)) = handed.iter().find(|(s, _)| s == k) else { continue };
        let shape = &outputs[*o].shape;
        let point_len: usize = shape[domain_lengths[*o]..].iter().product();
        let ranges =
            crate::ragged::past_lengths(&shape[..domain_lengths[*o]], point_len, *axis, axes, extents, per_point);
        let element = outputs[*o].data.element();
        for (first, count) in ranges {
            match targets[*o] {
                // SAFETY: the caller's memory holds the output's
                // elements (its shape and type were checked).
                Some(target) => unsafe {
                    std::ptr::write_bytes(target.add(first * element.byte_size()), 0, count * element.byte_size())
                },
                None => {
                    outputs[*o].data.write_at(first, &Data::zeros(element, count));
                }
            }
        }
    }
    for &(o, axis, k) in stopped {
        let Some(length) = lengths.as_ref().and_then(|l| l.get(k)).copied() else { continue };
        let length = length.max(0) as usize;
        match targets[o] {
            None => truncate(&mut outputs[o], axis, length),
            // Written in the caller's memory: its shape says how
            // much of it the run produced (the first `length`
            // entries along the axis).
            Some(_) => {
                if let Some(extent) = outputs[o].shape.get_mut(axis) {
                    *extent = (*extent).min(length);
                }
            }
        }
    }

    stop_lengths
}

/// Keeps the first `length` entries of `array` along `axis` (a stopped
/// dimension's points up to its stop).
fn truncate(array: &mut HostArray, axis: usize, length: usize) {
    let Some(&extent) = array.shape.get(axis) else { return };
    if length >= extent {
        return;
    }
    let outer: usize = array.shape[..axis].iter().product();
    let inner: usize = array.shape[axis + 1..].iter().product();
    let element = array.data.element();
    let mut kept = Data::zeros(element, outer * length * inner);
    for o in 0..outer {
        let from = crate::interpreter::slice(&array.data, o * extent * inner, length * inner);
        kept.write_at(o * length * inner, &from);
    }
    array.shape[axis] = length;
    array.data = kept;
}

/// Lowers `module` (temporal, optimized) to the LLVM dialect and
/// JIT-compiles it: the engine, with the runtime's symbols registered
/// (external calls when the program makes some, the GEMM, the CUDA
/// runtime's), and the entry's address (looked up now, so that LLVM's code
/// generation counts as compile time). With `--dump-object`, the object
/// code is written out.
fn jit(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
    calls_externals: bool,
) -> Result<(Engine, *mut ()), Vec<String>> {
    let openmp = std::path::Path::new(OPENMP_RUNTIME).exists();
    let threads = if openmp { options.compile.threads } else { 1 };
    let steps = phases::time("lowering (MLIR passes)", || lowering_steps(context, module, options, threads))?;
    let collector = phases::time("lowering (MLIR passes)", || {
        run_pipeline(context, module, &steps, &options.source_name, "compilation failed", options)
    })?;
    let cuda = matches!(options.compile.target, Target::Cuda { .. });
    if cuda {
        crate::cuda::open().map_err(|e| vec![format!("error: {e}")])?;
        crate::cuda_memory::reset_device_memory();
    }
    // The OpenMP runtime is loaded only when the lowered code uses it.
    let calls_openmp = crate::ir::contains_op(module.as_operation(), "omp.");
    let jit_failed = || {
        let mut lines = collector.take();
        lines.push("error: the JIT could not compile the lowered module".into());
        lines
    };
    let engine = if cuda {
        phases::time("LLVM IR translation and optimization", || {
            Engine::new(module, options.compile.llvm_level(), calls_openmp, options.dump_object.is_some())
        })
        .ok_or_else(jit_failed)?
    } else {
        orc_engine(module, options, calls_openmp).map_err(|e| {
            let mut lines = collector.take();
            lines.push(format!("error: the JIT could not compile the lowered module: {e}"));
            lines
        })?
    };
    match link(engine, options, calls_externals) {
        Ok(linked) => Ok(linked),
        Err(e) => {
            let mut lines = collector.take();
            lines.push(format!("error: {e}"));
            Err(lines)
        }
    }
}

/// Makes the runtime's functions resolvable in `engine`'s code (external
/// calls when the program makes some, the GEMM, the guard's allocations,
/// the CUDA runtime's) and looks the entry up: linking (ours) or code
/// generation (MLIR's engine) happen now, counted as compile time. With
/// `--dump-object`, the object code is written out.
fn link(engine: Engine, options: &RunOptions, calls_externals: bool) -> Result<(Engine, *mut ()), String> {
    let cuda = matches!(options.compile.target, Target::Cuda { .. });
    if calls_externals {
        engine.register_symbol("tempo_external_call", tempo_external_call as *mut ());
    }
    // The processes of the run, once a program opened them (`crate::mpi`).
    if let Some(world) = crate::mpi::opened() {
        for (name, pointer) in crate::mpi::symbols(world) {
            engine.register_symbol(name, pointer);
        }
        engine.register_symbol(
            tempo_lowering::temporal_to_loops::collectives::GPU_ALL_REDUCE,
            crate::nccl::tempo_gpu_all_reduce as *mut (),
        );
    }
    if !cuda {
        engine.register_symbol(tempo_lowering::library_gemm::SYMBOL, crate::gemm::tempo_gemm as *mut ());
        engine.register_symbol(tempo_lowering::library_gemm::PACKED_SYMBOL, crate::gemm::tempo_gemm_packed as *mut ());
        engine.register_symbol(
            tempo_lowering::temporal_to_loops::flash::SYMBOL,
            crate::flash::tempo_flash_attention as *mut (),
        );
    }
    // Allocations, mappings and swap files through the runtime, so that a
    // run the system refuses ends with a message (runtime/src/guard.rs).
    if !cuda {
        for (name, pointer) in crate::guard::symbols() {
            engine.register_symbol(name, pointer);
        }
    }
    engine.register_symbol(
        tempo_lowering::temporal_to_loops::stops::UNDEFINED_POINT,
        crate::ragged::tempo_undefined_stop_point as *mut (),
    );
    use tempo_lowering::temporal_to_loops::by_depth::{DATA_READ_ERROR, DEPTH_ORDER};
    engine.register_symbol(DEPTH_ORDER, crate::depth_order::tempo_depth_order as *mut ());
    engine.register_symbol(DATA_READ_ERROR, crate::depth_order::tempo_data_read_error as *mut ());
    engine.register_symbol(
        tempo_lowering::temporal_to_loops::stops::RAGGED_LENGTHS,
        crate::ragged::tempo_ragged_lengths as *mut (),
    );
    if cuda {
        for (name, pointer) in crate::cuda::symbols() {
            engine.register_symbol(name, pointer);
        }
    }
    // The JIT generates machine code (MLIR's engine) or links the objects
    // (ours) on the first lookup of a symbol: look the entry up now, so
    // that this counts as compile time.
    let (phase, entry_name) = if cuda {
        ("LLVM code generation", format!("_mlir_{ENTRY}"))
    } else {
        ("linking", format!("_mlir__mlir_ciface_{ENTRY}"))
    };
    let entry = phases::time(phase, || engine.lookup_checked(&entry_name))
        .map_err(|e| format!("the JIT could not compile the lowered module: {e}"))?;
    if let Some(path) = &options.dump_object {
        match &engine.backend {
            Backend::Mlir(raw) => {
                // LLVM only prints a failure to open the file: check it here.
                std::fs::File::create(path).map_err(|e| format!("--dump-object: cannot write '{path}': {e}"))?;
                unsafe { mlir_sys::mlirExecutionEngineDumpToObjectFile(*raw, melior::StringRef::new(path).to_raw()) };
            }
            Backend::Orc(_, objects, _) => {
                // One partition with --dump-object: one object.
                std::fs::write(path, objects.concat())
                    .map_err(|e| format!("--dump-object: cannot write '{path}': {e}"))?;
            }
        }
        let at = engine.lookup(ENTRY).unwrap_or(entry);
        eprintln!("tempo-run: object code written to {path} ({ENTRY} at {:#x})", at as usize);
    }
    Ok((engine, entry as *mut ()))
}

/// The entry's arguments for one run: the bounds, then a memref descriptor
/// per input and output. The compiled code only reads inputs, so their
/// descriptors may point into the caller's arrays; on the GPU, inputs and
/// outputs live in managed memory (copied in here, out by
/// [`Arguments::copy_back`]). `arguments` points into the other fields'
/// heap storage, which moving the struct does not move.
struct Arguments {
    _bounds: Vec<i64>,
    managed: Vec<crate::cuda::Managed>,
    _descriptors: Vec<Vec<i64>>,
    _pointers: Vec<*mut i64>,
    arguments: Vec<*mut ()>,
}

impl Arguments {
    fn new(
        bounds: &[i64],
        inputs: &[Input],
        outputs: &mut [HostArray],
        targets: &[Option<*mut u8>],
        cuda: bool,
    ) -> Result<Self, Vec<String>> {
        let mut bound_values: Vec<i64> = bounds.to_vec();
        // Each output's memory (the caller's, where given) and bytes.
        let output_bytes = |a: &HostArray| a.shape.iter().product::<usize>() * a.data.element().byte_size();
        let output_memory: Vec<(*mut u8, usize)> =
            outputs.iter_mut().zip(targets).map(|(a, t)| (t.unwrap_or(a.data.as_mut_ptr()), output_bytes(a))).collect();
        let managed: Vec<crate::cuda::Managed> = if cuda {
            let mut buffers = Vec::new();
            let sources = inputs
                .iter()
                .map(|a| (a.data(), a.bytes()))
                .chain(output_memory.iter().map(|&(data, bytes)| (data as *const u8, bytes)));
            for (data, bytes) in sources {
                let buffer = crate::cuda::Managed::new(bytes).map_err(|e| vec![format!("error: {e}")])?;
                // SAFETY: both hold `bytes` bytes.
                unsafe { std::ptr::copy_nonoverlapping(data, buffer.as_mut_ptr(), bytes) };
                buffer.prefetch_to_device();
                buffers.push(buffer);
            }
            buffers
        } else {
            Vec::new()
        };
        let mut descriptors: Vec<Vec<i64>> = if cuda {
            let shapes = inputs.iter().map(|a| a.shape()).chain(outputs.iter().map(|a| a.shape.as_slice()));
            shapes.zip(&managed).map(|(shape, m)| descriptor(m.as_mut_ptr(), shape)).collect()
        } else {
            inputs
                .iter()
                .map(|a| descriptor(a.data() as *mut u8, a.shape()))
                .chain(outputs.iter().zip(&output_memory).map(|(a, &(data, _))| descriptor(data, &a.shape)))
                .collect()
        };
        let mut pointers: Vec<*mut i64> = descriptors.iter_mut().map(|d| d.as_mut_ptr()).collect();
        let mut arguments: Vec<*mut ()> = bound_values.iter_mut().map(|b| b as *mut i64 as *mut ()).collect();
        arguments.extend(pointers.iter_mut().map(|p| p as *mut *mut i64 as *mut ()));
        Ok(Arguments { _bounds: bound_values, managed, _descriptors: descriptors, _pointers: pointers, arguments })
    }

    /// On the GPU, after the run: frees the run's device allocations (after
    /// the kernels finish), reports a CUDA error, copies the outputs (the
    /// managed buffers after the `inputs` first ones) back.
    fn copy_back(
        &self,
        outputs: &mut [HostArray],
        targets: &[Option<*mut u8>],
        inputs: usize,
    ) -> Result<(), Vec<String>> {
        crate::cuda::free_run_allocations();
        if let Some(e) = crate::cuda::take_error() {
            return Err(vec![format!("error: {e}")]);
        }
        for ((a, m), target) in outputs.iter_mut().zip(&self.managed[inputs..]).zip(targets) {
            let bytes = a.shape.iter().product::<usize>() * a.data.element().byte_size();
            let to = target.unwrap_or(a.data.as_mut_ptr());
            // SAFETY: both hold `bytes` bytes; the kernels have finished
            // (`free_run_allocations` waited for them).
            unsafe { std::ptr::copy_nonoverlapping(m.as_mut_ptr(), to, bytes) };
        }
        Ok(())
    }
}

/// Expands gradients and runs the temporal optimizations of `options` on
/// `module`.
fn optimize(context: &Context, module: &mut Module, options: &RunOptions) -> Result<(), Vec<String>> {
    // Temporal-level optimizations first: what follows (checks, stores,
    // lowering) sees the optimized program. The program as written must be
    // well formed, schedulable and call only registered functions, even
    // where the optimizations would remove the offending part (the
    // interpreter judges the program as written); without optimizations the
    // checks below are those of the program as written.
    tempo_passes::fault::set_dump_dir(options.dump_on_error.clone());
    phases::time("gradients", || expand_gradients(module, &options.source_name))?;
    let mut steps = optimization_steps(&options.compile)?;
    // The level's pipeline begins with the gradients' expansion, which has
    // just run ("gradients").
    if steps.first().is_some_and(|s| s.name() == "temporal-autodiff") {
        steps.remove(0);
    }
    phases::time("verification and schedule", || {
        let written = verify_program(module.as_operation()).map_err(|d| render(&d, &options.source_name))?;
        Schedule::check(&written).map_err(|d| render(&d, &options.source_name))?;
        check_externals(&written, options)
    })?;
    phases::time("temporal optimizations", || {
        // On one program model (verified once, printed back once) where
        // the level's passes all rewrite it, as they do.
        match pipeline::run_rewrites(module.as_operation(), &steps) {
            Some(Ok(times)) => {
                if options.pass_timings {
                    eprint!("{}", rewrite_timings(&times));
                }
                Ok(())
            }
            Some(Err(diagnostics)) => {
                let mut lines = render(&diagnostics, &options.source_name);
                lines.push("error: the temporal optimizations failed".into());
                Err(lines)
            }
            None => run_pipeline(
                context,
                module,
                &steps,
                &options.source_name,
                "the temporal optimizations failed",
                options,
            )
            .map(|_| ()),
        }
    })?;
    Ok(())
}

/// The program `module` becomes before its lowering (the gradients
/// expanded, the temporal optimizations of `options` applied: what the
/// lowering then compiles), as text; `module` is left so. Tests use it to
/// tell which option sets compile the same program.
pub fn optimized_program_text(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
) -> Result<String, Vec<String>> {
    // Specialized for the run's bounds, as [`run_module`] compiles.
    let compile = CompileOptions { bounds: options.bounds.clone(), ..options.compile.clone() };
    optimize(context, module, &RunOptions { compile, ..options.settings() })?;
    Ok(module_text(module.as_operation()))
}

/// The `--pass-timings` report of temporal passes run on one program model
/// ([`pipeline::run_rewrites`]), in the form of MLIR's.
fn rewrite_timings(times: &[(&str, std::time::Duration)]) -> String {
    let total: f64 = times.iter().map(|(_, d)| d.as_secs_f64()).sum();
    let rule = "===-------------------------------------------------------------------------===";
    let mut text = format!(
        "{rule}\n              ... Execution time report (temporal passes on one program model) ...\n{rule}\n  Total Execution Time: {total:.4} seconds\n\n  ----Wall Time----  ----Name----\n"
    );
    for (name, d) in times {
        let s = d.as_secs_f64();
        let share = if total > 0.0 { 100.0 * s / total } else { 0.0 };
        text += &format!("    {s:.4} ({share:5.1}%)  {name}\n");
    }
    text += &format!("    {total:.4} (100.0%)  Total\n");
    text
}

/// Each tensor's store at the run's bounds: its kind (and swap plan) and
/// bytes (for `--stats` and the output allocation check).
fn store_reports(program: &Program, schedule: &Schedule, bounds: &[i64]) -> Vec<StoreReport> {
    let mut stores = Vec::new();
    for (i, t) in program.tensors.iter().enumerate() {
        let storage = schedule.storage[i];
        let point_bytes = bytes_of(t.point.shape.iter().map(|&d| d as u64), t.point.element.byte_size() as u64);
        let extent = |dims: &[usize]| dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(bounds[d] as u64));
        // The bound of every store dimension the kind keeps, times the
        // slots of the along one (for `blocks`, every block up to the
        // bound, committed once the loop has run).
        let sliced = |slicing: Slicing, along: Option<u64>| -> Option<u64> {
            slicing.kept(t.domain.len()).try_fold(point_bytes?, |acc, k| {
                let n = if k == slicing.along { along? } else { bounds[t.domain[k]] as u64 };
                acc.checked_mul(n)
            })
        };
        let bytes = match storage {
            Storage::Input | Storage::Output => None,
            Storage::Full => Some(extent(&t.domain).zip(point_bytes).and_then(|(n, b)| n.checked_mul(b))),
            Storage::Ring(_, slicing) | Storage::Window(_, slicing) => {
                Some(sliced(slicing, storage.slots().map(|n| n as u64)))
            }
            Storage::Blocks(b, slicing) => {
                Some(sliced(slicing, (bounds[t.domain[slicing.along]] as u64).div_ceil(b as u64).checked_mul(b as u64)))
            }
            Storage::Point => Some(point_bytes),
        };
        // An overflowing size saturates; the memory check below reports it.
        let bytes = bytes.map(|b| b.unwrap_or(u64::MAX));
        let names: Vec<&str> = t.domain.iter().map(|&d| program.dims[d].name.as_str()).collect();
        let (kind, bytes) = match schedule.swaps.get(&i) {
            // Resident: the blocks in memory at once; the rest in the file.
            Some(swap) => (
                format!("{}, swapped to a file", storage.describe(&names)),
                Some(bytes.map_or(swap.resident, |b| b.min(swap.resident))),
            ),
            None => (storage.describe(&names), bytes),
        };
        stores.push(StoreReport { tensor: t.name.clone(), kind, bytes });
    }
    stores
}

/// The lowering steps of the run's target, with `threads` threads (for
/// the GPU loops run on the CPU, the loop mapping has already run: what is
/// left). Without `temporal-schedule`: the engine writes the schedule it
/// already checked into the module ([`Executable::compile`]), which
/// `lower-temporal-to-loops` follows.
fn lowering_steps(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
    threads: usize,
) -> Result<Vec<Step>, Vec<String>> {
    let compile = CompileOptions { threads, ..options.compile.clone() };
    Ok(match compile.target {
        Target::Cpu => {
            let mpi = crate::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
            let mpi = mpi.map(|world| world.implementation.dlti());
            tempo_lowering::temporal_to_llvm(&compile, mpi, false)
        }
        Target::Cuda { chip, threads_per_block } => tempo_lowering::temporal_to_cuda(
            &format!("sm_{chip}"),
            threads_per_block,
            Some(&libdevice()?),
            compile.fast_math,
            false,
        ),
        Target::GpuLoopsOnCpu => {
            let (loops, rest) = tempo_lowering::gpu_loops_on_cpu(threads, false);
            run_pipeline(context, module, &loops, &options.source_name, "compilation failed", options)?;
            if crate::ir::contains_op(module.as_operation(), "gpu.launch") {
                return Err(vec![
                    "error: the GPU lowering run on the CPU: this program takes the shared-memory matrix kernel \
                     (a product of 16 rows or more), which runs only on a GPU"
                        .into(),
                ]);
            }
            rest
        }
    })
}

/// libdevice (the CUDA math library the kernels link), or an error saying
/// how to get it.
fn libdevice() -> Result<String, Vec<String>> {
    tempo_lowering::find_libdevice().ok_or_else(|| {
        vec!["error: --target cuda needs libdevice (the CUDA math library, libdevice.10.bc): run tools/setup-cuda.sh or set TEMPO_LIBDEVICE".to_string()]
    })
}

/// Compiles `module` for the CUDA target of `chip` (`sm_90` is 90) without
/// running it (no GPU, no bound values needed: vectorization, which needs
/// them, is left out) and writes each kernel's PTX to
/// `directory/NAME.ptx`; returns how many.
pub fn emit_ptx(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
    chip: u32,
    directory: &str,
) -> Result<usize, Vec<String>> {
    let steps = optimization_steps(&CompileOptions { bounds: IndexMap::new(), ..options.compile.clone() })?;
    run_pipeline(context, module, &steps, &options.source_name, "the temporal optimizations failed", options)?;
    let threads_per_block = match options.compile.target {
        Target::Cuda { threads_per_block, .. } => threads_per_block,
        _ => tempo_lowering::DEFAULT_THREADS_PER_BLOCK,
    };
    let pipeline = tempo_lowering::temporal_to_cuda(
        &format!("sm_{chip}"),
        threads_per_block,
        Some(&libdevice()?),
        options.compile.fast_math,
        true,
    );
    run_pipeline(context, module, &pipeline, &options.source_name, "compilation failed", options)?;
    let kernels = tempo_lowering::ptx::kernels(module.as_operation());
    std::fs::create_dir_all(directory)
        .map_err(|e| vec![format!("error: --emit-ptx: cannot create '{directory}': {e}")])?;
    for (name, ptx) in &kernels {
        let path = std::path::Path::new(directory).join(format!("{name}.ptx"));
        std::fs::write(&path, ptx)
            .map_err(|e| vec![format!("error: --emit-ptx: cannot write '{}': {e}", path.display())])?;
    }
    Ok(kernels.len())
}

/// Checks that the outputs and every store fit in memory together (a bound
/// in the billions must get a diagnostic, not an allocation failure in
/// compiled code), naming the largest, then allocates the outputs.
fn allocate_outputs(
    stores: &[StoreReport],
    outputs: Vec<(String, Vec<usize>, ElementType)>,
    viewed: &[&str],
) -> Result<Vec<HostArray>, Vec<String>> {
    // Sizes saturate at u64::MAX (more than any machine has).
    let mut parts: Vec<(String, u64)> = Vec::new();
    for (name, shape, element) in &outputs {
        let bytes = bytes_of(shape.iter().map(|&d| d as u64), element.byte_size() as u64).unwrap_or(u64::MAX);
        parts.push((format!("output '{name}' ({}{shape:?})", element.numpy()), bytes));
    }
    for store in stores {
        if let Some(bytes) = store.bytes {
            parts.push((format!("the {} store of '{}'", store.kind, store.tensor), bytes));
        }
    }
    let total = parts.iter().try_fold(0u64, |acc, (_, b)| acc.checked_add(*b));
    if let Err(e) = check_fits(total, "this run") {
        let detail = parts.iter().max_by_key(|(_, b)| *b).map_or(String::new(), |(what, b)| {
            let size = if *b == u64::MAX { "more than 2^64 bytes".into() } else { human(*b) };
            format!("; the largest part is {what}: {size}")
        });
        return Err(vec![format!("error: {e}{detail}")]);
    }
    outputs
        .into_iter()
        .map(|(name, shape, element)| {
            // An output the caller gave memory for needs none here.
            let len = if viewed.contains(&name.as_str()) { 0 } else { shape.iter().product() };
            let data = Data::try_zeros(element, len).map_err(|e| vec![format!("error: output '{name}': {e}")])?;
            Ok(HostArray { name, shape, data })
        })
        .collect()
}

/// A memref descriptor `{allocated, aligned, offset, sizes[r], strides[r]}`
/// for a row-major host array (pointers stored as 64-bit words).
fn descriptor(data: *mut u8, shape: &[usize]) -> Vec<i64> {
    let ptr = data as i64;
    let sizes: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let strides = tempo_passes::program::row_major_strides(&sizes);
    let mut words = vec![ptr, ptr, 0];
    words.extend(shape.iter().map(|&d| d as i64));
    words.extend(strides);
    words
}

/// Compiles the lowered `module` for the CPU with [`crate::orc`]: split
/// into `TEMPO_COMPILE_PARTITIONS` partitions (default 0: one per core, at
/// most [`crate::orc::partition::MAX_PARTITIONS`], fewer for little code;
/// one with `--dump-object`), translated to LLVM IR, then optimized and
/// compiled on that many threads, the objects linked by ORC.
///
/// Split by default since the run times were measured equal: PPO with 16
/// layers, six interleaved pairs of five runs each, 4.85 s (one object)
/// against 4.82 s (two) a run, for LLVM's part of its compile 3.8 -> 2.4 s
/// on 2 threads. (An earlier measurement, before the compiled code's
/// buffers came from a pool of mappings, had the split code 25% slower.)
fn orc_engine(module: &Module, options: &RunOptions, openmp: bool) -> Result<Engine, String> {
    let requested: usize =
        std::env::var("TEMPO_COMPILE_PARTITIONS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    let count = match requested {
        _ if options.dump_object.is_some() => 1,
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        n => n,
    };
    let units = phases::time("LLVM IR translation", || {
        let partitions = crate::orc::partition::split(module, count, ENTRY);
        crate::orc::codegen::translate(&partitions)
    })?;
    let objects = phases::time("LLVM optimization and code generation", || {
        crate::orc::codegen::compile_all(units, options.compile.llvm_level(), ENTRY)
    })?;
    let library = openmp.then_some(OPENMP_RUNTIME);
    let orc = crate::orc::OrcEngine::load(&objects, library)?;
    Ok(Engine { backend: Backend::Orc(orc, objects, openmp) })
}

/// The cache and the key of compiling `module` (the program as given)
/// with `options`, where the cache is on and applies: the CPU target,
/// neither `--dump-object` nor `--pass-timings` (which ask for the
/// compilation itself).
fn cache_for(module: &Module, options: &RunOptions) -> Option<(crate::cache::Cache, String)> {
    if options.compile.target != Target::Cpu || options.dump_object.is_some() || options.pass_timings {
        return None;
    }
    let cache = crate::cache::Cache::from_env()?;
    phases::time("cache lookup", || Some((cache, cache_key(module, options))))
}

/// The cache key of compiling `module` with `options` (see
/// [`crate::cache`]).
fn cache_key(module: &Module, options: &RunOptions) -> String {
    let program = module_bytecode(module.as_operation());
    // (The MPI ABI the code calls, for a program using processes.)
    let mpi = crate::mpi::world_for(module.as_operation()).ok().flatten().map(|w| w.implementation.dlti());
    let settings = format!(
        "compile {:?}; LLVM level {}; source {:?}; OpenMP {}; injected fault {:?}; MPI {mpi:?}",
        options.compile,
        options.compile.llvm_level(),
        options.source_name,
        std::path::Path::new(OPENMP_RUNTIME).exists(),
        // (The lowering's test hook: a compilation that must fault.)
        std::env::var("TEMPO_TEST_FAULT").ok(),
    );
    let (cpu, features) = crate::orc::codegen::host_cpu();
    crate::cache::Cache::key(&[
        crate::cache::COMPILER.as_bytes(),
        program.as_slice(),
        settings.as_bytes(),
        cpu.as_bytes(),
        features.as_bytes(),
    ])
}

/// `op` as MLIR bytecode (with its locations), for the compilation cache:
/// the key's program (written faster than text) and an entry's optimized
/// program.
fn module_bytecode(op: melior::ir::OperationRef) -> Vec<u8> {
    let mut bytes = Vec::new();
    unsafe extern "C" fn append(piece: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the Vec below; `piece` is valid for the call.
        let bytes = unsafe { &mut *(data as *mut Vec<u8>) };
        bytes.extend_from_slice(unsafe { std::slice::from_raw_parts(piece.data as *const u8, piece.length) });
    }
    // SAFETY: writing a live operation through a callback.
    unsafe { mlir_sys::mlirOperationWriteBytecode(op.to_raw(), Some(append), &mut bytes as *mut Vec<u8> as *mut _) };
    bytes
}

/// The module of `bytes` (MLIR bytecode, as [`module_bytecode`] writes;
/// MLIR's parser reads bytecode as well as text); `None` if they do not
/// parse (a damaged entry, rebuilt by the caller).
fn module_from_bytecode<'c>(context: &Context, bytes: &[u8]) -> Option<Module<'c>> {
    // SAFETY: parsing a buffer that lives for the call; the module is owned.
    unsafe {
        let reference =
            mlir_sys::MlirStringRef { data: bytes.as_ptr() as *const std::ffi::c_char, length: bytes.len() };
        let raw = mlir_sys::mlirModuleCreateParse(context.to_raw(), reference);
        (!raw.ptr.is_null()).then(|| Module::from_raw(raw))
    }
}

/// `op` printed in the generic form with its locations (what parses back
/// to the same program, diagnostics pointing at the user's source).
pub fn module_text(op: melior::ir::OperationRef) -> String {
    let mut text = String::new();
    unsafe extern "C" fn append(piece: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the String below; `piece` is valid for the call.
        let text = unsafe { &mut *(data as *mut String) };
        let bytes = unsafe { std::slice::from_raw_parts(piece.data as *const u8, piece.length) };
        text.push_str(&String::from_utf8_lossy(bytes));
    }
    // SAFETY: printing a live operation through a callback.
    unsafe {
        let flags = mlir_sys::mlirOpPrintingFlagsCreate();
        mlir_sys::mlirOpPrintingFlagsEnableDebugInfo(flags, true, false);
        mlir_sys::mlirOpPrintingFlagsPrintGenericOpForm(flags);
        mlir_sys::mlirOperationPrintWithFlags(op.to_raw(), flags, Some(append), &mut text as *mut String as *mut _);
        mlir_sys::mlirOpPrintingFlagsDestroy(flags);
    }
    text
}

/// The engine of a cache entry: its objects linked, the runtime's symbols
/// defined, the entry looked up.
fn load_cached(
    entry: &crate::cache::Entry,
    options: &RunOptions,
    calls_externals: bool,
) -> Result<(Engine, *mut ()), Vec<String>> {
    let library = entry.openmp.then_some(OPENMP_RUNTIME);
    let orc = phases::time("loading", || crate::orc::OrcEngine::load(&entry.objects, library))
        .map_err(|e| vec![format!("error: {e}")])?;
    let engine = Engine { backend: Backend::Orc(orc, entry.objects.clone(), entry.openmp) };
    link(engine, options, calls_externals).map_err(|e| vec![format!("error: {e}")])
}

/// How a module was compiled: MLIR's ExecutionEngine (the CUDA target's
/// host code) or our ORC JIT (the CPU), with its objects.
enum Backend {
    Mlir(mlir_sys::MlirExecutionEngine),
    /// The linked objects, and whether they call the OpenMP runtime.
    Orc(crate::orc::OrcEngine, Vec<Vec<u8>>, bool),
}

/// A JIT-compiled module (null-checked, unlike melior's wrapper).
struct Engine {
    backend: Backend,
}

impl Engine {
    fn new(module: &Module, opt_level: usize, openmp: bool, dump: bool) -> Option<Self> {
        // The engine reads the paths as C strings: NUL-terminated.
        let path = std::ffi::CString::new(OPENMP_RUNTIME).expect("no NUL in the path");
        let libraries = [mlir_sys::MlirStringRef { data: path.as_ptr(), length: OPENMP_RUNTIME.len() }];
        let count = if openmp { 1 } else { 0 };
        let raw = unsafe {
            mlir_sys::mlirExecutionEngineCreate(
                module.to_raw(),
                opt_level as i32,
                count,
                libraries.as_ptr(),
                dump,
                false,
            )
        };
        (!raw.ptr.is_null()).then_some(Self { backend: Backend::Mlir(raw) })
    }

    /// The address of symbol `name` in the compiled code.
    fn lookup(&self, name: &str) -> Option<*mut ()> {
        self.lookup_checked(name).ok()
    }

    /// [`Engine::lookup`], with the JIT's reason when it fails.
    fn lookup_checked(&self, name: &str) -> Result<*mut (), String> {
        match &self.backend {
            Backend::Mlir(raw) => {
                let pointer =
                    unsafe { mlir_sys::mlirExecutionEngineLookup(*raw, melior::StringRef::new(name).to_raw()) };
                if pointer.is_null() { Err(format!("'{name}' is not defined")) } else { Ok(pointer as *mut ()) }
            }
            Backend::Orc(orc, ..) => orc.lookup(name),
        }
    }

    /// Makes `name` resolve to `pointer` in the compiled code.
    fn register_symbol(&self, name: &str, pointer: *mut ()) {
        match &self.backend {
            Backend::Mlir(raw) => unsafe {
                mlir_sys::mlirExecutionEngineRegisterSymbol(
                    *raw,
                    melior::StringRef::new(name).to_raw(),
                    pointer as *mut std::ffi::c_void,
                )
            },
            // (Defining a name twice is the only failure: the first stays.)
            Backend::Orc(orc, ..) => {
                let _ = orc.define(name, pointer);
            }
        }
    }

    /// [`Engine::invoke`] under the runtime's guard ([`crate::guard`]): a
    /// run the system refuses (memory, swap files) ends with its reason,
    /// what it held freed.
    fn invoke_guarded(&self, name: &str, arguments: &mut [*mut ()]) -> Result<(), String> {
        // What `mlirExecutionEngineInvokePacked` calls: the packed form of
        // the C interface.
        let packed = format!("_mlir__mlir_ciface_{name}");
        let entry = self.lookup(&packed).ok_or_else(|| format!("cannot call '{name}' in the compiled module"))?;
        // SAFETY: `_mlir__mlir_ciface_NAME` is the packed interface
        // (`void(void **)`) of the entry's C interface, and `arguments` are
        // its arguments (as `invoke` passes them).
        unsafe {
            let entry: unsafe extern "C" fn(*mut *mut std::ffi::c_void) = std::mem::transmute(entry);
            crate::guard::call(entry, arguments.as_mut_ptr() as *mut *mut std::ffi::c_void)
        }
    }

    fn invoke(&self, name: &str, arguments: &mut [*mut ()]) -> Result<(), String> {
        let Backend::Mlir(raw) = &self.backend else {
            return self.invoke_guarded(name, arguments);
        };
        let result = unsafe {
            mlir_sys::mlirExecutionEngineInvokePacked(
                *raw,
                melior::StringRef::new(name).to_raw(),
                arguments.as_mut_ptr() as *mut *mut std::ffi::c_void,
            )
        };
        if result.value == 0 { Err(format!("cannot call '{name}' in the compiled module")) } else { Ok(()) }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Backend::Mlir(raw) = &self.backend {
            unsafe { mlir_sys::mlirExecutionEngineDestroy(*raw) }
        }
    }
}

/// Evaluates `module` (a temporal program) with the reference interpreter,
/// with the same static checks (verification, schedulability) and checks of
/// bounds and inputs as [`run_module`].
pub fn interpret_module(module: &Module, options: &RunOptions) -> Result<Vec<HostArray>, Vec<String>> {
    expand_gradients(module, &options.source_name)?;
    let program = verify_program(module.as_operation()).map_err(|d| render(&d, &options.source_name))?;
    // The scheduler's static checks (cycles through range reads, cycles the
    // loop nests cannot order) apply here too, so that the interpreter and
    // the compiler accept exactly the same programs.
    Schedule::check(&program).map_err(|d| render(&d, &options.source_name))?;
    let prepared = prepare(&program, options)?;
    // Across processes, the same collectives in every one (`crate::mpi`).
    crate::mpi::check_same_collectives(&program, &prepared.bounds).map_err(|e| vec![format!("error: {e}")])?;
    // (Views of the caller's memory are copied: the interpreter takes arrays.)
    let names = program.tensors.iter().filter(|t| t.is_input).map(|t| t.name.as_str());
    let arrays: Vec<std::borrow::Cow<HostArray>> =
        prepared.inputs.iter().zip(names).map(|(input, name)| input.to_array(name)).collect();
    crate::interpreter::interpret(
        &program,
        &prepared.bounds,
        &arrays.iter().map(|a| a.as_ref()).collect::<Vec<&HostArray>>(),
        &options.externals,
        &options.source_name,
    )
    .map_err(|e| vec![e])
}

/// A stop's tensor as a run reports a point of it that no branch defines
/// (`tempo_undefined_stop_point`): where it is declared, its name, its
/// dimensions (each with its position among the stop's batch dimensions,
/// none for the stopped one) and the batch dimensions' extents.
struct StopTensor {
    location: String,
    name: String,
    domain: Vec<(String, Option<usize>)>,
    batch_extents: Vec<i64>,
}

impl StopTensor {
    /// The error for the point at `t` of batch point `flat` (row-major),
    /// worded as the interpreter's.
    fn undefined_point(&self, t: i64, flat: i64) -> String {
        let mut batch = vec![0i64; self.batch_extents.len()];
        let mut rest = flat;
        for (k, &e) in self.batch_extents.iter().enumerate().rev() {
            if e > 0 {
                batch[k] = rest % e;
                rest /= e;
            }
        }
        let coordinates: Vec<String> =
            self.domain.iter().map(|(name, position)| format!("{name}={}", position.map_or(t, |k| batch[k]))).collect();
        format!(
            "{}: error: point {}[{}] is needed but no branch of '{}' defines it",
            self.location,
            self.name,
            coordinates.join(", "),
            self.name
        )
    }
}
