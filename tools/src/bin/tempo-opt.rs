//! `tempo-opt`: reads MLIR (file or stdin), runs a pass pipeline mixing the
//! project's Rust passes and any upstream MLIR pass, prints the result.
//!
//! ```text
//! tempo-opt [FILE|-] [-O0|-O1|-O2|-O3 [--disable-pass=PASS]...]
//!           [--pass-pipeline=PIPELINE | -p PIPELINE] [--PASS[=OPTIONS]]...
//!           [-o OUT] [--mlir-print-op-generic] [--mlir-print-debuginfo] [--emit-irdl] [--list-passes]
//!           [--dump-on-error DIR] [--mlir-timing]
//! ```
//! A compiler fault (generated code MLIR refuses) is reported at the user's
//! op; the generated module goes to a file the message names, in DIR with
//! `--dump-on-error`, else in the system's temporary directory.
//! `-ON` runs the temporal optimizations of level N first
//! ([`tempo_passes::optimize`]); `--PASS` flags (any registered or upstream
//! pass) are appended in order, after `--pass-pipeline`.

use melior::{
    ir::operation::{OperationLike, OperationPrintingFlags},
    pass::PassManager,
};
use std::process::ExitCode;
use tempo_passes::{diagnostics::DiagnosticCollector, pipeline};

const USAGE: &str = "usage: tempo-opt [FILE|-] [-O0|-O1|-O2|-O3 [--disable-pass=PASS]...] \
[--pass-pipeline=PIPELINE | -p PIPELINE] [--PASS[=OPTIONS]]... \
[-o OUT] [--split-input-file] [--mlir-print-op-generic] [--mlir-print-debuginfo] [--emit-irdl] [--list-passes] [--dump-on-error DIR] [--mlir-timing]";

struct Args {
    input: String,
    output: Option<String>,
    pipeline: Vec<String>,
    /// The steps of `-O` (before the pipeline's).
    optimization: Vec<pipeline::Step>,
    generic: bool,
    /// `--mlir-print-debuginfo`: print each op's location (the user's op
    /// of generated code: maps profiled code back to the program).
    debuginfo: bool,
    emit_irdl: bool,
    list_passes: bool,
    split_input_file: bool,
    /// `--mlir-timing`: MLIR's report of the time each pass took.
    timing: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        input: "-".into(),
        output: None,
        pipeline: Vec::new(),
        optimization: Vec::new(),
        generic: false,
        debuginfo: false,
        emit_irdl: false,
        list_passes: false,
        split_input_file: false,
        timing: false,
    };
    let mut input = None;
    let mut level: Option<u8> = None;
    let mut disabled: Vec<String> = Vec::new();
    // Arguments that are not UTF-8 are an error, not a panic.
    let arguments = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string().map_err(|a| format!("argument '{}' is not UTF-8", a.to_string_lossy())))
        .collect::<Result<Vec<String>, String>>()?;
    let mut iter = arguments.into_iter();
    while let Some(arg) = iter.next() {
        let mut value_of = |flag: &str, inline: Option<&str>| -> Result<String, String> {
            match inline {
                Some(v) => Ok(v.to_string()),
                None => iter.next().ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with('-') => (f.to_string(), Some(v)),
            _ => (arg.clone(), None),
        };
        match flag.as_str() {
            "--pass-pipeline" | "-p" => args.pipeline.insert(0, value_of(&flag, inline)?),
            "-o" => args.output = Some(value_of(&flag, inline)?),
            "--mlir-print-op-generic" => args.generic = true,
            "--mlir-print-debuginfo" => args.debuginfo = true,
            "--emit-irdl" => args.emit_irdl = true,
            "--split-input-file" => args.split_input_file = true,
            "--mlir-timing" => args.timing = true,
            "--list-passes" | "--help" | "-h" => args.list_passes = true,
            "-O0" | "-O1" | "-O2" | "-O3" => level = Some(flag.as_bytes()[2] - b'0'),
            "--disable-pass" => disabled.push(value_of(&flag, inline)?),
            "--dump-on-error" => {
                tempo_passes::fault::set_dump_dir(Some(std::path::PathBuf::from(value_of(&flag, inline)?)))
            }
            "-" => input = Some("-".to_string()),
            f if f.starts_with("--") => {
                let name = &f[2..];
                match inline {
                    Some(options) => args.pipeline.push(format!("{name}{{{options}}}")),
                    None => args.pipeline.push(name.to_string()),
                }
            }
            f if f.starts_with('-') => return Err(format!("unknown option '{f}'")),
            _ => {
                if input.is_some() {
                    return Err(format!("more than one input file ('{arg}')"));
                }
                input = Some(arg.clone());
            }
        }
    }
    if let Some(input) = input {
        args.input = input;
    }
    if !disabled.is_empty() && level.is_none() {
        return Err("--disable-pass leaves a pass out of an -O level; give one (-O1, -O2 or -O3)".into());
    }
    if let Some(level) = level {
        let options = tempo_passes::compile_options::CompileOptions { level, disabled, ..Default::default() };
        args.optimization = tempo_passes::optimize::optimization_steps(&options)?;
    }
    Ok(args)
}

