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
//!
//! A ragged stop (`done[b, t]`, batch dimensions `b`) keeps, per point of
//! `b` (row-major), a stopped flag and a length (the bound until it stops)
//! in buffers allocated before its nest, and a count of the points still
//! running. Its nest (the loops over `done`'s dimensions in any order, `t`
//! forward) computes a point only while its `b` runs; the loop over `t`,
//! when not innermost, runs an iteration only while some point does. After
//! it, the longest length is the bound of `t` (the extent of the outputs
//! and of later loops), each tensor over `b` computes its point `(b, t)`
//! only where `t < L(b)` and sees `L(b)` as `t`'s bound; the lengths are
//! handed to the runtime (`tempo_ragged_lengths`), which zeroes the outputs
//! past them and reports them.

use super::{Built, Emitter};
use crate::ir_builder::{Builder, Compare, declare, declare_zeros};
use crate::schedule::{Schedule, Step};
use melior::ir::Value;
use melior::ir::r#type::MemRefType;
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::program::{NodeKind, Program};

/// The global holding each stop's length after a run (a ragged stop's
/// longest).
pub const STOP_LENGTHS: &str = "tempo_stop_lengths";

/// The runtime function receiving a ragged stop's lengths:
/// `(stop, address of the lengths, count)`, all `i64`.
pub const RAGGED_LENGTHS: &str = "tempo_ragged_lengths";

/// The runtime function recording that the stop's tensor has no branch
/// defining a point the stop looks at: `(stop, coordinate along the
/// stopped dimension, row-major number of the batch point)`, all `i64`.
/// The run then fails with the point, as the interpreter's does.
pub const UNDEFINED_POINT: &str = "tempo_undefined_stop_point";

/// A ragged stop's state in the code (see the module's doc).
#[derive(Clone)]
pub(super) struct Ragged<'c, 'a> {
    /// Per point of the batch dimensions: 1 once stopped (`i64`).
    stopped: Value<'c, 'a>,
    /// Per point of the batch dimensions: the length (`i64`).
    lengths: Value<'c, 'a>,
    /// `[points still running]`.
    live: Value<'c, 'a>,
    /// The batch dimensions.
    batch: Vec<usize>,
    /// How many points the batch dimensions have (`index`).
    count: Value<'c, 'a>,
}

/// Whether `steps` compute tensor `t`, in loops or not.
fn contains(steps: &[Step], t: usize) -> bool {
    steps.iter().any(|s| match s {
        Step::Compute(i) => *i == t,
        Step::Loop { body, .. } => contains(body, t),
    })
}

