//! A program of this API as the temporal dialect's ops, built as typed IR:
//! each branch's expression, already nodes of the compiler's program model
//! ([`crate::expr::ExprData`]), is numbered in order (operands first), its
//! maps renumbered from the program's dimensions to the reader's domain,
//! and the nodes (`tempo_passes::program::Node`) go to the passes' emitter
//! (`tempo_passes::emit::Emit`) turns into ops through the dialect's
//! generated builders, as the passes write programs back. No text is
//! printed or parsed; [`Program::to_mlir`] prints the built module with
//! MLIR's printer.
//!
//! What the compiler's reader would say in its own terms (a name that is
//! not an identifier, a read of a dimension the source lacks, a variable
//! outside the reader's domain, a negative size), and what the expression
//! refused when it was made, is said here, at the caller's line, all at
//! once.

use super::{DeclKind, Error, Program, Tensor, is_identifier, plain_location};
use crate::expr::{Expr, ExprData, numbers};
use crate::index::Cond;
use crate::site::Site;
use melior::Context;
use melior::ir::attribute::{ArrayAttribute, TypeAttribute};
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::{Attribute, Block, BlockLike, Location, Module, Region, RegionLike, Type, Value};
use std::collections::HashMap;
use std::rc::Rc;
use tempo_dialects::temporal as t;
use tempo_passes::affine::{AffineExpr, AffineMap, Constraint, IntegerSet};
use tempo_passes::emit::{Emit, yield_op};
use tempo_passes::program::{DYNAMIC, Node, NodeKind};

/// The MLIR location of a site.
fn location<'c>(context: &'c Context, site: &Site) -> Location<'c> {
    Location::new(context, site.file(), site.line() as usize, site.column() as usize)
}

impl Program {
    /// The program as a module of `context`: the temporal dialect's ops,
    /// built as typed IR and verified.
    pub(crate) fn build_module<'c>(&self, context: &'c Context) -> Result<Module<'c>, Error> {
        // (Handles of another program: their numbers mean nothing here.)
        if !self.misuse.is_empty() {
            return Err(Error(self.misuse.clone()));
        }
        let mut errors = Vec::new();
        for d in &self.dims {
            for name in [&d.name, &d.bound] {
                if !is_identifier(name) {
                    errors.push(format!(
                        "error: '{name}' is not a valid dimension or bound name (use letters, digits and _)"
                    ));
                }
            }
        }
        for decl in &self.tensors {
            let t = &decl.tensor;
            if let Some(&d) = t.point.shape.iter().find(|&&d| d < 0) {
                errors.push(format!(
                    "{}: error: tensor '{}': the size {d} in its point shape {:?} is negative (sizes are static and at least 1)",
                    plain_location(&decl.location),
                    t.name,
                    t.point.shape
                ));
            }
        }
        if !errors.is_empty() {
            return Err(Error(errors));
        }
        let handle = Type::parse(context, "!temporal.rtensor")
            .ok_or_else(|| Error(vec!["error: the temporal dialect is not loaded".into()]))?;
        let dims: Vec<tempo_passes::program::Dim> = self
            .dims
            .iter()
            .map(|d| tempo_passes::program::Dim { name: d.name.clone(), bound: d.bound.clone() })
            .collect();
        let emit = Emit::new(context, &dims, handle);
        let fault = |e: String| Error(vec![format!("error: compiler fault while building the program: {e}")]);
        let module = Module::new(Location::unknown(context));
        let body = module.body();
        let unknown = Location::unknown(context);
        for d in &dims {
            body.append_operation(t::DimOp::build(context, unknown, emit.string(&d.name), emit.string(&d.bound)));
        }
        let mut handles: Vec<Value> = Vec::with_capacity(self.tensors.len());
        for decl in &self.tensors {
            let (tensor, at) = (&decl.tensor, location(context, &decl.location));
            let name = emit.string(&tensor.name);
            let op = match decl.kind {
                DeclKind::Grad { of, wrt } => {
                    let mut op = t::GradOp::build(context, at, handles[of.0], handles[wrt.0], name, handle);
                    if self.data_parallel {
                        op.set_attribute("all_reduce", emit.string("mean"));
                    }
                    op
                }
                DeclKind::Input | DeclKind::Tensor => {
                    let domain: Vec<Attribute> = tensor.domain.iter().map(|d| emit.string(d)).collect();
                    let domain = ArrayAttribute::new(context, &domain).into();
                    let element = TypeAttribute::new(emit.tensor_type(&tensor.point).map_err(fault)?).into();
                    match decl.kind {
                        DeclKind::Input => t::InputOp::build(context, at, name, domain, element, handle),
                        _ => t::TensorOp::build(context, at, name, domain, element, handle),
                    }
                }
            };
            let op = body.append_operation(op);
            handles.push(op.result(0).map_err(|e| fault(e.to_string()))?.into());
        }
        let mut calls = 0;
        for define in &self.defines {
            let reader = &self.tensors[define.target.0].tensor;
            let mut nodes = Nodes {
                program: self,
                reader,
                context,
                nodes: Vec::new(),
                built: HashMap::new(),
                errors: &mut errors,
                calls: &mut calls,
            };
            let result = nodes.node(&define.value);
            let when = nodes.set(&define.when, &define.location);
            let nodes = nodes.nodes;
            if !errors.is_empty() {
                continue;
            }
            let block = Block::new(&[]);
            let mut values: Vec<Value> = Vec::with_capacity(nodes.len());
            for node in &nodes {
                let op = block.append_operation(emit.node(node, &values, &handles).map_err(fault)?);
                values.push(op.result(0).map_err(|e| fault(e.to_string()))?.into());
            }
            let at = location(context, &define.location);
            block.append_operation(yield_op(at, &[values[result]]).map_err(fault)?);
            let region = Region::new();
            region.append_block(block);
            body.append_operation(t::DefineOp::build(context, at, handles[define.target.0], emit.set(&when), region));
        }
        for o in &self.outputs {
            body.append_operation(t::OutputOp::build(context, unknown, handles[o.0]));
        }
        for (done, dim, site) in &self.stops {
            let at = location(context, site);
            body.append_operation(t::StopOp::build(context, at, handles[done.0], emit.string(dim)));
        }
        if !errors.is_empty() {
            return Err(Error(errors));
        }
        // What the dialect's declarations check (IRDL), with MLIR's
        // messages at the caller's lines.
        let collector = tempo_passes::diagnostics::DiagnosticCollector::attach_for_source(context, "<program>");
        if !module.as_operation().verify() {
            let mut lines = collector.take();
            lines.push("error: the program is not valid temporal IR".into());
            return Err(Error(lines));
        }
        Ok(module)
    }
}

