//! Row fusion in `lower-temporal-to-loops` (CPU, `fuse=true`): the ops of
//! a branch that work row by row on one wide value, such as a norm
//! (`x / sqrt(mean(x * x) + eps)`) or a softmax (`exp(x - max(x)) / sum`),
//! become one loop nest over the rows instead of a nest per op (a fill, a
//! reduction, a division for a mean, a copy per reshape, a loop per
//! elementwise op).
//!
//! A *row group* is anchored at a sum, maximum or mean along the last axis
//! of a value `X` of shape `[P..., n]` (`n` not a static 1). Its members,
//! a contiguous run of the branch's nodes (reads and constants may sit
//! between them), each have a form:
//!
//! - *wide* `[P..., n]`: an elementwise op with an operand of that shape
//!   whose sizes are `X`'s (any, when the shape is static; otherwise `X`, a
//!   wide member or an operand of one of them, equal as the verifier
//!   proved); its member operands are wide or row-unit (or row, when there
//!   are no `P` dimensions: a scalar);
//! - *row* `[P...]`: a reduction along the last axis of such a value, an
//!   elementwise op of row members, a reshape of a row-unit member;
//! - *row-unit* `[P..., 1]`: the same kept with the axis as size 1 (a
//!   reshape of a row member, elementwise ops of them), which broadcasts
//!   along the rows of wide values.
//!
//! Operands that are not members (reads, constants, values computed before)
//! are read at the broadcast index of their user (NumPy rules). Wide
//! elementwise ops before the first reduction join the group when all their
//! users are members.
//!
//! The group is one `scf.for` nest over the rows `P`; in it, in node order,
//! each reduction is an inner loop over `n` carrying its accumulator
//! (`scf.for` iteration argument, starting from the reduction's start
//! value), each row or row-unit op a scalar computation per row, each wide
//! member that is used more than once (or after the group) an inner loop
//! storing it into its buffer, and each other wide member is computed
//! inline, in the loop of its one user. Row members used after the group,
//! and the branch's result, are stored into their buffers.
//!
//! With the `parallel` option, a group of at least [`PARALLEL_ROWS_GRAIN`]
//! elements (static sizes) runs its rows as an `scf.parallel` loop, spread
//! over threads.
//!
//! Exact: every element is computed by the same scalar ops from the same
//! operands, and every reduction combines the elements of a row in
//! increasing order from the same start value, as the interpreter does.
//! With `fast-math` a float reduction may be reassociated (`reassoc`), so
//! LLVM vectorizes it with several partial accumulators.

/// Elements below which a row group stays on one thread (measured: 64
/// rows of 2,048, 2^17 elements, run 17% faster on 2 threads).
const PARALLEL_ROWS_GRAIN: i64 = 1 << 17;

/// The partial sums LLVM's vectorizer keeps for a row's float reduction
/// with fast math (its interleave count; the only loops it interleaves).
const REDUCTION_INTERLEAVE: u32 = 4;

use super::kernels::{Config, broadcast_at, element_type, loop_nest};
use super::node_kinds::{Elementwise, operands_of};
use super::values::NodeValue;
use super::views::View;
use super::{Emitter, scalar};
use crate::ir_builder::{Builder, Extent, element_of};
use melior::ir::{Attribute, Value};
use std::collections::HashMap;
use tempo_passes::program::{Branch, Node};
use tempo_passes::program::{DYNAMIC, Movement, NodeKind, PointType, ReduceKind};

/// The shape class of a row group's member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) enum Form {
    /// `[P..., n]`.
    Wide,
    /// `[P...]`.
    Row,
    /// `[P..., 1]`.
    RowUnit,
}

/// A run of a branch's nodes computed in one loop nest over rows.
#[derive(Clone, Debug)]
pub(super) struct RowGroup {
    /// Last node of the run; nodes between members that are not members
    /// are reads and constants.
    pub(super) end: usize,
    /// Members in node order, with their forms.
    pub(super) members: Vec<(usize, Form)>,
    /// The input of the first reduction: its sizes give the rows and `n`.
    pub(super) anchor: usize,
    /// Members stored into buffers (the others live in registers or are
    /// computed inline).
    pub(super) materialized: Vec<usize>,
}

