//! `lower-temporal-to-loops`: lowers a verified temporal program to one
//! function of `affine` loops over `memref` stores with `linalg` spatial work.
//!
//! What it produces: `func.func @tempo_main(%T: index, ..., inputs...,
//! outputs...)` (bounds in dimension order, then one memref per input in
//! declaration order, then one per output in output order), marked
//! `llvm.emit_c_interface`. Tensors without a domain are computed once
//! before the loop; tensors over the temporal dimension are computed inside
//! `affine.for %t = 0 to %T`, in an order that respects same-step reads.
//! Each branch becomes an arm of an `affine.if` chain on its condition.
//!
//! Memory: a computed tensor is stored in a ring of `k + 1` points where `k`
//! is the largest distance `t - k` any read uses, so a tensor read only at
//! `t - 1` holds 2 points whatever `T` is. Outputs are copied to the output
//! buffer point by point. Inputs are read in place.
//!
//! Scope (refused with a located diagnostic otherwise): one temporal
//! dimension; reads of an over-`t` tensor at `t - k` (k >= 0) from an
//! over-`t` reader; reads of domain-less tensors from anywhere. Whether every
//! read point exists (`t - k >= 0` where a branch reads it) and every needed
//! point is defined depends on the bounds and is checked before execution by
//! the runtime (`tempo_lowering::check_bounds`).

use crate::splice::replace_module_body;
use std::collections::HashMap;
use std::fmt::Write;
use tempo_passes::affine::{AffineExpr, IntegerSet};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};
use tempo_passes::program::{BinaryKind, ElementType, NodeKind, PointType, Program, UnaryKind};
use tempo_passes::verify::verify_program;

use melior::ir::OperationRef;

/// Name of the generated entry function.
pub const ENTRY: &str = "tempo_main";

/// The `lower-temporal-to-loops` pass.
pub struct LowerTemporalToLoops;

impl TempoPass for LowerTemporalToLoops {
    fn name(&self) -> &'static str {
        "lower-temporal-to-loops"
    }
    fn summary(&self) -> &'static str {
        "Lower a temporal program to affine loops over memref ring stores with linalg spatial work"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let program = verify_program(op)?;
        if program.tensors.is_empty() {
            return Ok(());
        }
        let plan = Plan::new(&program)?;
        let text = plan.emit(&program);
        replace_module_body(op, &text, |name| name.starts_with("temporal."))
            .map_err(|message| vec![PassDiagnostic::new(op.location(), message)])
    }
}

use melior::ir::operation::OperationLike;

/// Where each tensor lives and in which order tensors are computed.
pub struct Plan {
    /// The temporal dimension, if any tensor has one.
    pub time_dim: Option<usize>,
    /// Domain-less computed tensors, in dependence order.
    pub static_order: Vec<usize>,
    /// Over-`t` computed tensors, in same-step dependence order.
    pub loop_order: Vec<usize>,
    /// Ring size of each computed tensor over `t` (1 for domain-less).
    pub ring: Vec<usize>,
}

impl Plan {
    /// Checks the slice restrictions and plans storage and order.
    pub fn new<'c>(program: &Program<'c>) -> Result<Self, Vec<PassDiagnostic<'c>>> {
        let mut errors = Vec::new();
        let mut time_dim = None;
        for t in &program.tensors {
            match t.domain.as_slice() {
                [] => {}
                [d] if time_dim.is_none() || time_dim == Some(*d) => time_dim = Some(*d),
                _ => errors.push(PassDiagnostic::new(
                    t.location,
                    format!(
                        "tensor '{}': this lowering handles programs over one temporal dimension; '{}' has domain [{}]",
                        t.name,
                        t.name,
                        program.domain_names(program.tensor_index(&t.name).unwrap()).join(", ")
                    ),
                )),
            }
        }
        let n = program.tensors.len();
        let mut ring = vec![1usize; n];
        // Same-step dependences: reader -> sources it needs first.
        let mut needs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (reader, tensor) in program.tensors.iter().enumerate() {
            for branch in &tensor.branches {
                for node in &branch.nodes {
                    let NodeKind::Read { source, index } = &node.kind else { continue };
                    let src = &program.tensors[*source];
                    let described = program.describe_read(reader, *source, index);
                    match (tensor.domain.len(), src.domain.len()) {
                        (_, 0) => needs[reader].push(*source),
                        (1, 1) => match index.results[0].offset_from_dim(0) {
                            Some(c) if c <= 0 => {
                                let k = (-c) as usize;
                                if k == 0 {
                                    needs[reader].push(*source);
                                }
                                if !src.is_input {
                                    ring[*source] = ring[*source].max(k + 1);
                                }
                            }
                            Some(_) => errors.push(PassDiagnostic::new(
                                node.location,
                                format!("read {described} reads the future; this lowering only handles reads of t - k (k >= 0) yet"),
                            )),
                            None => errors.push(PassDiagnostic::new(
                                node.location,
                                format!("read {described}: this lowering only handles reads of t - k (k >= 0) of tensors over t yet"),
                            )),
                        },
                        _ => errors.push(PassDiagnostic::new(
                            node.location,
                            format!(
                                "read {described}: a tensor without a domain cannot read a tensor over a dimension in this lowering yet"
                            ),
                        )),
                    }
                }
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let computed = |domain_len: usize| -> Vec<usize> {
            (0..n).filter(|&i| !program.tensors[i].is_input && program.tensors[i].domain.len() == domain_len).collect()
        };
        let static_order = topological(&computed(0), &needs);
        let loop_order = topological(&computed(1), &needs);
        Ok(Self { time_dim, static_order, loop_order, ring })
    }

    /// Emits the lowered module body as MLIR text.
    pub fn emit(&self, program: &Program) -> String {
        Emitter::new(program, self).emit()
    }
}