/// The nodes of one branch's expression, in the order their ops are built
/// (operands first), each expression once.
struct Nodes<'p, 'c, 'e> {
    program: &'p Program,
    reader: &'p Tensor,
    context: &'c Context,
    nodes: Vec<Node<'c>>,
    /// The node of each expression built, by address.
    built: HashMap<*const ExprData, usize>,
    errors: &'e mut Vec<String>,
    /// Calls of external functions so far (their sites' numbers).
    calls: &'e mut usize,
}

impl<'c> Nodes<'_, 'c, '_> {
    /// The node of `expr`, its operands' first (a node index).
    fn node(&mut self, expr: &Expr) -> usize {
        let key = Rc::as_ptr(&expr.0);
        if let Some(&k) = self.built.get(&key) {
            return k;
        }
        let data = &expr.0;
        let kind = self.kind(data);
        if data.ty.shape.iter().any(|&d| d < DYNAMIC) {
            self.errors.push(format!(
                "{}: error: '{}' would give a value of shape {:?}: sizes cannot be negative",
                plain_location(&data.location),
                kind.op_name(),
                data.ty.shape
            ));
        }
        let location = location(self.context, &data.location);
        self.nodes.push(Node { kind, ty: data.ty.clone(), location });
        let k = self.nodes.len() - 1;
        self.built.insert(key, k);
        k
    }

    fn nodes(&mut self, exprs: &[Expr]) -> Vec<usize> {
        exprs.iter().map(|e| self.node(e)).collect()
    }

