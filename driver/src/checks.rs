//! The checks and messages the compilation and the interpreter share: a
//! program's gradients expanded (what a program with gradients means for
//! both), its external calls registered, diagnostics rendered as lines.

use crate::options::RunOptions;
use melior::ir::Module;
use melior::ir::operation::OperationLike;
use tempo_passes::diagnostics::{PassDiagnostic, render_location};
use tempo_passes::program::Program;

/// `diagnostics` as rendered lines (`file:line:col: error: message`).
pub(crate) fn render(diagnostics: &[PassDiagnostic], source_name: &str) -> Vec<String> {
    diagnostics.iter().map(|d| format!("{}: error: {}", render_location(&d.location, source_name), d.message)).collect()
}

/// Expands `temporal.grad` (and removes `temporal.stop_gradient`) in place:
/// what a program with gradients means, for the compiler and the
/// interpreter alike.
pub(crate) fn expand_gradients(module: &Module, source_name: &str) -> Result<(), Vec<String>> {
    use tempo_passes::pass::TempoPass;
    tempo_passes::temporal_autodiff::TemporalAutodiff
        .run(module.as_operation(), &Default::default())
        .map_err(|d| render(&d, source_name))
}

/// Every external function the program calls is registered.
pub(crate) fn check_externals(program: &Program, options: &RunOptions) -> Result<(), Vec<String>> {
    let missing: Vec<String> = options
        .externals
        .missing(&program.call_sites)
        .iter()
        .map(|site| unregistered(&site.location, &site.callee, options))
        .collect();
    if missing.is_empty() { Ok(()) } else { Err(missing) }
}

/// Every external function `module` (a program as given, not yet read)
/// calls is registered: what [`check_externals`] says of a read program,
/// said from the `temporal.call` ops themselves. A compilation cache hit
/// uses it: it never reads the program as given, and the optimized
/// program it loads has lost the calls nothing demands, which the program
/// as written must still be able to make.
pub(crate) fn check_calls_registered(module: &Module, options: &RunOptions) -> Result<(), Vec<String>> {
    let mut missing = Vec::new();
    for define in tempo_dialects::nested_operations(module.as_operation()) {
        for op in tempo_dialects::nested_operations(define) {
            if op.name().as_string_ref().as_str() != Ok(tempo_dialects::temporal::CallOp::NAME) {
                continue;
            }
            let callee = op.attribute("callee").ok().and_then(tempo_passes::program::string_attr).unwrap_or_default();
            if !options.externals.contains(&callee) {
                missing.push(unregistered(&op.location(), &callee, options));
            }
        }
    }
    if missing.is_empty() { Ok(()) } else { Err(missing) }
}

/// The error for a call at `location` of `callee`, which is not registered.
fn unregistered(location: &melior::ir::Location, callee: &str, options: &RunOptions) -> String {
    format!(
        "{}: error: external function '{callee}' is not registered (register a callback under this name)",
        render_location(location, &options.source_name)
    )
}
