//! The reference interpreter: evaluates a temporal program literally, the
//! oracle every compiled result is compared with.
//!
//! Demand-driven and memoized, following `semantics.md`: an output needs
//! every point of its domain; a point is defined by the first branch whose
//! condition holds there; a branch needs the points its reads name. Within
//! a branch, demand starts at the result, the external calls and the
//! collectives: an op whose value reaches none is not evaluated (a dead read names no
//! point, so it is never out of bounds or undefined; see "Evaluation is
//! demand-driven" in `dialects/README.md`). Points
//! are evaluated with an explicit stack (no recursion, so long recurrences do
//! not overflow), in any number of dimensions. A point demanded while it is
//! being computed is a cycle, a read outside `[0, bound)` or a needed point
//! with no branch is an error naming tensor and point.
//!
//! Computed points live in one store per tensor (`store.rs`): row-major
//! over the tensor's domain (after checking that every point fits in
//! memory), a bit per point for "computed" and one for "in progress"; an
//! output keeps every point, any other tensor keeps chunks of points only
//! while reads of them are left to be made (counted before evaluation by
//! following demand from the outputs, as evaluation does). The stack of
//! points being evaluated holds 16 bytes per point, so a chain of a
//! million points that each need the one before costs 16 MB.
//!
//! It shares nothing with the lowering: only the program model.

use crate::array::{Data, HostArray};
use crate::externals::Externals;
use melior::ir::Location;
use std::collections::HashMap;
use store::{CHUNK, PointStore};
use tempo_passes::affine::AffineMap;
use tempo_passes::diagnostics::render_location;
use tempo_passes::program::{
    Attention, BinaryKind, DYNAMIC, Einsum, ElementType, Movement, NodeKind, PointType, Program, ReduceKind, UnaryKind,
};
use tempo_passes::rewrite::live_nodes;
use tempo_passes::support::bits::Bits;

type Key = (usize, Vec<i64>);

/// Evaluates every output of `program` for the given bound values (one per
/// dimension, in dimension order) and inputs (one per input tensor, in
/// declaration order, shaped `[domain bounds..., point shape...]`).
/// External calls run the callbacks of `externals`. Errors are rendered
/// diagnostics (`file:line:col: error: ...` at the read, op or tensor in
/// `source_name` that failed).
pub fn interpret(
    program: &Program,
    bounds: &[i64],
    inputs: &[&HostArray],
    externals: &Externals,
    source_name: &str,
) -> Result<Vec<HostArray>, String> {
    // Each stop ends its dimension where its tensor first holds: found
    // point by point, then the program runs with that length as the bound
    // (`passes/src/stops.rs` makes sure the tensor does not depend on it).
    // A ragged stop gives each point of its batch dimensions its own
    // length; the dimension's bound is then the longest, and outputs over
    // it and the batch dimensions are zero past each point's length.
    // Nothing is demanded without outputs, not even a stop's tensor (as
    // in the compiled code, which then does not run).
    if program.outputs.is_empty() {
        return Ok(Vec::new());
    }
    let mut bounds = bounds.to_vec();
    let mut ragged = Vec::new();
    for stop in &program.stops {
        let found = stop_lengths(program, &bounds, &ragged, stop, inputs, externals, source_name)?;
        bounds[stop.dim] = if stop.is_ragged(program) {
            ragged.push(Ragged { dim: stop.dim, batch: stop.batch(program), lengths: found.clone() });
            found.iter().copied().max().unwrap_or(0)
        } else {
            found[0]
        };
    }
    let mut interpreter = Interpreter::new(program, &bounds, inputs, externals, source_name);
    interpreter.ragged = ragged;
    interpreter.count_reads();
    interpreter.evaluate_outputs()?;
    Ok(interpreter.outputs())
}

/// The lengths of a ragged stop's dimension, per point of its batch
/// dimensions (row-major over their bounds).
struct Ragged {
    dim: usize,
    batch: Vec<usize>,
    lengths: Vec<i64>,
}

