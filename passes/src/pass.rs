//! Passes written in Rust and the registry that names them.
//!
//! A [`TempoPass`] runs on one operation (its anchor, `builtin.module` for
//! whole-program passes) and reports located diagnostics. The registry also
//! holds named pipelines (aliases for pipeline text mixing Rust and upstream
//! passes). `tempo-opt` and the runtime build pass managers from it with
//! [`crate::pipeline`].

use crate::diagnostics::{PassDiagnostic, PassResult};
use crate::program::Program;
use indexmap::IndexMap;
use melior::ir::{Location, OperationRef, operation::OperationLike};
use std::sync::Arc;

/// The type of a pass option's value, declared once with the option and
/// checked by the one reader of option text ([`crate::pipeline::parse_options`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// `true` or `false` (also `1`, `0`; the bare name is `true`); the value
    /// when absent.
    Flag(bool),
    /// A non-negative integer (bytes, a count); absent: none.
    Unsigned,
    /// Bound values, `NAME=VALUE` separated by commas (`T=10,B=3`); the
    /// names are checked by the pass against its program.
    Bounds,
    /// Free text the pass reads itself.
    Text,
}

impl OptionKind {
    /// How `--help` shows the value.
    pub fn describe(self) -> &'static str {
        match self {
            OptionKind::Flag(false) => "bool, default false",
            OptionKind::Flag(true) => "bool, default true",
            OptionKind::Unsigned => "unsigned",
            OptionKind::Bounds => "NAME=VALUE,...",
            OptionKind::Text => "text",
        }
    }
}

/// A documented pass option.
#[derive(Clone, Copy, Debug)]
pub struct PassOption {
    pub name: &'static str,
    pub kind: OptionKind,
    pub summary: &'static str,
}

impl PassOption {
    /// A boolean option, `default` when absent.
    pub const fn flag(name: &'static str, default: bool, summary: &'static str) -> Self {
        PassOption { name, kind: OptionKind::Flag(default), summary }
    }
    /// A non-negative integer option.
    pub const fn unsigned(name: &'static str, summary: &'static str) -> Self {
        PassOption { name, kind: OptionKind::Unsigned, summary }
    }
    /// Bound values (`T=10,B=3`).
    pub const fn bounds(name: &'static str, summary: &'static str) -> Self {
        PassOption { name, kind: OptionKind::Bounds, summary }
    }
    /// Free text.
    pub const fn text(name: &'static str, summary: &'static str) -> Self {
        PassOption { name, kind: OptionKind::Text, summary }
    }

    /// The value of `text` given for this option, checked against its kind.
    pub fn parse(&self, text: &str) -> Result<OptionValue, String> {
        let name = self.name;
        match self.kind {
            OptionKind::Flag(_) => match text {
                "true" | "1" => Ok(OptionValue::Flag(true)),
                "false" | "0" => Ok(OptionValue::Flag(false)),
                other => Err(format!("option {name} takes true or false, got '{other}'")),
            },
            OptionKind::Unsigned => text
                .parse::<u64>()
                .map(OptionValue::Unsigned)
                .map_err(|_| format!("option {name} takes a non-negative integer, got '{text}'")),
            OptionKind::Bounds => {
                let mut bounds = Vec::new();
                for item in text.split(',').filter(|s| !s.is_empty()) {
                    let pair = item.split_once('=').filter(|(k, _)| !k.is_empty());
                    match pair.and_then(|(k, v)| Some((k.to_string(), v.parse::<i64>().ok()?))) {
                        Some(pair) => bounds.push(pair),
                        None => {
                            return Err(format!(
                                "option {name} takes NAME=VALUE pairs separated by commas (T=10,B=3), got '{item}'"
                            ));
                        }
                    }
                }
                Ok(OptionValue::Bounds(bounds))
            }
            OptionKind::Text => Ok(OptionValue::Text(text.to_string())),
        }
    }
}

