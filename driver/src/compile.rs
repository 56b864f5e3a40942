//! The compilation: gradients expanded, the temporal optimizations, the
//! schedule, the lowering for the target, LLVM's code generation (our ORC
//! JIT on the CPU, MLIR's ExecutionEngine for the CUDA target's host code),
//! linking the runtime's functions, and the compilation cache.

use crate::checks::{check_calls_registered, check_externals, expand_gradients, render};
use crate::executable::Executable;
use crate::options::RunOptions;
use crate::phases;
use indexmap::IndexMap;
use melior::{Context, ir::Module, pass::PassManager};
use tempo_lowering::{schedule::Schedule, temporal_to_loops::ENTRY};
use tempo_passes::compile_options::{CompileOptions, Target};
use tempo_passes::{
    diagnostics::{DiagnosticCollector, PassDiagnostic, render_location},
    pipeline::{self, Step},
    program::PointType,
    verify::verify_program,
};
use tempo_runtime::externals::tempo_external_call;
use tempo_runtime::invoke::{Backend, Engine, OPENMP_RUNTIME};

/// The temporal optimization steps of `options`.
pub(crate) fn optimization_steps(options: &CompileOptions) -> Result<Vec<Step>, Vec<String>> {
    tempo_passes::optimize::optimization_steps(options).map_err(|e| vec![format!("error: {e}")])
}

/// Runs `steps` on `module`, collecting diagnostics (the
/// collector stays attached for the caller); on failure, the diagnostics
/// then `failure`.
pub(crate) fn run_pipeline<'c>(
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
        tempo_runtime::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
        // The compilation cache (CPU only): the key of the program as
        // given and the options; a hit replaces the program with the
        // optimized one it was compiled from and skips to loading.
        let cache = cache_for(module, options);
        let cached = cache.as_ref().and_then(|(cache, key)| {
            let entry = phases::time("cache lookup", || cache.load(key))?;
            // (The check a cold compile makes of the program as written,
            // before the optimized program replaces it.)
            if let Err(lines) = check_calls_registered(module, options) {
                return Some(Err(lines));
            }
            let parsed = phases::time("cache lookup", || module_from_bytecode(context, &entry.program))?;
            *module = parsed;
            Some(Ok(entry))
        });
        let cached = cached.transpose()?;
        if cached.is_none() {
            optimize(context, module, options)?;
        } else {
            // The optimized program may hold collectives the program as
            // given did not (a gradient's `all_reduce` becomes one in
            // temporal-autodiff): it opens the processes, as a cold
            // compile's lowering does, so that linking finds MPI's
            // symbols.
            tempo_runtime::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
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
}

