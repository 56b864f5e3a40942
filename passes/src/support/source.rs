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
    check_nesting(text, name, first_line)?;
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

/// Deepest nesting of brackets, braces, parentheses and angle brackets the
/// tools accept. MLIR's parser (and every walk after it) recurses once per
/// level, so input nested thousands deep would overflow the stack; real
/// programs stay far below this.
pub const MAX_NESTING: usize = 256;

/// Longest `affine_map<...>` / `affine_set<...>` literal accepted, in
/// characters (up to its first `>`).
pub const MAX_AFFINE_LITERAL: usize = 16384;

/// Refuses text nested deeper than [`MAX_NESTING`], with the location of
/// the first bracket past the limit. Comments and string literals are
/// skipped; `->`, `>=` and `<=` are not brackets.
pub fn check_nesting(text: &str, name: &str, first_line: usize) -> Result<(), Vec<String>> {
    let bytes = text.as_bytes();
    let (mut depth, mut line, mut column) = (0usize, first_line, 1usize);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        let previous = if i > 0 { bytes[i - 1] } else { 0 };
        match c {
            b'/' if next == Some(b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i += 1;
                column += 1;
                while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                    let step = if bytes[i] == b'\\' { 2 } else { 1 };
                    i += step;
                    column += step;
                }
            }
            b'(' | b'[' | b'{' => depth += 1,
            b'<' if next != Some(b'=') => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'>' if previous != b'-' && next != Some(b'=') => depth = depth.saturating_sub(1),
            b'\n' => {
                line += 1;
                column = 0;
            }
            _ => {}
        }
        if c == b'<' && (text[..i].ends_with("affine_map") || text[..i].ends_with("affine_set")) {
            // Up to the closing `>` (not the arrow `->`, not `>=`).
            let rest = &bytes[i..];
            let length = (1..rest.len())
                .find(|&k| rest[k] == b'>' && rest[k - 1] != b'-' && rest.get(k + 1) != Some(&b'='))
                .unwrap_or(rest.len());
            if length > MAX_AFFINE_LITERAL {
                return Err(vec![format!(
                    "{name}:{line}:{column}: error: this affine literal is {length} characters long; the tools accept at \
                     most {MAX_AFFINE_LITERAL} (longer expression chains would exhaust the parser's stack)"
                )]);
            }
        }
        if depth > MAX_NESTING {
            return Err(vec![format!(
                "{name}:{line}:{column}: error: the input is nested more than {MAX_NESTING} levels deep \
                 (brackets, braces, parentheses or angle brackets); refused rather than risk the parser's stack"
            )]);
        }
        i += 1;
        // Columns count characters, not UTF-8 continuation bytes.
        if c & 0xC0 != 0x80 {
            column += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_past_the_limit_is_refused_with_its_location() {
        let deep = format!("module {{\n  \"x\"() {{a = {}{}}} : () -> ()\n}}", "[".repeat(300), "]".repeat(300));
        let error = check_nesting(&deep, "f.mlir", 1).unwrap_err();
        assert!(error[0].starts_with("f.mlir:2:"), "{error:?}");
        let fine = "// [[[[ in a comment\n\"t\"() {s = \"(((\", m = affine_set<(t) : (t - 1 >= 0)>} : () -> ()";
        assert!(check_nesting(fine, "f.mlir", 1).is_ok());
    }
}
