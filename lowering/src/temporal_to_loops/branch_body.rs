//! The ops of one branch in `lower-temporal-to-loops`: a view per read
//! (points of stores, inputs and outputs; ranges through `reads`), a buffer
//! per intermediate value (static, capped by the bounds, or per step), the
//! GPU's kernels of one point for single values, and the dispatch to each
//! spatial op's lowering.

use super::{
    Elementwise, Emitter, TestFaultKind, View, attention, broadcast_sizes, contractions, destinations, elementwise,
    memref_layout, plain_type, reductions, row_fusion, scalar, transposed_view, view_type,
};
use std::collections::HashMap;
use std::fmt::Write;
use tempo_passes::affine::AffineExpr;
use tempo_passes::program::{DYNAMIC, ElementType, Movement, NodeKind, PointType, ReduceKind};

impl Emitter<'_, '_> {
    /// Breaks the code of the first op named `op` as the `test-fault`
    /// option asks.
    fn inject_test_fault(&mut self, op: &str, indent: &str, out: &mut String) {
        if self.test_fault.as_ref().is_none_or(|f| f.op != op) {
            return;
        }
        match self.test_fault.take().map(|f| f.kind) {
            Some(TestFaultKind::Parse) => {
                let _ = writeln!(out, "{indent}%test_fault = memref.load [%test_fault_index] : memref<f32>");
            }
            Some(TestFaultKind::Verify) => {
                let _ = writeln!(out, "{indent}%test_fault = \"arith.constant\"() {{value = 1 : i32}} : () -> i64");
            }
            Some(TestFaultKind::Build) => self.kernel_fault = Some(op.to_string()),
            Some(TestFaultKind::Panic) => panic!("test fault injected while lowering '{op}'"),
            None => {}
        }
    }