/// Orders `members` so that each comes after the members it needs (the
/// verifier has ruled out same-point cycles).
fn topological(members: &[usize], needs: &[Vec<usize>]) -> Vec<usize> {
    let mut order = Vec::new();
    let mut state: HashMap<usize, bool> = HashMap::new();
    fn visit(
        v: usize,
        members: &[usize],
        needs: &[Vec<usize>],
        state: &mut HashMap<usize, bool>,
        order: &mut Vec<usize>,
    ) {
        if state.contains_key(&v) {
            return;
        }
        state.insert(v, false);
        for &w in &needs[v] {
            if members.contains(&w) {
                visit(w, members, needs, state, order);
            }
        }
        state.insert(v, true);
        order.push(v);
    }
    for &m in members {
        visit(m, members, needs, &mut state, &mut order);
    }
    order
}

/// The memref type of a point view: `memref<4x3xf32, strided<[3, 1], offset: ?>>`.
pub fn view_type(point: &PointType) -> String {
    let mut strides = vec![1i64; point.shape.len()];
    for i in (0..point.shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * point.shape[i + 1];
    }
    let strides: Vec<String> = strides.iter().map(i64::to_string).collect();
    format!("memref<{}, strided<[{}], offset: ?>>", shape_prefix(&point.shape, point.element), strides.join(", "))
}

fn shape_prefix(shape: &[i64], element: ElementType) -> String {
    let mut s = String::new();
    for d in shape {
        let _ = write!(s, "{d}x");
    }
    s + element.mlir()
}

/// `memref<PREFIX x S x e>` with a leading dimension (`?` or a size).
fn stacked_type(lead: &str, point: &PointType) -> String {
    format!("memref<{lead}x{}>", shape_prefix(&point.shape, point.element))
}

fn plain_type(point: &PointType) -> String {
    format!("memref<{}>", shape_prefix(&point.shape, point.element))
}

fn mlir_expr(expr: &AffineExpr, num_dims: usize, num_symbols: usize) -> String {
    let dims: Vec<String> = (0..num_dims).map(|i| format!("d{i}")).collect();
    let symbols: Vec<String> = (0..num_symbols).map(|i| format!("s{i}")).collect();
    expr.display(&dims, &symbols).to_string()
}

fn map_header(num_dims: usize, num_symbols: usize) -> String {
    let dims: Vec<String> = (0..num_dims).map(|i| format!("d{i}")).collect();
    let symbols: Vec<String> = (0..num_symbols).map(|i| format!("s{i}")).collect();
    format!("({})[{}]", dims.join(", "), symbols.join(", "))
}

/// MLIR text of an integer set.
pub fn set_text(set: &IntegerSet) -> String {
    let constraints: Vec<String> = set
        .constraints
        .iter()
        .map(|c| {
            format!(
                "{} {} 0",
                mlir_expr(&c.expr, set.num_dims, set.num_symbols),
                if c.is_equality { "==" } else { ">=" }
            )
        })
        .collect();
    format!("affine_set<{} : ({})>", map_header(set.num_dims, set.num_symbols), constraints.join(", "))
}