/// Where `stop`'s dimension ends with bound values `bounds` (and the
/// lengths of earlier ragged stops, `earlier`): one past the first point of
/// its tensor that holds, or the bound; per point of its batch dimensions
/// (row-major), one value without any. A ragged stop's points go in
/// order, each seeing the lengths of those before it (what `done` may read
/// of them, `passes/src/stops.rs`).
fn stop_lengths(
    program: &Program,
    bounds: &[i64],
    earlier: &[Ragged],
    stop: &tempo_passes::program::Stop,
    inputs: &[&HostArray],
    externals: &Externals,
    source_name: &str,
) -> Result<Vec<i64>, String> {
    let mut interpreter = Interpreter::new(program, bounds, inputs, externals, source_name);
    interpreter.ragged = earlier
        .iter()
        .map(|r| Ragged { dim: r.dim, batch: r.batch.clone(), lengths: r.lengths.clone() })
        .chain(stop.is_ragged(program).then(|| Ragged {
            dim: stop.dim,
            batch: stop.batch(program),
            lengths: Vec::new(),
        }))
        .collect();
    let domain = &program.tensors[stop.done].domain;
    let batch = stop.batch(program);
    let extents: Vec<i64> = batch.iter().map(|&b| bounds[b]).collect();
    let mut lengths = Vec::new();
    let mut at = vec![0i64; batch.len()];
    if extents.iter().any(|&e| e <= 0) {
        return Ok(lengths);
    }
    loop {
        let mut length = bounds[stop.dim];
        for t in 0..bounds[stop.dim] {
            let point: Vec<i64> =
                domain
                    .iter()
                    .map(|&d| {
                        if d == stop.dim {
                            t
                        } else {
                            at[batch.iter().position(|&b| b == d).expect("a batch dimension")]
                        }
                    })
                    .collect();
            let key = (stop.done, point);
            interpreter.demand(key.clone())?;
            if let Data::Bool(flags) = interpreter.value(&key)?
                && flags.first().is_some_and(|&f| f != 0)
            {
                length = t + 1;
                break;
            }
        }
        lengths.push(length);
        if let Some(own) = interpreter.ragged.last_mut().filter(|_| stop.is_ragged(program)) {
            own.lengths.push(length);
        }
        if !next_point(&mut at, &extents) {
            return Ok(lengths);
        }
    }
}

