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

use super::*;
use tempo_passes::program::{Branch, Node};

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
#[derive(Debug)]
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
                    || elementwise::operands_of(&nodes[w].kind)
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
            kind => match elementwise::operands_of(kind) {
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
        let elementwise = elementwise::operands_of(&node.kind).is_some();
        let all_users_members = !users[k].is_empty() && users[k].iter().all(|&u| is_member(&members, u));
        // Connected: the anchor, or an operand of a wide member of the same shape.
        let connected = k == anchor
            || members.iter().any(|&(m, f)| {
                f == Form::Wide && elementwise::operands_of(&nodes[m].kind).is_some_and(|ops| ops.contains(&k))
            });
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

/// One row of a group being emitted: the group, the branch's nodes and
/// views, the row's sizes and induction variables, the row length `n`,
/// the suffix of the names the group's scalar code defines, and the
/// registers of its row members so far.
struct Row<'a> {
    group: &'a RowGroup,
    nodes: &'a [Node<'a>],
    views: &'a [View],
    rows: &'a [String],
    row_ivs: &'a [String],
    n: &'a str,
    tag: String,
    scalars: HashMap<usize, String>,
}

/// Where a value is used inside a row: the form of its user, and the
/// induction variable along the row (wide users).
#[derive(Clone, Copy)]
struct Context<'a> {
    form: Form,
    j: Option<&'a str>,
}

impl Row<'_> {
    /// The sizes and indices of a value of `context`'s form.
    fn sizes_and_indices(&self, context: Context) -> (Vec<String>, Vec<String>) {
        let mut sizes = self.rows.to_vec();
        let mut indices = self.row_ivs.to_vec();
        match context.form {
            Form::Row => {}
            Form::RowUnit => {
                sizes.push("1".to_string());
                indices.push("%zero_index".to_string());
            }
            Form::Wide => {
                sizes.push(self.n.to_string());
                indices.push(context.j.expect("wide values are used inside a row loop").to_string());
            }
        }
        (sizes, indices)
    }
}

impl Emitter<'_, '_> {
    /// Emits `group` (all members' views and buffers already made).
    pub(super) fn row_group(
        &mut self,
        group: &RowGroup,
        nodes: &[Node],
        views: &[View],
        indent: &str,
        out: &mut String,
    ) {
        let tag = format!("_g{}", self.next_id + 1);
        self.next_id += 1;
        let wide_sizes = views[group.anchor].sizes.clone();
        let (rows, n) = wide_sizes.split_at(wide_sizes.len() - 1);
        let n = self.index_value(&n[0], indent, out);
        let row_loop: Vec<String> = if rows.is_empty() { vec!["1".to_string()] } else { rows.to_vec() };
        let order: Vec<usize> = (0..row_loop.len()).collect();
        // Rows are independent: with `parallel`, a group with enough work
        // (static sizes) spreads them over threads (`scf.parallel`).
        let work = wide_sizes.iter().try_fold(1i64, |acc, s| s.parse::<i64>().ok().map(|s| acc.saturating_mul(s)));
        let spread = self.parallel && !rows.is_empty() && work.is_some_and(|w| w >= PARALLEL_ROWS_GRAIN);
        let nest = if spread {
            self.open_parallel_loop(&row_loop, indent, out)
        } else {
            self.open_loops(&row_loop, &order, indent, out)
        };
        let row_ivs: Vec<String> = if rows.is_empty() { Vec::new() } else { nest.ivs.clone() };
        let ind = nest.inner.clone();
        let mut row = Row { group, nodes, views, rows, row_ivs: &row_ivs, n: &n, tag, scalars: HashMap::new() };
        // Operands loaded once per row (for row members), per element in
        // each inner loop.
        let mut row_loaded: HashMap<(usize, Form), String> = HashMap::new();
        for &(m, form) in &group.members {
            let node = &nodes[m];
            let e = node.ty.element.mlir();
            let stored = group.materialized.contains(&m);
            let row_context = Context { form, j: None };
            match &node.kind {
                NodeKind::Reduce(kind, a, _) => {
                    let (init, combine) = reductions::start_and_combine(*kind, node.ty.element);
                    let (start, j, acc, sum) = (self.fresh("z"), self.fresh("j"), self.fresh("acc"), self.fresh("red"));
                    let _ = writeln!(out, "{ind}{start} = arith.constant {init} : {e}");
                    let _ = writeln!(
                        out,
                        "{ind}{sum} = scf.for {j} = {} to {n} step {} iter_args({acc} = {start}) -> ({e}) {{",
                        nest.zero, nest.one
                    );
                    let inner = format!("{ind}  ");
                    let value = self.value_in_row(
                        *a,
                        Context { form: Form::Wide, j: Some(&j) },
                        &row,
                        &mut HashMap::new(),
                        &inner,
                        out,
                    );
                    let next = self.fresh("acc");
                    // With fast math the row's float reduction may be
                    // reassociated, which lets LLVM vectorize the loop.
                    let flags = if self.fast_math && node.ty.element.is_float() { " fastmath<reassoc>" } else { "" };
                    let _ = writeln!(out, "{inner}{next} = {combine} {acc}, {value}{flags} : {e}");
                    let _ = writeln!(out, "{inner}scf.yield {next} : {e}");
                    let _ = writeln!(out, "{ind}}}");
                    let result = if *kind == ReduceKind::Mean {
                        // Divided by the length of the row (0 / 0 is NaN).
                        let length = self.float_of_size(&n, e, &ind, out);
                        let mean = self.fresh("mean");
                        let _ = writeln!(out, "{ind}{mean} = arith.divf {sum}, {length} : {e}");
                        mean
                    } else {
                        sum
                    };
                    row.scalars.insert(m, result);
                }
                NodeKind::Move(Movement::Reshape, operands) => {
                    let value = row.scalars[&operands[0]].clone();
                    row.scalars.insert(m, value);
                }
                _ if form == Form::Wide => {
                    if !stored {
                        continue; // Computed inline by its one user.
                    }
                    let j = self.fresh("j");
                    let _ = writeln!(out, "{ind}scf.for {j} = {} to {n} step {} {{", nest.zero, nest.one);
                    let inner = format!("{ind}  ");
                    let context = Context { form: Form::Wide, j: Some(&j) };
                    let value = self.compute_in_row(m, context, &row, &mut HashMap::new(), &inner, out);
                    let (_, indices) = row.sizes_and_indices(context);
                    let target = &views[m];
                    let _ = writeln!(
                        out,
                        "{inner}memref.store {value}, {}[{}] : {}",
                        target.name,
                        indices.join(", "),
                        target.ty
                    );
                    let _ = writeln!(out, "{ind}}}");
                    continue;
                }
                _ => {
                    let value = self.compute_in_row(m, row_context, &row, &mut row_loaded, &ind, out);
                    row.scalars.insert(m, value);
                }
            }
            if stored {
                let (_, indices) = row.sizes_and_indices(row_context);
                let target = &views[m];
                let _ = writeln!(
                    out,
                    "{ind}memref.store {}, {}[{}] : {}",
                    row.scalars[&m],
                    target.name,
                    indices.join(", "),
                    target.ty
                );
            }
        }
        nest.close(out);
    }

