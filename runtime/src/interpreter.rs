//! The reference interpreter: evaluates a temporal program literally, the
//! oracle every compiled result is compared with.
//!
//! Demand-driven and memoized, following `semantics.md`: an output needs
//! every point of its domain; a point is defined by the first branch whose
//! condition holds there; a branch needs the points its reads name. Within
//! a branch, demand starts at the result and the external calls: an op
//! whose value reaches neither is not evaluated (a dead read names no
//! point, so it is never out of bounds or undefined; see "Evaluation is
//! demand-driven" in `dialects/README.md`). Points
//! are evaluated with an explicit stack (no recursion, so long recurrences do
//! not overflow), in any number of dimensions. A point demanded while it is
//! being computed is a cycle, a read outside `[0, bound)` or a needed point
//! with no branch is an error naming tensor and point.
//!
//! Computed points live in one dense row-major array per tensor (allocated
//! when the tensor is first written, after checking that it fits in memory)
//! with a bit per point for "computed" and one for "in progress", so a
//! scalar point costs its element bytes plus two bits.
//!
//! It shares nothing with the lowering: only the program model.

use crate::array::{Data, HostArray};
use crate::externals::Externals;
use crate::memory::{bytes_of, check_fits};
use melior::ir::Location;
use std::collections::HashMap;
use tempo_passes::bits::Bits;
use tempo_passes::diagnostics::render_location;
use tempo_passes::program::{
    Attention, BinaryKind, DYNAMIC, Einsum, ElementType, Movement, NodeKind, PointType, Program, ReduceKind, UnaryKind,
};
use tempo_passes::temporal_dce::live_nodes;

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
    let mut interpreter = Interpreter::new(program, bounds, inputs, externals, source_name);
    for &o in &program.outputs {
        let extents: Vec<i64> = program.tensors[o].domain.iter().map(|&d| bounds[d]).collect();
        let mut point = vec![0i64; extents.len()];
        if extents.iter().all(|&e| e > 0) {
            loop {
                interpreter.demand((o, point.clone()))?;
                if !next_point(&mut point, &extents) {
                    break;
                }
            }
        }
    }
    let mut outputs = Vec::new();
    for &o in &program.outputs {
        let tensor = &program.tensors[o];
        let mut shape: Vec<usize> = tensor.domain.iter().map(|&d| bounds[d] as usize).collect();
        shape.extend(tensor.point.shape.iter().map(|&d| d as usize));
        let data = if tensor.is_input {
            interpreter.inputs[&o].data.clone()
        } else {
            match interpreter.stores[o].data.take() {
                Some(data) => data,
                // No point at all (a zero bound): an empty array.
                None => Data::zeros(tensor.point.element, 0),
            }
        };
        outputs.push(HostArray { name: tensor.name.clone(), shape, data });
    }
    Ok(outputs)
}

/// Advances `point` to the next point of the box `[0, extents)` in
/// row-major order; false after the last one.
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

/// The computed points of one tensor: a dense row-major array over its
/// whole domain, allocated on the first write, and two bits per point.
struct DenseStore {
    extents: Vec<i64>,
    point_len: usize,
    element: ElementType,
    data: Option<Data>,
    done: Bits,
    busy: Bits,
}

impl DenseStore {
    fn new(extents: Vec<i64>, point_len: usize, element: ElementType) -> Self {
        Self { extents, point_len, element, data: None, done: Bits::default(), busy: Bits::default() }
    }

    /// Row-major index of `point` (in bounds: reads are checked before).
    fn index(&self, point: &[i64]) -> usize {
        point.iter().zip(&self.extents).fold(0usize, |acc, (&c, &e)| acc * e as usize + c as usize)
    }

    fn is_done(&self, point: &[i64]) -> bool {
        self.done.get(self.index(point))
    }

    fn is_busy(&self, point: &[i64]) -> bool {
        self.busy.get(self.index(point))
    }