impl Interpreter<'_, '_> {
    /// Demands every point of every output, in output order, row-major.
    fn evaluate_outputs(&mut self) -> Result<(), String> {
        for &o in &self.program.outputs {
            let extents: Vec<i64> = self.program.tensors[o].domain.iter().map(|&d| self.bounds[d]).collect();
            let mut point = vec![0i64; extents.len()];
            if extents.iter().all(|&e| e > 0) {
                loop {
                    // Past a ragged stop's length, points do not exist
                    // (the output holds zeros there).
                    if self.exists(o, &point) {
                        self.demand((o, point.clone()))?;
                    }
                    if !next_point(&mut point, &extents) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }

    /// The outputs, once evaluated (their stores are emptied).
    fn outputs(&mut self) -> Vec<HostArray> {
        let program = self.program;
        let mut outputs = Vec::new();
        for &o in &program.outputs {
            let tensor = &program.tensors[o];
            let mut shape: Vec<usize> = tensor.domain.iter().map(|&d| self.bounds[d] as usize).collect();
            shape.extend(tensor.point.shape.iter().map(|&d| d as usize));
            let data = if tensor.is_input {
                self.inputs[&o].data.clone()
            } else {
                match self.stores[o].take_all() {
                    Some(data) => data,
                    // No point at all (a zero bound): an empty array.
                    None => Data::zeros(tensor.point.element, 0),
                }
            };
            outputs.push(HostArray { name: tensor.name.clone(), shape, data });
        }
        outputs
    }
}

/// Advances `point` to the next point of the box `[0, extents)` in
/// row-major order; false after the last one.
fn static_shape(t: &PointType) -> Vec<usize> {
    t.shape.iter().map(|&d| d as usize).collect()
}

fn next_point(point: &mut [i64], extents: &[i64]) -> bool {
    for k in (0..point.len()).rev() {
        point[k] += 1;
        if point[k] < extents[k] {
            return true;
        }
        point[k] = 0;
    }
    false
}

/// Every point of a box `[0, e0) x [0, e1) x ...`, row-major.
fn points(extents: &[i64]) -> Vec<Vec<i64>> {
    let mut all = vec![vec![]];
    for &e in extents {
        all = all.into_iter().flat_map(|p| (0..e.max(0)).map(move |i| [p.clone(), vec![i]].concat())).collect();
    }
    all
}

fn concat(element: ElementType, parts: &[Data]) -> Data {
    let mut out = Data::zeros(element, 0);
    for part in parts {
        match (&mut out, part) {
            (Data::F32(a), Data::F32(b)) => a.extend_from_slice(b),
            (Data::F64(a), Data::F64(b)) => a.extend_from_slice(b),
            (Data::I32(a), Data::I32(b)) => a.extend_from_slice(b),
            (Data::I64(a), Data::I64(b)) => a.extend_from_slice(b),
            (Data::Bool(a), Data::Bool(b)) => a.extend_from_slice(b),
            _ => unreachable!("points of one tensor share an element type"),
        }
    }
    out
}

/// The flag of [`Frame::branch`] saying the reads through data are expanded.
const DATA_READS_MADE: u32 = 1 << 31;

struct Interpreter<'p, 'c> {
    program: &'p Program<'c>,
    bounds: &'p [i64],
    /// Ragged stops' lengths: a tensor over a ragged stop's batch
    /// dimensions sees its point's length as the bound of the stopped one.
    ragged: Vec<Ragged>,
    /// Input arrays by tensor index.
    inputs: HashMap<usize, &'p HostArray>,
    /// Computed points, one store per tensor (unused for inputs).
    stores: Vec<PointStore>,
    externals: &'p Externals,
    source_name: &'p str,
    /// Per tensor and branch, the nodes whose values reach the branch's
    /// result or an external call: the only ones evaluated.
    live: Vec<Vec<Vec<bool>>>,
    /// Whether reads are counted off the stores (see `count_reads`).
    counting: bool,
}

/// A point on the evaluation stack: its tensor, its row-major index in
/// the tensor's domain, and the branch chosen once it is expanded
/// (`u32::MAX` before; [`DATA_READS_MADE`] set once the points its reads
/// through data name are on the stack too).
struct Frame {
    tensor: u32,
    branch: u32,
    flat: u64,
}

impl<'p, 'c> Interpreter<'p, 'c> {
    fn new(
        program: &'p Program<'c>,
        bounds: &'p [i64],
        inputs: &[&'p HostArray],
        externals: &'p Externals,
        source_name: &'p str,
    ) -> Self {
        let input_tensors = program.tensors.iter().enumerate().filter(|(_, t)| t.is_input).map(|(i, _)| i);
        let stores = program
            .tensors
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let extents = t.domain.iter().map(|&d| bounds[d]).collect();
                PointStore::new(extents, t.point.num_elements(), t.point.element, program.outputs.contains(&i))
            })
            .collect();
        Self {
            program,
            bounds,
            ragged: Vec::new(),
            inputs: input_tensors.zip(inputs.iter().copied()).collect(),
            stores,
            externals,
            source_name,
            live: program.tensors.iter().map(|t| t.branches.iter().map(live_nodes).collect()).collect(),
            counting: false,
        }
    }

    /// The length of ragged stop `r` at `point` of a tensor over `domain`
    /// (`None` if it is not over every batch dimension of the stop).
    fn ragged_length(&self, r: &Ragged, domain: &[usize], point: &[i64]) -> Option<i64> {
        let mut flat = 0i64;
        for &b in &r.batch {
            let k = domain.iter().position(|&x| x == b)?;
            flat = flat * self.bounds[b] + point[k];
        }
        r.lengths.get(flat as usize).copied()
    }

    /// The bound values a tensor sees at `point` (the symbols of its maps):
    /// the run's, with a ragged stop's length at the point for its
    /// dimension where the tensor is over its batch dimensions.
    fn symbols(&self, tensor: usize, point: &[i64]) -> std::borrow::Cow<'_, [i64]> {
        let domain = &self.program.tensors[tensor].domain;
        let mut symbols: Option<Vec<i64>> = None;
        for r in &self.ragged {
            if let Some(length) = self.ragged_length(r, domain, point) {
                symbols.get_or_insert_with(|| self.bounds.to_vec())[r.dim] = length;
            }
        }
        symbols.map_or(std::borrow::Cow::Borrowed(self.bounds), std::borrow::Cow::Owned)
    }

    /// The extent along `d` of `tensor` at `point` (its coordinates along
    /// the other dimensions are the ones that matter).
    fn bound_of(&self, tensor: usize, point: &[i64], d: usize) -> i64 {
        let domain = &self.program.tensors[tensor].domain;
        self.ragged
            .iter()
            .filter(|r| r.dim == d)
            .find_map(|r| self.ragged_length(r, domain, point))
            .unwrap_or(self.bounds[d])
    }

    /// Whether `point` of `tensor` exists: inside every ragged length.
    fn exists(&self, tensor: usize, point: &[i64]) -> bool {
        let domain = &self.program.tensors[tensor].domain;
        domain.iter().zip(point).all(|(&d, &c)| c < self.bound_of(tensor, point, d))
    }

    /// A diagnostic at `location` in the program's source.
    fn at(&self, location: Location<'c>, message: impl std::fmt::Display) -> String {
        format!("{}: error: {message}", render_location(&location, self.source_name))
    }

    /// A diagnostic at the declaration of `tensor`.
    fn at_tensor(&self, tensor: usize, message: impl std::fmt::Display) -> String {
        self.at(self.program.tensors[tensor].location, message)
    }

    /// Whether `(tensor, point)` is known: an input, or computed already.
    fn known(&self, (tensor, point): &Key) -> bool {
        self.program.tensors[*tensor].is_input || self.stores[*tensor].is_done(point)
    }

    /// The value of a known point.
    fn value(&self, key: &Key) -> Result<Data, String> {
        let tensor = &self.program.tensors[key.0];
        if tensor.is_input {
            return Ok(self.input_point(key));
        }
        self.stores[key.0].get(&tensor.name, &key.1).map_err(|e| self.at_tensor(key.0, e))
    }

    fn point_name(&self, (tensor, point): &Key) -> String {
        let t = &self.program.tensors[*tensor];
        if point.is_empty() {
            return t.name.clone();
        }
        let coords: Vec<String> =
            t.domain.iter().zip(point).map(|(&d, v)| format!("{}={v}", self.program.dims[d].name)).collect();
        format!("{}[{}]", t.name, coords.join(", "))
    }

    /// The branch defining `key` and the points its reads need.
    fn expand(&self, key: &Key) -> Result<(usize, Vec<Key>), String> {
        let b = self.choose_branch(key)?;
        Ok((b, self.reads(key, b)?))
    }

    /// The first branch whose condition holds at `key`.
    fn choose_branch(&self, key: &Key) -> Result<usize, String> {
        let (tensor, point) = key;
        let t = &self.program.tensors[*tensor];
        let eval_error = |location: Location<'c>| {
            move |e: tempo_passes::affine::EvalError| self.at(location, format!("at {}: {}", self.point_name(key), e.0))
        };
        let mut chosen = None;
        for (b, branch) in t.branches.iter().enumerate() {
            if branch.when.contains(point, &self.symbols(*tensor, point)).map_err(eval_error(branch.location))? {
                chosen = Some(b);
                break;
            }
        }
        chosen.ok_or_else(|| {
            self.at_tensor(
                *tensor,
                format!("point {} is needed but no branch of '{}' defines it", self.point_name(key), t.name),
            )
        })
    }

