//! Pipelines: pipeline text parsed ([`parse_pipeline`]) and resolved into
//! typed steps ([`steps`]), and MLIR pass managers built from steps.
//!
//! Syntax (a superset of MLIR's): `elem (, elem)*` where `elem` is
//! `pass-name`, `pass-name{options}` or `op.name(nested pipeline)`. A
//! leading `builtin.module(...)` around everything is optional. Names found
//! in the [`crate::pass::PassRegistry`] become Rust passes or expand as named pipelines;
//! every other name is handed to MLIR as an upstream pass (so all upstream
//! passes work, with their own option syntax).

use crate::diagnostics::PassDiagnostic;
use crate::pass::{PassOptions, TempoPass};
use melior::{
    ir::{OperationRef, operation::OperationLike, r#type::TypeId},
    pass::{ExternalPass, OperationPassManager, create_external},
};
use std::{ffi::c_void, sync::Arc};

mod steps;
pub use steps::{Step, add_steps, add_to_pass_manager, parse_steps, print_steps, resolve};

/// One element of a pipeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PipelineElement {
    /// A pass with its raw option text (without braces; empty if none).
    Pass { name: String, options: String },
    /// Passes nested under an op name.
    Nested { anchor: String, elements: Vec<PipelineElement> },
}

/// A pipeline error, with the byte offset where parsing failed if known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PipelineError(pub String);

impl std::fmt::Display for PipelineError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.text[self.pos..].starts_with(char::is_whitespace) {
            self.pos += self.text[self.pos..].chars().next().map_or(1, char::len_utf8);
        }
    }
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }
    fn error(&self, what: &str) -> PipelineError {
        PipelineError(format!("malformed pipeline at column {}: {what}: '{}'", self.pos + 1, self.text))
    }
    fn name(&mut self) -> Result<String, PipelineError> {
        self.skip_ws();
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '$') {
                self.pos += 1;
            } else {
                break;
            }
        }
        if start == self.pos {
            return Err(self.error("expected a pass or op name"));
        }
        Ok(self.text[start..self.pos].to_string())
    }
    fn list(&mut self, closing: Option<char>) -> Result<Vec<PipelineElement>, PipelineError> {
        let mut elements = Vec::new();
        self.skip_ws();
        if closing.is_some() && self.peek() == closing {
            self.pos += 1;
            return Ok(elements);
        }
        loop {
            let name = self.name()?;
            self.skip_ws();
            match self.peek() {
                Some('(') => {
                    self.pos += 1;
                    let nested = self.list(Some(')'))?;
                    elements.push(PipelineElement::Nested { anchor: name, elements: nested });
                }
                Some('{') => {
                    let start = self.pos + 1;
                    let mut depth = 0usize;
                    loop {
                        match self.peek() {
                            Some('{') => depth += 1,
                            Some('}') => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            None => return Err(self.error("unbalanced '{' in pass options")),
                            _ => {}
                        }
                        self.pos += self.peek().map_or(1, char::len_utf8);
                    }
                    let options = self.text[start..self.pos].trim().to_string();
                    self.pos += 1;
                    elements.push(PipelineElement::Pass { name, options });
                }
                _ => elements.push(PipelineElement::Pass { name, options: String::new() }),
            }
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                c if c == closing => {
                    if closing.is_some() {
                        self.pos += 1;
                    }
                    return Ok(elements);
                }
                Some(_) => return Err(self.error("expected ',' or the end of the list")),
                None => return Err(self.error("missing ')'")),
            }
        }
    }
}

/// Parses pipeline text.
pub fn parse_pipeline(text: &str) -> Result<Vec<PipelineElement>, PipelineError> {
    let mut parser = Parser { text, pos: 0 };
    parser.skip_ws();
    if parser.peek().is_none() {
        return Ok(Vec::new());
    }
    let mut elements = parser.list(None)?;
    // `builtin.module(...)` at top level is the implicit root.
    if let [PipelineElement::Nested { anchor, elements: inner }] = elements.as_slice()
        && anchor == "builtin.module"
    {
        elements = inner.clone();
    }
    Ok(elements)
}

/// Parses `key=value key2=value2` option text of a Rust pass (a bare key
/// is `key=true`), checking names and values against the pass's
/// declarations.
pub fn parse_options(pass: &dyn TempoPass, text: &str) -> Result<PassOptions, PipelineError> {
    let given = text.split_whitespace().map(|item| item.split_once('=').unwrap_or((item, "true")));
    PassOptions::parse(pass.name(), pass.options(), given).map_err(PipelineError)
}

