//! `tempo-opt`: reads MLIR (file or stdin), runs a pass pipeline mixing the
//! project's Rust passes and any upstream MLIR pass, prints the result.
//!
//! ```text
//! tempo-opt [FILE|-] [--pass-pipeline=PIPELINE | -p PIPELINE] [--PASS[=OPTIONS]]...
//!           [-o OUT] [--mlir-print-op-generic] [--emit-irdl] [--list-passes]
//! ```
//! `--PASS` flags (any registered or upstream pass) are appended in order,
//! after `--pass-pipeline`.

use melior::{
    ir::operation::{OperationLike, OperationPrintingFlags},
    pass::PassManager,
};
use std::process::ExitCode;
use tempo_passes::{diagnostics::DiagnosticCollector, pipeline};

const USAGE: &str = "usage: tempo-opt [FILE|-] [--pass-pipeline=PIPELINE | -p PIPELINE] [--PASS[=OPTIONS]]... \
[-o OUT] [--mlir-print-op-generic] [--emit-irdl] [--list-passes]";

struct Args {
    input: String,
    output: Option<String>,
    pipeline: Vec<String>,
    generic: bool,
    emit_irdl: bool,
    list_passes: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        input: "-".into(),
        output: None,
        pipeline: Vec::new(),
        generic: false,
        emit_irdl: false,
        list_passes: false,
    };
    let mut input = None;
    let mut iter = std::env::args().skip(1);
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
            "--emit-irdl" => args.emit_irdl = true,
            "--list-passes" | "--help" | "-h" => args.list_passes = true,
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
    Ok(args)
}

fn list_passes() {
    println!("{USAGE}\n\nProject passes and pipelines:");
    for entry in tempo_lowering::registry().entries() {
        println!("  {:28} {}", entry.name(), entry.summary());
    }
    println!("\nEvery upstream MLIR pass is available too (e.g. canonicalize, cse, lower-affine, convert-to-llvm);");
    println!("see `mlir-opt --help` for their names and options.");
}

fn main() -> ExitCode {
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
        print!("{}", tempo_dialects::irdl_module_text());
        return ExitCode::SUCCESS;
    }
    melior::utility::register_all_passes();
    let context = tempo_dialects::create_context();
    let mut module = match tempo_tools::parse_module(&context, &args.input) {
        Ok(m) => m,
        Err(lines) => {
            lines.iter().for_each(|l| eprintln!("{l}"));
            return ExitCode::FAILURE;
        }
    };
    let collector = DiagnosticCollector::attach(&context);
    let registry = tempo_lowering::registry();
    let manager = PassManager::new(&context);
    manager.enable_verifier(true);
    for text in &args.pipeline {
        let built = pipeline::parse_pipeline(text)
            .and_then(|elements| pipeline::add_to_pass_manager(&manager, &registry, &elements));
        if let Err(e) = built {
            eprintln!("tempo-opt: error: {e}");
            return ExitCode::FAILURE;
        }
    }
    if !module.as_operation().verify() || manager.run(&mut module).is_err() {
        let lines = collector.take();
        lines.iter().for_each(|l| eprintln!("{l}"));
        if lines.is_empty() {
            eprintln!("tempo-opt: error: the pipeline failed");
        }
        return ExitCode::FAILURE;
    }
    for warning in collector.take() {
        eprintln!("{warning}");
    }
    let mut flags = OperationPrintingFlags::new();
    if args.generic {
        flags = flags.print_generic_operation_form();
    }
    let text = match module.as_operation().to_string_with_flags(flags) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tempo-opt: error: cannot print the module: {e}");
            return ExitCode::FAILURE;
        }
    };
    match &args.output {
        Some(path) => {
            if let Err(e) = std::fs::write(path, text + "\n") {
                eprintln!("tempo-opt: error: cannot write '{path}': {e}");
                return ExitCode::FAILURE;
            }
        }
        None => println!("{text}"),
    }
    ExitCode::SUCCESS
}
