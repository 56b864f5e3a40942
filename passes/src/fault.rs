//! Compiler faults reported at the user's program.
//!
//! Code a lowering builds as typed IR carries the location of the user op
//! it lowers; [`verify_built`] verifies it and reports a failure at that
//! op, naming it (the lowering records what it lowers where with
//! [`Origins::enter`]), with the module written to a file rather than put
//! in the message.
//!
//! The compiler builds every op it generates as typed IR (no generated
//! text is parsed), so this holds for all of it. The last op a lowering
//! recorded is also kept per thread ([`current`]), so that a panic in a
//! pass is reported at the op being lowered; a fault's module goes to the
//! directory of [`set_dump_dir`], else the system's temporary directory
//! ([`dump_generated`]).

use crate::diagnostics::PassDiagnostic;
use melior::{
    diagnostic::DiagnosticSeverity,
    ir::{Location, OperationRef, operation::OperationLike},
};
use std::{
    cell::RefCell,
    path::{Path, PathBuf},
    rc::Rc,
    sync::Mutex,
    sync::atomic::{AtomicUsize, Ordering},
};

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
