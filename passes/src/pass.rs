//! Passes written in Rust and the registry that names them.
//!
//! A [`TempoPass`] runs on one operation (its anchor, `builtin.module` for
//! whole-program passes) and reports located diagnostics. The registry also
//! holds named pipelines (aliases for pipeline text mixing Rust and upstream
//! passes). `tempo-opt` and the runtime build pass managers from it with
//! [`crate::pipeline`].

use crate::diagnostics::PassResult;
use indexmap::IndexMap;
use melior::ir::OperationRef;
use std::sync::Arc;

/// A documented pass option.
#[derive(Clone, Copy, Debug)]
pub struct PassOption {
    pub name: &'static str,
    pub summary: &'static str,
}

/// Option values given in a pipeline (`pass{key=value other=1}`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions(pub IndexMap<String, String>);

impl PassOptions {
    /// The value of option `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// A boolean option: absent, `false` or `0` is false, `true` or `1`
    /// true; anything else an error naming the option.
    pub fn flag(&self, name: &str) -> Result<bool, String> {
        self.flag_or(name, false)
    }

    /// A boolean option that is `default` when absent.
    pub fn flag_or(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.get(name) {
            None => Ok(default),
            Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some(other) => Err(format!("option {name} takes true or false, got '{other}'")),
        }
    }
}

/// A pass written in Rust.
pub trait TempoPass: Send + Sync {
    /// The name used in pipelines (`temporal-verify`).
    fn name(&self) -> &'static str;
    /// One-line description for `--list-passes`.
    fn summary(&self) -> &'static str;
    /// The op the pass runs on.
    fn anchor(&self) -> &'static str {
        "builtin.module"
    }
    /// Accepted options.
    fn options(&self) -> &'static [PassOption] {
        &[]
    }
    /// Runs on `op` (an op named [`Self::anchor`]).
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c>;
}

/// One registry entry.
#[derive(Clone)]
pub enum RegistryEntry {
    /// A Rust pass.
    Pass(Arc<dyn TempoPass>),
    /// A named pipeline: `text` is pipeline syntax, expanded where named.
    Pipeline { name: &'static str, summary: &'static str, text: &'static str },
}

impl RegistryEntry {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Pass(p) => p.name(),
            Self::Pipeline { name, .. } => name,
        }
    }
    pub fn summary(&self) -> &'static str {
        match self {
            Self::Pass(p) => p.summary(),
            Self::Pipeline { summary, .. } => summary,
        }
    }
}

/// Passes and pipelines by name, in registration order.
#[derive(Clone, Default)]
pub struct PassRegistry {
    entries: IndexMap<&'static str, RegistryEntry>,
}

impl PassRegistry {
    /// Registers a Rust pass. Panics on a duplicate name (a programming error).
    pub fn add_pass(&mut self, pass: impl TempoPass + 'static) {
        let name = pass.name();
        assert!(
            self.entries.insert(name, RegistryEntry::Pass(Arc::new(pass))).is_none(),
            "pass {name} registered twice"
        );
    }

    /// Registers a named pipeline.
    pub fn add_pipeline(&mut self, name: &'static str, summary: &'static str, text: &'static str) {
        assert!(
            self.entries.insert(name, RegistryEntry::Pipeline { name, summary, text }).is_none(),
            "pipeline {name} registered twice"
        );
    }

    /// Looks up an entry.
    pub fn get(&self, name: &str) -> Option<&RegistryEntry> {
        self.entries.get(name)
    }

    /// Every entry, in registration order.
    pub fn entries(&self) -> impl Iterator<Item = &RegistryEntry> {
        self.entries.values()
    }
}
