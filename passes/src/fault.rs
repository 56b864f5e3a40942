//! Compiler faults reported at the user's program.
//!
//! Code a lowering builds as typed IR carries the location of the user op
//! it lowers; [`verify_built`] verifies it and reports a failure at that
//! op, naming it (the lowering records what it lowers where with
//! [`Origins::enter`]), with the module written to a file rather than put
//! in the message.
//!
//! Lowerings that still build code as MLIR text and parse it (the
//! schedule's IR, the GPU's flattened loops; see [`crate::support::splice`])
//! have the same problem in another form: MLIR reports a mistake in that
//! text at a line of the generated module, which means nothing to the user.
//! For them this module keeps faults at the user's op:
//!
//! - while emitting, a lowering writes an *origin marker* (a comment,
//!   [`ORIGIN_MARKER`] and a number) before the code of each user op
//!   ([`Origins::mark`]): the op's location and name;
//! - [`parse_generated`] parses and verifies the text with MLIR's
//!   diagnostics captured; a failure at generated line `L` is reported at
//!   the op of the last marker before `L`, says that it is a compiler fault,
//!   and names the file the generated module was written to
//!   ([`dump_generated`]: the directory of [`set_dump_dir`], else the
//!   system's temporary directory) instead of printing it;
//! - on success every generated op gets the location of its origin, so any
//!   later diagnostic (a later pass, the LLVM translation) points at the
//!   user's op too;
//! - the last op marked is also kept per thread ([`current`]), so that a
//!   panic in a pass is reported at the op being lowered.
//!
//! Assumes text whose markers are whole lines of their own; text without
//! markers maps every line to the fallback location.

use crate::diagnostics::{PassDiagnostic, format_location};
use melior::{
    Context,
    diagnostic::DiagnosticSeverity,
    ir::{Location, Module, OperationRef, operation::OperationLike},
};
use std::{
    cell::RefCell,
    fmt::Write,
    path::{Path, PathBuf},
    rc::Rc,
    sync::Mutex,
    sync::atomic::{AtomicUsize, Ordering},
};

/// Starts a line naming the user op the code after it lowers.
pub const ORIGIN_MARKER: &str = "// tempo.origin ";

/// The user ops generated code comes from, in marker order.
#[derive(Default)]
pub struct Origins<'c> {
    list: Vec<(Location<'c>, String)>,
}

impl<'c> Origins<'c> {
    pub fn new() -> Self {
        Self { list: Vec::new() }
    }

    /// What the code written since the last marker lowers (`the program`
    /// before any).
    pub fn current(&self) -> &str {
        self.list.last().map_or("the program", |(_, what)| what.as_str())
    }

    /// Writes a marker line into `out`: the code that follows lowers `what`
    /// (an op name such as `temporal.matmul`, or a short description) at
    /// `location`. Also makes it the thread's [`current`] op.
    pub fn mark(&mut self, location: Location<'c>, what: &str, indent: &str, out: &mut String) {
        let _ = writeln!(out, "{indent}{ORIGIN_MARKER}{}", self.list.len());
        set_current(location, what);
        self.list.push((location, what.to_string()));
    }

    /// Records that the ops built from now on lower `what` at `location`
    /// (code built as typed IR, which carries the location itself: no
    /// marker line). Also makes it the thread's [`current`] op.
    pub fn enter(&mut self, location: Location<'c>, what: &str) {
        set_current(location, what);
        self.list.push((location, what.to_string()));
    }

    /// The op the code built last lowers, if any.
    pub fn last(&self) -> Option<(Location<'c>, &str)> {
        self.list.last().map(|(l, w)| (*l, w.as_str()))
    }

    /// What the code built at `location` lowers (the last op recorded
    /// there).
    pub fn at(&self, location: Location<'c>) -> Option<&str> {
        self.list.iter().rev().find(|(l, _)| *l == location).map(|(_, w)| w.as_str())
    }

    /// The origin of generated line `line` (1-based), from the markers of
    /// `text`; `None` before the first marker.
    fn of_line(&self, text: &str, line: usize) -> Option<&(Location<'c>, String)> {
        text.lines()
            .take(line)
            .filter_map(|l| l.trim_start().strip_prefix(ORIGIN_MARKER))
            .filter_map(|n| n.trim().parse::<usize>().ok())
            .last()
            .and_then(|k| self.list.get(k))
    }