    /// The ops of one branch, computing into `slot`.
    pub(super) fn branch_body(&mut self, i: usize, b: usize, slot: &str, indent: &str, out: &mut String) {
        let program = self.program;
        let reader = &program.tensors[i];
        let reader_dims: Vec<String> = reader.domain.iter().map(|d| self.index_of[d].clone()).collect();
        let branch = &reader.branches[b];
        let mut views: Vec<View> = Vec::new();
        // Buffers of dynamic size, allocated in this body and freed at its end.
        let mut dynamic_buffers: Vec<(String, String)> = Vec::new();
        let Fusion { groups, member_of, inlined, users, epilogue_product, has_epilogue, destination } =
            self.fusion(branch);
        let candidates = destinations::Candidates {
            users: &users,
            member_of: &member_of,
            inlined: &inlined,
            has_epilogue: &has_epilogue,
            slot_operand: destination,
        };
        let planned = self.plan_destinations(branch, slot, &candidates, indent, out);
        for (n, node) in branch.nodes.iter().enumerate() {
            let op_name = node.kind.op_name();
            self.origins.mark(node.location, &op_name, indent, out);
            self.inject_test_fault(&op_name, indent, out);
            let is_result = n == branch.result;
            let view = match &node.kind {
                NodeKind::Read { source, index } => {
                    let mut coords = Vec::new();
                    let source_domain = &program.tensors[*source].domain;
                    for (expr, &dim) in index.results.iter().zip(source_domain) {
                        // The reader's own variable of the same dimension is in range.
                        if let AffineExpr::Dim(k) = expr
                            && reader.domain[*k] == dim
                        {
                            coords.push(reader_dims[*k].clone());
                            continue;
                        }
                        // Other coordinates are clamped into the source's extent:
                        // the point checks guarantee they are in range wherever
                        // the point is needed, and clamping keeps the accesses of
                        // points nobody needs inside the store.
                        let c = self.apply(
                            "affine.apply",
                            std::slice::from_ref(expr),
                            index.num_dims,
                            index.num_symbols,
                            &reader_dims,
                            indent,
                            out,
                        );
                        coords.push(self.clamp(&c, "%zero_index", &format!("%last{dim}"), indent, out));
                    }
                    let name = self.point_view(*source, &coords, false, indent, out);
                    View::fixed(name, &node.ty)
                }
                NodeKind::ReadRange { source, lower, upper, caps } => {
                    self.range_view(*source, lower, upper, caps, &reader_dims, &node.ty, indent, out)
                }
                NodeKind::Constant { text, .. } => {
                    let global = format!("__tempo_constant_{}", self.next_id + 1);
                    let value = text.rsplit_once(" : ").map_or(text.as_str(), |(v, _)| v);
                    let _ = writeln!(
                        self.globals,
                        "  memref.global \"private\" constant @{global} : {} = {value}",
                        plain_type(&node.ty)
                    );
                    let name = self.fresh("c");
                    let ty = plain_type(&node.ty);
                    if self.gpu {
                        // Kernels cannot read the host's globals: the value
                        // is copied once, at entry, into memory they can.
                        let global_value = self.fresh("c");
                        let mut entry = String::new();
                        let _ = writeln!(entry, "    {global_value} = memref.get_global @{global} : {ty}");
                        let _ = writeln!(entry, "    {name} = memref.alloc() : {ty}");
                        let _ = writeln!(entry, "    memref.copy {global_value}, {name} : {ty} to {ty}");
                        let _ = writeln!(self.exit, "    memref.dealloc {name} : {ty}");
                        let view = self.cast(&name, &node.ty, "    ", &mut entry);
                        self.entry += &entry;
                        View::fixed(view, &node.ty)
                    } else {
                        let _ = writeln!(out, "{indent}{name} = memref.get_global @{global} : {ty}");
                        View::fixed(self.cast(&name, &node.ty, indent, out), &node.ty)
                    }
                }
                kind => {
                    let sizes = self.result_sizes(n, branch, &views, indent, out);
                    // An elementwise op fused into its only user has no
                    // buffer: the user computes it (see `elementwise`).
                    if inlined[n] {
                        views.push(View { name: String::new(), ty: String::new(), sizes });
                        continue;
                    }
                    // A product with an epilogue is computed by its chain's
                    // root, into the root's buffer.
                    if has_epilogue[n] {
                        views.push(View { name: String::new(), ty: String::new(), sizes });
                        continue;
                    }
                    // Members of a row group: made (views and buffers) here,
                    // computed together at the group's last node.
                    if let Some(g) = member_of[n] {
                        let group = &groups[g];
                        let view = if group.materialized.contains(&n) {
                            self.value_target(node, &sizes, is_result, slot, &mut dynamic_buffers, indent, out)
                        } else {
                            View { name: String::new(), ty: String::new(), sizes }
                        };
                        views.push(view);
                        if n == group.end {
                            self.row_group(group, &branch.nodes, &views, indent, out);
                        }
                        continue;
                    }
                    // A permutation that is not the body's result is a view
                    // (`memref.transpose`): no copy; its consumers read
                    // through the permuted strides.
                    if let (NodeKind::Move(Movement::Permute(permutation), operands), false) = (kind, is_result) {
                        let view = transposed_view(&views[operands[0]], permutation, self.fresh("perm"), indent, out);
                        views.push(view);
                        continue;
                    }
                    // Fused, so is a reshape of a contiguous value, and the
                    // value a result reshape reads is computed straight into
                    // the slot seen with its shape.
                    if let (NodeKind::Move(Movement::Reshape, operands), true) = (kind, self.reshapes_are_views()) {
                        let a = operands[0];
                        // Its operand was computed into its destination.
                        if planned.placed_in[a] == Some(n) {
                            views.push(planned.view[&n].clone());
                            continue;
                        }
                        if is_result && destination == Some(a) {
                            views.push(View::fixed(slot.to_string(), &node.ty));
                            continue;
                        }
                        if !is_result {
                            let from = &branch.nodes[a].ty;
                            if let Some(view) = self.reshape_view(&views[a], from, &node.ty, indent, out) {
                                views.push(view);
                                continue;
                            }
                        }
                    }
                    // So is a slice at point-dependent offsets (`memref.subview`).
                    if let (NodeKind::DynamicSlice(a, offsets), false) = (kind, is_result) {
                        let view = self.dynamic_slice(&views[*a], offsets, &reader_dims, &node.ty, indent, out);
                        views.push(view);
                        continue;
                    }
                    let destination_view = match destination == Some(n) {
                        true => {
                            let result = &branch.nodes[branch.result].ty;
                            let slot_view = View::fixed(slot.to_string(), result);
                            self.reshape_view(&slot_view, result, &node.ty, indent, out)
                        }
                        false => None,
                    };
                    let target = match (planned.view.get(&n), destination_view) {
                        (Some(view), _) => view.clone(),
                        (None, Some(view)) => view,
                        (None, None) => {
                            self.value_target(node, &sizes, is_result, slot, &mut dynamic_buffers, indent, out)
                        }
                    };
                    if let Some(&m) = epilogue_product.get(&n) {
                        let NodeKind::Matmul(a, b) = branch.nodes[m].kind else { unreachable!("products are matmuls") };
                        let chain = scalar::Chain::of(n, &branch.nodes, &inlined);
                        let sum_argument =
                            chain.leaves.iter().position(|&l| l == m).expect("the product is a leaf of its chain");
                        let leaves = chain.leaves.iter().filter(|&&l| l != m).map(|&l| views[l].clone()).collect();
                        self.epilogue = Some(contractions::PendingEpilogue { leaves, sum_argument, chain });
                        let element = branch.nodes[m].ty.element;
                        self.matmul(&views[a], &views[b], &target, element, indent, out);
                        if self.epilogue.take().is_some() {
                            // The kernel did not apply it: the chain runs
                            // after the product, in place.
                            views[m] =
                                View { name: target.name.clone(), ty: target.ty.clone(), sizes: target.sizes.clone() };
                            self.fused_elementwise(n, &branch.nodes, &views, &inlined, &target, indent, out);
                        }
                        views.push(target);
                        continue;
                    }
                    let inputs = Inputs {
                        branch,
                        views: &views,
                        inlined: &inlined,
                        planned: &planned,
                        reader_dims: &reader_dims,
                    };
                    self.compute(n, &inputs, &target, &mut dynamic_buffers, indent, out);
                    views.push(target);
                    continue;
                }
            };
            if is_result {
                let slot_ty = view_type(&node.ty);
                // (A single value is copied by a kernel of one thread on the GPU.)
                let unit = (self.gpu && node.ty.shape.is_empty())
                    .then(|| self.open_parallel_loop(&["1".to_string()], indent, out));
                let inner = unit.as_ref().map_or(indent, |u| u.inner.as_str());
                let _ = writeln!(out, "{inner}linalg.copy ins({} : {}) outs({slot} : {slot_ty})", view.name, view.ty);
                if let Some(unit) = unit {
                    unit.close(out);
                }
            }
            views.push(view);
        }
        for (buffer, ty) in dynamic_buffers {
            let _ = writeln!(out, "{indent}memref.dealloc {buffer} : {ty}");
        }
    }
}