impl RowGroup {
    pub(super) fn form(&self, k: usize) -> Option<Form> {
        self.members.iter().find(|(m, _)| *m == k).map(|(_, f)| *f)
    }
}

fn is_free(kind: &NodeKind) -> bool {
    matches!(kind, NodeKind::Read { .. } | NodeKind::ReadRange { .. } | NodeKind::Constant { .. })
}

/// The row reduction at node `k`: its input.
fn row_reduction(nodes: &[Node], k: usize) -> Option<usize> {
    match &nodes[k].kind {
        NodeKind::Reduce(ReduceKind::Sum | ReduceKind::Max | ReduceKind::Mean, a, axis) => {
            let shape = &nodes[*a].ty.shape;
            (!shape.is_empty() && *axis == shape.len() - 1 && shape[*axis] != 1).then_some(*a)
        }
        _ => None,
    }
}

/// The row groups of a branch, in order, not overlapping.
pub(super) fn row_groups(branch: &Branch) -> Vec<RowGroup> {
    let nodes = &branch.nodes;
    let users = tempo_passes::rewrite::users(branch);
    let mut groups: Vec<RowGroup> = Vec::new();
    let mut k = 0;
    while k < nodes.len() {
        let floor = groups.last().map_or(0, |g| g.end + 1);
        match group_at(branch, &users, k, floor) {
            Some(group) => {
                k = group.end + 1;
                groups.push(group);
            }
            None => k += 1,
        }
    }
    groups
}

/// The group anchored at the row reduction `r0`, extended forward and then
/// backward (not below `floor`).
fn group_at(branch: &Branch, users: &[Vec<usize>], r0: usize, floor: usize) -> Option<RowGroup> {
    let nodes = &branch.nodes;
    let anchor = row_reduction(nodes, r0)?;
    let wide: &[i64] = &nodes[anchor].ty.shape;
    let rows = &wide[..wide.len() - 1];
    let mut unit = rows.to_vec();
    unit.push(1);
    let mut members: Vec<(usize, Form)> = vec![(r0, Form::Row)];
    let form_of = |members: &[(usize, Form)], k: usize| members.iter().find(|(m, _)| *m == k).map(|(_, f)| *f);
    // Values whose sizes are the anchor's: all of them when its shape is
    // static; otherwise the anchor, wide members and the operands of both
    // of its shape (elementwise operands the verifier proved equal).
    let fully_static = !wide.contains(&DYNAMIC);
    let in_row = |members: &[(usize, Form)], a: usize| {
        let wide_nodes =
            || std::iter::once(anchor).chain(members.iter().filter(|(_, f)| *f == Form::Wide).map(|(m, _)| *m));
        fully_static
            || wide_nodes().any(|w| {
                w == a
                    || operands_of(&nodes[w].kind)
                        .is_some_and(|ops| ops.iter().any(|&o| o == a && nodes[o].ty.shape == wide))
            })
    };
    // Forward.
    let mut end = r0;
    for k in r0 + 1..nodes.len() {
        let node = &nodes[k];
        if is_free(&node.kind) {
            continue;
        }
        let form = match &node.kind {
            NodeKind::Reduce(..) => match row_reduction(nodes, k) {
                Some(a)
                    if nodes[a].ty.shape == wide && in_row(&members, a) && form_of(&members, a) != Some(Form::Row) =>
                {
                    Some(Form::Row)
                }
                _ => None,
            },
            NodeKind::Move(Movement::Reshape, operands) => match form_of(&members, operands[0]) {
                Some(Form::Row) if node.ty.shape == unit => Some(Form::RowUnit),
                Some(Form::RowUnit) if node.ty.shape == rows => Some(Form::Row),
                _ => None,
            },
            kind => match operands_of(kind) {
                Some(operands) => {
                    let shape = node.ty.shape.as_slice();
                    let member_forms: Vec<Form> = operands.iter().filter_map(|&a| form_of(&members, a)).collect();
                    if shape == wide {
                        let connected = operands.iter().any(|&a| nodes[a].ty.shape == wide && in_row(&members, a));
                        // A row value broadcasts along the rows only as a
                        // scalar (no rows) or kept with a unit axis.
                        let broadcastable = rows.is_empty() || member_forms.iter().all(|f| *f != Form::Row);
                        (connected && broadcastable).then_some(Form::Wide)
                    } else {
                        let form = if shape == rows {
                            Some(Form::Row)
                        } else if shape == unit.as_slice() {
                            Some(Form::RowUnit)
                        } else {
                            None
                        };
                        form.filter(|&form| !member_forms.is_empty() && member_forms.iter().all(|f| *f == form))
                    }
                }
                None => None,
            },
        };
        match form {
            Some(form) => {
                members.push((k, form));
                end = k;
            }
            None => break,
        }
    }
    finish(branch, users, members, anchor, floor, end)
}