    /// The origin of each line of `text` (index 0 is line 1).
    fn per_line(&self, text: &str) -> Vec<Option<usize>> {
        let mut current = None;
        text.lines()
            .map(|l| {
                if let Some(n) = l.trim_start().strip_prefix(ORIGIN_MARKER) {
                    current = n.trim().parse::<usize>().ok().filter(|&k| k < self.list.len());
                }
                current
            })
            .collect()
    }
}

thread_local! {
    static CURRENT: RefCell<Option<(mlir_sys::MlirLocation, String)>> = const { RefCell::new(None) };
}

fn set_current(location: Location, what: &str) {
    CURRENT.with(|c| *c.borrow_mut() = Some((location.to_raw(), what.to_string())));
}

/// The message a panic carried (a `String` or `&str` payload; empty for
/// others).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Forgets the thread's current op (at the start of each pass).
pub fn clear_current() {
    CURRENT.with(|c| *c.borrow_mut() = None);
}

/// The op last marked on this thread since [`clear_current`]: what a pass
/// was lowering. Only valid while the module being lowered is alive.
pub fn current<'c>() -> Option<(Location<'c>, String)> {
    CURRENT.with(|c| c.borrow().as_ref().map(|(raw, what)| (unsafe { Location::from_raw(*raw) }, what.clone())))
}

static DUMP_DIR: Mutex<Option<PathBuf>> = Mutex::new(None);
static DUMPS: AtomicUsize = AtomicUsize::new(0);

/// Where [`dump_generated`] writes generated modules (`--dump-on-error
/// DIR`, `Runner::dump_on_error`); `None`: the system's temporary
/// directory.
pub fn set_dump_dir(dir: Option<PathBuf>) {
    *DUMP_DIR.lock().unwrap_or_else(|e| e.into_inner()) = dir;
}