/// `elements` in MLIR's pipeline syntax (what MLIR's own parser reads).
pub fn print_elements(elements: &[PipelineElement]) -> String {
    let items: Vec<String> = elements
        .iter()
        .map(|element| match element {
            PipelineElement::Pass { name, options } if options.is_empty() => name.clone(),
            PipelineElement::Pass { name, options } => format!("{name}{{{options}}}"),
            PipelineElement::Nested { anchor, elements } => format!("{anchor}({})", print_elements(elements)),
        })
        .collect();
    items.join(",")
}

pub(crate) fn add_upstream(manager: &OperationPassManager, name: &str, options: &str) -> Result<(), PipelineError> {
    let text = if options.is_empty() { name.to_string() } else { format!("{name}{{{options}}}") };
    let mut message: Option<String> = None;
    unsafe extern "C" fn on_error(text: mlir_sys::MlirStringRef, data: *mut c_void) {
        let message = unsafe { &mut *(data as *mut Option<String>) };
        let bytes = unsafe { std::slice::from_raw_parts(text.data as *const u8, text.length) };
        message.get_or_insert_with(String::new).push_str(&String::from_utf8_lossy(bytes));
    }
    let result = unsafe {
        mlir_sys::mlirOpPassManagerAddPipeline(
            manager.to_raw(),
            melior::StringRef::new(&text).to_raw(),
            Some(on_error),
            &mut message as *mut _ as *mut c_void,
        )
    };
    if result.value == 0 {
        let detail = message.unwrap_or_default();
        let detail = detail.trim();
        return Err(PipelineError(if detail.contains("does not refer to a registered pass") {
            format!("unknown pass or pipeline '{name}' (see --list-passes)")
        } else {
            format!("invalid pass '{text}': {detail}")
        }));
    }
    Ok(())
}

/// Runs `pass` on `op` as MLIR runs a pass: its diagnostics emitted
/// through MLIR's handlers, a panic caught and reported as a compiler
/// fault at the user op the pass was lowering (a panic must not unwind
/// into MLIR's C++ frames). Whether it succeeded.
pub fn run_reported(pass: &dyn TempoPass, op: OperationRef<'_, '_>, options: &PassOptions) -> bool {
    crate::fault::clear_current();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pass.run(op, options)));
    let diagnostics = match outcome {
        Ok(Ok(())) => {
            crate::fault::clear_current();
            return true;
        }
        Ok(Err(diagnostics)) => {
            crate::fault::clear_current();
            diagnostics
        }
        Err(panic) => {
            let what = crate::fault::panic_message(panic.as_ref());
            // At the user op the pass was lowering, where it marked one.
            let (location, lowering) = match crate::fault::current() {
                Some((location, op)) => (location, format!(" while lowering '{op}'")),
                None => (op.location(), String::new()),
            };
            crate::fault::clear_current();
            vec![PassDiagnostic::new(
                location,
                format!(
                    "compiler fault in pass '{}'{lowering}: {what}; please report it with the input program",
                    pass.name()
                ),
            )]
        }
    };
    for d in &diagnostics {
        d.emit();
    }
    if diagnostics.is_empty() {
        PassDiagnostic::new(op.location(), format!("pass '{}' failed", pass.name())).emit();
    }
    false
}

/// Runs `steps` on one program model, where every one is a pass that
/// rewrites it ([`crate::pass::ProgramRewrite`]: the temporal
/// optimizations): the program read from `op` and verified once, each pass
/// rewriting it in turn (a panic caught and reported as a compiler fault,
/// as [`run_reported`] does), and written back once if any changed it.
/// Through MLIR's pass manager, each pass would read the program from the
/// IR and verify it, and write it back when it changed it. `None` where
/// some step is not such a pass (an upstream pass, a nested pipeline): the
/// caller runs the pipeline through a pass manager. Otherwise each pass's
/// name and wall time, in order, or the first failure's diagnostics.
pub fn run_rewrites<'c>(
    op: OperationRef<'c, '_>,
    steps: &[Step],
) -> Option<Result<Vec<(&'static str, std::time::Duration)>, Vec<PassDiagnostic<'c>>>> {
    let mut passes = Vec::new();
    for step in steps {
        let Step::Pass { pass, options } = step else { return None };
        if pass.anchor() != "builtin.module" || pass.as_rewrite().is_none() {
            return None;
        }
        passes.push((pass.clone(), options));
    }
    Some(rewrite_all(op, &passes))
}

/// [`run_rewrites`] of passes (each a rewrite) with their options.
fn rewrite_all<'c>(
    op: OperationRef<'c, '_>,
    passes: &[(Arc<dyn TempoPass>, &PassOptions)],
) -> Result<Vec<(&'static str, std::time::Duration)>, Vec<PassDiagnostic<'c>>> {
    let at = op.location();
    let mut program = crate::verify::verify_program(op)?;
    let mut changed = false;
    let mut times = Vec::new();
    for (pass, options) in passes {
        let rewrite = pass.as_rewrite().expect("resolved as a rewrite");
        let start = std::time::Instant::now();
        crate::fault::clear_current();
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rewrite.rewrite(&mut program, options, at)));
        crate::fault::clear_current();
        match outcome {
            Ok(Ok(c)) => changed |= c,
            Ok(Err(diagnostics)) => return Err(diagnostics),
            Err(panic) => {
                let what = crate::fault::panic_message(panic.as_ref());
                return Err(vec![PassDiagnostic::new(
                    at,
                    format!(
                        "compiler fault in pass '{}': {what}; please report it with the input program",
                        pass.name()
                    ),
                )]);
            }
        }
        times.push((pass.name(), start.elapsed()));
    }
    if changed {
        crate::emit::replace_program(op, &program)?;
    }
    Ok(times)
}

