//! Shared pieces of the command-line tools: reading MLIR sources (files,
//! stdin, `// -----` split chunks) with diagnostics that keep the original
//! file name, line and column.

pub mod fuzz;
pub mod fuzz_surfaces;

use melior::{Context, ir::Module};
pub use tempo_passes::support::source::parse_text;

/// Stack size of the thread the tools work on: MLIR's parser, verifier and
/// printer recurse along long expression chains, which the nesting limit
/// of the input cannot bound alone.
pub const TOOL_STACK_BYTES: usize = 512 << 20;

/// Runs `body` on a thread with a [`TOOL_STACK_BYTES`] stack and returns its
/// exit code (a panic that escapes is reported as a compiler fault).
pub fn with_large_stack(body: fn() -> std::process::ExitCode) -> std::process::ExitCode {
    match std::thread::Builder::new().name("main".into()).stack_size(TOOL_STACK_BYTES).spawn(body) {
        Ok(handle) => handle.join().unwrap_or_else(|_| {
            eprintln!("error: compiler fault (a panic outside the passes); please report it with the input program");
            std::process::ExitCode::from(70)
        }),
        Err(e) => {
            eprintln!("error: cannot start the worker thread: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Writes `text` to standard output. A reader that went away (`tempo-opt
/// ... | head -1`) ends the process quietly with status 0, as Unix filters
/// do; any other write error is reported and exits with status 1.
pub fn write_stdout(text: &str) {
    write_stdout_with(|out| out.write_all(text.as_bytes()));
}

/// Lets `write` write to standard output through a buffer (large outputs
/// are written as they are formatted, not gathered first), with the errors
/// of [`write_stdout`].
pub fn write_stdout_with(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) {
    use std::io::Write;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if let Err(e) = write(&mut out).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        let _ = writeln!(std::io::stderr(), "error: cannot write the output: {e}");
        std::process::exit(1);
    }
}

/// Reads `path` (`-` for stdin) as UTF-8 text; returns the text and the name
/// diagnostics should use.
pub fn read_source(path: &str) -> Result<(String, String), String> {
    if path == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => "<stdin>: error: the input is not UTF-8 text".to_string(),
            _ => format!("error: cannot read standard input: {e}"),
        })?;
        return Ok((text, "<stdin>".into()));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("error: cannot read '{path}': {e}"))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |p| p + 1);
        let column = String::from_utf8_lossy(&valid[line_start..]).chars().count() + 1;
        format!("{path}:{line}:{column}: error: the input is not UTF-8 text (invalid byte here)")
    })?;
    Ok((text, path.to_string()))
}

/// Splits text at lines `// -----` (like `mlir-opt --split-input-file`),
/// returning each chunk with the 1-based line it starts on.
pub fn split_chunks(text: &str) -> Vec<(usize, String)> {
    let mut chunks = vec![(1usize, String::new())];
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if line.trim_end() == "// -----" {
            chunks.push((i + 2, String::new()));
        } else {
            chunks.last_mut().expect("non-empty").1.push_str(line);
        }
    }
    chunks
}

/// Reads and parses a whole file (`-` for stdin).
pub fn parse_module<'c>(context: &'c Context, path: &str) -> Result<Module<'c>, Vec<String>> {
    let (text, name) = read_source(path).map_err(|e| vec![e])?;
    parse_text(context, &text, &name, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_keep_their_starting_lines() {
        let chunks = split_chunks("a\n// -----\nb\nc\n// -----\nd");
        assert_eq!(chunks, vec![(1, "a\n".into()), (3, "b\nc\n".into()), (6, "d".into())]);
    }
}