/// What fusion decided for a branch's nodes (see [`Emitter::fusion`]).
struct Fusion {
    /// Row groups (norms, softmax) computed in one nest per row.
    groups: Vec<row_fusion::RowGroup>,
    /// The group each node is a member of.
    member_of: Vec<Option<usize>>,
    /// Elementwise nodes computed in their user's loop.
    inlined: Vec<bool>,
    /// The users of each node.
    users: Vec<Vec<usize>>,
    /// For the root of a chain applied by a matrix kernel to its product
    /// (an epilogue), the product.
    epilogue_product: HashMap<usize, usize>,
    /// Products whose chain is their epilogue.
    has_epilogue: Vec<bool>,
    /// The value a result reshape reads, computed straight into the slot.
    destination: Option<usize>,
}

/// What the computation of a node reads: the branch, the views of the
/// nodes before it, the inlined nodes, the destinations planned and the
/// reader's point.
struct Inputs<'r> {
    branch: &'r tempo_passes::program::Branch<'r>,
    views: &'r [View],
    inlined: &'r [bool],
    planned: &'r destinations::Destinations,
    reader_dims: &'r [String],
}

impl Emitter<'_, '_> {
    /// Fusion's decisions for `branch`: row groups, elementwise chains
    /// inlined into their users, epilogues of products, and a result
    /// reshape's operand computed into the slot (none of it when fusion is
    /// off; no row groups or epilogues on the GPU, whose mapping fuses
    /// parallel loops).
    fn fusion(&self, branch: &tempo_passes::program::Branch) -> Fusion {
        // Row groups (norms, softmax) in one nest per row; elementwise
        // chains in their user's loop (neither when fusion is off, nor on
        // the GPU, whose mapping fuses parallel loops).
        let groups = if self.fuse && !self.gpu { row_fusion::row_groups(branch) } else { Vec::new() };
        let mut member_of: Vec<Option<usize>> = vec![None; branch.nodes.len()];
        for (g, group) in groups.iter().enumerate() {
            for &(m, _) in &group.members {
                member_of[m] = Some(g);
            }
        }
        let mut inlined = elementwise::inlined_nodes(branch);
        if !self.fuse {
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
        if self.fuse && !self.gpu {
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
                    && elementwise::operands_of(&nodes[root].kind).is_some()
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
                let computed = !matches!(
                    branch.nodes[a].kind,
                    NodeKind::Read { .. }
                        | NodeKind::ReadRange { .. }
                        | NodeKind::Constant { .. }
                        | NodeKind::Move(Movement::Permute(_) | Movement::Reshape, _)
                        | NodeKind::DynamicSlice(..)
                );
                let static_sizes = |p: &PointType| p.shape.iter().all(|&d| d > 0);
                let fits = static_sizes(&branch.nodes[a].ty) && static_sizes(&branch.nodes[branch.result].ty);
                (uses == 1 && computed && fits && member_of[a].is_none() && !inlined[a]).then_some(a)
            }
            _ => None,
        };
        Fusion { groups, member_of, inlined, users, epilogue_product, has_epilogue, destination }
    }

