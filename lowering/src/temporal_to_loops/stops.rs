//! Data-dependent stops (`temporal.stop`, `passes/src/stops.rs`) in
//! `lower-temporal-to-loops`.
//!
//! The nest computing a stop's tensor `done` runs its loop over the stopped
//! dimension `d` (which must be its outer loop, forward) with a guard: once
//! `done[t]` holds, the rest of the iterations compute nothing (the loop
//! still counts to the bound, which costs a load and a branch each). The
//! length `L = t + 1` (the bound when `done` never holds) then replaces
//! the bound of `d` for every later nest, so later loops, ranges `x[0:T]`
//! and stores see the dimension end at the stop, and is written to the
//! global `tempo_stop_lengths` (one word per stop, in program order), from
//! which the runtime reports the outputs' extent.

use super::{Built, Emitter};
use crate::ir_builder::{Builder, Compare, declare_zeros};
use crate::schedule::{Schedule, Step};
use melior::ir::r#type::MemRefType;
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::program::{NodeKind, Program};

/// The global holding each stop's length after a run.
pub const STOP_LENGTHS: &str = "tempo_stop_lengths";

/// What this lowering cannot compile yet of stops and reads through data,
/// refused at the user's op before any code is built: either on the GPU
/// target, and a stop whose tensor is computed in a nest it cannot stop (a
/// plain nest whose outer loop runs over the stopped dimension, forward,
/// not retimed, without swaps, whose tensors over that dimension do not
/// use its bound, which is not known until the stop).
pub(super) fn refuse_unsupported<'c>(
    program: &Program<'c>,
    schedule: &Schedule,
    gpu: bool,
) -> Result<(), Vec<PassDiagnostic<'c>>> {
    let fail = |location, message: String| Err(vec![PassDiagnostic::new(location, message)]);
    if gpu {
        let read = program
            .tensors
            .iter()
            .flat_map(|t| &t.branches)
            .flat_map(|b| &b.nodes)
            .find(|n| matches!(n.kind, NodeKind::ReadAt { .. }));
        if let Some(node) = read {
            return fail(node.location, "not yet: reads through data (temporal.read_at) on the GPU target".into());
        }
        if let Some(stop) = program.stops.first() {
            return fail(stop.location, "not yet: data-dependent stops (temporal.stop) on the GPU target".into());
        }
    }
    for stop in &program.stops {
        let d = stop.dim;
        let dim = &program.dims[d];
        let done = &program.tensors[stop.done].name;
        let Some(nest) = schedule.nests.iter().find(|n| n.body.contains(&stop.done)) else { continue };
        let why = |why: String| format!("not yet: the loop computing '{done}', which stops '{}', {why}", dim.name);
        if !nest.inner.is_empty() || nest.dims.first() != Some(&d) || !nest.forward[0] {
            return fail(
                stop.location,
                why(format!("must run over '{}' forward as the outer loop of its nest", dim.name)),
            );
        }
        if nest.body.iter().any(|&t| schedule.lag(t) != 0 || schedule.swaps.contains_key(&t)) {
            return fail(stop.location, why("is retimed or swaps stores to a file".into()));
        }
        for &t in nest.body.iter().filter(|&&t| program.tensors[t].domain.contains(&d)) {
            let tensor = &program.tensors[t];
            for branch in &tensor.branches {
                let in_condition = branch.when.constraints.iter().any(|c| c.expr.uses_symbol(d));
                let in_nodes = branch.nodes.iter().any(|node| match &node.kind {
                    NodeKind::Read { index, .. } | NodeKind::ReadAt { index, .. } => {
                        index.results.iter().any(|e| e.uses_symbol(d))
                    }
                    NodeKind::ReadRange { lower, upper, caps, .. } => {
                        lower.iter().chain(upper).chain(caps).any(|m| m.results.iter().any(|e| e.uses_symbol(d)))
                    }
                    NodeKind::DynamicSlice(_, offsets) => offsets.results.iter().any(|e| e.uses_symbol(d)),
                    NodeKind::Bound(b) => *b == d,
                    _ => false,
                });
                if in_condition || in_nodes {
                    return fail(
                        branch.location,
                        why(format!(
                            "also computes '{}', which uses the bound {} (only known at the stop): compute it after the stop",
                            tensor.name, dim.bound
                        )),
                    );
                }
            }
        }
    }
    Ok(())
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// The loop over the stopped dimension `d` of stop `k` (tensor `done`)
    /// around `body`, guarded (see the module's doc).
    pub(super) fn stop_loop(
        &mut self,
        k: usize,
        d: usize,
        done: usize,
        body: &[Step],
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let word = b.integer_type(64);
        // [stopped, length], set before the loop.
        let state_type = MemRefType::new(word, &[2], None, None).into();
        let state = self.entry.alloc(state_type, &[])?;
        self.exit.op("memref.dealloc", &[state], &[], &[])?;
        self.stop_states.insert(k, state);
        let (zero, one) = (b.index(0)?, b.index(1)?);
        b.store(b.i64(0)?, state, &[zero])?;
        b.store(b.index_cast(self.bound_args[d], word)?, state, &[one])?;
        let from = crate::ir_builder::affine_map(self.context, 0, 0, &[tempo_passes::affine::AffineExpr::Constant(0)]);
        let to = crate::ir_builder::affine_map(self.context, 0, 1, &[tempo_passes::affine::AffineExpr::Symbol(0)]);
        let (inner, t) = b.affine_for((from, &[]), (to, &[self.bound_args[d]]))?;
        self.index_of.insert(d, t);
        let stopped = inner.load(state, &[inner.index(0)?], word)?;
        let running = inner.compare(Compare::Eq, stopped, inner.i64(0)?)?;
        let (then, _) = inner.scf_if_else(running, false)?;
        self.place(body, &then)?;
        let point = self.point_view(done, &[t], false, &then)?;
        let holds = then.load(point, &[], then.integer_type(1))?;
        let (hit, _) = then.scf_if_else(holds, false)?;
        hit.store(hit.i64(1)?, state, &[hit.index(0)?])?;
        let next = hit.arith("addi", t, hit.index(1)?)?;
        hit.store(hit.index_cast(next, word)?, state, &[hit.index(1)?])?;
        Ok(())
    }

    /// After the nest of stop `k`: its length becomes the bound of its
    /// dimension for the nests after it, and is recorded for the runtime.
    pub(super) fn after_stop(&mut self, k: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let d = program.stops[k].dim;
        let state = *self.stop_states.get(&k).ok_or("compiler fault: a stop's loop was not built")?;
        let word = b.integer_type(64);
        let length = b.load(state, &[b.index(1)?], word)?;
        declare_zeros(self.globals.module()?, STOP_LENGTHS, program.stops.len() as i64)?;
        let lengths_type = MemRefType::new(word, &[program.stops.len() as i64], None, None).into();
        let lengths = b.global(STOP_LENGTHS, lengths_type)?;
        b.store(length, lengths, &[b.index(k as i64)?])?;
        let bound = b.index_cast(length, b.index_type())?;
        self.bound_args[d] = bound;
        self.last_index[d] = b.arith("subi", bound, b.index(1)?)?;
        Ok(())
    }
}