    /// The points the evaluated reads of branch `b` name at `key`, in node
    /// order, each checked against its source's bounds (errors at the read).
    fn reads(&self, key: &Key, b: usize) -> Result<Vec<Key>, String> {
        let (tensor, point) = key;
        let t = &self.program.tensors[*tensor];
        let eval_error = |location: Location<'c>| {
            move |e: tempo_passes::affine::EvalError| self.at(location, format!("at {}: {}", self.point_name(key), e.0))
        };
        let mut needs = Vec::new();
        for (node, _) in t.branches[b].nodes.iter().zip(&self.live[*tensor][b]).filter(|(_, live)| **live) {
            if let NodeKind::ReadRange { source, lower, upper, caps } = &node.kind {
                let boxes = self.range_box(key, *source, lower, upper, caps).map_err(|e| self.at(node.location, e))?;
                let lengths: Vec<i64> = boxes.iter().filter(|b| b.2).map(|b| b.1 - b.0).collect();
                if let Some(message) = tempo_passes::program::static_length_mismatch(&lengths, &node.ty.shape) {
                    return Err(self.at(node.location, format!("at {}: {message}", self.point_name(key))));
                }
                needs.extend(points_in(&boxes).into_iter().map(|p| (*source, p)));
                continue;
            }
            if let NodeKind::Read { source, index } = &node.kind {
                let coords = index.eval(point, &self.symbols(*tensor, point)).map_err(eval_error(node.location))?;
                let what = format!("read {}", self.program.describe_read(*tensor, *source, index));
                self.check_in_bounds(key, *source, &coords, &what, node.location)?;
                needs.push((*source, coords));
            }
        }
        Ok(needs)
    }

    /// Counts, per chunk of every tensor that is neither an output nor an
    /// input, the reads of its points that needed points make: demand is
    /// followed from every output point, as evaluation follows it, and
    /// every read of an expanded point is counted. Evaluation makes only
    /// reads of needed points, each once, so it never makes more reads of a
    /// chunk than counted, and a chunk is dropped once its count is down to
    /// zero ([`PointStore::read_made`]). A point whose branch or reads fail
    /// is not expanded (evaluation reports the failure if it gets there:
    /// it makes no read there). If a tensor's store would not fit in
    /// memory, nothing is counted and nothing is dropped (evaluation
    /// reports the store).
    fn count_reads(&mut self) {
        let program = self.program;
        // Tensors the outputs read, directly or not: only their points can
        // be needed. If none of them keeps chunks, there is nothing to count.
        let mut reachable = vec![false; program.tensors.len()];
        let mut work = program.outputs.clone();
        while let Some(t) = work.pop() {
            if std::mem::replace(&mut reachable[t], true) {
                continue;
            }
            for (branch, live) in program.tensors[t].branches.iter().zip(&self.live[t]) {
                for (node, _) in branch.nodes.iter().zip(live).filter(|(_, live)| **live) {
                    if let Some(source) = tempo_passes::rewrite::source(&node.kind) {
                        work.push(source);
                    }
                }
            }
        }
        // A read through data names its point only once the data is
        // computed: its reads cannot be counted ahead, so nothing is dropped.
        let through_data = (0..program.tensors.len()).filter(|&t| reachable[t]).any(|t| {
            program.tensors[t]
                .branches
                .iter()
                .any(|b| b.nodes.iter().any(|n| matches!(n.kind, NodeKind::ReadAt { .. })))
        });
        if through_data {
            return;
        }
        let reachable_counted =
            |i: usize| reachable[i] && !program.tensors[i].is_input && self.stores[i].counts_reads();
        if !(0..program.tensors.len()).any(reachable_counted) {
            return;
        }
        let counted: Vec<bool> =
            program.tensors.iter().zip(&self.stores).map(|(t, s)| !t.is_input && s.counts_reads()).collect();
        let mut pending: Vec<Vec<u64>> = Vec::with_capacity(program.tensors.len());
        for (i, store) in self.stores.iter().enumerate() {
            let chunks = if counted[i] {
                store.points().and_then(|p| usize::try_from(p.div_ceil(CHUNK as u64)).ok())
            } else {
                Some(0)
            };
            let mut counts = Vec::new();
            if chunks.is_none_or(|n| counts.try_reserve_exact(n).is_err()) {
                return;
            }
            counts.resize(chunks.unwrap_or(0), 0u64);
            pending.push(counts);
        }
        let mut needed: Vec<Option<Bits>> = (0..program.tensors.len()).map(|_| None).collect();
        let mut stack: Vec<(usize, u64)> = Vec::new();
        for &o in &program.outputs {
            if program.tensors[o].is_input {
                continue;
            }
            for flat in 0..self.stores[o].points().unwrap_or(0) {
                if !self.exists(o, &self.stores[o].point(flat)) {
                    continue;
                }
                stack.push((o, flat));
                while let Some((t, flat)) = stack.pop() {
                    if needed[t].is_none() {
                        let store = &self.stores[t];
                        let bits = store.points().and_then(|p| Bits::new(p, false));
                        match bits {
                            Some(bits) if store.check_fits(&program.tensors[t].name).is_ok() => needed[t] = Some(bits),
                            _ => return,
                        }
                    }
                    let bits = needed[t].as_mut().expect("allocated above");
                    if bits.get(flat as usize) {
                        continue;
                    }
                    bits.set(flat as usize);
                    let key = (t, self.stores[t].point(flat));
                    let Ok(b) = self.choose_branch(&key) else { continue };
                    let Ok(reads) = self.reads(&key, b) else { continue };
                    for (source, point) in reads {
                        if program.tensors[source].is_input {
                            continue;
                        }
                        let f = self.stores[source].index(&point);
                        if counted[source] {
                            pending[source][f / CHUNK] += 1;
                        }
                        if !needed[source].as_ref().is_some_and(|n| n.get(f)) {
                            stack.push((source, f as u64));
                        }
                    }
                }
            }
        }
        for (store, counts) in self.stores.iter_mut().zip(pending) {
            if !counts.is_empty() {
                store.set_pending(counts);
            }
        }
        self.counting = true;
    }

    /// The interval `[lo, hi)` of each source dimension of a range read at
    /// `key` (a point dimension gives `[p, p + 1)`), checked against the
    /// source's bounds unless empty.
    fn range_box(
        &self,
        key: &Key,
        source: usize,
        lower: &[tempo_passes::affine::AffineMap],
        upper: &[tempo_passes::affine::AffineMap],
        caps: &[tempo_passes::affine::AffineMap],
    ) -> Result<Vec<(i64, i64, bool)>, String> {
        let point = &key.1;
        let eval_error = |e: tempo_passes::affine::EvalError| format!("at {}: {}", self.point_name(key), e.0);
        let src = &self.program.tensors[source];
        let symbols = self.symbols(key.0, point);
        let mut intervals = Vec::new();
        for ((lo_map, hi_map), cap) in lower.iter().zip(upper).zip(caps) {
            let (lo, hi, is_range) =
                tempo_passes::affine::coordinate_interval(lo_map, hi_map, cap, point, &symbols).map_err(eval_error)?;
            intervals.push((lo, hi, is_range));
        }
        let corner: Vec<i64> = intervals.iter().map(|&(lo, _, _)| lo).collect();
        for (interval, &d) in intervals.iter_mut().zip(&src.domain) {
            let (lo, hi, _) = *interval;
            let bound = self.bound_of(source, &corner, d);
            if hi > lo && (lo < 0 || hi > bound) {
                return Err(self.program.out_of_bounds(
                    &format!("range read of '{}'", src.name),
                    &self.point_name(key),
                    d,
                    &format!("{} in {lo}..{hi}", self.program.dims[d].name),
                    bound,
                ));
            }
            interval.1 = hi.max(lo);
        }
        Ok(intervals)
    }

    /// Makes sure `root` is computed.
    fn demand(&mut self, root: Key) -> Result<(), String> {
        let frame = |key: &Key, stores: &[PointStore]| Frame {
            tensor: key.0 as u32,
            branch: u32::MAX,
            flat: stores[key.0].index(&key.1) as u64,
        };
        let mut stack = vec![frame(&root, &self.stores)];
        let mut made = Vec::new();
        while let Some(top) = stack.last_mut() {
            let tensor = top.tensor as usize;
            let key = (tensor, self.stores[tensor].point(top.flat));
            if self.known(&key) {
                stack.pop();
                continue;
            }
            let name = &self.program.tensors[tensor].name;
            if top.branch == u32::MAX {
                let (branch, needs) = self.expand(&key)?;
                top.branch = branch as u32;
                self.stores[tensor].set_busy(name, &key.1, true).map_err(|e| self.at_tensor(tensor, e))?;
                let cycle = |need: &Key| {
                    format!(
                        "point {} depends on itself (a cycle through reads that do not move in time)",
                        self.point_name(need)
                    )
                };
                let pushed = self.unknown_needs(needs, cycle)?;
                stack.extend(pushed.iter().map(|need| frame(need, &self.stores)));
            } else if top.branch & DATA_READS_MADE == 0 {
                // The ordinary reads are known: the data of the reads
                // through data can be computed, and the points they name
                // are needed next.
                top.branch |= DATA_READS_MADE;
                let needs = self.data_reads(&key, top.branch as usize & !(DATA_READS_MADE as usize))?;
                let cycle = |need: &Key| {
                    format!(
                        "point {} depends on itself through reads through data (the data has a cycle at {})",
                        self.point_name(need),
                        self.point_name(&key)
                    )
                };
                let pushed = self.unknown_needs(needs, cycle)?;
                stack.extend(pushed.iter().map(|need| frame(need, &self.stores)));
            } else {
                let branch = (top.branch & !DATA_READS_MADE) as usize;
                stack.pop();
                made.clear();
                let value = self.compute(&key, branch, &mut made)?;
                let stored = self.stores[tensor]
                    .set_busy(name, &key.1, false)
                    .and_then(|()| self.stores[tensor].put(name, &key.1, &value));
                stored.map_err(|e| self.at_tensor(tensor, e))?;
                // The reads are made: counted off (inputs count nothing).
                for &(source, flat) in &made {
                    self.stores[source].read_made(flat);
                }
            }
        }
        Ok(())
    }

    /// The points of `needs` not known yet, to evaluate next; one being
    /// evaluated already is a cycle, an error at its tensor (`cycle` says
    /// which).
    fn unknown_needs(&self, needs: Vec<Key>, cycle: impl Fn(&Key) -> String) -> Result<Vec<Key>, String> {
        let mut unknown = Vec::new();
        for need in needs {
            if self.known(&need) {
                continue;
            }
            if self.stores[need.0].is_busy(&need.1) {
                return Err(self.at_tensor(need.0, cycle(&need)));
            }
            unknown.push(need);
        }
        Ok(unknown)
    }

    fn input_point(&self, (tensor, point): &Key) -> Data {
        let array = self.inputs[tensor];
        let t = &self.program.tensors[*tensor];
        let size = t.point.num_elements();
        // The array's own extents (a stop may have shortened a dimension
        // below the extent the inputs were given at).
        let mut offset = 0usize;
        for (k, &c) in point.iter().enumerate() {
            offset = offset * array.shape.get(k).copied().unwrap_or(1) + c as usize;
        }
        slice(&array.data, offset * size, size)
    }

    /// The value of point `key` by branch `branch`; the reads it makes of
    /// stores that count them are added to `made` (tensor, row-major index).
    fn compute(&self, key: &Key, branch: usize, made: &mut Vec<(usize, usize)>) -> Result<Data, String> {
        let (tensor, _) = key;
        let live = &self.live[*tensor][branch];
        let mut values = self.evaluate(key, branch, live, made)?;
        let branch = &self.program.tensors[*tensor].branches[branch];
        let result = values.swap_remove(branch.result);
        let expected = static_shape(&self.program.tensors[*tensor].point);
        if result.shape != expected {
            return Err(self.at(
                branch.location,
                format!(
                    "at {}: the branch computes a value of shape {:?}, but the tensor's points have shape {expected:?}",
                    self.point_name(key),
                    result.shape
                ),
            ));
        }
        Ok(result.data)
    }

    /// The points the live reads through data of branch `b` name at `key`
    /// (in node order), each checked against its source's bounds (errors at
    /// the read): the nodes their coordinates come from are evaluated (the
    /// verifier makes sure they involve no read through data and no call).
    fn data_reads(&self, key: &Key, b: usize) -> Result<Vec<Key>, String> {
        let tensor = key.0;
        let branch = &self.program.tensors[tensor].branches[b];
        let live = &self.live[tensor][b];
        let reads: Vec<usize> = (0..branch.nodes.len())
            .filter(|&k| live[k] && matches!(branch.nodes[k].kind, NodeKind::ReadAt { .. }))
            .collect();
        if reads.is_empty() {
            return Ok(Vec::new());
        }
        let mut needed = vec![false; branch.nodes.len()];
        for &k in &reads {
            for a in tempo_passes::rewrite::operands(&branch.nodes[k].kind) {
                needed[a] = true;
            }
        }
        for k in (0..branch.nodes.len()).rev() {
            if needed[k] {
                for a in tempo_passes::rewrite::operands(&branch.nodes[k].kind) {
                    needed[a] = true;
                }
            }
        }
        let values = self.evaluate(key, b, &needed, &mut Vec::new())?;
        let mut needs = Vec::new();
        for k in reads {
            let node = &branch.nodes[k];
            let NodeKind::ReadAt { source, index, data } = &node.kind else { unreachable!("selected above") };
            let coords = self.data_coordinates(key, index, data, &values).map_err(|e| self.at(node.location, e))?;
            let what = format!("read through data of '{}'", self.program.tensors[*source].name);
            self.check_in_bounds(key, *source, &coords, &what, node.location)?;
            needs.push((*source, coords));
        }
        Ok(needs)
    }

    /// Whether `coords` is a point of `source`: otherwise an error at the
    /// read (at `location`, `what` it is) made at `key`.
    fn check_in_bounds(
        &self,
        key: &Key,
        source: usize,
        coords: &[i64],
        what: &str,
        location: Location<'c>,
    ) -> Result<(), String> {
        for (&c, &d) in coords.iter().zip(&self.program.tensors[source].domain) {
            let bound = self.bound_of(source, coords, d);
            if c < 0 || c >= bound {
                let at = format!("{} = {c}", self.program.dims[d].name);
                let message = self.program.out_of_bounds(what, &self.point_name(key), d, &at, bound);
                return Err(self.at(location, message));
            }
        }
        Ok(())
    }

    /// The coordinates a read through data names at `key`: `index` at the
    /// point's variables followed by the data values.
    fn data_coordinates(
        &self,
        key: &Key,
        index: &AffineMap,
        data: &[usize],
        values: &[Value],
    ) -> Result<Vec<i64>, String> {
        let mut variables = key.1.clone();
        for &k in data {
            variables.push(match &values[k].data {
                Data::I64(v) => v[0],
                Data::I32(v) => i64::from(v[0]),
                _ => unreachable!("the verifier checks coordinates are integers"),
            });
        }
        index
            .eval(&variables, &self.symbols(key.0, &key.1))
            .map_err(|e| format!("at {}: {}", self.point_name(key), e.0))
    }

    /// The values of the nodes of branch `branch` at `key` marked in `live`
    /// (the others are empty); the reads made of stores that count them
    /// are added to `made` (tensor, row-major index).
    fn evaluate(
        &self,
        key: &Key,
        branch: usize,
        live: &[bool],
        made: &mut Vec<(usize, usize)>,
    ) -> Result<Vec<Value>, String> {
        let (tensor, point) = key;
        let branch = &self.program.tensors[*tensor].branches[branch];
        let symbols = self.symbols(*tensor, point);
        let mut values: Vec<Value> = Vec::with_capacity(branch.nodes.len());
        for (node, &live) in branch.nodes.iter().zip(live) {
            if !live {
                // Not evaluated: no live node uses it.
                values.push(Value { shape: Vec::new(), data: Data::zeros(node.ty.element, 0) });
                continue;
            }
            let value = match &node.kind {
                NodeKind::Read { source, index } => {
                    let coords = index.eval(point, &symbols).expect("evaluated when expanded");
                    if self.counting {
                        made.push((*source, self.stores[*source].index(&coords)));
                    }
                    Value { shape: static_shape(&node.ty), data: self.value(&(*source, coords))? }
                }
                NodeKind::ReadAt { source, index, data } => {
                    let coords =
                        self.data_coordinates(key, index, data, &values).map_err(|e| self.at(node.location, e))?;
                    Value { shape: static_shape(&node.ty), data: self.value(&(*source, coords))? }
                }
                NodeKind::ReadRange { source, lower, upper, caps } => {
                    let intervals = self.range_box(key, *source, lower, upper, caps).expect("checked when expanded");
                    let points = points_in(&intervals);
                    if self.counting {
                        made.extend(points.iter().map(|p| (*source, self.stores[*source].index(p))));
                    }
                    let parts: Vec<Data> =
                        points.into_iter().map(|p| self.value(&(*source, p))).collect::<Result<_, _>>()?;
                    let mut shape: Vec<usize> =
                        intervals.iter().filter(|(_, _, r)| *r).map(|(lo, hi, _)| (hi - lo) as usize).collect();
                    shape.extend(static_shape(&self.program.tensors[*source].point));
                    Value { shape, data: concat(node.ty.element, &parts) }
                }
                NodeKind::Position(d) => {
                    let k = self.program.tensors[*tensor].domain.iter().position(|x| x == d);
                    let at = k.map_or(0, |k| point[k]);
                    Value { shape: Vec::new(), data: constant(&[at as f64], &[at], node.ty.element) }
                }
                NodeKind::Bound(d) => {
                    let bound = symbols[*d];
                    Value { shape: Vec::new(), data: constant(&[bound as f64], &[bound], node.ty.element) }
                }
                // The processes of the run (`crate::mpi`: one without a
                // launcher, several under `mpirun`).
                NodeKind::Rank | NodeKind::WorldSize => {
                    let world = crate::mpi::world().map_err(|e| self.at(node.location, e))?;
                    let n = if node.kind == NodeKind::Rank { world.rank } else { world.size } as i64;
                    Value { shape: Vec::new(), data: constant(&[n as f64], &[n], node.ty.element) }
                }
                NodeKind::AllReduce(kind, a) => {
                    let data = crate::mpi::all_reduce(*kind, &values[*a].data)
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?;
                    Value { shape: values[*a].shape.clone(), data }
                }
                NodeKind::Constant { values, integers, .. } => {
                    Value { shape: static_shape(&node.ty), data: constant(values, integers, node.ty.element) }
                }
                NodeKind::Unary(kind, a) => {
                    Value { shape: values[*a].shape.clone(), data: unary(*kind, &values[*a].data) }
                }
                NodeKind::Binary(kind, a, b) => {
                    let (x, y) = broadcast(&values[*a], &values[*b])
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?;
                    let data = binary(*kind, &x.data, &y.data)
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?;
                    Value { shape: x.shape, data }
                }
                NodeKind::Matmul(a, b) => matmul(&values[*a], &values[*b])
                    .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?,
                NodeKind::Reduce(kind, a, axis) => reduce(*kind, &values[*a], *axis),
                NodeKind::Compare(predicate, a, b) => {
                    let (x, y) = broadcast(&values[*a], &values[*b])
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?;
                    compare(*predicate, &x, &y)
                }
                NodeKind::Select(c, a, b) => select(&values[*c], &values[*a], &values[*b], node.ty.element)
                    .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?,
                NodeKind::Cast(a) => {
                    Value { shape: values[*a].shape.clone(), data: cast(&values[*a].data, node.ty.element) }
                }
                NodeKind::Move(movement, operands) => {
                    let inputs: Vec<&Value> = operands.iter().map(|&k| &values[k]).collect();
                    let input = inputs.first().map_or(&[][..], |v| v.shape.as_slice());
                    let out = moved_shape(movement, &node.ty, input);
                    move_elements(movement, &inputs, &out, node.ty.element)
                }
                NodeKind::DynamicSlice(a, offsets) => {
                    let located = |e: String| self.at(node.location, format!("at {}: {e}", self.point_name(key)));
                    let at = offsets.eval(point, &symbols).map_err(|e| located(e.0))?;
                    let operand = &values[*a];
                    let size = static_shape(&node.ty);
                    let inside =
                        at.iter().zip(&size).zip(&operand.shape).all(|((&o, &n), &m)| o >= 0 && o as usize + n <= m);
                    if !inside {
                        return Err(located(format!(
                            "the slice at offsets {at:?} of shape {size:?} is not inside the operand of shape {:?}",
                            operand.shape
                        )));
                    }
                    move_elements(&Movement::Slice(at), &[operand], &size, node.ty.element)
                }
                NodeKind::Einsum(spec, operands) => {
                    let inputs: Vec<&Value> = operands.iter().map(|&k| &values[k]).collect();
                    einsum(spec, &inputs)
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?
                }
                NodeKind::Attention(spec, [q, k, v, scale]) => {
                    attention(spec, &values[*q], &values[*k], &values[*v], &values[*scale])
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?
                }
                NodeKind::FlashAttention(spec, operands) => {
                    let inputs: Vec<&Value> = operands.iter().map(|&k| &values[k]).collect();
                    flash_attention(spec, &inputs)
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?
                }
                NodeKind::Gather(table, indices) => gather(&values[*table], &values[*indices]),
                NodeKind::Random { seed, normal } => random(*seed, *normal, point, &node.ty),
                NodeKind::Call { callee, args, .. } => {
                    let arrays: Vec<HostArray> = args
                        .iter()
                        .enumerate()
                        .map(|(k, &a)| HostArray {
                            name: format!("arg{k}"),
                            shape: values[a].shape.clone(),
                            data: values[a].data.clone(),
                        })
                        .collect();
                    let result = self
                        .externals
                        .call(callee, &node.ty, &arrays)
                        .map_err(|e| self.at(node.location, format!("at {}: {e}", self.point_name(key))))?;
                    Value { shape: result.shape, data: result.data }
                }
            };
            values.push(value);
        }
        Ok(values)
    }
}

mod store;
#[cfg(test)]
mod tests;
mod values;
pub use values::slice;
use values::*;