struct Emitter<'p, 'c> {
    program: &'p Program<'c>,
    plan: &'p Plan,
    globals: String,
    entry: String,
    body: String,
    exit: String,
    next_id: usize,
    /// SSA name of each tensor's store (ring or argument).
    store: Vec<String>,
    /// SSA name of each output argument, by tensor.
    output_arg: HashMap<usize, String>,
    bound_args: Vec<String>,
}

impl<'p, 'c> Emitter<'p, 'c> {
    fn new(program: &'p Program<'c>, plan: &'p Plan) -> Self {
        Self {
            program,
            plan,
            globals: String::new(),
            entry: String::new(),
            body: String::new(),
            exit: String::new(),
            next_id: 0,
            store: vec![String::new(); program.tensors.len()],
            output_arg: HashMap::new(),
            bound_args: program.dims.iter().map(|d| format!("%bound_{}", sanitize(&d.bound))).collect(),
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("%{prefix}{}", self.next_id)
    }

    fn symbols(&self) -> String {
        self.bound_args.join(", ")
    }

    fn emit(mut self) -> String {
        let program = self.program;
        let mut args: Vec<String> = self.bound_args.iter().map(|a| format!("{a}: index")).collect();
        for (i, t) in program.tensors.iter().enumerate() {
            if t.is_input {
                let name = format!("%in{i}_{}", sanitize(&t.name));
                let ty = if t.domain.is_empty() { plain_type(&t.point) } else { stacked_type("?", &t.point) };
                args.push(format!("{name}: {ty}"));
                self.store[i] = name;
            }
        }
        for &i in &program.outputs {
            let t = &program.tensors[i];
            let name = format!("%out{i}_{}", sanitize(&t.name));
            let ty = if t.domain.is_empty() { plain_type(&t.point) } else { stacked_type("?", &t.point) };
            args.push(format!("{name}: {ty}"));
            self.output_arg.insert(i, name);
        }
        // Stores of computed tensors.
        for (i, t) in program.tensors.iter().enumerate() {
            if t.is_input {
                continue;
            }
            let name = format!("%store{i}_{}", sanitize(&t.name));
            let ty = if t.domain.is_empty() {
                plain_type(&t.point)
            } else {
                stacked_type(&self.plan.ring[i].to_string(), &t.point)
            };
            let _ = writeln!(self.entry, "    {name} = memref.alloc() : {ty}");
            let _ = writeln!(self.exit, "    memref.dealloc {name} : {ty}");
            self.store[i] = name;
        }
        for &i in &self.plan.static_order.clone() {
            let mut code = String::new();
            self.tensor(i, None, "    ", &mut code);
            self.body += &code;
        }
        if !self.plan.loop_order.is_empty() {
            let dim = self.plan.time_dim.expect("tensors over a dimension exist");
            let bound = self.bound_args[dim].clone();
            let mut code = String::new();
            for &i in &self.plan.loop_order.clone() {
                self.tensor(i, Some("%t"), "      ", &mut code);
            }
            let _ = writeln!(self.body, "    affine.for %t = 0 to {bound} {{\n{code}    }}");
        }
        let bounds: Vec<String> = program.dims.iter().map(|d| format!("\"{}\"", d.bound)).collect();
        let inputs: Vec<String> =
            program.tensors.iter().filter(|t| t.is_input).map(|t| format!("\"{}\"", t.name)).collect();
        let outputs: Vec<String> =
            program.outputs.iter().map(|&i| format!("\"{}\"", program.tensors[i].name)).collect();
        format!(
            "module {{\n{}  func.func @{ENTRY}({}) attributes {{llvm.emit_c_interface, tempo.bounds = [{}], tempo.inputs = [{}], tempo.outputs = [{}]}} {{\n{}{}{}    return\n  }}\n}}\n",
            self.globals,
            args.join(", "),
            bounds.join(", "),
            inputs.join(", "),
            outputs.join(", "),
            self.entry,
            self.body,
            self.exit
        )
    }

    /// Emits the computation of one point of tensor `i` (at `%t` if given).
    fn tensor(&mut self, i: usize, t: Option<&str>, indent: &str, out: &mut String) {
        let program = self.program;
        let tensor = &program.tensors[i];
        let dims: Vec<&str> = t.into_iter().collect();
        let dims_text = dims.join(", ");
        let symbols = self.symbols();
        let _ = writeln!(out, "{indent}// {} at {}", tensor.name, if t.is_some() { "t" } else { "its single point" });
        let slot = self.point_view(i, t.map(|t| (t, 0)), indent, out);
        let mut closers = Vec::new();
        let mut inner = indent.to_string();
        for (b, branch) in tensor.branches.iter().enumerate() {
            let last = b + 1 == tensor.branches.len();
            if branch.when.is_universe() {
                self.branch(i, b, t, &slot, &inner, out);
                break;
            }
            let _ = writeln!(out, "{inner}affine.if {}({dims_text})[{symbols}] {{", set_text(&branch.when));
            self.branch(i, b, t, &slot, &format!("{inner}  "), out);
            if last {
                let _ = writeln!(out, "{inner}}}");
            } else {
                let _ = writeln!(out, "{inner}}} else {{");
                closers.push(format!("{inner}}}"));
                inner += "  ";
            }
        }
        for closer in closers.into_iter().rev() {
            let _ = writeln!(out, "{closer}");
        }
        if let Some(arg) = self.output_arg.get(&i).cloned() {
            let target = match t {
                Some(t) => self.subview(&arg, &tensor.point, t, indent, out),
                None => self.cast(&arg, &tensor.point, indent, out),
            };
            let ty = view_type(&tensor.point);
            let _ = writeln!(out, "{indent}linalg.copy ins({slot} : {ty}) outs({target} : {ty})");
        }
    }

    fn cast(&mut self, value: &str, point: &PointType, indent: &str, out: &mut String) -> String {
        let name = self.fresh("v");
        let _ = writeln!(out, "{indent}{name} = memref.cast {value} : {} to {}", plain_type(point), view_type(point));
        name
    }

    /// A view of one point (leading index `index`) of a stacked memref.
    fn subview(&mut self, memref: &str, point: &PointType, index: &str, indent: &str, out: &mut String) -> String {
        let name = self.fresh("v");
        let rank = point.shape.len();
        let offsets: Vec<String> = std::iter::once(index.to_string()).chain((0..rank).map(|_| "0".into())).collect();
        let sizes: Vec<String> =
            std::iter::once("1".to_string()).chain(point.shape.iter().map(i64::to_string)).collect();
        let strides: Vec<String> = (0..=rank).map(|_| "1".to_string()).collect();
        let source_type = self.stacked_source_type(memref, point);
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {memref}[{}] [{}] [{}] : {source_type} to {}",
            offsets.join(", "),
            sizes.join(", "),
            strides.join(", "),
            view_type(point)
        );
        name
    }