/// Extends a group backward over wide elementwise ops whose users are all
/// members, then decides which members are stored.
fn finish(
    branch: &Branch,
    users: &[Vec<usize>],
    mut members: Vec<(usize, Form)>,
    anchor: usize,
    floor: usize,
    end: usize,
) -> Option<RowGroup> {
    let nodes = &branch.nodes;
    let wide = &nodes[anchor].ty.shape;
    let r0 = members[0].0;
    let is_member = |members: &[(usize, Form)], k: usize| members.iter().any(|(m, _)| *m == k);
    for k in (floor..r0).rev() {
        let node = &nodes[k];
        if is_free(&node.kind) {
            continue;
        }
        let elementwise = operands_of(&node.kind).is_some();
        let all_users_members = !users[k].is_empty() && users[k].iter().all(|&u| is_member(&members, u));
        // Connected: the anchor, or an operand of a wide member of the same shape.
        let connected = k == anchor
            || members
                .iter()
                .any(|&(m, f)| f == Form::Wide && operands_of(&nodes[m].kind).is_some_and(|ops| ops.contains(&k)));
        if elementwise && all_users_members && connected && node.ty.shape == *wide {
            members.push((k, Form::Wide));
        } else {
            break;
        }
    }
    members.sort_by_key(|(m, _)| *m);
    let materialized = members
        .iter()
        .filter(|&&(m, form)| {
            let inside = users[m].iter().filter(|&&u| is_member(&members, u)).count();
            let outside = users[m].len() - inside;
            m == branch.result || outside > 0 || (form == Form::Wide && inside != 1)
        })
        .map(|(m, _)| *m)
        .collect();
    Some(RowGroup { end, members, anchor, materialized })
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Builds `group` (all members' views and buffers already made; see
    /// [`build_row_group`]).
    pub(super) fn row_group(
        &mut self,
        group: &RowGroup,
        nodes: &[Node],
        views: &[NodeValue<'c, 'a>],
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let anchor = views[group.anchor].sizes().to_vec();
        // The views it reads (operands of members) and stores (members
        // stored into buffers); members computed inline have none.
        let mut read: Vec<usize> = group.materialized.clone();
        for &(m, _) in &group.members {
            read.extend(tempo_passes::rewrite::operands(&nodes[m].kind));
        }
        read.sort();
        read.dedup();
        let views: HashMap<usize, View<'c, 'a>> =
            read.into_iter().filter_map(|k| views[k].as_view().map(|v| (k, v.clone()))).collect();
        let nodes: Vec<(NodeKind, PointType)> = nodes.iter().map(|n| (n.kind.clone(), n.ty.clone())).collect();
        build_row_group(b, group, &nodes, &views, &anchor, self.config())
    }
}

/// One row of a group being built: the group, the branch's nodes and the
/// views of those it reads or stores, the row's sizes and indices, the row
/// length `n`, and the values of its row members so far.
struct Row<'r, 'c, 'a> {
    group: &'r RowGroup,
    nodes: &'r [(NodeKind, PointType)],
    views: &'r HashMap<usize, View<'c, 'a>>,
    rows: &'r [Extent<'c, 'a>],
    row_ivs: &'r [Value<'c, 'a>],
    n: Value<'c, 'a>,
    zero: Value<'c, 'a>,
    scalars: HashMap<usize, Value<'c, 'a>>,
    approximate: bool,
}

/// Where a value is used inside a row: the form of its user, and the
/// index along the row (wide users).
#[derive(Clone, Copy)]
struct Context<'c, 'a> {
    form: Form,
    j: Option<Value<'c, 'a>>,
}

