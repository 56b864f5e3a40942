//! What a run is given besides the program: who runs it, the bounds,
//! inputs and outputs, and the compilation's options
//! ([`CompileOptions`]).

use indexmap::IndexMap;
pub use tempo_passes::compile_options::{CompileOptions, Target};
use tempo_runtime::array::HostArray;
use tempo_runtime::externals::Externals;
use tempo_runtime::invoke::{ArrayView, ArrayViewMut};

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
    pub(crate) fn give_bound(self, name: &str) -> String {
        match self {
            Front::CommandLine => format!("give it with --bound {name}=N"),
            Front::Rust => format!("give it with .bound(\"{name}\", N)"),
            Front::C => format!("give it in tempoRun's bounds, {{\"{name}\", N}}"),
            Front::Python => format!("give it as {name}=N"),
        }
    }

    /// How to give input `name`.
    pub(crate) fn give_input(self, name: &str) -> String {
        match self {
            Front::CommandLine => format!("give it with --input {name}=FILE.npy or pass --seed N for random values"),
            Front::Rust => format!("give it with .input(HostArray named \"{name}\") or .seed(N) for random values"),
            Front::C => "give it in tempoRun's inputs, in the program's order".to_string(),
            Front::Python => format!("give it as {name}=array or seed=N for random values"),
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
    pub(crate) fn settings(&self) -> RunOptions {
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
