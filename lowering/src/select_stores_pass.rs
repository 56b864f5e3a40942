//! `temporal-select-stores`: schedules the program and records the decisions
//! on each tensor declaration, so that they can be inspected (and lit-tested)
//! without lowering: `tempo.nest` (the loop nest computing the tensor, in
//! execution order), `tempo.loops` (that nest's loops, outer to inner, `+`
//! forward and `-` backward, e.g. `"b+ t-"`) and `tempo.store` (`point`,
//! `ring<k>`, `window<w>`, `blocks<B>`, `full`, `input` or `output`; a ring,
//! window or blocks of several dimensions also names the dimension it runs
//! along and the kept ones, `window<64> along t per l`; see
//! [`crate::store_selection`]).
//!
//! Assumes a program accepted by `temporal-verify`; programs the scheduler
//! cannot order get its diagnostic. Changes nothing but these attributes.

use crate::schedule::Schedule;
use melior::ir::{
    OperationRef, RegionLike,
    attribute::{AttributeLike, IntegerAttribute, StringAttribute},
    operation::OperationLike,
    r#type::IntegerType,
};
use tempo_dialects::block_operations;
use tempo_dialects::temporal as t;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};
use tempo_passes::verify::verify_program;

/// The `temporal-select-stores` pass.
pub struct SelectStores;

impl TempoPass for SelectStores {
    fn name(&self) -> &'static str {
        "temporal-select-stores"
    }
    fn summary(&self) -> &'static str {
        "Schedule the program and annotate each tensor with its loop nest (tempo.nest, tempo.loops) and store kind (tempo.store)"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        let schedule = Schedule::new(&program)?;
        // `ContextRef::to_ref` borrows the `ContextRef` itself: keep it alive
        // for as long as `context` is used (a temporary here was freed at
        // once and the attributes below were created through a dangling
        // pointer, which crashed release builds).
        let context_ref = op.context();
        let context = unsafe { context_ref.to_ref() };
        let body = op
            .region(0)
            .ok()
            .and_then(|r| r.first_block())
            .ok_or_else(|| vec![PassDiagnostic::new(op.location(), "expected a module with a body")])?;
        let mut annotations = Vec::new();
        for (i, tensor) in program.tensors.iter().enumerate() {
            let nest = schedule.nests.iter().position(|n| n.body.contains(&i));
            // The loops of the (innermost) nest computing the tensor.
            let loops = nest.and_then(|k| schedule.nests[k].plain_nest_of(i)).map(|n| {
                n.dims
                    .iter()
                    .zip(&n.forward)
                    .map(|(&d, &f)| format!("{}{}", program.dims[d].name, if f { "+" } else { "-" }))
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            let names = program.domain_names(i);
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            annotations.push((tensor.name.clone(), schedule.storage[i].describe(&names), nest, loops));
        }
        drop(program);
        for decl in block_operations(body) {
            let name = decl.name().as_string_ref().as_str().unwrap_or("").to_string();
            if name != t::TensorOp::NAME && name != t::InputOp::NAME {
                continue;
            }
            let Some(symbol) = decl.attribute("sym_name").ok().and_then(tempo_passes::program::string_attr) else {
                continue;
            };
            let Some((_, store, nest, loops)) = annotations.iter().find(|a| a.0 == symbol) else { continue };
            let set = |key: &str, value: melior::ir::Attribute| unsafe {
                mlir_sys::mlirOperationSetAttributeByName(
                    decl.to_raw(),
                    melior::StringRef::new(key).to_raw(),
                    value.to_raw(),
                )
            };
            set("tempo.store", StringAttribute::new(context, store).into());
            if let (Some(nest), Some(loops)) = (nest, loops) {
                let i64_type = IntegerType::new(context, 64).into();
                set("tempo.nest", IntegerAttribute::new(i64_type, *nest as i64).into());
                set("tempo.loops", StringAttribute::new(context, loops).into());
            }
        }
        Ok(())
    }
}
