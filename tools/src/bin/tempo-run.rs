//! `tempo-run`: compiles a temporal program to native code and runs it.
//!
//! ```text
//! tempo-run PROGRAM.mlir --bound T=10 [--input x=x.npy]... [--seed N]
//!           [--output-dir DIR] [--format text|json|none] [--interpret] [--timings] [--repeat N] [--stats] [-O LEVEL]
//! ```
//! Prints every output (name, dtype, shape, values), one per line; with
//! `--format json` one JSON object per line. `--output-dir` also writes
//! `NAME.npy` per output.

use clap::{Parser, ValueEnum};
use indexmap::IndexMap;
use std::process::ExitCode;
use tempo_driver::cache::Outcome;
use tempo_driver::{
    CompileOptions, HostArray, RunOptions, RunReport, Target, emit_ptx, interpret_module, run_module_timed,
};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Format {
    Text,
    /// One JSON object per output; NaN and infinities are the tokens NaN,
    /// Infinity and -Infinity (as Python's json module reads them).
    Json,
    /// Print nothing (with --output-dir or --timings).
    None,
}

#[derive(Parser, Debug)]
#[command(name = "tempo-run", about = "Compile a temporal program and run it")]
struct Cli {
    /// The program (temporal dialect MLIR); `-` reads standard input.
    program: String,
    /// A bound value, `NAME=VALUE` (repeatable).
    #[arg(long = "bound", value_name = "NAME=VALUE")]
    bounds: Vec<String>,
    /// An input array, `NAME=FILE.npy` (repeatable).
    #[arg(long = "input", value_name = "NAME=FILE")]
    inputs: Vec<String>,
    /// Seed for random values of inputs not given with --input.
    #[arg(long)]
    seed: Option<u64>,
    /// Directory to write one `NAME.npy` per output into.
    #[arg(long = "output-dir", value_name = "DIR")]
    output_dir: Option<std::path::PathBuf>,
    /// How outputs are printed.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Evaluate with the reference interpreter instead of compiling.
    #[arg(long)]
    interpret: bool,
    /// Print compile and execution times to stderr, compile time by phase
    /// too (gradients, temporal optimizations, verification and schedule,
    /// lowering through MLIR's passes, translation to LLVM IR, LLVM's
    /// optimization and code generation on one thread per partition,
    /// linking), and whether the compilation cache was hit (the cache:
    /// `TEMPO_CACHE_DIR`, default ~/.cache/tempo; `TEMPO_CACHE=0` turns it
    /// off; at most `TEMPO_CACHE_MAX_BYTES`, default 1 GiB).
    #[arg(long)]
    timings: bool,
    /// With the compilation, print MLIR's execution time report of every
    /// pass (temporal and upstream) of each pipeline to stderr.
    #[arg(long)]
    pass_timings: bool,
    /// Verify the IR after every pass of the compilation (MLIR's
    /// verify-each; slower): a pass that leaves invalid IR is named.
    /// Without it, each pipeline's result is verified once.
    #[arg(long)]
    verify_each: bool,
    /// Compile once and run N times after one warm-up run (compiled runs):
    /// --timings then reports the median execution time (N = 1: one run,
    /// no warm-up).
    #[arg(long, value_name = "N", default_value_t = 1)]
    repeat: usize,
    /// Print each tensor's store (kind and bytes) and the peak bytes of
    /// live stores to stderr (compiled runs).
    #[arg(long)]
    stats: bool,
    /// Trade exactness for speed: contractions with fused multiply-add (one
    /// rounding instead of two), polynomial exp/tanh/sigmoid on f32,
    /// reassociated reductions, the library GEMM, and softmax attention
    /// with its gradient in the runtime's tiled kernels (CPU; about 1e-6
    /// relative in f32); without it, compiled results are bit-exact with
    /// the interpreter.
    #[arg(long)]
    fast_math: bool,
    /// Threads for the parallel loops of a step (1: one thread; 0: one per
    /// core; at most 1024).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=1024))]
    threads: u16,
    /// Write the JIT-compiled object code to FILE (for profilers and
    /// disassemblers); the entry's address is printed to stderr.
    #[arg(long, value_name = "FILE")]
    dump_object: Option<String>,
    /// Optimization level: the temporal passes (0: none; 1: dead code and
    /// duplicates; 2: also simplification and recurrence lifting, all
    /// exact; 3: also rules that may change float rounding, attention fused
    /// for the runtime's tiled kernels on the CPU, the rest tiled into static
    /// blocks) and LLVM's.
    #[arg(short = 'O', default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3))]
    opt_level: u8,
    /// Leave this temporal optimization pass out (repeatable), e.g.
    /// `--disable-pass temporal-lift-recurrences`; `--disable-pass fusion`
    /// lowers each spatial op to its own loop nest.
    #[arg(long = "disable-pass", value_name = "PASS")]
    disabled_passes: Vec<String>,
    /// A memory budget in bytes at these bounds: -O2 tiles softmax
    /// attention over a range whose temporaries could exceed it
    /// (temporal-tile-ranges, which changes float rounding), and where the
    /// stores exceed it, tensors a forward loop writes and a later backward
    /// loop reads back are swapped to a temporary file block by block
    /// (exact; `temporal-print-schedule` shows which); with --fast-math or
    /// -O3, a weight gradient is summed as one product over all the steps
    /// only where the rows it reads fit in it.
    #[arg(long = "memory-budget", value_name = "BYTES")]
    memory_budget: Option<u64>,
    /// Where compiled code runs: `cpu`, or `cuda` (an NVIDIA GPU through the
    /// CUDA driver; kernels as PTX for --gpu-arch).
    #[arg(long, value_enum, default_value = "cpu")]
    target: TargetArg,
    /// GPU architecture of the CUDA target, e.g. `sm_90`.
    #[arg(long, default_value = "sm_90", value_name = "ARCH")]
    gpu_arch: String,
    /// CUDA target: threads per block of the kernels of mapped loops
    /// (1 to 1024; a multiple of 32, the warp size, uses every lane).
    #[arg(long, default_value_t = 256, value_name = "N")]
    gpu_block: u32,
    /// Where a compiler fault (reported at the program's op it was
    /// lowering) writes the generated module it names; default: the
    /// system's temporary directory.
    #[arg(long, value_name = "DIR")]
    dump_on_error: Option<std::path::PathBuf>,
    /// CUDA target: write each kernel's PTX into DIR and stop after
    /// compiling (no GPU needed).
    #[arg(long, value_name = "DIR")]
    emit_ptx: Option<String>,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum TargetArg {
    Cpu,
    Cuda,
}

fn split_pair<'a>(flag: &str, text: &'a str) -> Result<(&'a str, &'a str), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() && !v.is_empty() => Ok((k, v)),
        _ => Err(format!("--{flag} expects NAME=VALUE, got '{text}'")),
    }
}

