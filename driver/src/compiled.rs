//! A program compiled once with the MLIR context it lives in: what the
//! Rust API's `Runner::compile`, the C API and the Python package hand
//! out, to be run many times with new bounds and inputs.

use crate::executable::{Executable, RunReport};
use crate::options::RunOptions;
use melior::Context;
use tempo_runtime::array::HostArray;

/// An [`Executable`] and its own MLIR context.
pub struct CompiledProgram {
    // Dropped first: its modules and engine belong to the context.
    executable: Executable<'static>,
    _context: Box<Context>,
}

impl CompiledProgram {
    /// Compiles the temporal program `text` (named `source_name` in
    /// diagnostics) with `options` in a context of its own.
    pub fn compile(text: &str, source_name: &str, options: &RunOptions) -> Result<Self, Vec<String>> {
        // MLIR's own passes, which the lowering pipelines name.
        melior::utility::register_all_passes();
        let context = Box::new(tempo_dialects::create_context());
        // SAFETY: the context is boxed, so it does not move, and it outlives
        // the executable: the struct drops the executable first and never
        // hands the context out.
        let context_ref: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
        let mut module = tempo_passes::support::source::parse_text(context_ref, text, source_name, 1)?;
        let executable = Executable::compile(context_ref, &mut module, options)?;
        Ok(Self { executable, _context: context })
    }

    /// Compiles the module `build` makes in a context of its own (a front
    /// end building its program as typed IR, the Rust API) with `options`.
    pub fn build(
        build: impl for<'c> FnOnce(&'c Context) -> Result<melior::ir::Module<'c>, Vec<String>>,
        options: &RunOptions,
    ) -> Result<Self, Vec<String>> {
        melior::utility::register_all_passes();
        let context = Box::new(tempo_dialects::create_context());
        // SAFETY: as in `compile`.
        let context_ref: &'static Context = unsafe { &*(context.as_ref() as *const Context) };
        let mut module = build(context_ref)?;
        let executable = Executable::compile(context_ref, &mut module, options)?;
        Ok(Self { executable, _context: context })
    }

    /// The compiled program.
    pub fn executable(&self) -> &Executable<'_> {
        &self.executable
    }

    /// Runs it with `run`'s bounds, inputs and seed (see [`Executable::run`]).
    pub fn run(&self, run: &RunOptions) -> Result<(Vec<HostArray>, RunReport), Vec<String>> {
        self.executable.run(run)
    }
}
