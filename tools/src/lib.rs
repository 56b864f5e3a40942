//! Shared pieces of the command-line tools: reading MLIR with located
//! diagnostics.

use melior::{Context, ir::Module};
use std::ffi::CString;
use tempo_passes::diagnostics::DiagnosticCollector;

/// Parses MLIR from `path` (`-` for stdin). On failure returns the rendered
/// diagnostics (`file:line:col: error: ...`).
pub fn parse_module<'c>(context: &'c Context, path: &str) -> Result<Module<'c>, Vec<String>> {
    let collector = DiagnosticCollector::attach(context);
    let module = if path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| vec![format!("error: cannot read standard input: {e}")])?;
        Module::parse(context, &text)
    } else {
        let bytes = std::fs::read(path).map_err(|e| vec![format!("error: cannot read '{path}': {e}")])?;
        if std::str::from_utf8(&bytes).is_err() {
            return Err(vec![format!("error: '{path}' is not UTF-8 text")]);
        }
        let c_path = CString::new(path).map_err(|_| vec![format!("error: bad path '{path}'")])?;
        unsafe {
            Module::from_option_raw(mlir_sys::mlirModuleCreateParseFromFile(
                context.to_raw(),
                mlir_sys::MlirStringRef { data: c_path.as_ptr(), length: path.len() },
            ))
        }
    };
    match module {
        Some(module) => Ok(module),
        None => {
            let mut lines = collector.take();
            if lines.is_empty() {
                lines.push(format!("error: cannot parse '{path}' as MLIR"));
            }
            Err(lines)
        }
    }
}