fn options(cli: &Cli) -> Result<RunOptions, String> {
    let mut bounds = IndexMap::new();
    for b in &cli.bounds {
        let (name, value) = split_pair("bound", b)?;
        let value: i64 = value.parse().map_err(|_| format!("bound {name}: '{value}' is not an integer"))?;
        if bounds.insert(name.to_string(), value).is_some() {
            return Err(format!("bound {name} is given twice"));
        }
    }
    let mut inputs = IndexMap::new();
    for i in &cli.inputs {
        let (name, path) = split_pair("input", i)?;
        let array = HostArray::read_npy(name, path)?;
        if inputs.insert(name.to_string(), array).is_some() {
            return Err(format!("input {name} is given twice"));
        }
    }
    let target = match cli.target {
        TargetArg::Cpu => {
            if cli.emit_ptx.is_some() {
                return Err("--emit-ptx needs --target cuda".into());
            }
            Target::Cpu
        }
        TargetArg::Cuda => {
            if cli.interpret {
                return Err("--interpret evaluates on the host; it does not take --target cuda".into());
            }
            let chip = cli
                .gpu_arch
                .strip_prefix("sm_")
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| (50..=200).contains(n))
                .ok_or_else(|| format!("--gpu-arch: '{}' is not a GPU architecture like sm_90", cli.gpu_arch))?;
            if !(1..=1024).contains(&cli.gpu_block) {
                return Err(format!("--gpu-block: {} threads per block is outside 1..1024", cli.gpu_block));
            }
            Target::Cuda { chip, threads_per_block: cli.gpu_block }
        }
    };
    Ok(RunOptions {
        front: tempo_driver::Front::CommandLine,
        // The program is compiled for this run: for its bounds too.
        compile: CompileOptions {
            level: cli.opt_level,
            disabled: cli.disabled_passes.clone(),
            memory_budget: cli.memory_budget,
            fast_math: cli.fast_math,
            threads: cli.threads as usize,
            target,
            bounds: bounds.clone(),
        },
        bounds,
        inputs,
        input_views: Default::default(),
        output_views: Default::default(),
        seed: cli.seed,
        source_name: if cli.program == "-" { "<stdin>".into() } else { cli.program.clone() },
        externals: Default::default(),
        dump_object: cli.dump_object.clone(),
        dump_on_error: cli.dump_on_error.clone(),
        pass_timings: cli.pass_timings,
        verify_each: cli.verify_each,
    })
}

fn main() -> ExitCode {
    tempo_tools::with_large_stack(run)
}