    /// Allocates the array and bitsets, after checking they fit in memory.
    fn allocate(&mut self, name: &str) -> Result<(), String> {
        if self.data.is_some() {
            return Ok(());
        }
        let points = self.extents.iter().try_fold(1u64, |acc, &e| acc.checked_mul(e as u64));
        let bytes = points.and_then(|p| {
            let bits = p.div_ceil(64).checked_mul(16)?;
            bytes_of([p, self.point_len as u64], self.element.byte_size() as u64)?.checked_add(bits)
        });
        check_fits(bytes, &format!("the interpreter's store of every point of '{name}'"))?;
        let points = points.unwrap_or(0);
        let cannot = || format!("cannot allocate the interpreter's store of '{name}'");
        let done = Bits::new(points, false).ok_or_else(cannot)?;
        let busy = Bits::new(points, false).ok_or_else(cannot)?;
        let len = usize::try_from(points)
            .ok()
            .and_then(|p| p.checked_mul(self.point_len))
            .ok_or_else(|| format!("the store of '{name}' is too large"))?;
        self.data = Some(
            Data::try_zeros(self.element, len)
                .map_err(|e| format!("the interpreter's store of every point of '{name}': {e}"))?,
        );
        self.done = done;
        self.busy = busy;
        Ok(())
    }

    fn set_busy(&mut self, name: &str, point: &[i64], on: bool) -> Result<(), String> {
        self.allocate(name)?;
        let i = self.index(point);
        self.busy.put(i, on);
        Ok(())
    }

    fn put(&mut self, name: &str, point: &[i64], value: &Data) -> Result<(), String> {
        self.allocate(name)?;
        let i = self.index(point);
        let written = match &mut self.data {
            Some(data) => value.len() == self.point_len && data.write_at(i * self.point_len, value),
            None => false,
        };
        if !written {
            return Err(format!(
                "a point of '{name}' has {} {} elements, but the tensor's points have {} {} elements",
                value.len(),
                value.element().numpy(),
                self.point_len,
                self.element.numpy()
            ));
        }
        self.done.set(i);
        Ok(())
    }