fn list_passes() {
    let mut text = format!("{USAGE}\n\nProject passes and pipelines:\n");
    for entry in tempo_lowering::registry().entries() {
        text.push_str(&format!("  {:28} {}\n", entry.name(), entry.summary()));
        if let tempo_passes::pass::RegistryEntry::Pass(pass) = entry {
            for option in pass.options() {
                text.push_str(&format!(
                    "  {:28}   {}=<{}>: {}\n",
                    "",
                    option.name,
                    option.kind.describe(),
                    option.summary
                ));
            }
        }
    }
    text.push_str(
        "\nEvery upstream MLIR pass is available too (e.g. canonicalize, cse, lower-affine, convert-to-llvm);\n",
    );
    text.push_str("see `mlir-opt --help` for their names and options.\n");
    tempo_tools::write_stdout(&text);
}

fn main() -> ExitCode {
    tempo_tools::with_large_stack(run)
}

fn run() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("tempo-opt: error: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if args.list_passes {
        list_passes();
        return ExitCode::SUCCESS;
    }
    if args.emit_irdl {
        tempo_tools::write_stdout(&tempo_dialects::irdl_module_text());
        return ExitCode::SUCCESS;
    }
    melior::utility::register_all_passes();
    let (text, name) = match tempo_tools::read_source(&args.input) {
        Ok(source) => source,
        Err(e) => {
            eprintln!("tempo-opt: {e}");
            return ExitCode::FAILURE;
        }
    };
    let chunks = if args.split_input_file { tempo_tools::split_chunks(&text) } else { vec![(1, text)] };
    let context = tempo_dialects::create_context();
    let registry = tempo_lowering::registry();
    // The pipeline's text parsed once, and checked before any input is
    // processed.
    let mut steps = args.optimization.clone();
    for pipeline_text in &args.pipeline {
        match pipeline::parse_steps(&registry, pipeline_text) {
            Ok(parsed) => steps.extend(parsed),
            Err(e) => {
                eprintln!("tempo-opt: error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if let Err(e) = pipeline::add_to_pass_manager(&PassManager::new(&context), &steps) {
        eprintln!("tempo-opt: error: {e}");
        return ExitCode::FAILURE;
    }
    let mut printed = Vec::new();
    let mut failed = false;
    for (first_line, chunk) in &chunks {
        match process(&context, &steps, &args, chunk, &name, *first_line) {
            Ok(text) => printed.push(text),
            Err(Fatal(lines)) => {
                lines.iter().for_each(|l| eprintln!("{l}"));
                failed = true;
            }
        }
    }
    let output = printed.join("\n// -----\n");
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, output + "\n") {
                eprintln!("tempo-opt: error: cannot write '{path}': {e}");
                return ExitCode::FAILURE;
            }
        }
        None if printed.is_empty() => {}
        None => tempo_tools::write_stdout(&format!("{output}\n")),
    }
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}

struct Fatal(Vec<String>);

/// Parses one chunk, runs the pipeline, and prints the result.
fn process(
    context: &melior::Context,
    steps: &[pipeline::Step],
    args: &Args,
    text: &str,
    name: &str,
    first_line: usize,
) -> Result<String, Fatal> {
    let mut module = tempo_tools::parse_text(context, text, name, first_line).map_err(Fatal)?;
    let collector = DiagnosticCollector::attach_for_source(context, name);
    let manager = PassManager::new(context);
    manager.enable_verifier(true);
    if args.timing {
        // MLIR's execution time report of every pass (ours and upstream),
        // printed to stderr when the manager is dropped.
        unsafe { mlir_sys::mlirPassManagerEnableTiming(manager.to_raw()) };
    }
    pipeline::add_to_pass_manager(&manager, steps).map_err(|e| Fatal(vec![format!("tempo-opt: error: {e}")]))?;
    if !module.as_operation().verify() || manager.run(&mut module).is_err() {
        let mut lines = collector.take();
        if lines.is_empty() {
            lines.push("tempo-opt: error: the pipeline failed".into());
        }
        return Err(Fatal(lines));
    }
    for warning in collector.take() {
        eprintln!("{warning}");
    }
    let mut flags = OperationPrintingFlags::new();
    if args.generic {
        flags = flags.print_generic_operation_form();
    }
    if args.debuginfo {
        flags = flags.enable_debug_info(true, false);
    }
    module
        .as_operation()
        .to_string_with_flags(flags)
        .map_err(|e| Fatal(vec![format!("tempo-opt: error: cannot print the module: {e}")]))
}
