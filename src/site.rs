//! Where an op of a program was built, for diagnostics: the Rust line
//! that built it (`#[track_caller]`), or a line of a front end over this
//! API (the Python package) that says where its user is ([`at`]).

use std::cell::RefCell;
use std::rc::Rc;

/// A file, line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    file: Rc<str>,
    line: u32,
    column: u32,
}

thread_local! {
    /// The site a front end set for what it builds now.
    static FRONT_END: RefCell<Option<Site>> = const { RefCell::new(None) };
}

impl Site {
    /// The caller's site: a front end's, when one is set, else the Rust
    /// line calling (through `#[track_caller]` functions).
    #[track_caller]
    pub fn caller() -> Site {
        if let Some(site) = FRONT_END.with(|s| s.borrow().clone()) {
            return site;
        }
        let location = std::panic::Location::caller();
        Site { file: Rc::from(location.file()), line: location.line(), column: location.column() }
    }

    pub fn file(&self) -> &str {
        &self.file
    }
    pub fn line(&self) -> u32 {
        self.line
    }
    pub fn column(&self) -> u32 {
        self.column
    }
}

/// Runs `f` with everything it builds located at `file:line` (column 1):
/// how a front end over this API (the Python package) puts its user's
/// lines into the program's diagnostics.
pub fn at<R>(file: &str, line: u32, f: impl FnOnce() -> R) -> R {
    at_column(file, line, 1, f)
}

/// [`at`] with a column (1-based; 0 where the front end does not know it:
/// Python 3.11 and later know the column of the call that builds an op,
/// earlier ones do not).
pub fn at_column<R>(file: &str, line: u32, column: u32, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Site>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            FRONT_END.with(|s| *s.borrow_mut() = previous);
        }
    }
    let site = Site { file: Rc::from(file), line, column };
    let _restore = Restore(FRONT_END.with(|s| s.borrow_mut().replace(site)));
    f()
}
