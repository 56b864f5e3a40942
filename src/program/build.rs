//! A program of this API as the temporal dialect's ops, built as typed IR:
//! each branch's expression becomes nodes of the compiler's program model
//! (`tempo_passes::program::Node`), which the passes' emitter
//! (`tempo_passes::emit::Emit`) turns into ops through the dialect's
//! generated builders, as the passes write programs back. No text is
//! printed or parsed; [`Program::to_mlir`] prints the built module with
//! MLIR's printer.
//!
//! What the compiler's reader would say in its own terms (a name that is
//! not an identifier, a read of a dimension the source lacks, a variable
//! outside the reader's domain, a negative size) is said here, at the
//! caller's line, all at once.

use super::{DeclKind, Error, Program, Tensor, inexact_integer, is_identifier, plain_location};
use crate::expr::{Coordinate, Expr, ExprData, Node as ApiNode, Values};
use crate::index::{Cond, Index};
use crate::site::Site;
use melior::Context;
use melior::ir::attribute::{ArrayAttribute, TypeAttribute};
use melior::ir::operation::{OperationLike, OperationMutLike};
use melior::ir::{Attribute, Block, BlockLike, Location, Module, Region, RegionLike, Type, Value};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
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
            let mut used = Vec::new();
            define.when.vars(&mut used);
            for v in used.iter().filter(|v| !reader.domain.contains(v)) {
                errors.push(format!(
                    "{}: error: the condition of a branch of '{}' uses '{v}', which is not in its domain",
                    plain_location(&define.location),
                    reader.name
                ));
            }
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

    /// The program dimension named `dim`.
    fn dimension(&mut self, dim: &str, at: &Site) -> usize {
        match self.program.dims.iter().position(|d| d.name == dim) {
            Some(d) => d,
            None => {
                self.errors.push(format!("{}: error: no dimension named '{dim}'", plain_location(at)));
                0
            }
        }
    }

    fn kind(&mut self, data: &ExprData) -> NodeKind {
        match &data.node {
            ApiNode::Op(kind, operands) => {
                let operands = self.nodes(operands);
                match tempo_passes::rewrite::map_operands(kind, |k| operands[k]) {
                    NodeKind::Call { callee, args, batched, .. } => {
                        let site = *self.calls;
                        *self.calls += 1;
                        NodeKind::Call { callee, site, args, batched }
                    }
                    kind => kind,
                }
            }
            ApiNode::Read { tensor, name, index } => self.read(data, tensor.0, name, index),
            ApiNode::ReadRange { tensor, name, index } => self.read_range(data, tensor.0, name, index),
            ApiNode::ReadAt { tensor, coords } => self.read_at(data, tensor.0, coords),
            ApiNode::Constant { values } => self.constant(data, values),
            ApiNode::Position { dim } => NodeKind::Position(self.dimension(dim, &data.location)),
            ApiNode::Bound { dim } => NodeKind::Bound(self.dimension(dim, &data.location)),
            ApiNode::DynamicSlice(x, offsets) => {
                let mut used = Vec::new();
                offsets.iter().for_each(|c| c.vars(&mut used));
                for v in used.iter().filter(|v| !self.reader.domain.contains(v)) {
                    self.errors.push(format!(
                        "{}: error: slice offsets in a branch of '{}' use variable '{v}', which is not in the reader's domain",
                        plain_location(&data.location),
                        self.reader.name
                    ));
                }
                let x = self.node(x);
                NodeKind::DynamicSlice(x, self.map(offsets, 0, &data.location))
            }
            ApiNode::Refused(message) => {
                self.errors.push(format!("{}: error: {message}", plain_location(&data.location)));
                NodeKind::Rank
            }
        }
    }

    /// A `temporal.read` of tensor `source` (named `name`) at `index`.
    fn read(&mut self, data: &ExprData, source: usize, name: &str, index: &[(String, Index)]) -> NodeKind {
        let domain = &self.program.tensors[source].tensor.domain;
        let mut coords = Vec::new();
        for dim in domain {
            match index.iter().find(|(d, _)| d == dim) {
                Some((_, e)) => coords.push(e.clone()),
                None => coords.push(Index::Var(dim.clone())),
            }
        }
        for (d, _) in index {
            if !domain.contains(d) {
                self.errors.push(format!(
                    "{}: error: read of '{name}' indexes {} but '{name}' has domain [{}]",
                    plain_location(&data.location),
                    if d.starts_with('#') {
                        "the wrong number of dimensions".to_string()
                    } else {
                        format!("dimension '{d}'")
                    },
                    domain.join(", ")
                ));
            }
        }
        self.check_reader_variables(&coords, &format!("read of '{name}'"), &data.location);
        NodeKind::Read { source, index: self.map(&coords, 0, &data.location) }
    }

    /// A `temporal.read_range` of tensor `source` (named `name`) over `index`.
    fn read_range(&mut self, data: &ExprData, source: usize, name: &str, index: &[(String, Coordinate)]) -> NodeKind {
        let domain = self.program.tensors[source].tensor.domain.clone();
        for (d, _) in index {
            if !domain.contains(d) {
                self.errors.push(format!(
                    "{}: error: range read of '{name}' indexes dimension '{d}' but '{name}' has domain [{}]",
                    plain_location(&data.location),
                    domain.join(", ")
                ));
            }
        }
        let (mut lower, mut upper, mut caps, mut all) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for dim in &domain {
            let coordinate = index.iter().find(|(d, _)| d == dim).map(|(_, c)| c.clone());
            let is_range = matches!(coordinate, Some(Coordinate::Range { .. }));
            let (lo, hi, cap) = match coordinate {
                Some(Coordinate::Range { lower, upper }) => (lower, upper, vec![]),
                Some(Coordinate::Clamped { at_least, at_most }) => (at_least, vec![], at_most),
                Some(Coordinate::Point(p)) => (vec![p], vec![], vec![]),
                None => (vec![Index::Var(dim.clone())], vec![], vec![]),
            };
            if lo.is_empty() || (is_range && hi.is_empty()) {
                self.errors.push(format!(
                    "{}: error: range read of '{name}' needs at least one lower and one upper bound for dimension '{dim}'",
                    plain_location(&data.location)
                ));
            }
            all.extend(lo.iter().chain(&hi).chain(&cap).cloned());
            lower.push(self.map(&lo, 0, &data.location));
            upper.push(self.map(&hi, 0, &data.location));
            caps.push(self.map(&cap, 0, &data.location));
        }
        self.check_reader_variables(&all, &format!("range read of '{name}'"), &data.location);
        NodeKind::ReadRange { source, lower, upper, caps }
    }

    /// A `temporal.read_at` of tensor `source` at the values `coords`: its
    /// map takes the reader's variables, then one per coordinate.
    fn read_at(&mut self, data: &ExprData, source: usize, coords: &[Expr]) -> NodeKind {
        let tensor = &self.program.tensors[source].tensor;
        if coords.len() != tensor.domain.len() {
            self.errors.push(format!(
                "{}: error: read through data of '{}' gives {} coordinates, but it has domain [{}]",
                plain_location(&data.location),
                tensor.name,
                coords.len(),
                tensor.domain.join(", ")
            ));
        }
        let data_nodes = self.nodes(coords);
        let first = self.reader.domain.len();
        let index = AffineMap {
            num_dims: first + coords.len(),
            num_symbols: self.program.dims.len(),
            results: (0..coords.len()).map(|k| AffineExpr::Dim(first + k)).collect(),
        };
        NodeKind::ReadAt { source, index, data: data_nodes }
    }

    /// A constant of `data`'s type with `values`.
    fn constant(&mut self, data: &ExprData, values: &Values) -> NodeKind {
        let ty = &data.ty;
        if let Some(bad) = inexact_integer(values, ty.element) {
            self.errors.push(format!(
                "{}: error: 'temporal.constant': the number {bad} is not a value of {} (a float given \
                 where an integer is meant: NaN, an infinity, a fraction or one out of range would \
                 be changed)",
                plain_location(&data.location),
                ty.element.mlir()
            ));
        }
        // (A negative or dynamic size is reported with the node's shape.)
        let n = if ty.shape.iter().all(|&d| d >= 0) { ty.num_elements() } else { 0 };
        let float = ty.element.is_float();
        let (floats, integers): (Vec<f64>, Vec<i64>) = match values {
            Values::Floats(v) => (v.clone(), Vec::new()),
            Values::Integers(v) => (v.iter().map(|&x| x as f64).collect(), v.clone()),
            Values::SplatFloat(v) => (vec![*v; n], Vec::new()),
            Values::SplatInteger(v) if float => (vec![*v as f64; n], Vec::new()),
            Values::SplatInteger(v) => (vec![*v as f64; n], vec![*v; n]),
        };
        let integers = if float { Vec::new() } else { integers };
        // (`floats` holds every element, integers converted.)
        if floats.len() != n {
            self.errors.push(format!(
                "{}: error: 'temporal.constant': {} values for a value of shape {:?}",
                plain_location(&data.location),
                floats.len(),
                ty.shape
            ));
        }
        NodeKind::Constant { text: Arc::from(""), values: Arc::from(floats), integers: Arc::from(integers) }
    }

    /// Each variable of `coords` outside the reader's domain is an error.
    fn check_reader_variables(&mut self, coords: &[Index], what: &str, at: &Site) {
        let mut used = Vec::new();
        coords.iter().for_each(|c| c.vars(&mut used));
        for v in used.iter().filter(|v| !self.reader.domain.contains(v)) {
            self.errors.push(format!(
                "{}: error: {what} in a branch of '{}' uses variable '{v}', which is not in the reader's domain",
                plain_location(at),
                self.reader.name
            ));
        }
    }

    /// The map from the reader's variables (and `extra` more) and the
    /// bounds to `results`.
    fn map(&mut self, results: &[Index], extra: usize, at: &Site) -> AffineMap {
        let results = results.iter().map(|e| self.affine(e, at)).collect();
        AffineMap { num_dims: self.reader.domain.len() + extra, num_symbols: self.program.dims.len(), results }
    }

    /// `when` as an integer set over the reader's variables and the bounds.
    fn set(&mut self, when: &Cond, at: &Site) -> IntegerSet {
        let constraints = when
            .constraints()
            .iter()
            .map(|(e, is_equality)| Constraint { expr: self.affine(e, at), is_equality: *is_equality })
            .collect();
        IntegerSet { num_dims: self.reader.domain.len(), num_symbols: self.program.dims.len(), constraints }
    }

    /// `e` as an affine expression of the reader's variables (dimensions)
    /// and the bounds (symbols), built as MLIR's parser builds its printed
    /// form: `sum(coefficient * atom) + constant`.
    fn affine(&mut self, e: &Index, at: &Site) -> AffineExpr {
        let mut terms: Vec<(String, &Index, i64)> = Vec::new();
        let mut constant = 0;
        linear(e, 1, &mut terms, &mut constant);
        let mut sum: Option<AffineExpr> = None;
        for (_, atom, k) in terms.into_iter().filter(|(_, _, k)| *k != 0) {
            let atom = self.atom(atom, at);
            let term = if k == 1 { atom } else { AffineExpr::Mul(Box::new(atom), Box::new(AffineExpr::Constant(k))) };
            sum = Some(match sum {
                None => term,
                Some(s) => AffineExpr::Add(Box::new(s), Box::new(term)),
            });
        }
        match (sum, constant) {
            (None, c) => AffineExpr::Constant(c),
            (Some(s), 0) => s,
            (Some(s), c) => AffineExpr::Add(Box::new(s), Box::new(AffineExpr::Constant(c))),
        }
    }

    /// A variable, a bound, or a `mod`/`floordiv` of an expression.
    fn atom(&mut self, atom: &Index, at: &Site) -> AffineExpr {
        match atom {
            Index::Var(v) => match self.reader.domain.iter().position(|d| d == v) {
                Some(k) => AffineExpr::Dim(k),
                // (Said by the caller: not in the reader's domain.)
                None => AffineExpr::Constant(0),
            },
            Index::Bound(b) => match self.program.dims.iter().position(|d| &d.bound == b) {
                Some(k) => AffineExpr::Symbol(k),
                None => {
                    self.errors.push(format!("{}: error: '{b}' is not a bound of the program", plain_location(at)));
                    AffineExpr::Constant(0)
                }
            },
            Index::Mod(a, k) => AffineExpr::Mod(Box::new(self.affine(a, at)), Box::new(AffineExpr::Constant(*k))),
            Index::FloorDiv(a, k) => {
                AffineExpr::FloorDiv(Box::new(self.affine(a, at)), Box::new(AffineExpr::Constant(*k)))
            }
            other => self.affine(other, at),
        }
    }
}

/// `e` as `sum(coefficient * atom) + constant`, equal atoms (by their
/// form) merged, in order of first appearance.
fn linear<'e>(e: &'e Index, scale: i64, terms: &mut Vec<(String, &'e Index, i64)>, constant: &mut i64) {
    let mut add = |atom: &'e Index, k: i64| {
        let key = format!("{atom:?}");
        match terms.iter_mut().find(|(a, _, _)| *a == key) {
            Some((_, _, c)) => *c += k,
            None => terms.push((key, atom, k)),
        }
    };
    match e {
        Index::Var(_) | Index::Bound(_) | Index::Mod(..) | Index::FloorDiv(..) => add(e, scale),
        Index::Const(c) => *constant += scale * c,
        Index::Add(a, b) => {
            linear(a, scale, terms, constant);
            linear(b, scale, terms, constant);
        }
        Index::Scale(a, k) => linear(a, scale * k, terms, constant),
    }
}