impl<'c, 'a> Row<'_, 'c, 'a> {
    /// The sizes and indices of a value of `context`'s form.
    fn sizes_and_indices(&self, context: Context<'c, 'a>) -> Built<(Vec<Extent<'c, 'a>>, Vec<Value<'c, 'a>>)> {
        let mut sizes = self.rows.to_vec();
        let mut indices = self.row_ivs.to_vec();
        match context.form {
            Form::Row => {}
            Form::RowUnit => {
                sizes.push(Extent::Static(1));
                indices.push(self.zero);
            }
            Form::Wide => {
                sizes.push(Extent::Value(self.n));
                indices.push(context.j.ok_or("compiler fault: a wide value used outside a row loop")?);
            }
        }
        Ok((sizes, indices))
    }

    fn view(&self, k: usize) -> Built<&View<'c, 'a>> {
        self.views.get(&k).ok_or_else(|| format!("compiler fault: row group member {k} has no view"))
    }

    /// The value of node `k` for a user in `context`: a row member's
    /// register, a stored wide member loaded, an inline wide member
    /// computed, an operand from outside loaded at the broadcast index
    /// (each load once per `loaded`: per row, or per element of a loop).
    fn value(
        &self,
        b: &Builder<'c, 'a>,
        k: usize,
        context: Context<'c, 'a>,
        loaded: &mut HashMap<(usize, Form), Value<'c, 'a>>,
    ) -> Built<Value<'c, 'a>> {
        let wide = Context { form: Form::Wide, ..context };
        match self.group.form(k) {
            Some(Form::Row | Form::RowUnit) => Ok(self.scalars[&k]),
            Some(Form::Wide) if !self.group.materialized.contains(&k) => self.compute(b, k, wide, loaded),
            _ if loaded.contains_key(&(k, context.form)) => Ok(loaded[&(k, context.form)]),
            form => {
                // Broadcast into the user's sizes (a stored wide member is
                // the user's size): aligned at the last dimension, a static
                // 1 under a larger size reads index 0.
                let (sizes, indices) = self.sizes_and_indices(if form.is_some() { wide } else { context })?;
                let view = self.view(k)?;
                let at = broadcast_at(&view.sizes, &sizes, &indices, self.zero);
                let value = b.load(view.value, &at, element_of(view.value)?)?;
                loaded.insert((k, context.form), value);
                Ok(value)
            }
        }
    }

    /// The scalar op of elementwise member `k` in `context` (its own
    /// form), from its operands' values.
    fn compute(
        &self,
        b: &Builder<'c, 'a>,
        k: usize,
        context: Context<'c, 'a>,
        loaded: &mut HashMap<(usize, Form), Value<'c, 'a>>,
    ) -> Built<Value<'c, 'a>> {
        let (kind, ty) = &self.nodes[k];
        let operands = operands_of(kind).ok_or("compiler fault: a row member that is not elementwise")?;
        let values: Vec<Value> = operands.iter().map(|&a| self.value(b, a, context, loaded)).collect::<Built<_>>()?;
        let op = match kind {
            NodeKind::Cast(a) => Elementwise::Cast(self.nodes[*a].1.element),
            _ => scalar::op_of_kind(kind).ok_or("compiler fault: a row member that is not elementwise")?,
        };
        scalar::scalar(b, op, &values, ty.element, self.nodes[operands[0]].1.element, self.approximate)
    }
}

type Built<T> = Result<T, String>;