    /// The sizes (literals or index values) of node `n`'s result at this
    /// point, from its operands' views.
    fn result_sizes(
        &mut self,
        n: usize,
        branch: &tempo_passes::program::Branch,
        views: &[View],
        indent: &str,
        out: &mut String,
    ) -> Vec<String> {
        let node = &branch.nodes[n];
        match &node.kind {
            NodeKind::Unary(_, a) | NodeKind::Cast(a) => views[*a].sizes.clone(),
            NodeKind::Binary(_, a, c) | NodeKind::Compare(_, a, c) => broadcast_sizes(&[&views[*a], &views[*c]]),
            NodeKind::Select(c, a, b) => broadcast_sizes(&[&views[*c], &views[*a], &views[*b]]),
            NodeKind::Move(movement, operands) => match movement {
                Movement::Permute(p) => p.iter().map(|&k| views[operands[0]].sizes[k].clone()).collect(),
                Movement::Flip(_) => views[operands[0]].sizes.clone(),
                Movement::Concat(axis) => {
                    let (a, b) = (views[operands[0]].sizes.clone(), views[operands[1]].sizes.clone());
                    let mut sizes = a.clone();
                    sizes[*axis] = match (a[*axis].parse::<i64>(), b[*axis].parse::<i64>()) {
                        (Ok(x), Ok(y)) => (x + y).to_string(),
                        _ => {
                            let x = self.index_value(&a[*axis], indent, out);
                            let y = self.index_value(&b[*axis], indent, out);
                            let total = self.fresh("i");
                            let _ = writeln!(out, "{indent}{total} = arith.addi {x}, {y} : index");
                            total
                        }
                    };
                    sizes
                }
                // The dynamic size of a reshape or expand is the operand's.
                Movement::Reshape => {
                    let input = &views[operands[0]].sizes;
                    let carried = branch.nodes[operands[0]].ty.shape.iter().position(|&d| d == DYNAMIC);
                    node.ty
                        .shape
                        .iter()
                        .map(|&d| match carried {
                            Some(k) if d == DYNAMIC => input[k].clone(),
                            _ => d.to_string(),
                        })
                        .collect()
                }
                Movement::Expand => {
                    let input = &views[operands[0]].sizes;
                    let skip = node.ty.shape.len() - input.len();
                    node.ty
                        .shape
                        .iter()
                        .enumerate()
                        .map(|(k, &d)| if d == DYNAMIC { input[k - skip].clone() } else { d.to_string() })
                        .collect()
                }
                _ => node.ty.shape.iter().map(i64::to_string).collect(),
            },
            NodeKind::Random { .. } | NodeKind::Call { .. } => node.ty.shape.iter().map(i64::to_string).collect(),
            NodeKind::Gather(table, indices) => {
                let mut sizes = views[*indices].sizes.clone();
                sizes.extend(views[*table].sizes[1..].iter().cloned());
                sizes
            }
            NodeKind::Matmul(a, c) => {
                let (x, y) = (&views[*a].sizes, &views[*c].sizes);
                match (x.len(), y.len()) {
                    (2, 1) => vec![x[0].clone()],
                    (1, _) => vec![y[1].clone()],
                    (rx, ry) => {
                        let batch = |s: &[String]| View { name: String::new(), ty: String::new(), sizes: s.to_vec() };
                        let mut sizes = broadcast_sizes(&[&batch(&x[..rx - 2]), &batch(&y[..ry - 2])]);
                        sizes.extend([x[rx - 2].clone(), y[ry - 1].clone()]);
                        sizes
                    }
                }
            }
            NodeKind::Einsum(spec, operands) => spec
                .result
                .iter()
                .map(|c| {
                    let (k, d) = spec
                        .operands
                        .iter()
                        .enumerate()
                        .find_map(|(k, o)| o.iter().position(|x| x == c).map(|d| (k, d)))
                        .expect("a result label is in some operand");
                    views[operands[k]].sizes[d].clone()
                })
                .collect(),
            NodeKind::Attention(spec, [q, k, v, _]) => {
                let operands = [&views[*q], &views[*k], &views[*v]];
                spec.combine.result.iter().map(|&c| attention::label_size(spec, operands, c)).collect()
            }
            NodeKind::DynamicSlice(..) => node.ty.shape.iter().map(i64::to_string).collect(),
            NodeKind::Reduce(kind, a, axis) => {
                let mut s = views[*a].sizes.clone();
                if *kind != ReduceKind::CumSum {
                    s.remove(*axis);
                }
                s
            }
            _ => unreachable!("reads and constants handled above"),
        }
    }

