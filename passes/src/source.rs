//! Parsing MLIR text with diagnostics that keep the source's own name,
//! line and column.

use crate::diagnostics::DiagnosticCollector;
use melior::{Context, ir::Module};

/// Parses `text` (which starts on line `first_line` of `name`) into a module;
/// top-level ops without a `module` are wrapped in one, as `mlir-opt` does.
/// On failure returns rendered diagnostics (`name:line:col: error: ...`).
pub fn parse_text<'c>(
    context: &'c Context,
    text: &str,
    name: &str,
    first_line: usize,
) -> Result<Module<'c>, Vec<String>> {
    let collector = DiagnosticCollector::attach_for_source(context, name);
    // Pad so that line numbers match the original file; NUL-terminate for
    // MLIR's buffer without counting the terminator.
    let mut source = "\n".repeat(first_line - 1);
    source.push_str(text);
    let length = source.len();
    source.push('\0');
    let module = unsafe {
        Module::from_option_raw(mlir_sys::mlirModuleCreateParse(
            context.to_raw(),
            mlir_sys::MlirStringRef { data: source.as_ptr().cast(), length },
        ))
    };
    match module {
        Some(module) => Ok(module),
        None => {
            let mut lines = collector.take();
            if lines.is_empty() {
                lines.push(format!(
                    "{name}:{first_line}:1: error: cannot parse the input as MLIR (ops of IRDL dialects such as temporal.* \
                     have only the generic form: \"temporal.add\"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>)"
                ));
            }
            Err(lines)
        }
    }
}