/// Wraps a Rust pass as an MLIR external pass.
pub(crate) fn external_pass(pass: Arc<dyn TempoPass>, options: PassOptions) -> melior::pass::Pass {
    // Each external pass needs a unique, 8-aligned TypeID address.
    let id: &'static u64 = Box::leak(Box::new(0u64));
    let name = pass.name();
    let summary = pass.summary();
    let anchor = pass.anchor();
    create_external(
        move |op: OperationRef<'_, '_>, handle: ExternalPass<'_>| {
            if !run_reported(pass.as_ref(), op, &options) {
                handle.signal_failure();
            }
        },
        TypeId::create(id),
        name,
        name,
        summary,
        anchor,
        &[],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nesting_and_options() {
        let p = parse_pipeline("builtin.module(a, func.func(b{x=1 y={z}}, c), d)").unwrap();
        assert_eq!(
            p,
            vec![
                PipelineElement::Pass { name: "a".into(), options: String::new() },
                PipelineElement::Nested {
                    anchor: "func.func".into(),
                    elements: vec![
                        PipelineElement::Pass { name: "b".into(), options: "x=1 y={z}".into() },
                        PipelineElement::Pass { name: "c".into(), options: String::new() },
                    ]
                },
                PipelineElement::Pass { name: "d".into(), options: String::new() },
            ]
        );
    }

    /// The level-3 passes (every rewrite the levels have) with bound values
    /// on the corpus's models (gradients expanded first, as the runtime does):
    /// on one program model, the same program as through MLIR's pass
    /// manager, one pass at a time.
    #[test]
    fn rewrites_on_one_model_equal_the_pass_manager() {
        let context = tempo_dialects::create_context();
        let mut registry = crate::pass::PassRegistry::default();
        crate::register_passes(&mut registry);
        for (source, bounds) in [
            (include_str!("../../examples/corpus/zoo_gpt.mlir"), "T=5"),
            (include_str!("../../examples/corpus/zoo_lstm_lm.mlir"), "T=4"),
        ] {
            let (bound, value) = bounds.split_once('=').unwrap();
            let options = crate::compile_options::CompileOptions {
                level: 3,
                fast_math: true,
                bounds: [(bound.to_string(), value.parse().unwrap())].into_iter().collect(),
                ..Default::default()
            };
            let steps = crate::optimize::optimization_steps(&options).unwrap();
            let [first, rest @ ..] = steps.as_slice() else { panic!("passes") };
            assert_eq!(first.name(), "temporal-autodiff");
            let expanded = || {
                let module = melior::ir::Module::parse(&context, source).unwrap();
                crate::temporal_autodiff::TemporalAutodiff.run(module.as_operation(), &PassOptions::default()).unwrap();
                module
            };
            let one = expanded();
            let times = run_rewrites(one.as_operation(), rest).expect("all rewrites").unwrap();
            assert_eq!(times.len(), rest.len());
            let managed = expanded();
            let manager = melior::pass::PassManager::new(&context);
            add_to_pass_manager(&manager, rest).unwrap();
            let mut managed = managed;
            manager.run(&mut managed).unwrap();
            assert_eq!(one.as_operation().to_string(), managed.as_operation().to_string());
        }
        // A pipeline with an upstream pass runs through a pass manager.
        let module = melior::ir::Module::parse(&context, include_str!("../../examples/rnn.mlir")).unwrap();
        let mixed = parse_steps(&registry, "temporal-dce, canonicalize").unwrap();
        assert!(run_rewrites(module.as_operation(), &mixed).is_none());
    }

    #[test]
    fn rejects_malformed_text() {
        assert!(parse_pipeline("a,,b").is_err());
        assert!(parse_pipeline("a(b").is_err());
        assert!(parse_pipeline("a{x").is_err());
        assert!(parse_pipeline("a b").is_err());
        assert_eq!(parse_pipeline("  ").unwrap(), vec![]);
    }
}
