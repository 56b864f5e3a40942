//! A compiled program and its runs: the executable (the plans made at
//! compile time, kept for every run), checking a run's bounds and inputs,
//! invoking the compiled code, the run's report; the reference
//! interpreter's runs with the same checks.

use crate::checks::{check_externals, expand_gradients, render};
use crate::options::RunOptions;
use crate::stops::{RaggedOutput, StopLayout, StopTensor, finish_stops};
use melior::{Context, ir::Module};
use tempo_lowering::{
    point_checks::check_points,
    schedule::{Schedule, Storage},
    store_selection::Slicing,
    temporal_to_loops::{ENTRY, MEMORY_STATS},
};
use tempo_passes::compile_options::{CompileOptions, Target};
use tempo_passes::{
    diagnostics::render_location,
    program::{ElementType, PointType, Program},
    verify::verify_program,
};
use tempo_runtime::array::{Data, HostArray};
use tempo_runtime::externals::{CURRENT, CallContext};
use tempo_runtime::invoke::{Arguments, Backend, Engine, Input};
use tempo_runtime::memory::{bytes_of, check_fits, human};

/// An input or output of a program.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) name: String,
    pub(crate) domain: Vec<usize>,
    pub(crate) point: PointType,
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
    pub device_memory: Option<tempo_runtime::cuda_memory::DeviceMemory>,
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
    pub(crate) checked: Program<'c>,
    pub(crate) schedule: Schedule,
    /// The compiled code; `None` when the program demands nothing.
    pub(crate) engine: Option<Engine>,
    /// The options compiled with (target, externals, source name).
    pub(crate) options: RunOptions,
    /// The external call sites: callee, argument and result types, and
    /// where each is in the user's source.
    pub(crate) sites: Vec<(String, Vec<PointType>, PointType)>,
    pub(crate) site_locations: Vec<String>,
    /// Outputs that are inputs (output position, input position): copies
    /// of the input arrays, which the compiled code does not touch.
    pub(crate) input_outputs: Vec<(usize, usize)>,
    pub(crate) compile: std::time::Duration,
    pub(crate) phases: Vec<(&'static str, std::time::Duration)>,
    pub(crate) cache: Option<crate::cache::Outcome>,
    /// The location of each read through data, rendered (for its run-time
    /// errors, [`crate::depth_order`]).
    pub(crate) read_locations: Vec<String>,
}

impl<'c> Executable<'c> {
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
        tempo_runtime::mpi::check_same_collectives(program, &bounds).map_err(|e| vec![format!("error: {e}")])?;
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
        tempo_runtime::depth_order::clear_error();
        tempo_runtime::ragged::clear();
        // Each run counts its own live and peak store bytes (a run that
        // failed may have left stores counted live).
        if !cuda && let Some(p) = engine.lookup(MEMORY_STATS) {
            // SAFETY: the global is a `memref<2xi64>`: two i64 words.
            unsafe { std::ptr::write_bytes(p as *mut i64, 0, 2) };
        }
        // Where the GPU lowering's all-reduce finds its buffers (`crate::nccl`).
        tempo_runtime::nccl::set_device_buffers(cuda);
        let invoked = if cuda {
            engine.invoke(ENTRY, &mut arguments.arguments)
        } else {
            engine.invoke_guarded(ENTRY, &mut arguments.arguments)
        };
        let call_error = CURRENT.with(|c| c.borrow_mut().take()).and_then(|c| c.error);
        let data_error = tempo_runtime::depth_order::take_error();
        let undefined = tempo_runtime::ragged::take_undefined();
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
            && let Some(e) = tempo_runtime::cuda::take_error()
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
        let device = cuda.then(tempo_runtime::cuda::device_name);
        let device_memory = cuda.then(tempo_runtime::cuda_memory::device_memory);
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
    pub(crate) fn stop_layout(&self, bounds: &[i64]) -> StopLayout {
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

/// Outputs written into the caller's memory (`run.output_views`), each
/// checked against the output's shape and type like an input.
pub(crate) fn output_targets(
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

/// Each tensor's store at the run's bounds: its kind (and swap plan) and
/// bytes (for `--stats` and the output allocation check).
pub(crate) fn store_reports(program: &Program, schedule: &Schedule, bounds: &[i64]) -> Vec<StoreReport> {
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

/// Checks that the outputs and every store fit in memory together (a bound
/// in the billions must get a diagnostic, not an allocation failure in
/// compiled code), naming the largest, then allocates the outputs.
pub(crate) fn allocate_outputs(
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
    tempo_runtime::mpi::check_same_collectives(&program, &prepared.bounds).map_err(|e| vec![format!("error: {e}")])?;
    // (Views of the caller's memory are copied: the interpreter takes arrays.)
    let names = program.tensors.iter().filter(|t| t.is_input).map(|t| t.name.as_str());
    let arrays: Vec<std::borrow::Cow<HostArray>> =
        prepared.inputs.iter().zip(names).map(|(input, name)| input.to_array(name)).collect();
    tempo_runtime::interpreter::interpret(
        &program,
        &prepared.bounds,
        &arrays.iter().map(|a| a.as_ref()).collect::<Vec<&HostArray>>(),
        &options.externals,
        &options.source_name,
    )
    .map_err(|e| vec![e])
}
