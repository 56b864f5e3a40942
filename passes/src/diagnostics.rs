//! Diagnostics: what a pass reports, how it reaches MLIR's diagnostic engine,
//! and how tools print them as `file:line:col: error: message`.

use melior::{
    Context,
    diagnostic::{Diagnostic, DiagnosticSeverity},
    ir::Location,
};
use std::{cell::RefCell, ffi::CString, rc::Rc};

/// One error found by a pass, at the location of the op it concerns.
#[derive(Clone, Debug)]
pub struct PassDiagnostic<'c> {
    pub location: Location<'c>,
    pub message: String,
}

impl<'c> PassDiagnostic<'c> {
    pub fn new(location: Location<'c>, message: impl Into<String>) -> Self {
        Self { location, message: message.into() }
    }

    /// Emits the diagnostic through MLIR's engine (so every attached handler
    /// sees it, with its location).
    pub fn emit(&self) {
        let text = CString::new(self.message.replace('\0', " ")).expect("no NUL");
        unsafe { mlir_sys::mlirEmitError(self.location.to_raw(), text.as_ptr()) }
    }
}

/// Result of running a pass.
pub type PassResult<'c> = Result<(), Vec<PassDiagnostic<'c>>>;

/// Renders an MLIR location as `file:line:col` when it has one (looking
/// inside fused, named and call-site locations), else as MLIR prints it.
pub fn format_location(location: &str) -> String {
    // File locations print as `loc("file":L:C)` (possibly nested).
    if let Some(start) = location.find('"') {
        let rest = &location[start + 1..];
        if let Some(end) = rest.find('"') {
            let file = &rest[..end];
            let after = &rest[end + 1..];
            let mut numbers = after.trim_start_matches(':').split(|c: char| !c.is_ascii_digit());
            if after.starts_with(':')
                && let (Some(line), Some(col)) = (numbers.next(), numbers.next())
                && !line.is_empty()
                && !col.is_empty()
            {
                return format!("{file}:{line}:{col}");
            }
        }
    }
    location.trim_start_matches("loc(").trim_end_matches(')').to_string()
}

fn severity_word(severity: DiagnosticSeverity) -> &'static str {
    match severity {
        DiagnosticSeverity::Error => "error",
        DiagnosticSeverity::Warning => "warning",
        DiagnosticSeverity::Note => "note",
        DiagnosticSeverity::Remark => "remark",
    }
}

/// Buffer name MLIR gives to text parsed from a string.
const STRING_BUFFER_NAME: &str = "-";

/// `file:line:col` for a location, naming string-parsed text `source_name`.
pub fn render_location(location: &Location, source_name: &str) -> String {
    let location = format_location(&location.to_string());
    match location.strip_prefix(STRING_BUFFER_NAME).filter(|r| r.starts_with(':')) {
        Some(rest) => format!("{source_name}{rest}"),
        None => location,
    }
}

fn render(diagnostic: &Diagnostic, source_name: &str, out: &mut Vec<String>) {
    out.push(format!(
        "{}: {}: {}",
        render_location(&diagnostic.location(), source_name),
        severity_word(diagnostic.severity()),
        diagnostic
    ));
    for i in 0..diagnostic.note_count() {
        if let Ok(note) = diagnostic.note(i) {
            render(&note, source_name, out);
        }
    }
}

/// Collects every diagnostic emitted in a context while alive.
pub struct DiagnosticCollector<'c> {
    context: &'c Context,
    id: Option<melior::diagnostic::DiagnosticHandlerId>,
    lines: Rc<RefCell<Vec<String>>>,
}

impl<'c> DiagnosticCollector<'c> {
    /// Starts collecting diagnostics of `context`.
    pub fn attach(context: &'c Context) -> Self {
        Self::attach_for_source(context, STRING_BUFFER_NAME)
    }

    /// Like [`Self::attach`], naming locations in text parsed from a string
    /// (MLIR calls that buffer `-`) after `source_name`.
    pub fn attach_for_source(context: &'c Context, source_name: &str) -> Self {
        let lines = Rc::new(RefCell::new(Vec::new()));
        let sink = lines.clone();
        let source_name = source_name.to_string();
        let id = context.attach_diagnostic_handler(move |diagnostic| {
            render(&diagnostic, &source_name, &mut sink.borrow_mut());
            true
        });
        Self { context, id: Some(id), lines }
    }

    /// Takes the rendered lines collected so far.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut self.lines.borrow_mut())
    }
}

impl Drop for DiagnosticCollector<'_> {
    fn drop(&mut self) {
        if let Some(id) = self.id.take() {
            self.context.detach_diagnostic_handler(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::format_location;

    #[test]
    fn locations_render_as_file_line_col() {
        assert_eq!(format_location("loc(\"a.mlir\":3:7)"), "a.mlir:3:7");
        assert_eq!(format_location("loc(fused[\"a.mlir\":3:7, \"b\":1:1])"), "a.mlir:3:7");
        assert_eq!(format_location("loc(unknown)"), "unknown");
    }
}