    /// The compiler's node of `data`: its operands numbered as built, its
    /// maps renumbered from the program's dimensions to the reader's
    /// domain ([`crate::expr::ExprData`]), what is refused said.
    fn kind(&mut self, data: &ExprData) -> NodeKind {
        let at = &data.location;
        let operands = self.nodes(&data.operands);
        if !data.refused.is_empty() {
            for why in &data.refused {
                self.errors.push(format!("{}: error: {why}", plain_location(at)));
            }
            return data.kind.clone();
        }
        let kind = tempo_passes::rewrite::map_operands(&data.kind, |k| operands[k]);
        if data.program.is_some_and(|p| p != self.program.id) {
            self.errors.push(format!(
                "{}: error: '{}' in a branch of '{}' is made from a tensor or dimension of another program",
                plain_location(at),
                kind.op_name(),
                self.reader.name
            ));
            return kind;
        }
        let name = |source: usize| &self.program.tensors[source].tensor.name;
        match kind {
            NodeKind::Call { callee, args, batched, .. } => {
                let site = *self.calls;
                *self.calls += 1;
                NodeKind::Call { callee, site, args, batched }
            }
            NodeKind::Read { source, index } => {
                let what = format!("read of '{}' in a branch of '{}' uses", name(source), self.reader.name);
                NodeKind::Read { source, index: self.map(&index.results, &what, at) }
            }
            NodeKind::ReadRange { source, lower, upper, caps } => {
                let what = format!("range read of '{}' in a branch of '{}' uses", name(source), self.reader.name);
                let mut map = |maps: Vec<AffineMap>| -> Vec<AffineMap> {
                    maps.iter().map(|m| self.map(&m.results, &what, at)).collect()
                };
                let (lower, upper, caps) = (map(lower), map(upper), map(caps));
                NodeKind::ReadRange { source, lower, upper, caps }
            }
            NodeKind::ReadAt { source, index, data } => {
                // The map takes the data coordinates: they follow the
                // reader's variables.
                let first = self.reader.dims.len();
                let shift: Vec<AffineExpr> = (0..index.num_dims).map(|k| AffineExpr::Dim(first + k)).collect();
                let results = index.results.iter().map(|e| e.substitute_dims(&shift)).collect();
                let index =
                    AffineMap { num_dims: first + index.num_dims, num_symbols: self.program.dims.len(), results };
                NodeKind::ReadAt { source, index, data }
            }
            NodeKind::DynamicSlice(x, offsets) => {
                let what = format!("slice offsets in a branch of '{}' use", self.reader.name);
                NodeKind::DynamicSlice(x, self.map(&offsets.results, &what, at))
            }
            kind => kind,
        }
    }

    /// The map from the reader's variables and the bounds to `results`,
    /// which name the program's dimensions by number: each variable outside
    /// the reader's domain is an error (`what` says where).
    fn map(&mut self, results: &[AffineExpr], what: &str, at: &Site) -> AffineMap {
        let results = self.to_reader(results, what, at);
        AffineMap { num_dims: self.reader.dims.len(), num_symbols: self.program.dims.len(), results }
    }

    /// `exprs` over the reader's domain (dims) and the bounds (symbols):
    /// the program's dimension `d` becomes the reader's variable of `d`.
    fn to_reader(&mut self, exprs: &[AffineExpr], what: &str, at: &Site) -> Vec<AffineExpr> {
        let dims = &self.program.dims;
        let (mut used, mut symbols) = (Vec::new(), Vec::new());
        exprs.iter().for_each(|e| numbers(e, &mut used, &mut symbols));
        let mut outside = Vec::new();
        for &d in used.iter().chain(&symbols) {
            if d >= dims.len() {
                self.errors.push(format!(
                    "{}: error: an index of a branch of '{}' uses a dimension of another program",
                    plain_location(at),
                    self.reader.name
                ));
            } else if used.contains(&d) && !self.reader.dims.contains(&d) && !outside.contains(&d) {
                outside.push(d);
                self.errors.push(format!(
                    "{}: error: {what} variable '{}', which is not in the reader's domain",
                    plain_location(at),
                    dims[d].name
                ));
            }
        }
        let extent = used.iter().max().map_or(0, |&d| d + 1);
        let renumbered: Vec<AffineExpr> = (0..extent)
            .map(|d| match self.reader.dims.iter().position(|&r| r == d) {
                Some(k) => AffineExpr::Dim(k),
                // (Said above.)
                None => AffineExpr::Constant(0),
            })
            .collect();
        exprs.iter().map(|e| e.substitute_dims(&renumbered)).collect()
    }

    /// `when` as an integer set over the reader's variables and the bounds.
    fn set(&mut self, when: &Cond, at: &Site) -> IntegerSet {
        let what = format!("the condition of a branch of '{}' uses", self.reader.name);
        let constraints = when
            .affine()
            .into_iter()
            .map(|(e, is_equality)| Constraint {
                expr: self.to_reader(std::slice::from_ref(&e), &what, at).remove(0),
                is_equality,
            })
            .collect();
        IntegerSet { num_dims: self.reader.dims.len(), num_symbols: self.program.dims.len(), constraints }
    }
}
