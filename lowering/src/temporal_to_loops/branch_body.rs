//! The ops of one branch in `lower-temporal-to-loops`: a view per read
//! (points of stores, inputs and outputs; ranges through `reads`), a buffer
//! per intermediate value (static, capped by the bounds, or per step), the
//! GPU's kernels of one point for single values, and the dispatch to each
//! spatial op's lowering.

use super::node_kinds::{Elementwise, computed_into_target};
use super::values::NodeValue;
use super::views::{View, broadcast_sizes, layout, plain_type, reshaped, static_size, strided, view_type};
use super::{Built, Emitter, TestFaultKind, attention, contractions, destinations, reductions, row_fusion, scalar};
use crate::ir_builder::{Builder, Extent};
use melior::ir::attribute::AttributeLike;
use melior::ir::{
    Attribute, Value,
    attribute::{IntegerAttribute, StringAttribute, TypeAttribute},
    operation::OperationBuilder,
};
use std::collections::HashMap;
use tempo_passes::affine::AffineExpr;
use tempo_passes::program::{DYNAMIC, ElementType, Movement, NodeKind, PointType, ReduceKind};

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Breaks the code of the first op named `op` as the `test-fault`
    /// option asks.
    fn inject_test_fault(&mut self, op: &str, b: &Builder<'c, 'a>) -> Built<()> {
        if self.test_fault.as_ref().is_none_or(|f| f.op != op) {
            return Ok(());
        }
        match self.test_fault.take().map(|f| f.kind) {
            Some(TestFaultKind::Verify) => {
                let value = IntegerAttribute::new(b.integer_type(32), 1).into();
                b.op("arith.constant", &[], &[b.integer_type(64)], &[("value", value)])?;
                Ok(())
            }
            Some(TestFaultKind::Build) => Err(format!("test fault injected while building the code of '{op}'")),
            Some(TestFaultKind::Panic) => panic!("test fault injected while lowering '{op}'"),
            None => Ok(()),
        }
    }

    /// The ops of one branch, computing into `slot`.
    pub(super) fn branch_body(&mut self, i: usize, k: usize, slot: Value<'c, 'a>, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let reader = &program.tensors[i];
        self.body_of(&reader.branches[k], &reader.domain, slot, b)
    }

    /// The ops of `branch` (of a tensor over `reader_domain`), computing
    /// into `slot`.
    pub(super) fn body_of(
        &mut self,
        branch: &tempo_passes::program::Branch<'c>,
        reader_domain: &[usize],
        slot: Value<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let fusion = self.fusion(branch);
        let candidates = destinations::Candidates {
            users: &fusion.users,
            member_of: &fusion.member_of,
            inlined: &fusion.inlined,
            has_epilogue: &fusion.has_epilogue,
            slot_operand: fusion.destination,
        };
        let planned = self.plan_destinations(branch, slot, &candidates, b)?;
        let lifetimes = super::scratch::lifetimes(branch, &fusion.positions());
        let mut body = Body {
            branch,
            reader_domain,
            reader_dims: reader_domain.iter().map(|d| self.nest.index_of[d]).collect(),
            fusion,
            planned,
            slot,
            views: Vec::new(),
            dynamic_buffers: Vec::new(),
            scratch: Vec::new(),
            lifetimes,
        };
        for (n, node) in branch.nodes.iter().enumerate() {
            // Scratch buffers whose last use is emitted go back to the pool.
            let lifetimes = &body.lifetimes;
            let (done, held): (Vec<_>, Vec<_>) = body.scratch.iter().partition(|(m, _)| lifetimes[*m] < n);
            body.scratch = held;
            for (_, k) in done {
                self.give_back_scratch(k);
            }
            let op_name = node.kind.op_name();
            self.enter(node.location, &op_name);
            let b = &b.at(node.location);
            self.inject_test_fault(&op_name, b)?;
            let batch = self.nest.batch.as_ref().map(|batch| batch.dim);
            let view = match &node.kind {
                NodeKind::Read { source, .. } if batch.is_some_and(|d| self.program.tensors[*source].domain == [d]) => {
                    self.gather(*source, None, &node.ty, b)?
                }
                NodeKind::ReadAt { source, data, .. } if batch.is_some() => {
                    let rows = body.views[data[0]].view()?.value;
                    self.gather(*source, Some((rows, branch.nodes[data[0]].ty.element)), &node.ty, b)?
                }
                NodeKind::Position(_) if batch.is_some() => self.batch_positions(&node.ty, b)?,
                NodeKind::Read { source, index } => View::fixed(self.read_point(&body, *source, index, b)?, &node.ty),
                NodeKind::ReadRange { source, lower, upper, caps } => {
                    self.range_view(*source, lower, upper, caps, &body.reader_dims, &node.ty, b)?
                }
                NodeKind::ReadAt { .. } => self.read_at_view(node, &branch.nodes, &body.views, &body.reader_dims, b)?,
                NodeKind::Constant { values, integers, .. } => self.constant(values, integers, &node.ty, b)?,
                _ => {
                    self.computed(&mut body, n, b)?;
                    continue;
                }
            };
            // A read or constant that is the result is copied into the
            // slot (a single value by a kernel of one thread on the GPU).
            if n == branch.result {
                if self.options.gpu && node.ty.shape.is_empty() {
                    let (inner, _) = b.scf_parallel(&[b.index(1)?])?;
                    inner.copy(view.value, slot)?;
                } else {
                    b.copy(view.value, slot)?;
                }
            }
            body.views.push(NodeValue::View(view));
        }
        for buffer in body.dynamic_buffers {
            b.op("memref.dealloc", &[buffer], &[], &[])?;
        }
        for (_, k) in body.scratch {
            self.give_back_scratch(k);
        }
        Ok(())
    }

    /// The point of `source` a read at `index` gives at the reader's point.
    fn read_point(
        &mut self,
        body: &Body<'_, 'c, 'a>,
        source: usize,
        index: &tempo_passes::affine::AffineMap,
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let mut coords = Vec::new();
        let source_domain = &self.program.tensors[source].domain;
        for (expr, &dim) in index.results.iter().zip(source_domain) {
            // The reader's own variable of the same dimension is in range.
            if let AffineExpr::Dim(k) = expr
                && body.reader_domain[*k] == dim
            {
                coords.push(body.reader_dims[*k]);
                continue;
            }
            // Other coordinates are clamped into the source's extent: the
            // point checks guarantee they are in range wherever the point is
            // needed, and clamping keeps the accesses of points nobody needs
            // inside the store.
            let shape = (index.num_dims, index.num_symbols);
            let c = self.apply("affine.apply", std::slice::from_ref(expr), shape, &body.reader_dims, b)?;
            coords.push(self.clamp(c, self.function.zero_index, self.function.last_index[dim], b)?);
        }
        self.point_view(source, &coords, false, b)
    }

    /// Node `n`, computed by an op (not a read or constant): its value
    /// (a view, or only sizes where its users or its group compute it)
    /// joins `body`'s.
    fn computed(&mut self, body: &mut Body<'_, 'c, 'a>, n: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let branch = body.branch;
        let node = &branch.nodes[n];
        let kind = &node.kind;
        let is_result = n == branch.result;
        let sizes = self.result_sizes(n, branch, &body.views, b)?;
        let fusion = &body.fusion;
        // An elementwise op fused into its only user has no buffer: the
        // user computes it (see `elementwise`). Nor has a product with an
        // epilogue: it is computed by its chain's root, into the root's
        // buffer.
        if fusion.inlined[n] || fusion.has_epilogue[n] {
            body.views.push(NodeValue::Sizes(sizes));
            return Ok(());
        }
        // Members of a row group: made (views and buffers) here, computed
        // together at the group's last node.
        if let Some(g) = fusion.member_of[n] {
            let group = &fusion.groups[g];
            let value = if group.materialized.contains(&n) {
                NodeValue::View(self.value_target(
                    n,
                    node,
                    &sizes,
                    is_result,
                    body.slot,
                    (&mut body.dynamic_buffers, &mut body.scratch),
                    b,
                )?)
            } else {
                NodeValue::Sizes(sizes)
            };
            body.views.push(value);
            if n == group.end {
                self.row_group(group, &branch.nodes, &body.views, b)?;
            }
            return Ok(());
        }
        // A permutation that is not the body's result is a view
        // (`memref.transpose`): no copy; its consumers read through the
        // permuted strides.
        if let (NodeKind::Move(Movement::Permute(permutation), operands), false) = (kind, is_result) {
            let view = super::views::transposed(b, body.views[operands[0]].view()?, permutation)?;
            body.views.push(NodeValue::View(view));
            return Ok(());
        }
        // Fused, so is a reshape of a contiguous value, and the value a
        // result reshape reads is computed straight into the slot seen with
        // its shape.
        if let (NodeKind::Move(Movement::Reshape, operands), true) = (kind, self.reshapes_are_views()) {
            let a = operands[0];
            let view = if body.planned.placed_in[a] == Some(n) {
                // Its operand was computed into its destination.
                Some(body.planned.view.get(&n).cloned().ok_or("compiler fault: a placed value without its view")?)
            } else if is_result && fusion.destination == Some(a) {
                Some(View::fixed(body.slot, &node.ty))
            } else if let (false, Some(source)) = (is_result, body.views[a].as_view()) {
                match reshaped(b, source, &branch.nodes[a].ty, &node.ty)? {
                    Some(view) => Some(view),
                    None => super::views::unit_reshaped(b, source, &branch.nodes[a].ty, &node.ty)?,
                }
            } else {
                None
            };
            if let Some(view) = view {
                body.views.push(NodeValue::View(view));
                return Ok(());
            }
        }
        // So is a slice at point-dependent offsets (`memref.subview`), and
        // on the CPU one at constant offsets of a static shape (a weight's
        // per-step gradient sliced out of a packed point was copied, a
        // megabyte per step, before a running sum read it).
        if let (NodeKind::DynamicSlice(a, offsets), false) = (kind, is_result) {
            let view = self.dynamic_slice(body.views[*a].view()?, offsets, &body.reader_dims, &node.ty, b)?;
            body.views.push(NodeValue::View(view));
            return Ok(());
        }
        // (Not where the slice is to be computed into a destination: the
        // slot a result reshape sees, or a concatenation's part.)
        if let (NodeKind::Move(Movement::Slice(offsets), operands), false, false) = (kind, is_result, self.options.gpu)
            && node.ty.is_static()
            && fusion.destination != Some(n)
            && !body.planned.view.contains_key(&n)
            && let Some(source) = body.views[operands[0]].as_view()
        {
            let at: Vec<Value<'c, 'a>> = offsets.iter().map(|&o| b.index(o)).collect::<Built<_>>()?;
            let view = super::views::slice(b, source, &at, &node.ty)?;
            body.views.push(NodeValue::View(view));
            return Ok(());
        }
        let destination_view = match fusion.destination == Some(n) {
            true => {
                let result = &branch.nodes[branch.result].ty;
                reshaped(b, &View::fixed(body.slot, result), result, &node.ty)?
            }
            false => None,
        };
        let target = match (body.planned.view.get(&n), destination_view) {
            (Some(view), _) => view.clone(),
            (None, Some(view)) => view,
            (None, None) => self.value_target(
                n,
                node,
                &sizes,
                is_result,
                body.slot,
                (&mut body.dynamic_buffers, &mut body.scratch),
                b,
            )?,
        };
        if let Some(&m) = fusion.epilogue_product.get(&n) {
            self.product_with_epilogue(n, m, branch, &mut body.views, &fusion.inlined, &target, b)?;
        } else {
            self.compute(n, body, &target, b)?;
        }
        body.views.push(NodeValue::View(target));
        Ok(())
    }

    /// A constant: a private global (`memref.global`) holding its value,
    /// viewed where it is read (for the GPU, copied once at entry into
    /// memory its kernels can read); a splat, a buffer filled at entry.
    fn constant(
        &mut self,
        values: &[f64],
        integers: &[i64],
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<View<'c, 'a>> {
        let context = self.context;
        let global = format!("__tempo_constant_{}", self.fresh_id());
        let plain = plain_type(context, ty);
        let value = tempo_passes::emit::dense_attribute(context, ty, values, integers)
            .map_err(|e| format!("compiler fault: the constant's value: {e}"))?;
        if let Some(element) = splat_element(value).filter(|_| !ty.shape.is_empty() && !self.options.gpu) {
            // One buffer per splat value and type (the attribute's text is
            // short: one element).
            let text = value.to_string();
            // A splat of more than one element (an optimizer's learning
            // rate as a whole weight-shaped tensor): a buffer filled once
            // at entry, shared by every use of the same constant, not a
            // global of every element, which LLVM would translate, lay out
            // and emit element by element (3.4 MB of read-only data in a
            // 2-layer GPT training step).
            if let Some(&view) = self.function.splats.get(&text) {
                return Ok(View::fixed(view, ty));
            }
            let entry = self.function.entry.at(b.location);
            let scalar = entry.value("arith.constant", &[], element.r#type(), &[("value", element)])?;
            let buffer = entry.alloc(plain, &[])?;
            entry.fill(scalar, buffer)?;
            self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
            let view = entry.cast(buffer, view_type(context, ty))?;
            self.function.splats.insert(text, view);
            return Ok(View::fixed(view, ty));
        }
        let named = |name: &str, value: Attribute<'c>| (melior::ir::Identifier::new(context, name), value);
        let op = OperationBuilder::new("memref.global", b.location)
            .add_attributes(&[
                named("sym_name", StringAttribute::new(context, &global).into()),
                named("sym_visibility", StringAttribute::new(context, "private").into()),
                named("type", TypeAttribute::new(plain).into()),
                named("initial_value", value),
                named("constant", Attribute::unit(context)),
            ])
            .build()
            .map_err(|e| format!("compiler fault: cannot build the constant's global: {e}"))?;
        self.function.globals.insert_op(op);
        let view = view_type(context, ty);
        if self.options.gpu {
            // Kernels cannot read the host's globals.
            let entry = self.function.entry.at(b.location);
            let host = entry.global(&global, plain)?;
            let copy = entry.alloc(plain, &[])?;
            entry.op("memref.copy", &[host, copy], &[], &[])?;
            self.function.exit.op("memref.dealloc", &[copy], &[], &[])?;
            return Ok(View::fixed(entry.cast(copy, view)?, ty));
        }
        let host = b.global(&global, plain)?;
        Ok(View::fixed(b.cast(host, view)?, ty))
    }

    /// Product `m` computed with the chain rooted at `n` as its epilogue
    /// into `target` (or, where the kernel does not apply it, the chain
    /// after the product, in place).
    #[allow(clippy::too_many_arguments)]
    fn product_with_epilogue(
        &mut self,
        n: usize,
        m: usize,
        branch: &tempo_passes::program::Branch,
        views: &mut [NodeValue<'c, 'a>],
        inlined: &[bool],
        target: &View<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let NodeKind::Matmul(x, y) = branch.nodes[m].kind else {
            return Err("compiler fault: an epilogue's product is not a matmul".into());
        };
        let chain = scalar::Chain::of(n, &branch.nodes, inlined);
        let sum_argument = chain
            .leaves
            .iter()
            .position(|&l| l == m)
            .ok_or("compiler fault: the product is not a leaf of its chain")?;
        let leaves =
            chain.leaves.iter().filter(|&&l| l != m).map(|&l| views[l].view().cloned()).collect::<Built<Vec<_>>>()?;
        self.nest.epilogue = Some(contractions::PendingEpilogue { leaves, sum_argument, chain });
        let element = branch.nodes[m].ty.element;
        let (a, c) = (views[x].view()?.clone(), views[y].view()?.clone());
        self.matmul(&a, &c, target, element, b)?;
        if self.nest.epilogue.take().is_some() {
            // The kernel did not apply it: the chain runs after the
            // product, in place.
            views[m] = NodeValue::View(target.clone());
            self.fused_elementwise(n, &branch.nodes, views, inlined, target, b)?;
        }
        Ok(())
    }
}

/// What fusion decided for a branch's nodes (see [`Emitter::fusion`]).
pub(super) struct Fusion {
    /// Row groups (norms, softmax) computed in one nest per row.
    pub(super) groups: Vec<row_fusion::RowGroup>,
    /// The group each node is a member of.
    pub(super) member_of: Vec<Option<usize>>,
    /// Elementwise nodes computed in their user's loop.
    pub(super) inlined: Vec<bool>,
    /// The users of each node.
    pub(super) users: Vec<Vec<usize>>,
    /// For the root of a chain applied by a matrix kernel to its product
    /// (an epilogue), the product.
    pub(super) epilogue_product: HashMap<usize, usize>,
    /// Products whose chain is their epilogue.
    has_epilogue: Vec<bool>,
    /// The value a result reshape reads, computed straight into the slot.
    destination: Option<usize>,
}

impl Fusion {
    /// The position in the branch at which each node's code runs: its
    /// own, except for an elementwise node inlined into its user (its
    /// user's), a member of a row group (the group's last node) and a
    /// product with an epilogue (its chain's root).
    fn positions(&self) -> Vec<usize> {
        let n = self.member_of.len();
        let product_root: HashMap<usize, usize> = self.epilogue_product.iter().map(|(&root, &m)| (m, root)).collect();
        let mut at: Vec<usize> = (0..n).collect();
        for k in (0..n).rev() {
            at[k] = if let Some(g) = self.member_of[k] {
                self.groups[g].end.max(k)
            } else if let Some(&root) = product_root.get(&k) {
                at[root]
            } else if self.inlined[k] {
                self.users[k].iter().map(|&u| at[u]).max().unwrap_or(k)
            } else {
                k
            };
        }
        at
    }
}

/// A branch body being built: its branch, the reader's domain and point,
/// what fusion decided, the destinations planned, the slot of the result,
/// the values of the nodes so far and the buffers freed at its end.
struct Body<'r, 'c, 'a> {
    branch: &'r tempo_passes::program::Branch<'r>,
    reader_domain: &'r [usize],
    reader_dims: Vec<Value<'c, 'a>>,
    fusion: Fusion,
    planned: destinations::Destinations<'c, 'a>,
    slot: Value<'c, 'a>,
    views: Vec<NodeValue<'c, 'a>>,
    /// Buffers of dynamic size, allocated in this body.
    dynamic_buffers: Vec<Value<'c, 'a>>,
    /// Scratch buffers taken from the pool: the node and the buffer's
    /// number (see `scratch`).
    scratch: Vec<(usize, usize)>,
    /// Per node, the last position its buffer is used at (`scratch::lifetimes`).
    lifetimes: Vec<usize>,
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Fusion's decisions for `branch`: row groups, elementwise chains
    /// inlined into their users, epilogues of products, and a result
    /// reshape's operand computed into the slot (none of it when fusion is
    /// off; no row groups or epilogues on the GPU, whose mapping fuses
    /// parallel loops).
    fn fusion(&self, branch: &tempo_passes::program::Branch) -> Fusion {
        // Row groups (norms, softmax) in one nest per row; elementwise
        // chains in their user's loop (neither when fusion is off, nor on
        // the GPU, whose mapping fuses parallel loops).
        let groups = if self.options.fuse && !self.options.gpu { row_fusion::row_groups(branch) } else { Vec::new() };
        let mut member_of: Vec<Option<usize>> = vec![None; branch.nodes.len()];
        for (g, group) in groups.iter().enumerate() {
            for &(m, _) in &group.members {
                member_of[m] = Some(g);
            }
        }
        let mut inlined = super::node_kinds::inlined_nodes(branch);
        if !self.options.fuse {
            inlined.fill(false);
        }
        let users = tempo_passes::rewrite::users(branch);
        // A member is computed by its group, and so is a value a member
        // uses: it needs a buffer.
        for (k, users) in users.iter().enumerate() {
            if member_of[k].is_some() || users.iter().any(|&u| member_of[u].is_some()) {
                inlined[k] = false;
            }
        }
        // Elementwise chains applied by the matrix kernel to its products
        // (epilogues), by the chain's root: a float matmul (a vector or a
        // matrix times a matrix, static k) used only by one chain of its
        // shape and element type that no group computes.
        let mut epilogue_product: HashMap<usize, usize> = HashMap::new();
        let mut has_epilogue = vec![false; branch.nodes.len()];
        if self.options.fuse && !self.options.gpu {
            let nodes = &branch.nodes;
            for (m, node) in nodes.iter().enumerate() {
                let NodeKind::Matmul(a, b) = node.kind else { continue };
                let ranks = (nodes[a].ty.shape.len(), nodes[b].ty.shape.len());
                let k = nodes[a].ty.shape.last().copied().unwrap_or(0);
                if !matches!(ranks, (2, 2) | (1, 2)) || !node.ty.element.is_float() || k <= 0 {
                    continue;
                }
                if m == branch.result || member_of[m].is_some() {
                    continue;
                }
                // Up the inlined nodes to the chain's root: the same from
                // every user of the product (a silu's g * sigmoid(g)).
                let roots: Vec<usize> = users[m]
                    .iter()
                    .map(|&user| {
                        let mut root = user;
                        while inlined[root] {
                            let [next] = users[root][..] else { break };
                            root = next;
                        }
                        root
                    })
                    .collect();
                let Some(&root) = roots.first() else { continue };
                let fits = roots.iter().all(|&r| r == root)
                    && !inlined[root]
                    && super::node_kinds::operands_of(&nodes[root].kind).is_some()
                    && member_of[root].is_none()
                    && nodes[root].ty.shape == node.ty.shape
                    && nodes[root].ty.element == node.ty.element;
                // One product per chain: a kernel applies the chain to its
                // own sums and reads every other leaf, so where several
                // products meet in one chain (gates `x A * x B`, SwiGLU,
                // `x Wx + h Wh`) the first carries the chain and the others
                // are computed, into buffers of their own, before it.
                if fits && !epilogue_product.contains_key(&root) {
                    epilogue_product.insert(root, m);
                    has_epilogue[m] = true;
                }
            }
        }
        // A result that is a reshape of a value used only there: the value
        // is computed into the slot, seen with its shape.
        let destination = match &branch.nodes[branch.result].kind {
            NodeKind::Move(Movement::Reshape, operands) if self.reshapes_are_views() => {
                let a = operands[0];
                let uses = users[a].len();
                let computed = computed_into_target(&branch.nodes[a].kind);
                let static_sizes = |p: &PointType| p.shape.iter().all(|&d| d > 0);
                let fits = static_sizes(&branch.nodes[a].ty) && static_sizes(&branch.nodes[branch.result].ty);
                (uses == 1 && computed && fits && member_of[a].is_none() && !inlined[a]).then_some(a)
            }
            _ => None,
        };
        Fusion { groups, member_of, inlined, users, epilogue_product, has_epilogue, destination }
    }

    /// The sizes of node `n`'s result at this point, from its operands'
    /// views.
    fn result_sizes(
        &mut self,
        n: usize,
        branch: &tempo_passes::program::Branch,
        views: &[NodeValue<'c, 'a>],
        b: &Builder<'c, 'a>,
    ) -> Built<Vec<Extent<'c, 'a>>> {
        let node = &branch.nodes[n];
        let sizes = |k: usize| views[k].sizes().to_vec();
        let shape = || node.ty.shape.iter().map(|&d| Extent::Static(d)).collect::<Vec<_>>();
        Ok(match &node.kind {
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => sizes(*a),
            NodeKind::Binary(_, a, c) | NodeKind::Compare(_, a, c) => {
                broadcast_sizes(&[views[*a].sizes(), views[*c].sizes()])
            }
            NodeKind::Select(c, a, x) => broadcast_sizes(&[views[*c].sizes(), views[*a].sizes(), views[*x].sizes()]),
            NodeKind::Move(movement, operands) => match movement {
                Movement::Permute(p) => p.iter().map(|&k| views[operands[0]].sizes()[k]).collect(),
                Movement::Flip(_) => sizes(operands[0]),
                Movement::Concat(axis) => {
                    let (x, y) = (sizes(operands[0]), sizes(operands[1]));
                    let mut result = x.clone();
                    result[*axis] = match (x[*axis], y[*axis]) {
                        (Extent::Static(p), Extent::Static(q)) => Extent::Static(p + q),
                        (p, q) => Extent::Value(b.arith("addi", b.extent(p)?, b.extent(q)?)?),
                    };
                    result
                }
                // The dynamic size of a reshape or expand is the operand's.
                Movement::Reshape => {
                    let input = views[operands[0]].sizes();
                    let carried = branch.nodes[operands[0]].ty.shape.iter().position(|&d| d == DYNAMIC);
                    node.ty
                        .shape
                        .iter()
                        .map(|&d| match carried {
                            Some(k) if d == DYNAMIC => input[k],
                            _ => Extent::Static(d),
                        })
                        .collect()
                }
                Movement::Expand => {
                    let input = views[operands[0]].sizes();
                    let skip = node.ty.shape.len() - input.len();
                    // A new dynamic leading dimension is a batch's
                    // (`temporal_vectorize::batched_branch`).
                    let batch = self.nest.batch.map(|batch| Extent::Value(batch.count));
                    node.ty
                        .shape
                        .iter()
                        .enumerate()
                        .map(|(k, &d)| match (d == DYNAMIC, k >= skip) {
                            (true, true) => Ok(input[k - skip]),
                            (true, false) => {
                                batch.ok_or_else(|| "compiler fault: an expand to a new dynamic size".to_string())
                            }
                            (false, _) => Ok(Extent::Static(d)),
                        })
                        .collect::<Built<_>>()?
                }
                // A dynamic size of a slice is the operand's (from 0).
                Movement::Slice(_) => {
                    let input = views[operands[0]].sizes();
                    node.ty
                        .shape
                        .iter()
                        .enumerate()
                        .map(|(k, &d)| if d == DYNAMIC { input[k] } else { Extent::Static(d) })
                        .collect()
                }
                _ => shape(),
            },
            NodeKind::Random { .. }
            | NodeKind::Call { .. }
            | NodeKind::DynamicSlice(..)
            | NodeKind::Position(_)
            | NodeKind::Bound(_)
            | NodeKind::Rank
            | NodeKind::WorldSize
            | NodeKind::AllReduce(..) => shape(),
            NodeKind::Gather(table, indices) => {
                let mut result = sizes(*indices);
                result.extend(views[*table].sizes()[1..].iter().copied());
                result
            }
            NodeKind::Matmul(a, c) => {
                let (x, y) = (views[*a].sizes(), views[*c].sizes());
                match (x.len(), y.len()) {
                    (2, 1) => vec![x[0]],
                    (1, _) => vec![y[1]],
                    (rx, ry) => {
                        let mut result = broadcast_sizes(&[&x[..rx - 2], &y[..ry - 2]]);
                        result.extend([x[rx - 2], y[ry - 1]]);
                        result
                    }
                }
            }
            NodeKind::Einsum(spec, operands) => spec
                .result
                .iter()
                .map(|c| {
                    spec.operands
                        .iter()
                        .enumerate()
                        .find_map(|(k, o)| o.iter().position(|x| x == c).map(|d| views[operands[k]].sizes()[d]))
                        .ok_or_else(|| format!("compiler fault: the einsum's label '{c}' is in no operand"))
                })
                .collect::<Built<_>>()?,
            NodeKind::FlashAttention(spec, operands) => {
                // Positions and groups from the operands, the packed width static.
                let (first, position) = match spec.part {
                    tempo_passes::program::FlashPart::Key => (operands[5], 0),
                    _ => (operands[0], 0),
                };
                let own = views[first].sizes();
                let mut sizes = vec![own[position], own[1]];
                if spec.part != tempo_passes::program::FlashPart::Key {
                    sizes.push(own[2]);
                }
                sizes.push(Extent::Static(*node.ty.shape.last().expect("a packed result")));
                sizes
            }
            NodeKind::Attention(spec, [q, k, v, _]) => {
                let operands = [views[*q].sizes(), views[*k].sizes(), views[*v].sizes()];
                spec.combine.result.iter().map(|&c| attention::label_size(spec, operands, c)).collect()
            }
            NodeKind::Reduce(kind, a, axis) => {
                let mut s = sizes(*a);
                if *kind != ReduceKind::CumSum {
                    s.remove(*axis);
                }
                s
            }
            NodeKind::Read { .. }
            | NodeKind::ReadRange { .. }
            | NodeKind::ReadAt { .. }
            | NodeKind::Constant { .. } => {
                return Err("compiler fault: a read or constant sized as computed".into());
            }
        })
    }

    /// Argmax keeps its running maximum in a scratch buffer of the
    /// result's shape, allocated here (outside the kernel of a single
    /// value); `None` for other nodes.
    fn argmax_scratch(
        &mut self,
        n: usize,
        body: &mut Body<'_, 'c, 'a>,
        target: &View<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<Option<View<'c, 'a>>> {
        let branch = body.branch;
        let node = &branch.nodes[n];
        let NodeKind::Reduce(ReduceKind::ArgMax, a, _) = node.kind else { return Ok(None) };
        let scratch_type =
            plain_type(self.context, &PointType { shape: node.ty.shape.clone(), element: branch.nodes[a].ty.element });
        let dynamic: Vec<Value> = node
            .ty
            .shape
            .iter()
            .zip(&target.sizes)
            .filter(|(d, _)| **d == DYNAMIC)
            .map(|(_, s)| b.extent(*s))
            .collect::<Built<_>>()?;
        let scratch = b.alloc(scratch_type, &dynamic)?;
        body.dynamic_buffers.push(scratch);
        Ok(Some(View { value: scratch, sizes: target.sizes.clone() }))
    }

    /// For the GPU, whether `node` runs as a kernel of one thread (an
    /// `scf.parallel` of one point): work whose result is a single value,
    /// so that host code never touches the data of stores, which can then
    /// live in device memory. External calls run on the host; tiled
    /// attention has its own loop; an all-reduce calls the runtime on the
    /// host between its copies (each a kernel of its own). (Nor do
    /// reductions over growing ranges, which run in two stages of
    /// parallel loops: `gpu_reduction`.)
    fn single_value_kernel(&self, node: &tempo_passes::program::Node, views: &[NodeValue<'c, 'a>]) -> bool {
        let split = match &node.kind {
            NodeKind::Reduce(ReduceKind::Sum | ReduceKind::Max | ReduceKind::Mean, a, axis) => {
                self.gpu_split_applies(views[*a].sizes(), *axis).is_some()
            }
            _ => false,
        };
        self.options.gpu
            && node.ty.shape.is_empty()
            && !split
            && !matches!(
                node.kind,
                NodeKind::Call { .. }
                    | NodeKind::Attention(..)
                    | NodeKind::FlashAttention(..)
                    | NodeKind::AllReduce(..)
            )
    }

    /// Computes node `n` into `target` (a spatial op's lowering, chosen by
    /// its kind); buffers of this step go to `body`'s.
    fn compute(
        &mut self,
        n: usize,
        body: &mut Body<'_, 'c, 'a>,
        target: &View<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let argmax_scratch = self.argmax_scratch(n, body, target, b)?;
        let (branch, views, reader_dims) = (body.branch, &body.views, &body.reader_dims);
        let (inlined, planned) = (&body.fusion.inlined, &body.planned);
        let node = &branch.nodes[n];
        let kind = &node.kind;
        let view = |k: usize| views[k].view();
        let fuses = super::node_kinds::operands_of(kind).is_some_and(|ops| ops.iter().any(|&a| inlined[a]));
        let single = self.single_value_kernel(node, views);
        let unit = if single { Some(b.scf_parallel(&[b.index(1)?])?.0) } else { None };
        let b = unit.as_ref().unwrap_or(b);
        let config = self.config();
        match kind {
            _ if fuses => self.fused_elementwise(n, &branch.nodes, views, inlined, target, b),
            NodeKind::Unary(op, a) => {
                let elements = [branch.nodes[*a].ty.element];
                self.elementwise(&[view(*a)?], &elements, target, &node.ty, Elementwise::Unary(*op), b)
            }
            NodeKind::Compare(predicate, a, c) => {
                let elements = [branch.nodes[*a].ty.element, branch.nodes[*c].ty.element];
                let op = Elementwise::Compare(*predicate);
                self.elementwise(&[view(*a)?, view(*c)?], &elements, target, &node.ty, op, b)
            }
            NodeKind::Select(c, a, x) => {
                let elements = [ElementType::I1, node.ty.element, node.ty.element];
                let operands = [view(*c)?, view(*a)?, view(*x)?];
                self.elementwise(&operands, &elements, target, &node.ty, Elementwise::Select, b)
            }
            NodeKind::Move(Movement::Concat(axis), operands) => {
                // Operands computed into their parts need no copy.
                let parts: Vec<View> = operands.iter().map(|&k| view(k).cloned()).collect::<Built<_>>()?;
                let placed: Vec<bool> = operands.iter().map(|&k| planned.placed_in[k] == Some(n)).collect();
                super::movement::build_concat(b, *axis, &parts, &placed, target, config)
            }
            NodeKind::Move(movement, operands) => {
                let parts: Vec<&View> = operands.iter().map(|&k| view(k)).collect::<Built<_>>()?;
                // An arange has no operand: its target stands in.
                let input = parts.first().copied().unwrap_or(target);
                super::movement::build_move(b, movement, input, target, &node.ty, config)
            }
            NodeKind::Random { seed, normal } => super::random::build(b, *seed, *normal, reader_dims, target, &node.ty),
            NodeKind::Position(d) => {
                let index =
                    *self.nest.index_of.get(d).ok_or("compiler fault: a position along a dimension not looped")?;
                b.store(index_as(b, index, node.ty.element)?, target.value, &[])
            }
            NodeKind::Bound(d) => {
                b.store(index_as(b, self.function.bound_args[*d], node.ty.element)?, target.value, &[])
            }
            NodeKind::Rank => self.rank(target, &node.ty, b),
            NodeKind::WorldSize => self.world_size(target, &node.ty, b),
            NodeKind::AllReduce(kind, a) => self.all_reduce(*kind, view(*a)?, target, &node.ty, b),
            NodeKind::Call { site, args, .. } => {
                let operands: Vec<(&View, &PointType)> =
                    args.iter().map(|&k| Ok((view(k)?, &branch.nodes[k].ty))).collect::<Built<_>>()?;
                self.external_call(*site, &operands, target, &node.ty, b)
            }
            NodeKind::Gather(table, indices) => {
                let index_element = branch.nodes[*indices].ty.element;
                super::movement::build_gather(
                    b,
                    view(*table)?,
                    view(*indices)?,
                    index_element,
                    target,
                    &node.ty,
                    config,
                )
            }
            NodeKind::Cast(a) => {
                let from = branch.nodes[*a].ty.element;
                self.elementwise(&[view(*a)?], &[from], target, &node.ty, Elementwise::Cast(from), b)
            }
            NodeKind::Binary(op, a, c) => self.elementwise(
                &[view(*a)?, view(*c)?],
                &[node.ty.element, node.ty.element],
                target,
                &node.ty,
                Elementwise::Binary(*op),
                b,
            ),
            NodeKind::Matmul(a, c) => self.matmul(view(*a)?, view(*c)?, target, node.ty.element, b),
            NodeKind::Einsum(spec, operands) => {
                let operands: Vec<&View> = operands.iter().map(|&k| view(k)).collect::<Built<_>>()?;
                self.einsum(spec, &operands, target, node.ty.element, b)
            }
            NodeKind::FlashAttention(spec, operands) => {
                let operands: Vec<&View> = operands.iter().map(|&k| view(k)).collect::<Built<_>>()?;
                self.flash_attention(spec, &operands, target, node.ty.element, b)
            }
            NodeKind::Attention(spec, [q, k, v, scale]) => {
                let operands = [view(*q)?, view(*k)?, view(*v)?, view(*scale)?];
                self.attention(spec, operands, target, node.ty.element, b)
            }
            NodeKind::DynamicSlice(a, offsets) => {
                let slice = self.dynamic_slice(view(*a)?, offsets, reader_dims, &node.ty, b)?;
                b.copy(slice.value, target.value)
            }
            NodeKind::Reduce(kind, a, axis) => {
                let input_element = branch.nodes[*a].ty.element;
                match kind {
                    ReduceKind::CumSum => {
                        super::reductions::build_cumsum(b, view(*a)?, *axis, target, node.ty.element, config)
                    }
                    ReduceKind::ArgMax => {
                        let best = argmax_scratch.as_ref().ok_or("compiler fault: argmax without its scratch")?;
                        super::reductions::build_argmax(b, view(*a)?, *axis, best, target, input_element)
                    }
                    _ if inlined[*a] => {
                        let chain = scalar::Chain::of(*a, &branch.nodes, inlined);
                        let leaves = chain.leaves.iter().map(|&l| view(l).cloned()).collect::<Built<Vec<_>>>()?;
                        let fused = reductions::Fused { leaves, chain: &chain };
                        self.reduce(*kind, views[*a].sizes(), None, *axis, target, &node.ty, Some(fused), b)
                    }
                    _ => self.reduce(*kind, views[*a].sizes(), Some(view(*a)?), *axis, target, &node.ty, None, b),
                }
            }
            NodeKind::Read { .. }
            | NodeKind::ReadRange { .. }
            | NodeKind::ReadAt { .. }
            | NodeKind::Constant { .. } => Err("compiler fault: a read or constant computed as an op".into()),
        }
    }

    /// The buffer node `node` (of this step's `sizes`) is computed into:
    /// the branch's slot for its result; otherwise a static buffer
    /// allocated once, a view of one allocated once for the largest its
    /// dynamic sizes can be, or one allocated for this step (added to
    /// `dynamic_buffers`, freed at the body's end).
    fn value_target(
        &mut self,
        n: usize,
        node: &tempo_passes::program::Node,
        sizes: &[Extent<'c, 'a>],
        is_result: bool,
        slot: Value<'c, 'a>,
        (dynamic_buffers, scratch): (&mut Vec<Value<'c, 'a>>, &mut Vec<(usize, usize)>),
        b: &Builder<'c, 'a>,
    ) -> Built<View<'c, 'a>> {
        if is_result {
            if !node.ty.is_static() {
                return Ok(View { value: slot, sizes: sizes.to_vec() });
            }
            return Ok(View::fixed(slot, &node.ty));
        }
        if node.ty.is_static() && !self.options.gpu {
            // From the pool, given back after its last use (`scratch`).
            let (view, k) = self.take_scratch(&node.ty, b)?;
            scratch.push((n, k));
            return Ok(view);
        }
        if node.ty.is_static() {
            return self.static_buffer(&node.ty, b);
        }
        // A batch's rows (of a data group's segment): a global buffer.
        if let Some(batch) = self.nest.batch
            && matches!(sizes.first(), Some(Extent::Value(v)) if super::views::key(*v) == super::views::key(batch.count))
            && node.ty.shape[1..].iter().all(|&d| d > 0)
        {
            return self.batch_buffer(&node.ty, b);
        }
        let ty = plain_type(self.context, &node.ty);
        let dynamic: Vec<Extent<'c, 'a>> =
            node.ty.shape.iter().zip(sizes).filter(|(d, _)| **d == DYNAMIC).map(|(_, s)| *s).collect();
        // Sized by the largest the dynamic sizes can be (a range read is no
        // longer than its dimension's bound, or than the constant width of
        // a window), it is allocated once outside the loops and viewed at
        // this step's sizes; otherwise allocated for this step. (A size
        // known statically, though the type says `?`, is its own cap.)
        let entry = self.function.entry.at(b.location);
        let caps: Option<Vec<Value<'c, 'a>>> = dynamic
            .iter()
            .map(|s| match s {
                Extent::Static(n) => entry.index(*n).ok(),
                Extent::Value(v) => self.function.size_caps.get(&super::views::key(*v)).copied(),
            })
            .collect();
        let Some(caps) = caps else {
            let operands: Vec<Value> = dynamic.iter().map(|s| b.extent(*s)).collect::<Built<_>>()?;
            let buffer = b.alloc(ty, &operands)?;
            dynamic_buffers.push(buffer);
            return Ok(View { value: buffer, sizes: sizes.to_vec() });
        };
        let buffer = entry.alloc(ty, &caps)?;
        self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
        let l = layout(ty)?;
        // Sizes known statically are static in the view.
        let dims: Vec<i64> = l.dims.iter().zip(sizes).map(|(&d, s)| static_size(s).unwrap_or(d)).collect();
        let view_ty = strided(self.context, l.element, &dims, &l.strides, 0);
        let zeros = vec![Extent::Static(0); sizes.len()];
        let value = b.subview(buffer, &zeros, sizes, view_ty)?;
        Ok(View { value, sizes: sizes.to_vec() })
    }

    /// A buffer of static type `ty` allocated once (at the function's
    /// entry, freed on exit), seen as a strided view.
    pub(super) fn static_buffer(&mut self, ty: &PointType, b: &Builder<'c, 'a>) -> Built<View<'c, 'a>> {
        let entry = self.function.entry.at(b.location);
        let buffer = entry.alloc(plain_type(self.context, ty), &[])?;
        self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
        Ok(View::fixed(entry.cast(buffer, view_type(self.context, ty))?, ty))
    }

    /// Whether reshapes of contiguous values are views (fused CPU code;
    /// the GPU's memory placement follows buffers through fewer view ops).
    pub(super) fn reshapes_are_views(&self) -> bool {
        self.options.fuse && !self.options.gpu
    }
}

/// An index value as a scalar of `element` (integers by a cast, floats
/// converted from the 64-bit integer).
pub(super) fn index_as<'c, 'a>(
    b: &Builder<'c, 'a>,
    index: Value<'c, 'a>,
    element: ElementType,
) -> Built<Value<'c, 'a>> {
    let i64_value = b.index_cast(index, b.integer_type(64))?;
    let ty = super::views::element_type(b.context(), element);
    match element {
        ElementType::I64 => Ok(i64_value),
        ElementType::I32 | ElementType::I1 => b.index_cast(index, ty),
        ElementType::F32 | ElementType::F64 => b.convert("arith.sitofp", i64_value, ty),
    }
}

/// The element of `value` if it is a splat dense elements attribute (its
/// one value, typed).
fn splat_element(value: Attribute<'_>) -> Option<Attribute<'_>> {
    // SAFETY: plain queries of a live attribute.
    unsafe {
        let raw = value.to_raw();
        if !mlir_sys::mlirAttributeIsADenseElements(raw) || !mlir_sys::mlirDenseElementsAttrIsSplat(raw) {
            return None;
        }
        Some(Attribute::from_raw(mlir_sys::mlirDenseElementsAttrGetSplatValue(raw)))
    }
}