/// Lowers `module` (temporal, optimized) to the LLVM dialect and
/// JIT-compiles it: the engine, with the runtime's symbols registered
/// (external calls when the program makes some, the GEMM, the CUDA
/// runtime's), and the entry's address (looked up now, so that LLVM's code
/// generation counts as compile time). With `--dump-object`, the object
/// code is written out.
pub(crate) fn jit(
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
        tempo_runtime::cuda::open().map_err(|e| vec![format!("error: {e}")])?;
        tempo_runtime::cuda_memory::reset_device_memory();
    }
    // The OpenMP runtime is loaded only when the lowered code uses it.
    let calls_openmp = tempo_runtime::ir::contains_op(module.as_operation(), "omp.");
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
pub(crate) fn link(engine: Engine, options: &RunOptions, calls_externals: bool) -> Result<(Engine, *mut ()), String> {
    let cuda = matches!(options.compile.target, Target::Cuda { .. });
    if calls_externals {
        engine.register_symbol("tempo_external_call", tempo_external_call as *mut ());
    }
    // The processes of the run, once a program opened them (`crate::mpi`).
    if let Some(world) = tempo_runtime::mpi::opened() {
        for (name, pointer) in tempo_runtime::mpi::symbols(world) {
            engine.register_symbol(name, pointer);
        }
        engine.register_symbol(
            tempo_lowering::temporal_to_loops::collectives::GPU_ALL_REDUCE,
            tempo_runtime::nccl::tempo_gpu_all_reduce as *mut (),
        );
    }
    if !cuda {
        engine.register_symbol(tempo_lowering::library_gemm::SYMBOL, tempo_runtime::gemm::tempo_gemm as *mut ());
        engine.register_symbol(
            tempo_lowering::library_gemm::PACKED_SYMBOL,
            tempo_runtime::gemm::tempo_gemm_packed as *mut (),
        );
        engine.register_symbol(
            tempo_lowering::temporal_to_loops::flash::SYMBOL,
            tempo_runtime::flash::tempo_flash_attention as *mut (),
        );
    }
    // Allocations, mappings and swap files through the runtime, so that a
    // run the system refuses ends with a message (runtime/src/guard.rs).
    if !cuda {
        for (name, pointer) in tempo_runtime::guard::symbols() {
            engine.register_symbol(name, pointer);
        }
    }
    engine.register_symbol(
        tempo_lowering::temporal_to_loops::stops::UNDEFINED_POINT,
        tempo_runtime::ragged::tempo_undefined_stop_point as *mut (),
    );
    use tempo_lowering::temporal_to_loops::by_depth::{DATA_READ_ERROR, DEPTH_ORDER};
    engine.register_symbol(DEPTH_ORDER, tempo_runtime::depth_order::tempo_depth_order as *mut ());
    engine.register_symbol(DATA_READ_ERROR, tempo_runtime::depth_order::tempo_data_read_error as *mut ());
    engine.register_symbol(
        tempo_lowering::temporal_to_loops::stops::RAGGED_LENGTHS,
        tempo_runtime::ragged::tempo_ragged_lengths as *mut (),
    );
    if cuda {
        for (name, pointer) in tempo_runtime::cuda::symbols() {
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

/// Expands gradients and runs the temporal optimizations of `options` on
/// `module`.
pub(crate) fn optimize(context: &Context, module: &mut Module, options: &RunOptions) -> Result<(), Vec<String>> {
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
pub(crate) fn rewrite_timings(times: &[(&str, std::time::Duration)]) -> String {
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

/// The lowering steps of the run's target, with `threads` threads (for
/// the GPU loops run on the CPU, the loop mapping has already run: what is
/// left). Without `temporal-schedule`: the engine writes the schedule it
/// already checked into the module ([`Executable::compile`]), which
/// `lower-temporal-to-loops` follows.
pub(crate) fn lowering_steps(
    context: &Context,
    module: &mut Module,
    options: &RunOptions,
    threads: usize,
) -> Result<Vec<Step>, Vec<String>> {
    let compile = CompileOptions { threads, ..options.compile.clone() };
    Ok(match compile.target {
        Target::Cpu => {
            let mpi = tempo_runtime::mpi::world_for(module.as_operation()).map_err(|e| vec![format!("error: {e}")])?;
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
            if tempo_runtime::ir::contains_op(module.as_operation(), "gpu.launch") {
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
pub(crate) fn libdevice() -> Result<String, Vec<String>> {
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

/// Compiles the lowered `module` for the CPU with [`crate::orc`]: split
/// into `TEMPO_COMPILE_PARTITIONS` partitions (default 0: one per core, at
/// most [`tempo_runtime::orc::partition::MAX_PARTITIONS`], fewer for little code;
/// one with `--dump-object`), translated to LLVM IR, then optimized and
/// compiled on that many threads, the objects linked by ORC.
///
/// Split by default since the run times were measured equal: PPO with 16
/// layers, six interleaved pairs of five runs each, 4.85 s (one object)
/// against 4.82 s (two) a run, for LLVM's part of its compile 3.8 -> 2.4 s
/// on 2 threads. (An earlier measurement, before the compiled code's
/// buffers came from a pool of mappings, had the split code 25% slower.)
pub(crate) fn orc_engine(module: &Module, options: &RunOptions, openmp: bool) -> Result<Engine, String> {
    let requested: usize =
        std::env::var("TEMPO_COMPILE_PARTITIONS").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    let count = match requested {
        _ if options.dump_object.is_some() => 1,
        0 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
        n => n,
    };
    let units = phases::time("LLVM IR translation", || {
        let partitions = tempo_runtime::orc::partition::split(module, count, ENTRY);
        tempo_runtime::orc::codegen::translate(&partitions)
    })?;
    let objects = phases::time("LLVM optimization and code generation", || {
        tempo_runtime::orc::codegen::compile_all(units, options.compile.llvm_level(), ENTRY)
    })?;
    let library = openmp.then_some(OPENMP_RUNTIME);
    let orc = tempo_runtime::orc::OrcEngine::load(&objects, library)?;
    Ok(Engine { backend: Backend::Orc(orc, objects, openmp) })
}

/// The cache and the key of compiling `module` (the program as given)
/// with `options`, where the cache is on and applies: the CPU target,
/// neither `--dump-object` nor `--pass-timings` (which ask for the
/// compilation itself).
pub(crate) fn cache_for(module: &Module, options: &RunOptions) -> Option<(crate::cache::Cache, String)> {
    if options.compile.target != Target::Cpu || options.dump_object.is_some() || options.pass_timings {
        return None;
    }
    let cache = crate::cache::Cache::from_env()?;
    phases::time("cache lookup", || Some((cache, cache_key(module, options))))
}

/// The cache key of compiling `module` with `options` (see
/// [`crate::cache`]).
pub(crate) fn cache_key(module: &Module, options: &RunOptions) -> String {
    let program = module_bytecode(module.as_operation());
    // (The MPI ABI the code calls, for a program using processes.)
    let mpi = tempo_runtime::mpi::world_for(module.as_operation()).ok().flatten().map(|w| w.implementation.dlti());
    let settings = format!(
        "compile {:?}; LLVM level {}; source {:?}; OpenMP {}; injected fault {:?}; MPI {mpi:?}",
        options.compile,
        options.compile.llvm_level(),
        options.source_name,
        std::path::Path::new(OPENMP_RUNTIME).exists(),
        // (The lowering's test hook: a compilation that must fault.)
        std::env::var("TEMPO_TEST_FAULT").ok(),
    );
    let (cpu, features) = tempo_runtime::orc::codegen::host_cpu();
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
pub(crate) fn module_bytecode(op: melior::ir::OperationRef) -> Vec<u8> {
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
pub(crate) fn module_from_bytecode<'c>(context: &Context, bytes: &[u8]) -> Option<Module<'c>> {
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
pub(crate) fn load_cached(
    entry: &crate::cache::Entry,
    options: &RunOptions,
    calls_externals: bool,
) -> Result<(Engine, *mut ()), Vec<String>> {
    let library = entry.openmp.then_some(OPENMP_RUNTIME);
    let orc = phases::time("loading", || tempo_runtime::orc::OrcEngine::load(&entry.objects, library))
        .map_err(|e| vec![format!("error: {e}")])?;
    let engine = Engine { backend: Backend::Orc(orc, entry.objects.clone(), entry.openmp) };
    link(engine, options, calls_externals).map_err(|e| vec![format!("error: {e}")])
}