    fn stacked_source_type(&self, memref: &str, point: &PointType) -> String {
        // Rings have a static leading size; arguments a dynamic one.
        for (i, store) in self.store.iter().enumerate() {
            if store == memref && !self.program.tensors[i].is_input {
                return stacked_type(&self.plan.ring[i].to_string(), point);
            }
        }
        stacked_type("?", point)
    }

    /// View of point `t - k` of tensor `i` (or its single point).
    fn point_view(&mut self, i: usize, at: Option<(&str, usize)>, indent: &str, out: &mut String) -> String {
        let tensor = &self.program.tensors[i];
        let store = self.store[i].clone();
        match at {
            None => self.cast(&store, &tensor.point, indent, out),
            Some((t, k)) => {
                let index = self.fresh("i");
                let expr = if tensor.is_input {
                    if k == 0 { "d0".to_string() } else { format!("d0 - {k}") }
                } else {
                    let ring = self.plan.ring[i];
                    if k == 0 { format!("d0 mod {ring}") } else { format!("(d0 - {k}) mod {ring}") }
                };
                let _ = writeln!(out, "{indent}{index} = affine.apply affine_map<(d0) -> ({expr})>({t})");
                self.subview(&store, &tensor.point, &index, indent, out)
            }
        }
    }

    /// Emits one branch body computing into `slot`.
    fn branch(&mut self, i: usize, b: usize, t: Option<&str>, slot: &str, indent: &str, out: &mut String) {
        let program = self.program;
        let branch = &program.tensors[i].branches[b];
        let mut views: Vec<String> = Vec::new();
        for (n, node) in branch.nodes.iter().enumerate() {
            let is_result = n == branch.result;
            let ty = view_type(&node.ty);
            let view = match &node.kind {
                NodeKind::Read { source, index } => {
                    let src = &program.tensors[*source];
                    if src.domain.is_empty() {
                        self.point_view(*source, None, indent, out)
                    } else {
                        let k = -index.results[0].offset_from_dim(0).expect("checked by the plan");
                        self.point_view(*source, Some((t.expect("reader over t"), k as usize)), indent, out)
                    }
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
                    let _ = writeln!(out, "{indent}{name} = memref.get_global @{global} : {}", plain_type(&node.ty));
                    self.cast(&name, &node.ty, indent, out)
                }
                kind => {
                    let target = if is_result {
                        slot.to_string()
                    } else {
                        let buffer = self.fresh("buf");
                        let _ = writeln!(self.entry, "    {buffer} = memref.alloc() : {}", plain_type(&node.ty));
                        let _ = writeln!(self.exit, "    memref.dealloc {buffer} : {}", plain_type(&node.ty));
                        let mut entry = String::new();
                        let view = self.cast(&buffer, &node.ty, "    ", &mut entry);
                        self.entry += &entry;
                        view
                    };
                    match kind {
                        NodeKind::Unary(op, a) => {
                            self.elementwise(&[&views[*a]], &target, &node.ty, Elementwise::Unary(*op), indent, out)
                        }
                        NodeKind::Binary(op, a, c) => self.elementwise(
                            &[&views[*a], &views[*c]],
                            &target,
                            &node.ty,
                            Elementwise::Binary(*op),
                            indent,
                            out,
                        ),
                        NodeKind::Matmul(a, c) => {
                            let (ta, tc) = (&branch.nodes[*a].ty, &branch.nodes[*c].ty);
                            let zero = zero_literal(node.ty.element);
                            let z = self.fresh("z");
                            let e = node.ty.element.mlir();
                            let _ = writeln!(out, "{indent}{z} = arith.constant {zero} : {e}");
                            let _ = writeln!(out, "{indent}linalg.fill ins({z} : {e}) outs({target} : {ty})");
                            let op = match (ta.shape.len(), tc.shape.len()) {
                                (2, 2) => "linalg.matmul",
                                (2, 1) => "linalg.matvec",
                                _ => "linalg.vecmat",
                            };
                            let _ = writeln!(
                                out,
                                "{indent}{op} ins({}, {} : {}, {}) outs({target} : {ty})",
                                views[*a],
                                views[*c],
                                view_type(ta),
                                view_type(tc)
                            );
                        }
                        _ => unreachable!("reads and constants handled above"),
                    }
                    views.push(target);
                    continue;
                }
            };
            if is_result {
                let _ = writeln!(out, "{indent}linalg.copy ins({view} : {ty}) outs({slot} : {ty})");
            }
            views.push(view);
        }
    }