    fn get(&self, point: &[i64]) -> Data {
        match &self.data {
            Some(data) => slice(data, self.index(point) * self.point_len, self.point_len),
            None => Data::zeros(self.element, self.point_len),
        }
    }
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

struct Interpreter<'p, 'c> {
    program: &'p Program<'c>,
    bounds: &'p [i64],
    /// Input arrays by tensor index.
    inputs: HashMap<usize, &'p HostArray>,
    /// Computed points, one dense store per tensor (unused for inputs).
    stores: Vec<DenseStore>,
    externals: &'p Externals,
    source_name: &'p str,
    /// Per tensor and branch, the nodes whose values reach the branch's
    /// result or an external call: the only ones evaluated.
    live: Vec<Vec<Vec<bool>>>,
}

struct Frame {
    key: Key,
    /// The chosen branch, once expanded.
    branch: Option<usize>,
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
            .map(|t| {
                let extents = t.domain.iter().map(|&d| bounds[d]).collect();
                DenseStore::new(extents, t.point.num_elements(), t.point.element)
            })
            .collect();
        Self {
            program,
            bounds,
            inputs: input_tensors.zip(inputs.iter().copied()).collect(),
            stores,
            externals,
            source_name,
            live: program.tensors.iter().map(|t| t.branches.iter().map(live_nodes).collect()).collect(),
        }
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
    fn value(&self, key: &Key) -> Data {
        if self.program.tensors[key.0].is_input { self.input_point(key) } else { self.stores[key.0].get(&key.1) }
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
        let (tensor, point) = key;
        let t = &self.program.tensors[*tensor];
        let eval_error = |location: Location<'c>| {
            move |e: tempo_passes::affine::EvalError| self.at(location, format!("at {}: {}", self.point_name(key), e.0))
        };
        let mut chosen = None;
        for (b, branch) in t.branches.iter().enumerate() {
            if branch.when.contains(point, self.bounds).map_err(eval_error(branch.location))? {
                chosen = Some(b);
                break;
            }
        }
        let Some(b) = chosen else {
            return Err(self.at_tensor(
                *tensor,
                format!("point {} is needed but no branch of '{}' defines it", self.point_name(key), t.name),
            ));
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
                let coords = index.eval(point, self.bounds).map_err(eval_error(node.location))?;
                let src = &self.program.tensors[*source];
                for (&c, &d) in coords.iter().zip(&src.domain) {
                    if c < 0 || c >= self.bounds[d] {
                        return Err(self.at(
                            node.location,
                            self.program.out_of_bounds(
                                &format!("read {}", self.program.describe_read(*tensor, *source, index)),
                                &self.point_name(key),
                                d,
                                &format!("{} = {c}", self.program.dims[d].name),
                                self.bounds[d],
                            ),
                        ));
                    }
                }
                needs.push((*source, coords));
            }
        }
        Ok((b, needs))
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
        let mut intervals = Vec::new();
        for (((lo_map, hi_map), cap), &d) in lower.iter().zip(upper).zip(caps).zip(&src.domain) {
            let (lo, hi, is_range) = tempo_passes::affine::coordinate_interval(lo_map, hi_map, cap, point, self.bounds)
                .map_err(eval_error)?;
            if hi > lo && (lo < 0 || hi > self.bounds[d]) {
                return Err(self.program.out_of_bounds(
                    &format!("range read of '{}'", src.name),
                    &self.point_name(key),
                    d,
                    &format!("{} in {lo}..{hi}", self.program.dims[d].name),
                    self.bounds[d],
                ));
            }
            intervals.push((lo, hi.max(lo), is_range));
        }
        Ok(intervals)
    }

    /// Makes sure `root` is computed.
    fn demand(&mut self, root: Key) -> Result<(), String> {
        let mut stack = vec![Frame { key: root, branch: None }];
        while let Some(frame) = stack.last_mut() {
            if self.known(&frame.key) {
                stack.pop();
                continue;
            }
            let tensor = frame.key.0;
            let name = &self.program.tensors[tensor].name;
            match frame.branch {
                None => {
                    let (branch, needs) = self.expand(&frame.key)?;
                    frame.branch = Some(branch);
                    let key = frame.key.clone();
                    self.stores[tensor].set_busy(name, &key.1, true).map_err(|e| self.at_tensor(tensor, e))?;
                    for need in needs {
                        if self.known(&need) {
                            continue;
                        }
                        if self.stores[need.0].is_busy(&need.1) {
                            return Err(self.at_tensor(
                                need.0,
                                format!(
                                    "point {} depends on itself (a cycle through reads that do not move in time)",
                                    self.point_name(&need)
                                ),
                            ));
                        }
                        stack.push(Frame { key: need, branch: None });
                    }
                }
                Some(branch) => {
                    let key = stack.pop().expect("non-empty").key;
                    let value = self.compute(&key, branch)?;
                    let name = &self.program.tensors[key.0].name;
                    let stored = self.stores[key.0]
                        .set_busy(name, &key.1, false)
                        .and_then(|()| self.stores[key.0].put(name, &key.1, &value));
                    stored.map_err(|e| self.at_tensor(key.0, e))?;
                }
            }
        }
        Ok(())
    }

    fn input_point(&self, (tensor, point): &Key) -> Data {
        let array = self.inputs[tensor];
        let t = &self.program.tensors[*tensor];
        let size = t.point.num_elements();
        let mut offset = 0usize;
        for (&d, &c) in t.domain.iter().zip(point) {
            offset = offset * self.bounds[d] as usize + c as usize;
        }
        slice(&array.data, offset * size, size)
    }

    fn compute(&self, key: &Key, branch: usize) -> Result<Data, String> {
        let (tensor, point) = key;
        let live = &self.live[*tensor][branch];
        let branch = &self.program.tensors[*tensor].branches[branch];
        let mut values: Vec<Value> = Vec::with_capacity(branch.nodes.len());
        let static_shape = |t: &PointType| t.shape.iter().map(|&d| d as usize).collect::<Vec<_>>();
        for (node, &live) in branch.nodes.iter().zip(live) {
            if !live {
                // Not evaluated: no live node uses it.
                values.push(Value { shape: Vec::new(), data: Data::zeros(node.ty.element, 0) });
                continue;
            }
            let value = match &node.kind {
                NodeKind::Read { source, index } => {
                    let coords = index.eval(point, self.bounds).expect("evaluated when expanded");
                    Value { shape: static_shape(&node.ty), data: self.value(&(*source, coords)) }
                }
                NodeKind::ReadRange { source, lower, upper, caps } => {
                    let intervals = self.range_box(key, *source, lower, upper, caps).expect("checked when expanded");
                    let parts: Vec<Data> =
                        points_in(&intervals).into_iter().map(|p| self.value(&(*source, p))).collect();
                    let mut shape: Vec<usize> =
                        intervals.iter().filter(|(_, _, r)| *r).map(|(lo, hi, _)| (hi - lo) as usize).collect();
                    shape.extend(static_shape(&self.program.tensors[*source].point));
                    Value { shape, data: concat(node.ty.element, &parts) }
                }
                NodeKind::Constant { values, .. } => {
                    Value { shape: static_shape(&node.ty), data: constant(values, node.ty.element) }
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
                    let flags = (0..x.data.len())
                        .map(|k| {
                            let ordering = match (&x.data, &y.data) {
                                (Data::I32(p), Data::I32(q)) => Some(p[k].cmp(&q[k])),
                                (Data::I64(p), Data::I64(q)) => Some(p[k].cmp(&q[k])),
                                (Data::F32(p), Data::F32(q)) => p[k].partial_cmp(&q[k]),
                                (Data::F64(p), Data::F64(q)) => p[k].partial_cmp(&q[k]),
                                _ => unreachable!("the verifier checks compared types"),
                            };
                            // Ordered comparisons: false when a NaN is involved.
                            ordering.is_some_and(|o| predicate.holds(o)) as u8
                        })
                        .collect();
                    Value { shape: x.shape, data: Data::Bool(flags) }
                }
                NodeKind::Select(c, a, b) => {
                    let located = |e: String| self.at(node.location, format!("at {}: {e}", self.point_name(key)));
                    let shape =
                        broadcast_shape(&[&values[*c].shape, &values[*a].shape, &values[*b].shape]).map_err(located)?;
                    let (condition, x, y) = (
                        broadcast_to(&values[*c], &shape),
                        broadcast_to(&values[*a], &shape),
                        broadcast_to(&values[*b], &shape),
                    );
                    let Data::Bool(flags) = &condition.data else { unreachable!("the verifier checks the condition") };
                    let parts: Vec<Data> = flags
                        .iter()
                        .enumerate()
                        .map(|(k, &f)| slice(if f != 0 { &x.data } else { &y.data }, k, 1))
                        .collect();
                    Value { shape, data: concat(node.ty.element, &parts) }
                }
                NodeKind::Cast(a) => {
                    Value { shape: values[*a].shape.clone(), data: cast(&values[*a].data, node.ty.element) }
                }
                NodeKind::Move(movement, operands) => {
                    let inputs: Vec<&Value> = operands.iter().map(|&k| &values[k]).collect();
                    // Dynamic sizes of a reshape or expand come from the operand.
                    let out: Vec<usize> = match movement {
                        Movement::Reshape => {
                            let input = &inputs[0].shape;
                            let known: usize =
                                node.ty.shape.iter().filter(|&&d| d != DYNAMIC).map(|&d| d as usize).product();
                            let total: usize = input.iter().product();
                            node.ty
                                .shape
                                .iter()
                                .map(|&d| if d == DYNAMIC { total.checked_div(known).unwrap_or(0) } else { d as usize })
                                .collect()
                        }
                        Movement::Expand => {
                            let input = &inputs[0].shape;
                            let skip = node.ty.shape.len() - input.len();
                            node.ty
                                .shape
                                .iter()
                                .enumerate()
                                .map(|(k, &d)| if d == DYNAMIC { input[k - skip] } else { d as usize })
                                .collect()
                        }
                        _ => static_shape(&node.ty),
                    };
                    move_elements(movement, &inputs, &out, node.ty.element)
                }
                NodeKind::DynamicSlice(a, offsets) => {
                    let located = |e: String| self.at(node.location, format!("at {}: {e}", self.point_name(key)));
                    let at = offsets.eval(point, self.bounds).map_err(|e| located(e.0))?;
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
}

mod values;
use values::*;
