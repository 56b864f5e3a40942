//! `tempo.TempoError` and where the user's Python code is: the file, line
//! and column of the call that built an op (columns from the frame's code
//! positions, Python 3.11 and later; column 0, unknown, before), and errors
//! that carry them as attributes with the op and a hint.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyTuple;

pyo3::create_exception!(
    _tempo,
    TempoError,
    pyo3::exceptions::PyException,
    "A program refused, or a run that failed. The message reads as a\n\
     compiler's diagnostic, `file:line:column: error: ...`, naming the\n\
     Python call that built the offending op (or made the offending call),\n\
     with a `hint:` line where one helps. The same as attributes: `file`,\n\
     `line`, `column` (None where unknown: Python before 3.11 gives no\n\
     columns), `op` (the op or the call refused, e.g. 'matmul' or\n\
     'Executable.run'), `hint` (or None) and `message` (the diagnostic\n\
     without the hint).\n\n\
     >>> p = tempo.Program(); t = p.dim(\"t\", \"T\")\n\
     >>> x = p.input(\"x\", [t], [3])\n\
     >>> y = p.tensor(\"y\", [t], [3])\n\
     >>> p.otherwise(y, x[t] * 2.0)\n\
     >>> p.output(y)\n\
     >>> try:\n\
     ...     p.compile().run(T=2, x=np.ones((2, 3)))\n\
     ... except tempo.TempoError as e:\n\
     ...     print(e.op, '|', e.hint)\n\
     Executable.run | inputs are not converted: give an array of the input's dtype (`.astype(np.float32)`)"
);

/// Where the Python caller is: the file, the line and the column (1-based,
/// 0 where Python does not say: before 3.11).
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub(crate) file: String,
    pub(crate) line: u32,
    pub(crate) column: u32,
}

impl std::fmt::Display for Caller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

/// The Python file, line and column running now (the caller of a method
/// of the extension: the innermost Python frame).
pub(crate) fn caller(py: Python<'_>) -> Caller {
    let frame = py.import("sys").and_then(|sys| sys.getattr("_getframe")?.call1((0,)));
    let found = frame.and_then(|f| {
        let code = f.getattr("f_code")?;
        let file: String = code.getattr("co_filename")?.extract()?;
        let line: u32 = f.getattr("f_lineno")?.extract::<Option<u32>>()?.unwrap_or(0);
        let column = column_of(py, &f, &code).unwrap_or(0);
        Ok(Caller { file, line, column })
    });
    found.unwrap_or_else(|_: PyErr| Caller { file: "<python>".into(), line: 0, column: 0 })
}

/// The 1-based column where the frame's current instruction (the call
/// running now) starts, from `co_positions` (Python 3.11 and later: one
/// entry per 2-byte code unit, `f_lasti` the instruction's byte offset);
/// 0 where Python gives none.
fn column_of(py: Python<'_>, frame: &Bound<'_, PyAny>, code: &Bound<'_, PyAny>) -> PyResult<u32> {
    static ISLICE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if !code.hasattr("co_positions")? {
        return Ok(0);
    }
    let lasti: i64 = frame.getattr("f_lasti")?.extract()?;
    if lasti < 0 {
        return Ok(0);
    }
    let islice = ISLICE.get_or_try_init(py, || py.import("itertools")?.getattr("islice").map(Bound::unbind))?;
    let positions = code.call_method0("co_positions")?;
    let mut rest = islice.bind(py).call1((positions, lasti / 2, lasti / 2 + 1))?.try_iter()?;
    let Some(position) = rest.next() else { return Ok(0) };
    let position = position?;
    let position = position.cast::<PyTuple>()?;
    let column: Option<u32> = position.get_item(2)?.extract()?;
    Ok(column.map_or(0, |c| c + 1))
}

/// A diagnostic's location and message: the first line reading
/// `file:line:column: error: message`.
fn located(text: &str) -> Option<(Caller, &str)> {
    text.lines().find_map(|line| {
        let (place, message) = line.split_once(": error: ")?;
        let mut parts = place.rsplitn(3, ':');
        let column: u32 = parts.next()?.trim().parse().ok()?;
        let row: u32 = parts.next()?.trim().parse().ok()?;
        let file = parts.next()?.to_string();
        Some((Caller { file, line: row, column }, message))
    })
}