/// What this lowering cannot compile yet of stops and reads through data,
/// refused at the user's op before any code is built: either on the GPU
/// target, and a stop whose tensor is computed in a nest it cannot stop.
/// It can stop a plain nest, not retimed, without swaps, whose outer loop
/// runs over the stopped dimension forward (for a ragged stop: whose outer
/// loops run over `done`'s dimensions, the stopped one forward), and whose
/// tensors computed before the length is known (before `done`, or in its
/// loop) do not use the stopped dimension's bound.
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
        let fused = program
            .tensors
            .iter()
            .flat_map(|t| &t.branches)
            .flat_map(|b| &b.nodes)
            .find(|n| matches!(n.kind, NodeKind::FlashAttention(..)));
        if let Some(node) = fused {
            return fail(
                node.location,
                format!(
                    "'temporal.{}' has no GPU lowering (it calls the CPU runtime's tiled kernels)",
                    match &node.kind {
                        NodeKind::FlashAttention(f, _) => f.part.op_name(),
                        _ => unreachable!("found above"),
                    }
                ),
            );
        }
    }
    for stop in &program.stops {
        let d = stop.dim;
        let dim = &program.dims[d];
        let done = &program.tensors[stop.done].name;
        let Some(nest) = schedule.nests.iter().find(|n| n.body.contains(&stop.done)) else { continue };
        let why = |why: String| format!("not yet: the loop computing '{done}', which stops '{}', {why}", dim.name);
        let domain = &program.tensors[stop.done].domain;
        // The nest's shape: for a ragged stop, its outer loops over
        // `done`'s dimensions (any order, the stopped one forward);
        // otherwise its outer loop over the stopped dimension, forward.
        let (shape, needs) = if stop.is_ragged(program) {
            let outer = &nest.dims[..domain.len().min(nest.dims.len())];
            let forward = nest.dims.iter().position(|&x| x == d).is_some_and(|k| nest.forward[k]);
            let names = program.domain_names(stop.done).join(", ");
            (
                domain.iter().all(|x| outer.contains(x)) && forward,
                format!("must run in a nest whose outer loops are over ({names}), '{}' forward", dim.name),
            )
        } else {
            (
                nest.dims.first() == Some(&d) && nest.forward[0],
                format!("must run over '{}' forward as the outer loop of its nest", dim.name),
            )
        };
        if !nest.inner.is_empty() || !shape {
            return fail(stop.location, why(needs));
        }
        if nest.body.iter().any(|&t| schedule.lag(t) != 0 || schedule.swaps.contains_key(&t)) {
            return fail(stop.location, why("is retimed or swaps stores to a file".into()));
        }
        // Tensors computed before the stop's length is known: before
        // `done` or in its loop (up to the first tensor shallower than
        // `done`, which closes the loop).
        let at = nest.body.iter().position(|&t| t == stop.done).unwrap_or(0);
        let end = nest.body[at..]
            .iter()
            .position(|&t| program.tensors[t].domain.len() < domain.len())
            .map_or(nest.body.len(), |k| at + k);
        for &t in &nest.body[..end] {
            if let Some(location) = tempo_passes::stops::uses_bound(program, t, d) {
                return fail(
                    location,
                    why(format!(
                        "also computes '{}' before the stop, which uses the bound {} (only known at the stop): compute it after the stop",
                        program.tensors[t].name, dim.bound
                    )),
                );
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
        let state = self.function.entry.alloc(state_type, &[])?;
        self.function.exit.op("memref.dealloc", &[state], &[], &[])?;
        self.stops.stop_states.insert(k, state);
        let (zero, one) = (b.index(0)?, b.index(1)?);
        b.store(b.i64(0)?, state, &[zero])?;
        b.store(b.index_cast(self.function.bound_args[d], word)?, state, &[one])?;
        let from = crate::ir_builder::affine_map(self.context, 0, 0, &[tempo_passes::affine::AffineExpr::Constant(0)]);
        let to = crate::ir_builder::affine_map(self.context, 0, 1, &[tempo_passes::affine::AffineExpr::Symbol(0)]);
        let (inner, t) = b.affine_for((from, &[]), (to, &[self.function.bound_args[d]]))?;
        self.nest.index_of.insert(d, t);
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
        // What the nest computes after this loop sees the length.
        let length = b.index_cast(b.load(state, &[one], word)?, b.index_type())?;
        self.function.bound_args[d] = length;
        self.function.last_index[d] = b.arith("subi", length, one)?;
        Ok(())
    }

    /// After the nest of stop `k`: its length becomes the bound of its
    /// dimension for the nests after it, and is recorded for the runtime.
    pub(super) fn after_stop(&mut self, k: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let d = program.stops[k].dim;
        let word = b.integer_type(64);
        let length = if self.stops.ragged.contains_key(&k) {
            self.after_ragged(k, b)?
        } else {
            let state = *self.stops.stop_states.get(&k).ok_or("compiler fault: a stop's loop was not built")?;
            b.load(state, &[b.index(1)?], word)?
        };
        declare_zeros(self.function.globals.module()?, STOP_LENGTHS, program.stops.len() as i64)?;
        let lengths_type = MemRefType::new(word, &[program.stops.len() as i64], None, None).into();
        let lengths = b.global(STOP_LENGTHS, lengths_type)?;
        b.store(length, lengths, &[b.index(k as i64)?])?;
        let bound = b.index_cast(length, b.index_type())?;
        self.function.bound_args[d] = bound;
        self.function.last_index[d] = b.arith("subi", bound, b.index(1)?)?;
        Ok(())
    }
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Before the nest of ragged stop `k`: its buffers, every point of the
    /// batch dimensions running with the bound as its length.
    pub(super) fn ragged_setup(&mut self, k: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let stop = &program.stops[k];
        let batch = stop.batch(program);
        let word = b.integer_type(64);
        let mut count = b.index(1)?;
        for &d in &batch {
            count = b.arith("muli", count, self.function.bound_args[d])?;
        }
        let per_point = MemRefType::new(word, &[i64::MIN], None, None).into();
        let stopped = b.alloc(per_point, &[count])?;
        let lengths = b.alloc(per_point, &[count])?;
        let live = b.alloc(MemRefType::new(word, &[1], None, None).into(), &[])?;
        for buffer in [stopped, lengths, live] {
            self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
        }
        let (zero, one) = (b.index(0)?, b.index(1)?);
        b.store(b.index_cast(count, word)?, live, &[zero])?;
        let (each, j) = b.scf_for(zero, count, one)?;
        each.store(each.i64(0)?, stopped, &[j])?;
        each.store(each.index_cast(self.function.bound_args[stop.dim], word)?, lengths, &[j])?;
        self.stops.ragged.insert(k, Ragged { stopped, lengths, live, batch, count });
        Ok(())
    }

    /// The row-major number of the current point of `batch` (their
    /// variables are bound).
    fn batch_point(&self, batch: &[usize], b: &Builder<'c, 'a>) -> Built<Value<'c, 'a>> {
        let mut flat = b.index(0)?;
        for &d in batch {
            let at = *self.nest.index_of.get(&d).ok_or("compiler fault: a batch dimension without its loop")?;
            flat = b.arith("muli", flat, self.function.bound_args[d])?;
            flat = b.arith("addi", flat, at)?;
        }
        Ok(flat)
    }

    /// In the nest of a ragged stop, the body of the loop over `d`: for its
    /// innermost loop, the point computed only while its batch point runs
    /// (and stopped where `done` holds); for the stopped dimension's loop,
    /// an iteration only while some point runs. False elsewhere (the
    /// caller builds the body as usual).
    pub(super) fn ragged_body(&mut self, d: usize, body: &[Step], b: &Builder<'c, 'a>) -> Built<bool> {
        let Some((k, dim, done)) = self.nest.stop else { return Ok(false) };
        let Some(ragged) = self.stops.ragged.get(&k).cloned() else { return Ok(false) };
        let word = b.integer_type(64);
        let zero = b.index(0)?;
        if body.iter().any(|s| matches!(s, Step::Compute(t) if *t == done)) {
            let flat = self.batch_point(&ragged.batch, b)?;
            let stopped = b.load(ragged.stopped, &[flat], word)?;
            let running = b.compare(Compare::Eq, stopped, b.i64(0)?)?;
            let (then, _) = b.scf_if_else(running, false)?;
            self.place(body, &then)?;
            let coords: Vec<Value<'c, 'a>> =
                self.program.tensors[done].domain.iter().map(|x| self.nest.index_of[x]).collect();
            let point = self.point_view(done, &coords, false, &then)?;
            let holds = then.load(point, &[], then.integer_type(1))?;
            let (hit, _) = then.scf_if_else(holds, false)?;
            hit.store(hit.i64(1)?, ragged.stopped, &[flat])?;
            let next = hit.arith("addi", self.nest.index_of[&dim], hit.index(1)?)?;
            hit.store(hit.index_cast(next, word)?, ragged.lengths, &[flat])?;
            let live = hit.load(ragged.live, &[zero], word)?;
            hit.store(hit.arith("subi", live, hit.i64(1)?)?, ragged.live, &[zero])?;
            // What the nest computes after this loop knows the lengths.
            self.stops.ragged_done.push(k);
            return Ok(true);
        }
        if d == dim && contains(body, done) {
            let live = b.load(ragged.live, &[zero], word)?;
            let some = b.compare(Compare::Sgt, live, b.i64(0)?)?;
            let (then, _) = b.scf_if_else(some, false)?;
            self.place(body, &then)?;
            return Ok(true);
        }
        Ok(false)
    }

    /// After the nest of ragged stop `k`: the longest length becomes the
    /// bound of its dimension, the lengths go to the runtime.
    fn after_ragged(&mut self, k: usize, b: &Builder<'c, 'a>) -> Built<Value<'c, 'a>> {
        let ragged = self.stops.ragged.get(&k).cloned().ok_or("compiler fault: a ragged stop's nest was not built")?;
        let word = b.integer_type(64);
        let (count, lengths) = (ragged.count, ragged.lengths);
        let longest = b.for_sum(b.index(0)?, count, b.i64(0)?, &|b, j, longest| {
            let length = b.load(lengths, &[j], b.integer_type(64))?;
            b.arith("maxsi", longest, length)
        })?;
        declare(self.function.globals.module()?, RAGGED_LENGTHS, &[word, word, word], &[])?;
        let address = b.value("memref.extract_aligned_pointer_as_index", &[lengths], b.index_type(), &[])?;
        let args = [b.i64(k as i64)?, b.index_cast(address, word)?, b.index_cast(count, word)?];
        b.call(RAGGED_LENGTHS, &args, &[])?;
        if !self.stops.ragged_done.contains(&k) {
            self.stops.ragged_done.push(k);
        }
        Ok(longest)
    }

    /// Builds tensor `i` at the current point: where it is over a ragged
    /// stop's batch dimensions (after the stop), only inside the point's
    /// length, with the length as the stopped dimension's bound.
    pub(super) fn tensor(&mut self, i: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let domain = &program.tensors[i].domain;
        // Only tensors over the stopped dimension or using its bound need
        // the point's length.
        let applying: Vec<usize> = self
            .stops
            .ragged_done
            .iter()
            .copied()
            .filter(|k| self.stops.ragged[k].batch.iter().all(|d| domain.contains(d)))
            .filter(|&k| {
                let d = program.stops[k].dim;
                domain.contains(&d) || tempo_passes::stops::uses_bound(program, i, d).is_some()
            })
            .collect();
        if applying.is_empty() {
            return self.tensor_at(i, b);
        }
        let saved = (self.function.bound_args.clone(), self.function.last_index.clone());
        let mut inner = b.at(program.tensors[i].location);
        for k in applying {
            let d = program.stops[k].dim;
            let ragged = self.stops.ragged[&k].clone();
            let flat = self.batch_point(&ragged.batch, &inner)?;
            let length = inner.load(ragged.lengths, &[flat], inner.integer_type(64))?;
            let length = inner.index_cast(length, inner.index_type())?;
            self.function.bound_args[d] = length;
            self.function.last_index[d] = inner.arith("subi", length, inner.index(1)?)?;
            if domain.contains(&d) {
                let inside = inner.compare(Compare::Slt, self.nest.index_of[&d], length)?;
                inner = inner.scf_if_else(inside, false)?.0;
            }
        }
        // The lengths are loaded values, not affine symbols: coordinates
        // and conditions are built with `arith` ops.
        let affine = std::mem::replace(&mut self.nest.arith_indices, true);
        let built = self.tensor_at(i, &inner);
        self.nest.arith_indices = affine;
        (self.function.bound_args, self.function.last_index) = saved;
        built
    }
}