    fn elementwise(
        &mut self,
        inputs: &[&str],
        target: &str,
        point: &PointType,
        op: Elementwise,
        indent: &str,
        out: &mut String,
    ) {
        let rank = point.shape.len();
        let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
        let id = format!("affine_map<({}) -> ({})>", dims.join(", "), dims.join(", "));
        let maps: Vec<&str> = (0..=inputs.len()).map(|_| id.as_str()).collect();
        let iterators: Vec<&str> = (0..rank).map(|_| "\"parallel\"").collect();
        let ty = view_type(point);
        let e = point.element.mlir();
        let in_types: Vec<&str> = inputs.iter().map(|_| ty.as_str()).collect();
        let _ = writeln!(
            out,
            "{indent}linalg.generic {{indexing_maps = [{}], iterator_types = [{}]}} ins({} : {}) outs({target} : {ty}) {{",
            maps.join(", "),
            iterators.join(", "),
            inputs.join(", "),
            in_types.join(", ")
        );
        let args: Vec<String> = (0..inputs.len()).map(|i| format!("%a{i}: {e}")).collect();
        let _ = writeln!(out, "{indent}^bb0({}, %o: {e}):", args.join(", "));
        let body = scalar_body(op, point.element);
        for line in body.lines() {
            let _ = writeln!(out, "{indent}  {line}");
        }
        let _ = writeln!(out, "{indent}}}");
    }
}

#[derive(Clone, Copy)]
enum Elementwise {
    Unary(UnaryKind),
    Binary(BinaryKind),
}

fn zero_literal(element: ElementType) -> &'static str {
    match element {
        ElementType::F32 | ElementType::F64 => "0.0",
        ElementType::I1 => "false",
        _ => "0",
    }
}