/// The op a diagnostic's message names (`'temporal.matmul' op ...`:
/// `matmul`).
fn op_named(message: &str) -> Option<String> {
    let start = message.find("'temporal.")? + "'temporal.".len();
    let length = message[start..].find('\'')?;
    Some(message[start..start + length].to_string())
}

/// A hint for the errors a Python user meets most, where the message
/// gives none itself.
fn hint_of(message: &str) -> Option<String> {
    let has = |s: &str| message.contains(s);
    if has("arrays of") && has("are not supported") {
        return Some("an input is an array of float32, float64, int32, int64 or bool".into());
    }
    // `input 'x' must be float32[3], got float64[3]`.
    if let Some((want, got)) = message.split_once(" must be ").and_then(|(_, rest)| rest.split_once(", got ")) {
        let element = |s: &str| s.split('[').next().unwrap_or("").trim().to_string();
        let (want_element, got_element) = (element(want), element(got));
        if want_element != got_element {
            return Some(format!(
                "inputs are not converted: give an array of the input's dtype (`.astype(np.{want_element})`)"
            ));
        }
        return Some(
            "an input's array has the input's domain's bound values first, then the shape of its point".into(),
        );
    }
    if has("is not a value of") {
        return Some(
            "give a number of the value's dtype, or convert the value first (`x.astype(\"float32\") * 0.5`)".into(),
        );
    }
    if has("missing bound") && !has("give it as") {
        return Some("give every bound as a keyword argument: `run(T=10, ...)`".into());
    }
    if has("broadcast") {
        return Some("elementwise operands broadcast as NumPy's: compare their `.shape`".into());
    }
    if has("cannot be negative") || has("size 0") {
        return Some("a point's sizes are positive (-1 only marks a dynamic size)".into());
    }
    None
}

/// A `TempoError` of diagnostic `text`: its file, line and column those of
/// the text's first `error:` line (else `at`, the Python call that failed),
/// its op the one the text names (`'temporal.matmul'`), else `op` (the
/// call that failed), and a hint where one helps.
pub(crate) fn tempo_error(py: Python<'_>, text: impl Into<String>, op: Option<&str>, at: Option<Caller>) -> PyErr {
    let mut text: String = text.into();
    // A run's error located in the program's own text (`<program>:2:3`,
    // a bound or an input of the whole program) is the Python call's.
    if let (Some((site, _)), Some(at)) = (located(&text), &at)
        && site.file == "<program>"
    {
        text = text.replacen(&site.to_string(), &at.to_string(), 1);
    }
    let (site, named) = match located(&text) {
        Some((site, message)) => (Some(site), op_named(message)),
        None => (at, op_named(&text)),
    };
    let op = named.or_else(|| op.map(str::to_string));
    let hint = hint_of(&text);
    let shown = match &hint {
        Some(hint) => format!("{text}\nhint: {hint}"),
        None => text.clone(),
    };
    let error = TempoError::new_err(shown);
    let value = error.value(py);
    let set = || -> PyResult<()> {
        value.setattr("message", &text)?;
        value.setattr("file", site.as_ref().map(|s| s.file.clone()))?;
        value.setattr("line", site.as_ref().map(|s| s.line))?;
        value.setattr("column", site.as_ref().and_then(|s| (s.column > 0).then_some(s.column)))?;
        value.setattr("op", op.clone())?;
        value.setattr("hint", hint.clone())
    };
    // Attributes that cannot be set leave the error as it is.
    let _ = set();
    error
}

/// A `TempoError` for a call `op` that the Python caller made wrongly, at
/// its line and column (`file:line:column: error: ...`, as the program's
/// own diagnostics read).
pub(crate) fn refused(py: Python<'_>, op: &str, message: impl std::fmt::Display) -> PyErr {
    let at = caller(py);
    tempo_error(py, format!("{at}: error: {message}"), Some(op), None)
}
