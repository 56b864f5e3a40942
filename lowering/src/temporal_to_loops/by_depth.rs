//! Reads through data in `lower-temporal-to-loops`, and the nests of data
//! groups (cycles through such reads, [`tempo_passes::data_reads`]), which
//! run depth by depth.
//!
//! A read through data loads its coordinate operands, computes the
//! coordinates with `arith` ops (the values are data, not affine), checks
//! each against its bound (a run-time error of the read's site,
//! `tempo_data_read_error`, reported after the run) and clamps it so that
//! memory is never touched out of the store.
//!
//! A data group's nest (one loop over its dimension `n` in the schedule)
//! becomes:
//! 1. a loop over every point `p` of `n` writing, per tensor of the group,
//!    the branch that defines it (its conditions evaluated) and, per read
//!    through data of the group (a *column*), the coordinate it reads: its
//!    coordinate operands computed by the ops they come from, alone (they
//!    read nothing of the group, `data_groups` checks it), then its map;
//! 2. a call of the runtime's `tempo_depth_order`, which checks every
//!    coordinate a taken read names, computes each point's depth (0 where
//!    no read through data of the group is taken, else one more than the
//!    deepest point read), refuses cycles in the data, and orders the
//!    points by depth, then by the branches they take: *segments* of points
//!    of one depth and one choice of branches;
//! 3. a loop over the segments, in order, computing their points. Points
//!    of one segment do not read each other (they have the same depth), so
//!    they may run in any order or together.

