//! What the reinforcement-learning examples (`ppo.rs`, `reinforce.rs`)
//! share: running a whole training program (compiled or interpreted) and
//! reporting it, and parsing the values of their common options.

use std::io::Write;
use std::time::Instant;
use tempo::{HostArray, Program};

/// How a training program runs.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub iterations: i64,
    pub steps: i64,
    pub seed: u64,
    pub interpret: bool,
    /// Compiled runs: fast math (`Runner::fast_math`) and threads (0: one
    /// per core).
    pub fast_math: bool,
    pub threads: usize,
}

/// Runs `program` (a training run over `I` iterations of `T` steps whose
/// output is the mean return of each iteration) and returns the mean
/// returns and the run's seconds, without compilation (reported on stderr
/// as `{tool}: compile S s`).
#[allow(dead_code)] // ppo.rs takes the outputs too
pub fn train(tool: &str, program: Program, run: Run) -> Result<(Vec<f64>, f64), tempo::Error> {
    train_with_outputs(tool, program, run).map(|(returns, seconds, _)| (returns, seconds))
}

/// [`train`], with the program's other outputs (after the mean returns).
pub fn train_with_outputs(
    tool: &str,
    program: Program,
    run: Run,
) -> Result<(Vec<f64>, f64, Vec<HostArray>), tempo::Error> {
    let Run { iterations, steps, seed, interpret, fast_math, threads } = run;
    // The initial parameters (`*_init`) are the runner's seeded uniform
    // values in [-1, 1), scaled per parameter in the program.
    let runner =
        program.runner().bound("I", iterations).bound("T", steps).seed(seed).fast_math(fast_math).threads(threads);
    let start = Instant::now();
    let (out, seconds) = if interpret {
        let out = runner.interpret()?;
        (out, start.elapsed().as_secs_f64())
    } else {
        // Compiled, then run once every process of the run has compiled
        // (a data-parallel run's timing leaves out the others' compilation).
        let compiled = runner.compile()?;
        eprintln!("{tool}: compile {:.1} s", start.elapsed().as_secs_f64());
        tempo::barrier()?;
        let (out, report) = compiled.run_with_report(&[("I", iterations), ("T", steps)], &[], Some(seed))?;
        (out, report.execute.as_secs_f64())
    };
    let returns = (0..iterations as usize).map(|k| out[0].data.get_f64(k)).collect();
    Ok((returns, seconds, out.into_iter().skip(1).collect()))
}

/// Prints the program's MLIR (`mlir`) or the training run's lines,
/// `iteration N mean_return R seconds S` (`S`: the run's time divided
/// evenly, since every iteration runs in one program); exits 1 on an error
/// (ending the other processes of an MPI run). `quiet`: print nothing
/// (the processes of a data-parallel run but rank 0).
pub fn finish(
    mlir: bool,
    quiet: bool,
    program: impl FnOnce() -> Result<Program, tempo::Error>,
    train: impl FnOnce() -> Result<(Vec<f64>, f64), tempo::Error>,
) {
    // Written without panicking when the reader goes away (`| head`).
    let mut out = std::io::stdout().lock();
    let result = if mlir {
        program().and_then(|p| p.to_mlir()).map(|text| {
            let _ = write!(out, "{text}");
        })
    } else {
        train().map(|(returns, seconds)| {
            if quiet {
                return;
            }
            let each = seconds / returns.len() as f64;
            for (k, r) in returns.iter().enumerate() {
                let _ = writeln!(out, "iteration {k} mean_return {r:.4} seconds {each:.6}");
            }
        })
    };
    if let Err(e) = result {
        eprintln!("{e}");
        tempo::abort_processes(1);
        std::process::exit(1)
    }
}

/// The value of a numeric option; exits 2 with a message otherwise.
pub fn number<T: std::str::FromStr>(tool: &str, flag: &str, text: &str) -> T {
    text.parse().unwrap_or_else(|_| {
        eprintln!("{tool}: {flag} takes a number, got '{text}'");
        std::process::exit(2)
    })
}

/// The value of `--obs C,H,W` (positive sizes).
pub fn observation(tool: &str, text: &str) -> [i64; 3] {
    let parts: Vec<i64> = text.split(',').map(|s| number(tool, "--obs", s)).collect();
    match parts[..] {
        [c, h, w] if c > 0 && h > 0 && w > 0 => [c, h, w],
        _ => {
            eprintln!("{tool}: --obs takes C,H,W (positive), got '{text}'");
            std::process::exit(2)
        }
    }
}

/// What the RL examples' usage says of their numeric flags.
pub const NUMERICS_HELP: &str =
    "  --dtype f32|f64  element type of the policy's values (default f32; CartPole's dynamics always run in f64)
  --fast-math      faster, not bit-exact with the interpreter: one rounding for multiply-add in products, polynomial
                   exp/tanh/sigmoid on f32 (within 8 ulps), reassociated float sums and maxima, a library GEMM for large
                   products (off by default: compiled results equal the interpreter's)
  --threads N      threads of the parallel loops (default 0: one per core)";

/// The value of `--dtype f32|f64`: whether it is f32.
pub fn is_f32(tool: &str, text: &str) -> bool {
    match text {
        "f32" => true,
        "f64" => false,
        other => {
            eprintln!("{tool}: --dtype takes f32 or f64, got '{other}'");
            std::process::exit(2)
        }
    }
}

/// Exits 2 unless the sizes are positive.
pub fn check_sizes(tool: &str, envs: i64, steps: i64, width: i64, iterations: i64) {
    if envs <= 0 || steps <= 0 || width <= 0 || iterations <= 0 {
        eprintln!("{tool}: --envs, --steps, --width and --iterations must be positive");
        std::process::exit(2)
    }
}