    /// Computes node `n` into `target` (a spatial op's lowering, chosen by
    /// its kind); buffers of this step go to `dynamic_buffers`.
    fn compute(
        &mut self,
        n: usize,
        inputs: &Inputs,
        target: &View,
        dynamic_buffers: &mut Vec<(String, String)>,
        indent: &str,
        out: &mut String,
    ) {
        let Inputs { branch, views, inlined, planned, reader_dims } = *inputs;
        let node = &branch.nodes[n];
        let kind = &node.kind;
        let fuses = elementwise::operands_of(kind).is_some_and(|ops| ops.iter().any(|&a| inlined[a]));
        // Argmax keeps its running maximum in a scratch buffer
        // of the result's shape, allocated here (outside the
        // kernel of a single value, below).
        let argmax_scratch = if let NodeKind::Reduce(ReduceKind::ArgMax, a, _) = kind {
            let scratch = self.fresh("buf");
            let shape: String =
                node.ty.shape.iter().map(|&d| if d == DYNAMIC { "?x".to_string() } else { format!("{d}x") }).collect();
            let scratch_ty = format!("memref<{shape}{}>", branch.nodes[*a].ty.element.mlir());
            let dynamic: Vec<&str> = node
                .ty
                .shape
                .iter()
                .zip(&target.sizes)
                .filter(|(d, _)| **d == DYNAMIC)
                .map(|(_, s)| s.as_str())
                .collect();
            let _ = writeln!(out, "{indent}{scratch} = memref.alloc({}) : {scratch_ty}", dynamic.join(", "));
            dynamic_buffers.push((scratch.clone(), scratch_ty.clone()));
            Some(View { name: scratch, ty: scratch_ty, sizes: target.sizes.clone() })
        } else {
            None
        };
        // For the GPU, work whose result is a single value runs
        // as a kernel of one thread (an `scf.parallel` of one
        // point), so that host code never touches the data of
        // stores, which can then live in device memory. External
        // calls run on the host; tiled attention has its own loop.
        // (Nor do reductions over growing ranges, which run in
        // two stages of parallel loops: `gpu_reduction`.)
        let split = match kind {
            NodeKind::Reduce(ReduceKind::Sum | ReduceKind::Max | ReduceKind::Mean, a, axis) => {
                self.gpu_split_applies(&views[*a], *axis).is_some()
            }
            _ => false,
        };
        let single = self.gpu
            && node.ty.shape.is_empty()
            && !split
            && !matches!(kind, NodeKind::Call { .. } | NodeKind::Attention(..));
        let unit = single.then(|| self.open_parallel_loop(&["1".to_string()], indent, out));
        let indent = unit.as_ref().map_or(indent, |u| u.inner.as_str()).to_string();
        let indent = indent.as_str();
        match kind {
            _ if fuses => self.fused_elementwise(n, &branch.nodes, &views, &inlined, &target, indent, out),
            NodeKind::Unary(op, a) => {
                let elements = [branch.nodes[*a].ty.element];
                self.elementwise(&[&views[*a]], &elements, &target, &node.ty, Elementwise::Unary(*op), indent, out)
            }
            NodeKind::Compare(predicate, a, c) => {
                let elements = [branch.nodes[*a].ty.element, branch.nodes[*c].ty.element];
                let op = Elementwise::Compare(*predicate);
                self.elementwise(&[&views[*a], &views[*c]], &elements, &target, &node.ty, op, indent, out)
            }
            NodeKind::Select(c, a, b) => {
                let elements = [ElementType::I1, node.ty.element, node.ty.element];
                let inputs = [&views[*c], &views[*a], &views[*b]];
                self.elementwise(&inputs, &elements, &target, &node.ty, Elementwise::Select, indent, out)
            }
            NodeKind::Move(Movement::Concat(axis), operands) => {
                // Operands computed into their parts need no copy.
                let inputs: Vec<&View> = operands.iter().map(|&k| &views[k]).collect();
                let placed: Vec<bool> = operands.iter().map(|&k| planned.placed_in[k] == Some(n)).collect();
                self.concat(*axis, &inputs, &placed, &target, indent, out);
            }
            NodeKind::Move(movement, operands) => {
                let inputs: Vec<&View> = operands.iter().map(|&k| &views[k]).collect();
                self.move_elements(movement, &inputs, &target, &node.ty, indent, out);
            }
            NodeKind::Random { seed, normal } => {
                self.random(*seed, *normal, &reader_dims, &target, &node.ty, indent, out);
            }
            NodeKind::Call { site, args, .. } => {
                let inputs: Vec<(&View, &PointType)> = args.iter().map(|&k| (&views[k], &branch.nodes[k].ty)).collect();
                self.external_call(*site, &inputs, &target, &node.ty, indent, out);
            }
            NodeKind::Gather(table, indices) => {
                let index_element = branch.nodes[*indices].ty.element;
                self.gather(&views[*table], &views[*indices], index_element, &target, &node.ty, indent, out);
            }
            NodeKind::Cast(a) => {
                let from = branch.nodes[*a].ty.element;
                let op = Elementwise::Cast(from);
                self.elementwise(&[&views[*a]], &[from], &target, &node.ty, op, indent, out)
            }
            NodeKind::Binary(op, a, c) => self.elementwise(
                &[&views[*a], &views[*c]],
                &[node.ty.element, node.ty.element],
                &target,
                &node.ty,
                Elementwise::Binary(*op),
                indent,
                out,
            ),
            NodeKind::Matmul(a, c) => {
                self.matmul(&views[*a], &views[*c], &target, node.ty.element, indent, out);
            }
            NodeKind::Einsum(spec, operands) => {
                let inputs: Vec<&View> = operands.iter().map(|&k| &views[k]).collect();
                self.einsum(spec, &inputs, &target, node.ty.element, indent, out);
            }
            NodeKind::Attention(spec, [q, k, v, scale]) => {
                let inputs = [&views[*q], &views[*k], &views[*v], &views[*scale]];
                self.attention(spec, inputs, &target, node.ty.element, indent, out);
            }
            NodeKind::DynamicSlice(a, offsets) => {
                let view = self.dynamic_slice(&views[*a], offsets, &reader_dims, &node.ty, indent, out);
                let _ = writeln!(
                    out,
                    "{indent}linalg.copy ins({} : {}) outs({} : {})",
                    view.name, view.ty, target.name, target.ty
                );
            }
            NodeKind::Reduce(kind, a, axis) => {
                let input_element = branch.nodes[*a].ty.element;
                match kind {
                    ReduceKind::CumSum => self.cumsum(&views[*a], *axis, &target, &node.ty, indent, out),
                    ReduceKind::ArgMax => {
                        let best = argmax_scratch.as_ref().expect("allocated above");
                        self.argmax(&views[*a], *axis, best, &target, input_element, indent, out);
                    }
                    _ if inlined[*a] => {
                        let chain = scalar::Chain::of(*a, &branch.nodes, &inlined);
                        let leaves = chain.leaves.iter().map(|&l| &views[l]).collect();
                        let fused = reductions::Fused { chain, leaves };
                        self.reduce(*kind, &views[*a], *axis, &target, &node.ty, Some(fused), indent, out)
                    }
                    _ => self.reduce(*kind, &views[*a], *axis, &target, &node.ty, None, indent, out),
                }
            }
            _ => unreachable!("reads and constants handled above"),
        }
        if let Some(unit) = unit {
            unit.close(out);
        }
    }
}