/// `group` as one loop nest over its rows (`anchor`'s sizes but the last,
/// the row length `n`; see the module's notes). With `parallel`, a group
/// with enough work (static sizes) spreads its rows over threads
/// (`scf.parallel`).
pub(super) fn build_row_group<'c, 'a>(
    b: &Builder<'c, 'a>,
    group: &RowGroup,
    nodes: &[(NodeKind, PointType)],
    views: &HashMap<usize, View<'c, 'a>>,
    anchor: &[Extent<'c, 'a>],
    config: Config,
) -> Built<()> {
    let (rows, n) = anchor.split_at(anchor.len() - 1);
    let n = b.extent(n[0])?;
    let row_loop: Vec<Extent> = if rows.is_empty() { vec![Extent::Static(1)] } else { rows.to_vec() };
    let static_size = |e: &Extent| if let Extent::Static(s) = e { Some(*s) } else { None };
    let work = anchor.iter().try_fold(1i64, |acc, s| static_size(s).map(|s| acc.saturating_mul(s)));
    let spread = config.parallel && !rows.is_empty() && work.is_some_and(|w| w >= PARALLEL_ROWS_GRAIN);
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let (ind, ivs) = if spread {
        let upper: Vec<Value> = row_loop.iter().map(|&s| b.extent(s)).collect::<Built<_>>()?;
        b.scf_parallel(&upper)?
    } else {
        let order: Vec<usize> = (0..row_loop.len()).collect();
        loop_nest(b, &row_loop, &order)?
    };
    let row_ivs: Vec<Value> = if rows.is_empty() { Vec::new() } else { ivs };
    let mut row = Row {
        group,
        nodes,
        views,
        rows,
        row_ivs: &row_ivs,
        n,
        zero,
        scalars: HashMap::new(),
        approximate: config.approximate(),
    };
    // Operands loaded once per row (for row members), per element in each
    // inner loop.
    let mut row_loaded: HashMap<(usize, Form), Value> = HashMap::new();
    for &(m, form) in &group.members {
        let (kind, ty) = &nodes[m];
        let stored = group.materialized.contains(&m);
        let row_context = Context { form, j: None };
        match kind {
            NodeKind::Reduce(reduction, a, _) => {
                let e = element_type(b, ty.element);
                let start = match reduction {
                    ReduceKind::Max => super::reduction_parts::lowest(&ind, ty.element)?,
                    _ => super::movement::zero(&ind, ty.element)?,
                };
                let combine = super::reduction_parts::combine_op(*reduction, ty.element);
                let (inner, j, carried, sums) = ind.scf_for_carrying(zero, n, one, &[start])?;
                let value = row.value(&inner, *a, Context { form: Form::Wide, j: Some(j) }, &mut HashMap::new())?;
                // With fast math the row's float reduction may be
                // reassociated, which lets LLVM vectorize the loop.
                let mut flags = Vec::new();
                if config.fast_math && ty.element.is_float() {
                    let reassoc = Attribute::parse(b.context(), "#arith.fastmath<reassoc>")
                        .ok_or("compiler fault: the fastmath flags")?;
                    flags.push(("fastmath", reassoc));
                }
                let next = inner.value(combine, &[carried[0], value], e, &flags)?;
                inner.yield_values("scf.yield", &[next])?;
                if !flags.is_empty() {
                    // Several partial sums, so that the vectorized loop is
                    // not bound by the latency of one accumulator.
                    ind.interleave_hint(sums[0], REDUCTION_INTERLEAVE)?;
                }
                let result = match reduction {
                    // Divided by the length of the row (0 / 0 is NaN).
                    ReduceKind::Mean => {
                        let length = ind.convert("arith.sitofp", ind.index_cast(n, ind.integer_type(64))?, e)?;
                        ind.arith("divf", sums[0], length)?
                    }
                    _ => sums[0],
                };
                row.scalars.insert(m, result);
            }
            NodeKind::Move(Movement::Reshape, operands) => {
                let value = row.scalars[&operands[0]];
                row.scalars.insert(m, value);
            }
            _ if form == Form::Wide => {
                if !stored {
                    continue; // Computed inline by its one user.
                }
                let (inner, j) = ind.scf_for(zero, n, one)?;
                let context = Context { form: Form::Wide, j: Some(j) };
                let value = row.compute(&inner, m, context, &mut HashMap::new())?;
                let (_, indices) = row.sizes_and_indices(context)?;
                inner.store(value, row.view(m)?.value, &indices)?;
                continue;
            }
            _ => {
                let value = row.compute(&ind, m, row_context, &mut row_loaded)?;
                row.scalars.insert(m, value);
            }
        }
        if stored {
            let (_, indices) = row.sizes_and_indices(row_context)?;
            ind.store(row.scalars[&m], row.view(m)?.value, &indices)?;
        }
    }
    Ok(())
}