/// The scalar body of an elementwise `linalg.generic` (inputs `%a0`, `%a1`).
fn scalar_body(op: Elementwise, element: ElementType) -> String {
    let e = element.mlir();
    let float = element.is_float();
    let binary = |f: &str, i: &str| format!("%r = {} %a0, %a1 : {e}\nlinalg.yield %r : {e}", if float { f } else { i });
    match op {
        Elementwise::Binary(BinaryKind::Add) => binary("arith.addf", "arith.addi"),
        Elementwise::Binary(BinaryKind::Sub) => binary("arith.subf", "arith.subi"),
        Elementwise::Binary(BinaryKind::Mul) => binary("arith.mulf", "arith.muli"),
        Elementwise::Binary(BinaryKind::Div) => binary("arith.divf", "arith.divsi"),
        Elementwise::Binary(BinaryKind::Max) => binary("arith.maximumf", "arith.maxsi"),
        Elementwise::Binary(BinaryKind::Min) => binary("arith.minimumf", "arith.minsi"),
        Elementwise::Unary(UnaryKind::Neg) if float => format!("%r = arith.negf %a0 : {e}\nlinalg.yield %r : {e}"),
        Elementwise::Unary(UnaryKind::Neg) => {
            format!("%z = arith.constant 0 : {e}\n%r = arith.subi %z, %a0 : {e}\nlinalg.yield %r : {e}")
        }
        Elementwise::Unary(UnaryKind::Relu) => {
            let (zero, max) = if float { ("0.0", "arith.maximumf") } else { ("0", "arith.maxsi") };
            format!("%z = arith.constant {zero} : {e}\n%r = {max} %a0, %z : {e}\nlinalg.yield %r : {e}")
        }
        Elementwise::Unary(UnaryKind::Sigmoid) => format!(
            "%one = arith.constant 1.0 : {e}\n%n = arith.negf %a0 : {e}\n%x = math.exp %n : {e}\n%d = arith.addf %one, %x : {e}\n%r = arith.divf %one, %d : {e}\nlinalg.yield %r : {e}"
        ),
        Elementwise::Unary(u) => {
            let op = match u {
                UnaryKind::Exp => "math.exp",
                UnaryKind::Log => "math.log",
                UnaryKind::Sqrt => "math.sqrt",
                UnaryKind::Tanh => "math.tanh",
                _ => unreachable!("handled above"),
            };
            format!("%r = {op} %a0 : {e}\nlinalg.yield %r : {e}")
        }
    }
}

fn sanitize(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::Module;
    use tempo_passes::affine::Constraint;

    #[test]
    fn view_types_are_row_major_strided() {
        let p = PointType { shape: vec![4, 3], element: ElementType::F32 };
        assert_eq!(view_type(&p), "memref<4x3xf32, strided<[3, 1], offset: ?>>");
        let s = PointType { shape: vec![], element: ElementType::I64 };
        assert_eq!(view_type(&s), "memref<i64, strided<[], offset: ?>>");
    }

    #[test]
    fn sets_print_in_mlir_syntax() {
        let set = IntegerSet {
            num_dims: 1,
            num_symbols: 1,
            constraints: vec![Constraint {
                expr: AffineExpr::Add(Box::new(AffineExpr::Dim(0)), Box::new(AffineExpr::Constant(-1))),
                is_equality: false,
            }],
        };
        assert_eq!(set_text(&set), "affine_set<(d0)[s0] : (d0 - 1 >= 0)>");
    }

    fn plan_of(source: &str) -> (Plan, Vec<String>) {
        let context = tempo_dialects::create_context();
        let module = Module::parse(&context, source).expect("parses");
        let program = verify_program(module.as_operation()).expect("verifies");
        let plan = Plan::new(&program).expect("in scope");
        let names = program.tensors.iter().map(|t| t.name.clone()).collect();
        (plan, names)
    }

    #[test]
    fn rings_hold_the_farthest_read_plus_one() {
        let fib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/fibonacci.mlir")).unwrap();
        let (plan, names) = plan_of(&fib);
        assert_eq!(names, vec!["y"]);
        assert_eq!(plan.ring, vec![3]);
        assert_eq!(plan.loop_order, vec![0]);
    }

    #[test]
    fn same_step_reads_order_the_loop_body() {
        // b reads a[t] and is declared first: a must still be computed first.
        let source = r#"
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%b) ({
  %p = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %c = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
"#;
        let (plan, names) = plan_of(source);
        assert_eq!(names, vec!["b", "a"]);
        assert_eq!(plan.loop_order, vec![1, 0]);
        assert_eq!(plan.ring, vec![1, 1]);
    }
}
