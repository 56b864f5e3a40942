//! Typed pipelines: the passes a pass manager runs, as values.
//!
//! The compiler builds its pipelines as [`Step`]s from
//! [`crate::compile_options::CompileOptions`] (each Rust pass with its
//! options as typed [`PassOptions`]); text a user hands in is parsed and
//! resolved into the same steps once ([`parse_steps`]): named pipelines
//! expanded, Rust passes looked up and their options checked. Upstream MLIR
//! passes keep their options in MLIR's syntax, which MLIR reads when the
//! step joins a pass manager (the boundary with MLIR's own passes).

use super::{PipelineElement, PipelineError, add_upstream, external_pass, parse_options, parse_pipeline};
use crate::pass::{PassOptions, PassRegistry, RegistryEntry, TempoPass};
use melior::pass::{OperationPassManager, PassManager};
use std::sync::Arc;

/// One step of a pipeline.
#[derive(Clone)]
pub enum Step {
    /// A Rust pass with its checked options.
    Pass { pass: Arc<dyn TempoPass>, options: PassOptions },
    /// An upstream MLIR pass (or pipeline) by name, with its options in
    /// MLIR's syntax (without braces; empty: none).
    Upstream { name: String, options: String },
    /// Steps run on the ops named `anchor` nested in the current one.
    Nested { anchor: String, steps: Vec<Step> },
}

impl std::fmt::Debug for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&print_steps(std::slice::from_ref(self)))
    }
}

impl Step {
    /// Rust pass `pass` with its default options.
    pub fn pass(pass: impl TempoPass + 'static) -> Step {
        Self::with(pass, []).expect("no options given")
    }

    /// Rust pass `pass` with `options` (name and value); an option the pass
    /// does not declare, or a value of another kind, is an error.
    pub fn with(
        pass: impl TempoPass + 'static,
        options: impl IntoIterator<Item = (&'static str, crate::pass::OptionValue)>,
    ) -> Result<Step, String> {
        let options = PassOptions::of(&pass, options)?;
        Ok(Step::Pass { pass: Arc::new(pass), options })
    }

    /// Upstream pass `name` with `options` in MLIR's syntax.
    pub fn upstream(name: &str, options: &str) -> Step {
        Step::Upstream { name: name.to_string(), options: options.to_string() }
    }

    /// `steps` nested under ops named `anchor`.
    pub fn nested(anchor: &str, steps: Vec<Step>) -> Step {
        Step::Nested { anchor: anchor.to_string(), steps }
    }

    /// The pass's name (the anchor's for nested steps).
    pub fn name(&self) -> &str {
        match self {
            Step::Pass { pass, .. } => pass.name(),
            Step::Upstream { name, .. } => name,
            Step::Nested { anchor, .. } => anchor,
        }
    }
}

/// `steps` in pipeline syntax (what [`parse_steps`] reads back into the
/// same steps; a flag at its default is left out).
pub fn print_steps(steps: &[Step]) -> String {
    let items: Vec<String> = steps
        .iter()
        .map(|step| match step {
            Step::Pass { pass, options } => {
                let options = options.print(pass.options());
                if options.is_empty() { pass.name().to_string() } else { format!("{}{{{options}}}", pass.name()) }
            }
            Step::Upstream { name, options } if options.is_empty() => name.clone(),
            Step::Upstream { name, options } => format!("{name}{{{options}}}"),
            Step::Nested { anchor, steps } => format!("{anchor}({})", print_steps(steps)),
        })
        .collect();
    items.join(", ")
}

/// Pipeline text resolved into steps, for a pipeline on `builtin.module`.
pub fn parse_steps(registry: &PassRegistry, text: &str) -> Result<Vec<Step>, PipelineError> {
    resolve(registry, &parse_pipeline(text)?, "builtin.module", 0)
}

/// `elements` (nested under ops named `anchor`) resolved: named pipelines
/// expanded, Rust passes looked up and checked to run on `anchor`, their
/// options parsed; every other name an upstream pass.
pub fn resolve(
    registry: &PassRegistry,
    elements: &[PipelineElement],
    anchor: &str,
    depth: usize,
) -> Result<Vec<Step>, PipelineError> {
    if depth > 32 {
        return Err(PipelineError("named pipelines expand recursively".into()));
    }
    let mut steps = Vec::new();
    for element in elements {
        match element {
            PipelineElement::Nested { anchor: nested, elements } => {
                steps.push(Step::nested(nested, resolve(registry, elements, nested, depth)?));
            }
            PipelineElement::Pass { name, options } => match registry.get(name) {
                Some(RegistryEntry::Pass(pass)) => {
                    if pass.anchor() != anchor {
                        return Err(PipelineError(format!(
                            "pass '{name}' runs on '{}' and cannot be nested under '{anchor}'",
                            pass.anchor()
                        )));
                    }
                    let options = parse_options(pass.as_ref(), options)?;
                    steps.push(Step::Pass { pass: pass.clone(), options });
                }
                Some(RegistryEntry::Pipeline { text, .. }) => {
                    if !options.is_empty() {
                        return Err(PipelineError(format!("pipeline '{name}' takes no options")));
                    }
                    steps.extend(resolve(registry, &parse_pipeline(text)?, anchor, depth + 1)?);
                }
                None => steps.push(Step::upstream(name, options)),
            },
        }
    }
    Ok(steps)
}

/// Adds `steps` to the root pass manager of a module.
pub fn add_to_pass_manager(manager: &PassManager, steps: &[Step]) -> Result<(), PipelineError> {
    add_steps(&manager.as_operation_pass_manager(), "builtin.module", steps)
}

/// Adds `steps` to `manager`, which runs on ops named `anchor`.
pub fn add_steps(manager: &OperationPassManager, anchor: &str, steps: &[Step]) -> Result<(), PipelineError> {
    for step in steps {
        match step {
            Step::Nested { anchor: nested, steps } => add_steps(&manager.nested_under(nested), nested, steps)?,
            Step::Pass { pass, options } => {
                if pass.anchor() != anchor {
                    return Err(PipelineError(format!(
                        "pass '{}' runs on '{}' and cannot be nested under '{anchor}'",
                        pass.name(),
                        pass.anchor()
                    )));
                }
                manager.add_pass(external_pass(pass.clone(), options.clone()));
            }
            Step::Upstream { name, options } => add_upstream(manager, name, options)?,
        }
    }
    Ok(())
}
