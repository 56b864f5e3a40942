//! End-to-end tests through the library API (one test binary, since each
//! links all of MLIR): the bundled examples, snapshots of each lowering
//! step, and differential testing of compiled code against the reference
//! interpreter on hand-written and randomly generated programs.

mod cuda;
mod differential;
mod examples;
mod generators;
mod gradients;
mod packed_products;
mod zoo;

use indexmap::IndexMap;
use melior::{Context, ir::Module};
use tempo_driver::{CompileOptions, HostArray, RunOptions, interpret_module, run_module};

pub fn context() -> Context {
    melior::utility::register_all_passes();
    tempo_dialects::create_context()
}

pub fn example(name: &str) -> String {
    let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

pub fn options(bounds: &[(&str, i64)], inputs: Vec<HostArray>, seed: Option<u64>) -> RunOptions {
    RunOptions {
        front: Default::default(),
        bounds: bounds.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        inputs: inputs.into_iter().map(|a| (a.name.clone(), a)).collect::<IndexMap<_, _>>(),
        input_views: Default::default(),
        output_views: Default::default(),
        seed,
        source_name: "test".into(),
        // Every pass's output verified: a pass that leaves invalid IR is
        // named (users' runs verify each pipeline's result once).
        verify_each: true,
        ..Default::default()
    }
}

/// Compiles and runs `source` (with the default optimizations).
pub fn run(
    source: &str,
    bounds: &[(&str, i64)],
    inputs: Vec<HostArray>,
    seed: Option<u64>,
) -> Result<Vec<HostArray>, Vec<String>> {
    run_optimized(source, bounds, inputs, seed, CompileOptions::default())
}

/// Compiles and runs `source` with the given temporal optimizations.
pub fn run_optimized(
    source: &str,
    bounds: &[(&str, i64)],
    inputs: Vec<HostArray>,
    seed: Option<u64>,
    optimization: CompileOptions,
) -> Result<Vec<HostArray>, Vec<String>> {
    let context = context();
    let mut module = Module::parse(&context, source).expect("program parses");
    run_module(&context, &mut module, &RunOptions { compile: optimization, ..options(bounds, inputs, seed) })
}

/// Evaluates `source` with the reference interpreter.
pub fn interpret(
    source: &str,
    bounds: &[(&str, i64)],
    inputs: Vec<HostArray>,
    seed: Option<u64>,
) -> Result<Vec<HostArray>, Vec<String>> {
    let context = context();
    let module = Module::parse(&context, source).expect("program parses");
    interpret_module(&module, &options(bounds, inputs, seed))
}