fn run() -> ExitCode {
    let cli = Cli::parse();
    let options = match options(&cli) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tempo-run: error: {e}");
            return ExitCode::from(2);
        }
    };
    melior::utility::register_all_passes();
    let context = tempo_dialects::create_context();
    let mut module = match tempo_tools::parse_module(&context, &cli.program) {
        Ok(m) => m,
        Err(lines) => {
            lines.iter().for_each(|l| eprintln!("{l}"));
            return ExitCode::FAILURE;
        }
    };
    if let (Some(directory), Target::Cuda { chip, .. }) = (&cli.emit_ptx, options.compile.target) {
        return match emit_ptx(&context, &mut module, &options, chip, directory) {
            Ok(count) => {
                eprintln!("tempo-run: {count} kernels written to {directory}");
                ExitCode::SUCCESS
            }
            Err(lines) => {
                lines.iter().for_each(|l| eprintln!("{l}"));
                ExitCode::FAILURE
            }
        };
    }
    let result = if cli.interpret {
        let start = std::time::Instant::now();
        interpret_module(&module, &options).map(|o| (o, RunReport { execute: start.elapsed(), ..Default::default() }))
    } else if cli.repeat > 1 {
        repeated(&context, &mut module, &options, cli.repeat)
    } else {
        run_module_timed(&context, &mut module, &options)
    };
    let outputs = match result {
        Ok((o, timings)) => {
            if cli.timings {
                eprintln!(
                    "tempo-run: compile {:.3} ms, execute {:.3} ms",
                    timings.compile.as_secs_f64() * 1e3,
                    timings.execute.as_secs_f64() * 1e3
                );
                if !timings.phases.is_empty() {
                    let phases: Vec<String> = timings
                        .phases
                        .iter()
                        .map(|(name, spent)| format!("{name} {:.3} ms", spent.as_secs_f64() * 1e3))
                        .collect();
                    eprintln!("tempo-run: compile phases: {}", phases.join(", "));
                }
                if let Some(n) = timings.objects {
                    eprintln!("tempo-run: compiled to {n} object{}", if n == 1 { "" } else { "s" });
                }
                match &timings.cache {
                    Some(Outcome::Hit(entry)) => eprintln!("tempo-run: compile cache: hit ({})", entry.display()),
                    Some(Outcome::Miss { entry, stored: Ok(()) }) => {
                        eprintln!("tempo-run: compile cache: miss, stored ({})", entry.display())
                    }
                    Some(Outcome::Miss { stored: Err(e), .. }) => {
                        eprintln!("tempo-run: compile cache: miss, not stored: {e}")
                    }
                    None => {}
                }
                if let Some(device) = &timings.device {
                    eprintln!("tempo-run: ran on {device}");
                }
            }
            if cli.stats {
                match &timings.memory {
                    Some(memory) => {
                        eprintln!("tempo-run: stores:");
                        for store in &memory.stores {
                            match store.bytes {
                                Some(b) => eprintln!("  {}: {} ({b} bytes)", store.tensor, store.kind),
                                None => eprintln!("  {}: {}", store.tensor, store.kind),
                            }
                        }
                        eprintln!("tempo-run: peak bytes of live stores: {}", memory.peak_store_bytes);
                        if let Some(device) = &timings.device_memory {
                            eprintln!(
                                "tempo-run: GPU buffers: {} in device memory, {} managed, {} on the host; \
                                 block stores: {} bytes of address space reserved, at most {} bytes of device memory mapped ({} chunks mapped, {} unmapped); \
                                 peak device memory of buffers and blocks: {} bytes",
                                device.device_buffers,
                                device.managed_buffers,
                                device.host_buffers,
                                device.reserved_bytes,
                                device.peak_mapped_bytes,
                                device.maps,
                                device.unmaps,
                                device.peak_bytes
                            );
                        }
                    }
                    None => {
                        eprintln!("tempo-run: note: --stats reports the stores of compiled runs, not of --interpret")
                    }
                }
            }
            o
        }
        Err(lines) => {
            lines.iter().for_each(|l| eprintln!("{l}"));
            // Under mpirun, the other processes would wait in a collective
            // this one no longer reaches: end them too.
            tempo_runtime::mpi::abort_others(1);
            return ExitCode::FAILURE;
        }
    };
    if let Some(dir) = &cli.output_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("tempo-run: error: cannot create '{}': {e}", dir.display());
            return ExitCode::FAILURE;
        }
        for output in &outputs {
            if let Err(e) = output.write_npy(&dir.join(format!("{}.npy", output.name))) {
                eprintln!("tempo-run: error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if outputs.is_empty() {
        eprintln!("tempo-run: note: the program marks no tensor with temporal.output; nothing to print");
    }
    for output in &outputs {
        match cli.format {
            Format::Text => tempo_tools::write_stdout_with(|out| {
                output.write_text(out)?;
                out.write_all(b"\n")
            }),
            Format::Json => tempo_tools::write_stdout_with(|out| {
                output.write_json(out)?;
                out.write_all(b"\n")
            }),
            Format::None => {}
        }
    }
    ExitCode::SUCCESS
}

/// Compiles `module` once, runs it once to warm up and `repeat` times more:
/// the last outputs, with the median execution time as the report's.
fn repeated(
    context: &melior::Context,
    module: &mut melior::ir::Module,
    options: &RunOptions,
    repeat: usize,
) -> Result<(Vec<HostArray>, RunReport), Vec<String>> {
    let executable = tempo_driver::Executable::compile(context, module, options)?;
    let mut last = executable.run(options)?;
    let mut times = Vec::with_capacity(repeat);
    for _ in 0..repeat {
        last = executable.run(options)?;
        times.push(last.1.execute);
    }
    times.sort();
    last.1.execute = times[times.len() / 2];
    Ok(last)
}