/// A checked option value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptionValue {
    Flag(bool),
    Unsigned(u64),
    /// Bound values by bound name, in the order given.
    Bounds(Vec<(String, i64)>),
    Text(String),
}

impl OptionValue {
    /// Whether this value fits an option of `kind`.
    fn fits(&self, kind: OptionKind) -> bool {
        matches!(
            (self, kind),
            (OptionValue::Flag(_), OptionKind::Flag(_))
                | (OptionValue::Unsigned(_), OptionKind::Unsigned)
                | (OptionValue::Bounds(_), OptionKind::Bounds)
                | (OptionValue::Text(_), OptionKind::Text)
        )
    }
}

/// The value in pipeline syntax (what [`PassOption::parse`] reads back).
impl std::fmt::Display for OptionValue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            OptionValue::Flag(b) => write!(f, "{b}"),
            OptionValue::Unsigned(n) => write!(f, "{n}"),
            OptionValue::Bounds(bounds) => {
                let items: Vec<String> = bounds.iter().map(|(k, v)| format!("{k}={v}")).collect();
                f.write_str(&items.join(","))
            }
            OptionValue::Text(t) => f.write_str(t),
        }
    }
}

/// The options of one pass run: every option given in the pipeline
/// (`pass{key=value other=1}`), checked against the pass's declarations,
/// and the defaults of the flags not given.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PassOptions(pub IndexMap<String, OptionValue>);

impl PassOptions {
    /// The options of pass `pass` (its name, for messages) declared in
    /// `declared` given as `(name, text)` pairs, checked,
    /// with the flags' defaults.
    pub fn parse<'a>(
        pass: &str,
        declared: &[PassOption],
        given: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, String> {
        let mut options = PassOptions::default();
        for (key, text) in given {
            let option = declared.iter().find(|o| o.name == key).ok_or_else(|| {
                let known: Vec<_> = declared.iter().map(|o| o.name).collect();
                format!(
                    "unknown option '{key}' for pass '{pass}' (known: {})",
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                )
            })?;
            let value =
                option.parse(text).map_err(|e| e.replacen(" takes ", &format!(" of pass '{pass}' takes "), 1))?;
            options.0.insert(key.to_string(), value);
        }
        for option in declared {
            if let OptionKind::Flag(default) = option.kind {
                options.0.entry(option.name.to_string()).or_insert(OptionValue::Flag(default));
            }
        }
        Ok(options)
    }