impl Emitter<'_, '_> {
    /// The buffer node `node` (of this step's `sizes`) is computed into:
    /// the branch's slot for its result; otherwise a static buffer
    /// allocated once, a view of one allocated once for the largest its
    /// dynamic sizes can be, or one allocated for this step (added to
    /// `dynamic_buffers`, freed at the body's end).
    #[allow(clippy::too_many_arguments)]
    fn value_target(
        &mut self,
        node: &tempo_passes::program::Node,
        sizes: &[String],
        is_result: bool,
        slot: &str,
        dynamic_buffers: &mut Vec<(String, String)>,
        indent: &str,
        out: &mut String,
    ) -> View {
        if is_result {
            View::fixed(slot.to_string(), &node.ty)
        } else if node.ty.is_static() {
            let buffer = self.fresh("buf");
            let _ = writeln!(self.entry, "    {buffer} = memref.alloc() : {}", plain_type(&node.ty));
            let _ = writeln!(self.exit, "    memref.dealloc {buffer} : {}", plain_type(&node.ty));
            let mut entry = String::new();
            let view = self.cast(&buffer, &node.ty, "    ", &mut entry);
            self.entry += &entry;
            View::fixed(view, &node.ty)
        } else {
            let buffer = self.fresh("buf");
            let ty = plain_type(&node.ty);
            let dynamic: Vec<&str> =
                node.ty.shape.iter().zip(sizes).filter(|(d, _)| **d == DYNAMIC).map(|(_, s)| s.as_str()).collect();
            // Sized by the largest the dynamic sizes can be (a
            // range read is no longer than its dimension's bound,
            // or than the constant width of a window), it is
            // allocated once outside the loops and viewed at this
            // step's sizes; otherwise allocated for this step.
            // (A size known statically, though the type says
            // `?`, is its own cap.)
            let caps: Option<Vec<String>> = dynamic
                .iter()
                .map(|s| match s.parse::<i64>() {
                    Ok(n) => {
                        let c = self.fresh("cap");
                        let _ = writeln!(self.entry, "    {c} = arith.constant {n} : index");
                        Some(c)
                    }
                    Err(_) => self.size_caps.get(*s).cloned(),
                })
                .collect();
            match caps {
                Some(caps) => {
                    let _ = writeln!(self.entry, "    {buffer} = memref.alloc({}) : {ty}", caps.join(", "));
                    let _ = writeln!(self.exit, "    memref.dealloc {buffer} : {ty}");
                    let (dims, element, strides, _) = memref_layout(&ty).expect("plain types are memrefs");
                    // Sizes known statically are static in the view.
                    let dims: Vec<String> = dims
                        .iter()
                        .zip(sizes)
                        .map(|(d, s)| if s.parse::<i64>().is_ok() { s.clone() } else { d.clone() })
                        .collect();
                    let view_ty = format!("memref<{}x{element}, strided<[{}]>>", dims.join("x"), strides.join(", "));
                    let view = self.fresh("view");
                    let zeros: Vec<&str> = sizes.iter().map(|_| "0").collect();
                    let ones: Vec<&str> = sizes.iter().map(|_| "1").collect();
                    let _ = writeln!(
                        out,
                        "{indent}{view} = memref.subview {buffer}[{}] [{}] [{}] : {ty} to {view_ty}",
                        zeros.join(", "),
                        sizes.join(", "),
                        ones.join(", ")
                    );
                    View { name: view, ty: view_ty, sizes: sizes.to_vec() }
                }
                None => {
                    let operands: Vec<String> = dynamic.iter().map(|s| self.index_value(s, indent, out)).collect();
                    let _ = writeln!(out, "{indent}{buffer} = memref.alloc({}) : {ty}", operands.join(", "));
                    dynamic_buffers.push((buffer.clone(), ty.clone()));
                    View { name: buffer, ty, sizes: sizes.to_vec() }
                }
            }
        }
    }
}

impl Emitter<'_, '_> {
    /// Whether reshapes of contiguous values are views (fused CPU code;
    /// the GPU's memory placement follows buffers through fewer view ops).
    pub(super) fn reshapes_are_views(&self) -> bool {
        self.fuse && !self.gpu
    }
}