    /// The value of node `k` for a user in `context`: a row member's
    /// register, a stored wide member loaded, an inline wide member
    /// computed, an operand from outside loaded at the broadcast index
    /// (each load once per `loaded`: per row, or per element of a loop).
    fn value_in_row(
        &mut self,
        k: usize,
        context: Context,
        row: &Row,
        loaded: &mut HashMap<(usize, Form), String>,
        indent: &str,
        out: &mut String,
    ) -> String {
        let wide = Context { form: Form::Wide, ..context };
        match row.group.form(k) {
            Some(Form::Row | Form::RowUnit) => row.scalars[&k].clone(),
            Some(Form::Wide) if !row.group.materialized.contains(&k) => {
                self.compute_in_row(k, wide, row, loaded, indent, out)
            }
            _ if loaded.contains_key(&(k, context.form)) => loaded[&(k, context.form)].clone(),
            form => {
                // Broadcast into the user's sizes (a stored wide member is
                // the user's size): aligned at the last dimension, a static
                // 1 under a larger size reads index 0.
                let (sizes, indices) = row.sizes_and_indices(if form.is_some() { wide } else { context });
                let view = &row.views[k];
                let at = broadcast_index(&view.sizes, &sizes, &indices, "%zero_index");
                let name = self.fresh("x");
                let _ = writeln!(out, "{indent}{name} = memref.load {}[{}] : {}", view.name, at.join(", "), view.ty);
                loaded.insert((k, context.form), name.clone());
                name
            }
        }
    }

    /// The scalar code of elementwise member `k` in `context` (its own
    /// form), from its operands' values.
    fn compute_in_row(
        &mut self,
        k: usize,
        context: Context,
        row: &Row,
        loaded: &mut HashMap<(usize, Form), String>,
        indent: &str,
        out: &mut String,
    ) -> String {
        let operands = elementwise::operands_of(&row.nodes[k].kind).expect("elementwise members");
        let values: Vec<String> =
            operands.iter().map(|&a| self.value_in_row(a, context, row, loaded, indent, out)).collect();
        let (lines, value) = elementwise::renamed_body(k, row.nodes, &values, &row.tag, self.approximate());
        for line in lines.lines() {
            let _ = writeln!(out, "{indent}{line}");
        }
        value
    }
}