    /// The options of `pass` as values (what a front end building a
    /// pipeline from [`crate::compile_options::CompileOptions`] gives, no
    /// text involved): the flags' defaults, then each of `given`. A name
    /// the pass does not declare, or a value of another kind, is an error.
    pub fn of(
        pass: &dyn TempoPass,
        given: impl IntoIterator<Item = (&'static str, OptionValue)>,
    ) -> Result<Self, String> {
        let mut options = PassOptions::parse(pass.name(), pass.options(), [])?;
        for (key, value) in given {
            let option = pass.options().iter().find(|o| o.name == key);
            match option {
                Some(option) if value.fits(option.kind) => {
                    options.0.insert(key.to_string(), value);
                }
                _ => return Err(format!("pass '{}' has no option '{key}' taking {value:?}", pass.name())),
            }
        }
        Ok(options)
    }

    /// The options in pipeline syntax (`key=value ...`), flags at their
    /// default left out: what [`crate::pipeline::parse_options`] reads
    /// back into these options.
    pub fn print(&self, declared: &[PassOption]) -> String {
        let items: Vec<String> = self
            .0
            .iter()
            .filter(|(key, value)| {
                let default = declared.iter().find(|o| o.name == key.as_str()).map(|o| o.kind);
                !matches!((default, value), (Some(OptionKind::Flag(d)), OptionValue::Flag(v)) if d == *v)
            })
            .map(|(key, value)| format!("{key}={value}"))
            .collect();
        items.join(" ")
    }

    /// A flag's value (false for a name that is not a flag).
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.0.get(name), Some(OptionValue::Flag(true)))
    }

    /// An unsigned option's value, if given.
    pub fn unsigned(&self, name: &str) -> Option<u64> {
        match self.0.get(name) {
            Some(OptionValue::Unsigned(n)) => Some(*n),
            _ => None,
        }
    }

    /// The bound values (per dimension of `program`) of the bounds option
    /// `bounds` (none given: none).
    pub fn bound_values(&self, program: &Program) -> Vec<Option<i64>> {
        program.bound_values(self.bounds("bounds").unwrap_or(&[]))
    }

    /// A bounds option's values, if given.
    pub fn bounds(&self, name: &str) -> Option<&[(String, i64)]> {
        match self.0.get(name) {
            Some(OptionValue::Bounds(b)) => Some(b),
            _ => None,
        }
    }

    /// A text option's value, if given.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.0.get(name) {
            Some(OptionValue::Text(t)) => Some(t),
            _ => None,
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
    /// Runs on `op` (an op named [`Self::anchor`]); a pass that is a
    /// [`ProgramRewrite`] ([`Self::as_rewrite`]) need not say how:
    /// [`rewrite_module`].
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let rewrite = self.as_rewrite().unwrap_or_else(|| panic!("pass '{}' has no run", self.name()));
        rewrite_module(rewrite, op, options)
    }
    /// The pass as a rewrite of the program model, where it is one (the
    /// temporal optimizations): a pipeline of such passes only can run on
    /// one model, verified once and written back once
    /// ([`crate::pipeline::run_rewrites`]), instead of each pass reading the
    /// program from the IR and printing it back. Its [`Self::run`] is then
    /// [`rewrite_module`] (the default).
    fn as_rewrite(&self) -> Option<&dyn ProgramRewrite> {
        None
    }
}

/// A pass that rewrites a verified program's model.
pub trait ProgramRewrite {
    /// Rewrites `program` (verified; left valid): whether it changed it, or
    /// diagnostics (at `at`, the module's location, or the program's).
    fn rewrite<'c>(
        &self,
        program: &mut Program<'c>,
        options: &PassOptions,
        at: Location<'c>,
    ) -> Result<bool, Vec<PassDiagnostic<'c>>>;
}

/// [`TempoPass::run`] of a [`ProgramRewrite`]: the program read from `op`
/// and verified, rewritten, and written back when it changed.
pub fn rewrite_module<'c>(
    pass: &dyn ProgramRewrite,
    op: OperationRef<'c, '_>,
    options: &PassOptions,
) -> PassResult<'c> {
    let mut program = crate::verify::verify_program(op)?;
    if pass.rewrite(&mut program, options, op.location())? {
        crate::emit::replace_program(op, &program)?;
    }
    Ok(())
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

/// The [`TempoPass`] and [`ProgramRewrite`] of a rewrite without options:
/// `option_free_rewrite!(TemporalDce, "temporal-dce", "summary",
/// eliminate_dead_code)` runs `eliminate_dead_code(&mut program) -> bool`
/// (whether it changed the program).
#[macro_export]
macro_rules! option_free_rewrite {
    ($pass:ident, $name:literal, $summary:literal, $rewrite:path) => {
        impl $crate::pass::TempoPass for $pass {
            fn name(&self) -> &'static str {
                $name
            }
            fn summary(&self) -> &'static str {
                $summary
            }
            fn as_rewrite(&self) -> Option<&dyn $crate::pass::ProgramRewrite> {
                Some(self)
            }
        }

        impl $crate::pass::ProgramRewrite for $pass {
            fn rewrite<'c>(
                &self,
                program: &mut $crate::program::Program<'c>,
                _options: &$crate::pass::PassOptions,
                _at: melior::ir::Location<'c>,
            ) -> Result<bool, Vec<$crate::diagnostics::PassDiagnostic<'c>>> {
                Ok($rewrite(program))
            }
        }
    };
}