/// Writes a generated module that MLIR refused to a file of its own and
/// returns how to name it in a message: the path, or why it could not be
/// written.
pub fn dump_generated(text: &str) -> String {
    let dir = DUMP_DIR.lock().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_else(std::env::temp_dir);
    let n = DUMPS.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!("tempo-fault-{}-{n}.mlir", std::process::id()));
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&path, text));
    match written {
        Ok(()) => display(&path),
        Err(e) => format!("(not written: {}: {e})", display(&path)),
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

/// One captured diagnostic: line and column in the generated text (0 when
/// it has none) and the message.
struct Captured {
    line: usize,
    column: usize,
    message: String,
}

/// Parses generated `text` in `context`, and verifies it where it is a
/// whole module (`verify`: code replacing one op may use symbols of the
/// module it goes into, which a module of its own lacks). On failure returns a
/// compiler fault at the user op the failing line lowers (`fallback` where
/// no marker precedes it); on success, with `origins`, every op carries its
/// origin's location (`fallback`'s for code before the first marker);
/// without, ops keep the locations the text gives them (text printed with
/// `loc(...)` of its own).
pub fn parse_generated<'c>(
    context: &'c Context,
    text: &str,
    origins: Option<&Origins<'c>>,
    fallback: (Location<'c>, &str),
    verify: bool,
) -> Result<Module<'c>, PassDiagnostic<'c>> {
    let none = Origins::new();
    let relocating = origins.is_some();
    let origins = origins.unwrap_or(&none);
    let captured: Rc<RefCell<Vec<Captured>>> = Rc::default();
    let sink = captured.clone();
    let handler = context.attach_diagnostic_handler(move |diagnostic| {
        if matches!(diagnostic.severity(), DiagnosticSeverity::Error) {
            let place = format_location(&diagnostic.location().to_string());
            let mut numbers = place.rsplitn(3, ':');
            let column = numbers.next().and_then(|c| c.parse().ok()).unwrap_or(0);
            let line = numbers.next().and_then(|l| l.parse().ok()).unwrap_or(0);
            sink.borrow_mut().push(Captured { line, column, message: diagnostic.to_string() });
        }
        true
    });
    let parsed = Module::parse(context, text);
    let outcome = match parsed {
        // The parser verifies what it parsed, too.
        None => Err("is not valid MLIR"),
        Some(module) if verify && !module.as_operation().verify() => Err("is not valid MLIR"),
        Some(module) => Ok(module),
    };
    context.detach_diagnostic_handler(handler);
    let module = match outcome {
        Ok(module) => module,
        Err(what) => {
            let first = captured.borrow_mut().drain(..).next();
            let (line, column, message) = first.map_or((0, 0, "no diagnostic".to_string()), |c| {
                (c.line, c.column, c.message.lines().next().unwrap_or("").to_string())
            });
            let (location, op) = origins.of_line(text, line).map_or(fallback, |(l, w)| (*l, w.as_str()));
            let path = dump_generated(text);
            return Err(PassDiagnostic::new(
                location,
                format!(
                    "compiler fault while lowering '{op}': the generated code {what} ({message}, at {path}:{line}:{column}); \
                     please report it with the input program"
                ),
            ));
        }
    };
    if relocating {
        relocate(&module, text, origins, fallback.0);
    }
    Ok(module)
}

/// Verifies `op` (code built as typed IR, each op at the location of the
/// user op it lowers) with MLIR's diagnostics captured. On failure
/// returns a compiler fault at the failing op's location, naming the user
/// op recorded there in `origins` (`fallback` where none is), and the file
/// the module holding `op` is written to ([`dump_generated`]).
pub fn verify_built<'c>(
    op: OperationRef<'c, '_>,
    module: OperationRef<'c, '_>,
    origins: &Origins<'c>,
    fallback: (Location<'c>, &str),
) -> Result<(), PassDiagnostic<'c>> {
    let context_ref = op.context();
    // The reference points into `context_ref`, which outlives its uses here.
    let context = unsafe { context_ref.to_ref() };
    let captured: Rc<RefCell<Vec<(mlir_sys::MlirLocation, String)>>> = Rc::default();
    let sink = captured.clone();
    let handler = context.attach_diagnostic_handler(move |diagnostic| {
        if matches!(diagnostic.severity(), DiagnosticSeverity::Error) {
            sink.borrow_mut().push((diagnostic.location().to_raw(), diagnostic.to_string()));
        }
        true
    });
    let valid = op.verify();
    // (Printing code that does not verify prints it generically; any
    // diagnostic of that stays captured.)
    let text = if valid { String::new() } else { module.to_string() };
    context.detach_diagnostic_handler(handler);
    if valid {
        return Ok(());
    }
    let first = captured.borrow_mut().drain(..).next();
    let (location, message) = match first {
        Some((raw, message)) => {
            let location = unsafe { Location::from_raw(raw) };
            (location, message.lines().next().unwrap_or("").to_string())
        }
        None => (fallback.0, "no diagnostic".to_string()),
    };
    let (location, what) = match origins.at(location) {
        Some(what) => (location, what),
        None => fallback,
    };
    let path = dump_generated(&text);
    Err(PassDiagnostic::new(
        location,
        format!(
            "compiler fault while lowering '{what}': the generated code is not valid MLIR ({message}; the code is in {path}); \
             please report it with the input program"
        ),
    ))
}

/// Gives every op of `module` (parsed from `text`) the location of the
/// origin of its line.
fn relocate<'c>(module: &Module<'c>, text: &str, origins: &Origins<'c>, fallback: Location<'c>) {
    struct Walk<'a, 'c> {
        lines: Vec<Option<usize>>,
        origins: &'a Origins<'c>,
        fallback: Location<'c>,
    }
    unsafe extern "C" fn visit(op: mlir_sys::MlirOperation, data: *mut std::ffi::c_void) -> mlir_sys::MlirWalkResult {
        let walk = unsafe { &*(data as *const Walk) };
        let location = unsafe { mlir_sys::mlirOperationGetLocation(op) };
        let line = unsafe {
            mlir_sys::mlirLocationIsAFileLineColRange(location)
                .then(|| mlir_sys::mlirLocationFileLineColRangeGetStartLine(location))
        };
        let origin = line
            .and_then(|l| usize::try_from(l).ok())
            .and_then(|l| walk.lines.get(l.wrapping_sub(1)).copied().flatten())
            .map_or(walk.fallback, |k| walk.origins.list[k].0);
        unsafe { mlir_sys::mlirOperationSetLocation(op, origin.to_raw()) };
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    let walk = Walk { lines: origins.per_line(text), origins, fallback };
    unsafe {
        mlir_sys::mlirOperationWalk(
            module.as_operation().to_raw(),
            Some(visit),
            &walk as *const Walk as *mut std::ffi::c_void,
            mlir_sys::MlirWalkOrder_MlirWalkPreOrder,
        );
    }
}