use super::views::{View, view_type};
use super::{Built, Emitter};
use crate::ir_builder::{Builder, Compare, Extent, declare};
use melior::ir::{Value, r#type::MemRefType};
use tempo_passes::data_reads::{DataGroup, read_sites};
use tempo_passes::program::{DYNAMIC, ElementType, Node, NodeKind, PointType};

/// The runtime's function ordering a data group's points by depth.
pub const DEPTH_ORDER: &str = "tempo_depth_order";
/// The runtime's function recording a read through data out of bounds.
pub const DATA_READ_ERROR: &str = "tempo_data_read_error";

/// The points of (a chunk of) one segment of a data group, computed
/// together: the group's dimension, its points in order (`memref<?xi64>`),
/// and the chunk's first position in that order and number of points.
#[derive(Clone, Copy)]
pub(super) struct Batch<'c, 'a> {
    pub dim: usize,
    pub order: Value<'c, 'a>,
    pub low: Value<'c, 'a>,
    pub count: Value<'c, 'a>,
    /// The most points a batch has.
    pub rows: i64,
}

/// The bytes of a batch's widest value (see [`Emitter::by_depth`]).
const CHUNK_BYTES: i64 = 1 << 18;
const MIN_CHUNK_ROWS: i64 = 16;
/// Segments of fewer points run one point at a time. Measured warm
/// (`tempo-run --repeat`) on the TreeLSTM, BiRNN and nested RNN of
/// `bench/dynamic` at hidden sizes 64 and 256, batching pays off from two
/// points on (a BiRNN of 8 sequences at H = 256: 1.5 ms batching every
/// segment of 2 or more, 4.2 ms batching only those of 32 or more).
const MIN_BATCH: i64 = 2;
const MAX_CHUNK_ROWS: i64 = 4096;

/// One read through data of a group's tensor of another (or the same)
/// tensor of the group.
struct Column {
    /// Position of the reading tensor in the group's order.
    member: usize,
    /// The reading tensor, its branch and the read's node there.
    tensor: usize,
    branch: usize,
    node: usize,
    /// The read's number among the program's reads through data.
    site: usize,
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// The view of the point a read through data (`node`, with the views
    /// of its branch so far in `views`) names at the reader's variables
    /// `reader_dims`.
    pub(super) fn read_at_view(
        &mut self,
        node: &Node<'c>,
        nodes: &[Node<'c>],
        views: &[super::values::NodeValue<'c, 'a>],
        reader_dims: &[Value<'c, 'a>],
        b: &Builder<'c, 'a>,
    ) -> Built<View<'c, 'a>> {
        let NodeKind::ReadAt { source, index, data } = &node.kind else {
            return Err("compiler fault: a read through data expected".into());
        };
        if self.options.gpu {
            return Err("not yet: reads through data on the GPU target".into());
        }
        let program = self.program;
        let site = read_sites(program)
            .iter()
            .position(|&(t, k, n)| std::ptr::eq(&program.tensors[t].branches[k].nodes[n], node))
            .unwrap_or(usize::MAX);
        let mut dims = reader_dims.to_vec();
        for &a in data {
            let element = match nodes[a].ty.element {
                ElementType::I32 => b.integer_type(32),
                _ => b.integer_type(64),
            };
            let value = b.load(views[a].view()?.value, &[], element)?;
            dims.push(b.index_cast(value, b.index_type())?);
        }
        let word = b.integer_type(64);
        declare(b.module()?, DATA_READ_ERROR, &[word, word, word, word], &[])?;
        let src = &program.tensors[*source];
        let mut coords = Vec::new();
        for (k, (expr, &d)) in index.results.iter().zip(&src.domain).enumerate() {
            let c = b.arith_expr(expr, &dims, &self.function.bound_args)?;
            let below = b.compare(Compare::Slt, c, self.function.zero_index)?;
            let above = b.compare(Compare::Sgt, c, self.function.last_index[d])?;
            let outside = b.arith("ori", below, above)?;
            let (then, _) = b.scf_if_else(outside, false)?;
            let args = [
                then.i64(site as i64)?,
                then.i64(k as i64)?,
                then.index_cast(c, word)?,
                then.index_cast(self.function.bound_args[d], word)?,
            ];
            then.call(DATA_READ_ERROR, &args, &[])?;
            coords.push(self.clamp(c, self.function.zero_index, self.function.last_index[d], b)?);
        }
        let value = self.point_view(*source, &coords, false, b)?;
        Ok(View::fixed(value, &node.ty))
    }

    /// Computes the points of tensor `t` of `batch` by `branch` (batched,
    /// [`tempo_passes::temporal_vectorize::batched_branch`]) into a buffer
    /// of the batch's rows, then writes each row to its point's slot.
    fn batched_tensor(
        &mut self,
        t: usize,
        branch: &tempo_passes::program::Branch<'c>,
        batch: Batch<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let program = self.program;
        let tensor = &program.tensors[t];
        self.enter(branch.location, &format!("a definition of '{}'", tensor.name));
        let b = b.at(branch.location);
        let point = &tensor.point;
        let rows_type = PointType {
            shape: std::iter::once(DYNAMIC).chain(point.shape.iter().copied()).collect(),
            element: point.element,
        };
        self.nest.batch = Some(batch);
        let slot = self.batch_buffer(&rows_type, &b)?;
        let built = self.body_of(branch, &[], slot.value, &b);
        self.nest.batch = None;
        built?;
        let (each, j) = b.scf_for(b.index(0)?, batch.count, b.index(1)?)?;
        let at = each.arith("addi", batch.low, j)?;
        let p = each.index_cast(each.load(batch.order, &[at], each.integer_type(64))?, each.index_type())?;
        let target = self.point_view(t, &[p], true, &each)?;
        let row = self.row(slot.value, j, point, &each)?;
        each.copy(row, target)?;
        if self.in_store(t) {
            self.seal(t, &[p], &each)?;
        }
        Ok(())
    }

    /// A buffer of `rows` (`[?, point...]`) for the current batch: a global
    /// of as many rows as a chunk has at most (zeros in the program's data,
    /// so that its pages are touched once, not at every run), viewed at the
    /// batch's size.
    pub(super) fn batch_buffer(&mut self, rows: &PointType, b: &Builder<'c, 'a>) -> Built<View<'c, 'a>> {
        let batch = self.nest.batch.ok_or("compiler fault: a batch buffer outside a batch")?;
        let entry = self.function.entry.at(b.location);
        let name = format!("tempo_batch_{}", self.fresh_id());
        let shape: Vec<i64> = std::iter::once(batch.rows).chain(rows.shape[1..].iter().copied()).collect();
        let element = super::views::element_type(self.context, rows.element);
        let ty = crate::ir_builder::declare_zero_buffer(self.function.globals.module()?, &name, element, &shape)?;
        let buffer = entry.global(&name, ty)?;
        let sizes: Vec<Extent<'c, 'a>> = std::iter::once(Extent::Value(batch.count))
            .chain(rows.shape[1..].iter().map(|&s| Extent::Static(s)))
            .collect();
        let zeros = vec![Extent::Static(0); sizes.len()];
        // Row-major, at offset 0 (the point's sizes are static).
        let dims: Vec<i64> = std::iter::once(super::views::UNKNOWN).chain(rows.shape[1..].iter().copied()).collect();
        let mut strides = vec![1i64; dims.len()];
        for k in (0..dims.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * dims[k + 1];
        }
        let element = super::views::element_type(self.context, rows.element);
        let ty = super::views::strided(self.context, element, &dims, &strides, 0);
        let value = b.subview(buffer, &zeros, &sizes, ty)?;
        Ok(View { value, sizes })
    }

    /// Row `j` of `rows` (a view `[?, point...]`), as a point view.
    fn row(
        &self,
        rows: Value<'c, 'a>,
        j: Value<'c, 'a>,
        point: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let offsets: Vec<Extent<'c, 'a>> =
            std::iter::once(Extent::Value(j)).chain(point.shape.iter().map(|_| Extent::Static(0))).collect();
        let sizes: Vec<Extent<'c, 'a>> =
            std::iter::once(Extent::Static(1)).chain(point.shape.iter().map(|&s| Extent::Static(s))).collect();
        b.subview(rows, &offsets, &sizes, view_type(self.context, point))
    }

    /// The points of `source` the batch reads, one row each: at the batch's
    /// own points, or at the points `data` (a view of the batch's
    /// coordinates, of integer type `element`) names.
    pub(super) fn gather(
        &mut self,
        source: usize,
        data: Option<(Value<'c, 'a>, ElementType)>,
        rows: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<View<'c, 'a>> {
        let batch = self.nest.batch.ok_or("compiler fault: a gather outside a batch")?;
        let view = self.batch_buffer(rows, b)?;
        let word = b.integer_type(64);
        let (each, j) = b.scf_for(b.index(0)?, batch.count, b.index(1)?)?;
        let p = match data {
            None => each.load(batch.order, &[each.arith("addi", batch.low, j)?], word)?,
            Some((values, ElementType::I32)) => {
                each.convert("arith.extsi", each.load(values, &[j], each.integer_type(32))?, word)?
            }
            Some((values, _)) => each.load(values, &[j], word)?,
        };
        let p = each.index_cast(p, each.index_type())?;
        // Coordinates through data were checked before the group ran;
        // clamping keeps every access inside the store regardless.
        let p = self.clamp(p, self.function.zero_index, self.function.last_index[batch.dim], &each)?;
        let point = PointType { shape: rows.shape[1..].to_vec(), element: rows.element };
        let from = self.point_view(source, &[p], false, &each)?;
        let to = self.row(view.value, j, &point, &each)?;
        each.copy(from, to)?;
        Ok(view)
    }

    /// The batch's positions along its dimension, as values of `ty` (`[?]`).
    pub(super) fn batch_positions(&mut self, ty: &PointType, b: &Builder<'c, 'a>) -> Built<View<'c, 'a>> {
        let batch = self.nest.batch.ok_or("compiler fault: positions outside a batch")?;
        let view = self.batch_buffer(ty, b)?;
        let word = b.integer_type(64);
        let (each, j) = b.scf_for(b.index(0)?, batch.count, b.index(1)?)?;
        let p = each.load(batch.order, &[each.arith("addi", batch.low, j)?], word)?;
        let element = super::views::element_type(self.context, ty.element);
        let value = match ty.element {
            ElementType::I64 => p,
            ElementType::I32 | ElementType::I1 => each.convert("arith.trunci", p, element)?,
            ElementType::F32 | ElementType::F64 => each.convert("arith.sitofp", p, element)?,
        };
        each.store(value, view.value, &[j])?;
        Ok(view)
    }

    /// The live reads through data of `group` between its tensors.
    fn columns(&self, group: &DataGroup) -> Vec<Column> {
        let program = self.program;
        let sites = read_sites(program);
        let mut columns = Vec::new();
        for (member, &t) in group.tensors.iter().enumerate() {
            for (k, branch) in program.tensors[t].branches.iter().enumerate() {
                let live = tempo_passes::rewrite::live_nodes(branch);
                for (n, node) in branch.nodes.iter().enumerate() {
                    if let NodeKind::ReadAt { source, .. } = &node.kind
                        && live[n]
                        && group.contains(*source)
                    {
                        let site = sites.iter().position(|&s| s == (t, k, n)).unwrap_or(usize::MAX);
                        columns.push(Column { member, tensor: t, branch: k, node: n, site });
                    }
                }
            }
        }
        columns
    }

    /// The coordinate read `column` names at the current point (an index):
    /// its data operands computed by the ops they come from (which read
    /// nothing of the group, `data_groups` checks), then its index map.
    fn column_coordinate(&mut self, column: &Column, d: usize, b: &Builder<'c, 'a>) -> Built<Value<'c, 'a>> {
        let program = self.program;
        let branch = &program.tensors[column.tensor].branches[column.branch];
        let NodeKind::ReadAt { index, data, .. } = &branch.nodes[column.node].kind else {
            return Err("compiler fault: a column that is not a read through data".into());
        };
        let mut dims = vec![self.nest.index_of[&d]];
        for &a in data {
            // The ops `a` is computed from, alone, as a branch of its own.
            let mut needed = vec![false; a + 1];
            needed[a] = true;
            for k in (0..=a).rev() {
                if needed[k] {
                    tempo_passes::rewrite::operands(&branch.nodes[k].kind).into_iter().for_each(|o| needed[o] = true);
                }
            }
            let mut renumbered = vec![usize::MAX; a + 1];
            let mut nodes = Vec::new();
            for k in (0..=a).filter(|&k| needed[k]) {
                renumbered[k] = nodes.len();
                let mut node = branch.nodes[k].clone();
                node.kind = tempo_passes::rewrite::map_operands(&node.kind, |o| renumbered[o]);
                nodes.push(node);
            }
            let result = nodes.len() - 1;
            let ty = nodes[result].ty.clone();
            let alone =
                tempo_passes::program::Branch { when: branch.when.clone(), nodes, result, location: branch.location };
            let slot = self.static_buffer(&ty, b)?;
            self.body_of(&alone, &[d], slot.value, b)?;
            let element = if ty.element == ElementType::I32 { b.integer_type(32) } else { b.integer_type(64) };
            let value = b.load(slot.value, &[], element)?;
            dims.push(b.index_cast(value, b.index_type())?);
        }
        let expr = index.results.first().ok_or("compiler fault: a read through data without a coordinate")?;
        b.arith_expr(expr, &dims, &self.function.bound_args)
    }

    /// Builds the nest of data group `group` (see the module's doc).
    pub(super) fn by_depth(&mut self, group: &DataGroup, b: &Builder<'c, 'a>) -> Built<()> {
        if self.options.gpu {
            return Err("not yet: cycles through reads through data on the GPU target".into());
        }
        let program = self.program;
        let d = group.dim;
        let n = self.function.bound_args[d];
        let columns = self.columns(group);
        let word = b.integer_type(64);
        let index = b.index_type();
        let buffer_type = MemRefType::new(word, &[i64::MIN], None, None).into();
        let (zero, one) = (b.index(0)?, b.index(1)?);
        let mut buffers = Vec::new();
        let mut alloc = |size: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
            let buffer = b.alloc(buffer_type, &[size])?;
            buffers.push(buffer);
            Ok(buffer)
        };
        let branch_ids: Vec<Value<'c, 'a>> = group.tensors.iter().map(|_| alloc(n)).collect::<Built<_>>()?;
        let targets: Vec<Value<'c, 'a>> = columns.iter().map(|_| alloc(n)).collect::<Built<_>>()?;
        let order = alloc(n)?;
        let three = b.index(3)?;
        let segments = alloc(b.arith("muli", n, three)?)?;
        // The table of the runtime call: counts, then per column (member,
        // branch, coordinates' address, site), then per tensor (branches'
        // address, number of branches).
        let entries = 2 + 4 * columns.len() + 2 * group.tensors.len();
        let table_type = MemRefType::new(word, &[entries as i64], None, None).into();
        let table = b.alloc(table_type, &[])?;
        let address = |buffer: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
            let raw = b.value("memref.extract_aligned_pointer_as_index", &[buffer], index, &[])?;
            b.index_cast(raw, word)
        };
        let mut entries: Vec<Value<'c, 'a>> = vec![b.i64(columns.len() as i64)?, b.i64(group.tensors.len() as i64)?];
        for (c, column) in columns.iter().enumerate() {
            entries.push(b.i64(column.member as i64)?);
            entries.push(b.i64(column.branch as i64)?);
            entries.push(address(targets[c])?);
            entries.push(b.i64(column.site as i64)?);
        }
        for (m, &t) in group.tensors.iter().enumerate() {
            entries.push(address(branch_ids[m])?);
            entries.push(b.i64(program.tensors[t].branches.len() as i64)?);
        }
        for (k, &value) in entries.iter().enumerate() {
            b.store(value, table, &[b.index(k as i64)?])?;
        }
        let saved = std::mem::replace(&mut self.nest.arith_indices, true);
        // 1. Branches and coordinates of every point.
        let (each, p) = b.scf_for(zero, n, one)?;
        self.nest.index_of.insert(d, p);
        for (m, &t) in group.tensors.iter().enumerate() {
            let branches = &program.tensors[t].branches;
            let mut chosen = each.i64(branches.len() as i64)?;
            for (k, branch) in branches.iter().enumerate().rev() {
                let holds = each.arith_set(&branch.when, &[p], &self.function.bound_args)?;
                chosen = each.select(holds, each.i64(k as i64)?, chosen)?;
            }
            each.store(chosen, branch_ids[m], &[p])?;
        }
        for (c, column) in columns.iter().enumerate() {
            let coordinate = self.column_coordinate(column, d, &each)?;
            each.store(each.index_cast(coordinate, word)?, targets[c], &[p])?;
        }
        // 2. The order of the points by depth.
        declare(b.module()?, super::by_depth::DEPTH_ORDER, &[word, word, word, word], &[word])?;
        let count = b.index_cast(n, word)?;
        let found = b.call(DEPTH_ORDER, &[address(table)?, count, address(order)?, address(segments)?], &[word])?[0];
        // A failure (-1) runs no segment.
        let found = b.arith("maxsi", found, b.i64(0)?)?;
        let found = b.index_cast(found, index)?;
        // 3. The segments, in order; their points one by one.
        let (segment, s) = b.scf_for(zero, found, one)?;
        let at = segment.arith("muli", s, segment.index(3)?)?;
        let low = segment.index_cast(segment.load(segments, &[at], word)?, index)?;
        let at_high = segment.arith("addi", at, segment.index(1)?)?;
        let high = segment.index_cast(segment.load(segments, &[at_high], word)?, index)?;
        let batched: Option<Vec<Vec<_>>> = group
            .tensors
            .iter()
            .map(|&t| {
                (0..program.tensors[t].branches.len())
                    .map(|k| tempo_passes::temporal_vectorize::batched_branch(program, t, k, d, &group.tensors))
                    .collect()
            })
            .collect();
        // Points one by one: every segment without a batched form, and
        // small segments (a batch's fixed costs, gathers and loops, are
        // not paid back by a few rows).
        let one_by_one = |this: &mut Self, at: &Builder<'c, 'a>| -> Built<()> {
            let (point, j) = at.scf_for(low, high, at.index(1)?)?;
            let p = point.index_cast(point.load(order, &[j], word)?, index)?;
            this.nest.index_of.insert(d, p);
            for &t in &group.tensors {
                this.tensor(t, &point)?;
            }
            Ok(())
        };
        match batched {
            Some(branches) if self.options.batch_by_depth => {
                let size = segment.arith("subi", high, low)?;
                let small = segment.compare(Compare::Slt, size, segment.index(MIN_BATCH)?)?;
                let (few, many) = segment.scf_if_else(small, true)?;
                let many = many.ok_or("compiler fault: scf.if without its else block")?;
                one_by_one(self, &few)?;
                let key = many.load(segments, &[many.arith("addi", at, many.index(2)?)?], word)?;
                // A segment runs in chunks of at most `rows` points, so
                // that the batch's values stay in cache (each is at most
                // CHUNK_BYTES) while its products are still matrices.
                let widest = branches
                    .iter()
                    .flatten()
                    .flat_map(|branch| &branch.nodes)
                    .map(|node| {
                        let row: i64 = node.ty.shape.iter().filter(|&&s| s != DYNAMIC).product();
                        row * node.ty.element.byte_size() as i64
                    })
                    .max()
                    .unwrap_or(1)
                    .max(1);
                let rows = (CHUNK_BYTES / widest).clamp(MIN_CHUNK_ROWS, MAX_CHUNK_ROWS);
                let (chunk, first) = many.scf_for(low, high, many.index(rows)?)?;
                let count = chunk.arith("minsi", chunk.arith("subi", high, first)?, chunk.index(rows)?)?;
                let cap = self.function.entry.index(rows)?;
                self.function.size_caps.insert(super::views::key(count), cap);
                let batch = Batch { dim: d, order, low: first, count, rows };
                // The choice of branches is a number in mixed radix (one
                // digit per tensor, `branches + 1` values each).
                let radices: Vec<i64> =
                    group.tensors.iter().map(|&t| program.tensors[t].branches.len() as i64 + 1).collect();
                for (m, &t) in group.tensors.iter().enumerate() {
                    let below: i64 = radices[m + 1..].iter().product();
                    let digit = chunk.arith("divsi", key, chunk.i64(below)?)?;
                    let digit = chunk.arith("remsi", digit, chunk.i64(radices[m])?)?;
                    for (k, branch) in branches[m].iter().enumerate() {
                        let taken = chunk.compare(Compare::Eq, digit, chunk.i64(k as i64)?)?;
                        let (then, _) = chunk.scf_if_else(taken, false)?;
                        self.batched_tensor(t, branch, batch, &then)?;
                    }
                }
            }
            _ => one_by_one(self, &segment)?,
        }
        self.nest.arith_indices = saved;
        for buffer in buffers.into_iter().chain([table]) {
            b.op("memref.dealloc", &[buffer], &[], &[])?;
        }
        Ok(())
    }
}
