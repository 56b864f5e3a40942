//! The checks and messages the compilation and the interpreter share: a
//! program's gradients expanded (what a program with gradients means for
//! both), its external calls registered, diagnostics rendered as lines.

use crate::options::RunOptions;
use melior::ir::Module;
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
        .map(|site| {
            format!(
                "{}: error: external function '{}' is not registered (register a callback under this name)",
                render_location(&site.location, &options.source_name),
                site.callee
            )
        })
        .collect();
    if missing.is_empty() { Ok(()) } else { Err(missing) }
}
