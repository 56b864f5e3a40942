//! Building the program model from a temporal-dialect module: the
//! structural and type checks of `temporal-verify`, and the attribute
//! readers they use.

use super::*;
use crate::diagnostics::PassResult;
use tempo_dialects::temporal as t;

impl<'c> Program<'c> {
    /// Builds the model from a module, checking structure and types. The
    /// module holds the program's temporal ops and, at the schedule level,
    /// `func.func @tempo_schedule`; any other op at module level is refused
    /// (a stray `store.alloc` or an already lowered function would otherwise
    /// reach the JIT).
    pub fn from_module(module: OperationRef<'c, '_>) -> Result<Self, Vec<PassDiagnostic<'c>>> {
        let mut builder = Builder {
            program: Program::default(),
            errors: Vec::new(),
            handles: Vec::new(),
            rejected: Vec::new(),
            targeted: Vec::new(),
        };
        builder.program.location = Some(module.location());
        let Some(body) = module.region(0).ok().and_then(|r| r.first_block()) else {
            return Ok(builder.program);
        };
        let ops = block_operations(body);
        // Dims first, then declarations, then definitions and outputs, so
        // that program order of declarations does not matter.
        for op in &ops {
            if let Some(dim) = temporal::DimOp::try_from(*op) {
                builder.dim(dim);
            }
        }
        for op in &ops {
            let declared = builder.program.tensors.len();
            let handle = if let Some(input) = temporal::InputOp::try_from(*op) {
                builder.declare(*op, input.handle(), true);
                input.handle()
            } else if let Some(tensor) = temporal::TensorOp::try_from(*op) {
                builder.declare(*op, tensor.handle(), false);
                tensor.handle()
            } else {
                continue;
            };
            if builder.program.tensors.len() == declared {
                // Refused (already reported): its uses need no error of their own.
                builder.rejected.push(handle);
            }
        }
        // Gradients, once every tensor they name is declared.
        for op in &ops {
            if let Some(grad) = temporal::GradOp::try_from(*op) {
                let declared = builder.program.tensors.len();
                builder.grad(grad);
                if builder.program.tensors.len() == declared {
                    builder.rejected.push(grad.handle());
                }
            }
        }
        for op in &ops {
            if let Some(define) = temporal::DefineOp::try_from(*op) {
                builder.define(define);
            } else if let Some(output) = temporal::OutputOp::try_from(*op) {
                if let Some(t) = builder.tensor_of(output.source(), *op) {
                    if builder.program.outputs.contains(&t) {
                        builder.error(
                            *op,
                            format!("tensor '{}' is marked as output twice", builder.program.tensors[t].name),
                        );
                    } else {
                        builder.program.outputs.push(t);
                    }
                }
            } else if let Some(stop) = temporal::StopOp::try_from(*op) {
                builder.stop(stop);
            } else if is_temporal(*op)
                && temporal::DimOp::try_from(*op).is_none()
                && temporal::InputOp::try_from(*op).is_none()
                && temporal::TensorOp::try_from(*op).is_none()
                && temporal::GradOp::try_from(*op).is_none()
            {
                builder.error(*op, format!("'{}' must appear inside a temporal.define body", op_name(*op)));
            } else if !is_temporal(*op) && !is_schedule_function(*op) {
                let name = op_name(*op);
                let hint = if name == "func.func" && symbol_name(*op).as_deref() == Some("tempo_main") {
                    " (this module is already lowered: run the temporal program it came from)"
                } else {
                    ""
                };
                builder.error(
                    *op,
                    format!(
                        "'{name}' is not part of a temporal program: its module holds temporal.dim, temporal.input, \
                         temporal.tensor, temporal.define and temporal.output ops (and the schedule \
                         @tempo_schedule){hint}"
                    ),
                );
            }
        }
        for (i, t) in builder.program.tensors.iter().enumerate() {
            let is_grad = builder.program.grads.iter().any(|g| g.tensor == i);
            if !t.is_input && !is_grad && !builder.targeted.contains(&i) {
                builder
                    .errors
                    .push(PassDiagnostic::new(t.location, format!("tensor '{}' has no temporal.define", t.name)));
            }
        }
        if builder.errors.is_empty() { Ok(builder.program) } else { Err(builder.errors) }
    }
}

fn op_name(op: OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("?").to_string()
}

fn is_temporal(op: OperationRef) -> bool {
    op_name(op).starts_with("temporal.")
}

/// Names of dimensions, bounds and tensors are identifiers: a letter or
/// `_`, then letters, digits, `_`, `.`, `-` or `$`, at most 255 characters.
/// They end up in generated code, diagnostics, command lines (`--bound
/// T=10`, `--input x=...`) and file names (`NAME.npy`), so nothing else is
/// accepted (no empty names, NULs, quotes, slashes or spaces).
pub fn check_name(name: &str) -> Result<(), String> {
    let shown: String = name.chars().flat_map(char::escape_default).take(80).collect();
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '$'));
    if name.is_empty() {
        Err("must not be empty".into())
    } else if !first_ok || !rest_ok || name.len() > 255 {
        Err(format!(
            "'{shown}' is not an identifier (a letter or '_', then letters, digits, '_', '.', '-' or '$'; at most 255 characters)"
        ))
    } else {
        Ok(())
    }
}

fn symbol_name(op: OperationRef) -> Option<String> {
    op.attribute("sym_name").ok().and_then(string_attr)
}

/// `func.func @tempo_schedule`, the schedule level's function, which may
/// sit beside the program it orders.
fn is_schedule_function(op: OperationRef) -> bool {
    op_name(op) == "func.func" && symbol_name(op).as_deref() == Some("tempo_schedule")
}

struct Builder<'c, 'v> {
    program: Program<'c>,
    errors: Vec<PassDiagnostic<'c>>,
    /// SSA handle of each tensor, to resolve operands.
    handles: Vec<Value<'c, 'v>>,
    /// Handles of declarations that were refused.
    rejected: Vec<Value<'c, 'v>>,
    /// Tensors targeted by some `temporal.define` (even a rejected one).
    targeted: Vec<usize>,
}

/// The value of a string attribute (empty strings included, which melior's
/// `StringAttribute::value` cannot read), or `None` for other attributes.
pub fn string_attr(attr: Attribute) -> Option<String> {
    unsafe {
        if !mlirAttributeIsAString(attr.to_raw()) {
            return None;
        }
        let s = mlirStringAttrGetValue(attr.to_raw());
        let bytes = std::slice::from_raw_parts(s.data as *const u8, s.length);
        Some(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The elements of an array attribute, each converted by `element`; `None`
/// if it is not an array or an element does not convert.
fn array_attr<'c, T>(attr: Attribute<'c>, element: impl Fn(Attribute<'c>) -> Option<T>) -> Option<Vec<T>> {
    unsafe {
        if !mlirAttributeIsAArray(attr.to_raw()) {
            return None;
        }
        (0..mlirArrayAttrGetNumElements(attr.to_raw()))
            .map(|i| element(Attribute::from_raw(mlirArrayAttrGetElement(attr.to_raw(), i))))
            .collect()
    }
}

fn string_array_attr(attr: Attribute) -> Option<Vec<String>> {
    array_attr(attr, string_attr)
}

fn integer_attr(attr: Attribute) -> Option<i64> {
    melior::ir::attribute::IntegerAttribute::try_from(attr).ok().map(|i| i.value())
}

fn type_attr<'c>(attr: Attribute<'c>) -> Option<Type<'c>> {
    unsafe { mlirAttributeIsAType(attr.to_raw()).then(|| Type::from_raw(mlirTypeAttrGetValue(attr.to_raw()))) }
}

impl<'c, 'v> Builder<'c, 'v> {
    fn error(&mut self, op: OperationRef<'c, '_>, message: String) {
        self.errors.push(PassDiagnostic::new(op.location(), message));
    }

    fn dim(&mut self, dim: temporal::DimOp<'c, '_>) {
        let op = dim.operation();
        let name = dim.sym_name().and_then(string_attr);
        let bound = dim.bound().and_then(string_attr);
        match (name, bound) {
            (Some(name), Some(bound)) => {
                for (what, text) in [("dimension name", &name), ("bound name", &bound)] {
                    if let Err(e) = check_name(text) {
                        self.error(op, format!("{what} {e}"));
                        return;
                    }
                }
                if self.program.dims.iter().any(|d| d.name == name) {
                    self.error(op, format!("dimension '{name}' is declared twice"));
                } else if self.program.dims.iter().any(|d| d.bound == bound) {
                    self.error(op, format!("bound '{bound}' is used by two dimensions"));
                } else {
                    self.program.dims.push(Dim { name, bound });
                    self.program.dim_locations.push(op.location());
                }
            }
            _ => self.error(op, "temporal.dim needs string attributes 'sym_name' and 'bound'".into()),
        }
    }

    fn declare(&mut self, op: OperationRef<'c, 'v>, handle: Value<'c, 'v>, is_input: bool) {
        let kind = if is_input { t::InputOp::NAME } else { t::TensorOp::NAME };
        let name = op.attribute("sym_name").ok().and_then(string_attr);
        let domain = op.attribute("domain").ok().and_then(string_array_attr);
        let element = op.attribute("element").ok().and_then(type_attr);
        let (Some(name), Some(domain_names), Some(element)) = (name, domain, element) else {
            self.error(
                op,
                format!("{kind} needs 'sym_name' (string), 'domain' (array of dimension names) and 'element' (type)"),
            );
            return;
        };
        if let Err(e) = check_name(&name) {
            self.error(op, format!("tensor name {e}"));
            return;
        }
        if self.program.tensors.iter().any(|t| t.name == name) {
            self.error(op, format!("tensor '{name}' is declared twice"));
            return;
        }
        let mut domain = Vec::new();
        for d in &domain_names {
            match self.program.dims.iter().position(|x| &x.name == d) {
                Some(i) if domain.contains(&i) => {
                    self.error(op, format!("dimension '{d}' appears twice in the domain of '{name}'"));
                    return;
                }
                Some(i) => domain.push(i),
                None => {
                    self.error(op, format!("unknown dimension '{d}' in the domain of '{name}'"));
                    return;
                }
            }
        }
        let point = match PointType::from_type(element) {
            Ok(p) if p.is_static() => p,
            Ok(_) => {
                self.error(
                    op,
                    format!("tensor '{name}': point type must be a statically shaped ranked tensor, got {element}"),
                );
                return;
            }
            Err(e) => {
                self.error(op, format!("tensor '{name}': {e}"));
                return;
            }
        };
        self.program.tensors.push(Tensor {
            name,
            domain,
            point,
            is_input,
            branches: Vec::new(),
            location: op.location(),
        });
        self.handles.push(handle);
    }

    /// A `temporal.grad`: a tensor over `wrt`'s domain with `wrt`'s point
    /// type, without definitions (`temporal-autodiff` gives it them).
    fn grad(&mut self, grad: temporal::GradOp<'c, 'v>) {
        let op = grad.operation();
        let Some(name) = op.attribute("sym_name").ok().and_then(string_attr) else {
            self.error(op, "temporal.grad needs 'sym_name' (string)".into());
            return;
        };
        if let Err(e) = check_name(&name) {
            self.error(op, format!("tensor name {e}"));
            return;
        }
        if self.program.tensors.iter().any(|t| t.name == name) {
            self.error(op, format!("tensor '{name}' is declared twice"));
            return;
        }
        let (Some(of), Some(wrt)) = (self.tensor_of(grad.of(), op), self.tensor_of(grad.wrt(), op)) else { return };
        for (role, t) in [("of", of), ("wrt", wrt)] {
            if self.program.grads.iter().any(|g| g.tensor == t) {
                let other = &self.program.tensors[t].name;
                self.error(
                    op,
                    format!(
                        "'{name}': its '{role}' is the gradient '{other}'; gradients of gradients are not supported"
                    ),
                );
                return;
            }
        }
        let all_reduce = match op.attribute("all_reduce").ok() {
            None => None,
            Some(attr) => match string_attr(attr).as_deref().and_then(Collective::parse) {
                Some(c @ (Collective::Mean | Collective::Sum)) => Some(c),
                _ => {
                    self.error(
                        op,
                        format!(
                            "'{name}': all_reduce must be the string \"mean\" or \"sum\" (how the processes' gradients combine), got {attr}"
                        ),
                    );
                    return;
                }
            },
        };
        let source = &self.program.tensors[wrt];
        let tensor = Tensor {
            name,
            domain: source.domain.clone(),
            point: source.point.clone(),
            is_input: false,
            branches: Vec::new(),
            location: op.location(),
        };
        self.program.grads.push(GradDecl {
            tensor: self.program.tensors.len(),
            of,
            wrt,
            all_reduce,
            location: op.location(),
        });
        self.program.tensors.push(tensor);
        self.handles.push(grad.handle());
    }

    fn tensor_of(&mut self, value: Value<'c, '_>, user: OperationRef<'c, '_>) -> Option<usize> {
        let found = self.handles.iter().position(|h| h.to_raw().ptr == value.to_raw().ptr);
        let refused = self.rejected.iter().any(|h| h.to_raw().ptr == value.to_raw().ptr);
        if found.is_none() && !refused {
            self.error(user, "operand is not the handle of a declared temporal.tensor or temporal.input".into());
        }
        found
    }

    /// `temporal.stop`: a dimension ending where a tensor first holds.
    fn stop(&mut self, stop: temporal::StopOp<'c, 'v>) {
        let op = stop.operation();
        let Some(done) = self.tensor_of(stop.done(), op) else { return };
        let Some(name) = op.attribute("dim").ok().and_then(string_attr) else {
            self.error(op, "temporal.stop needs a string attribute 'dim'".into());
            return;
        };
        let Some(dim) = self.program.dims.iter().position(|d| d.name == name) else {
            self.error(op, format!("temporal.stop: no dimension '{name}'"));
            return;
        };
        let tensor = &self.program.tensors[done];
        if !tensor.domain.contains(&dim) {
            let message = format!(
                "temporal.stop: '{}' must be over '{name}' (its first point that holds ends '{name}'), is over ({})",
                tensor.name,
                self.program.domain_names(done).join(", ")
            );
            self.error(op, message);
            return;
        }
        if !tensor.point.shape.is_empty() || tensor.point.element != ElementType::I1 {
            let message = format!("temporal.stop: '{}' must have tensor<i1> points, has {}", tensor.name, tensor.point);
            self.error(op, message);
            return;
        }
        if self.program.stops.iter().any(|s| s.dim == dim) {
            self.error(op, format!("temporal.stop: '{name}' already has a stop"));
            return;
        }
        self.program.stops.push(Stop { dim, done, location: op.location() });
    }

    fn define(&mut self, define: temporal::DefineOp<'c, 'v>) {
        let op = define.operation();
        let Some(target) = self.tensor_of(define.target(), op) else { return };
        self.targeted.push(target);
        let tensor_name = self.program.tensors[target].name.clone();
        if self.program.tensors[target].is_input {
            self.error(op, format!("'{tensor_name}' is an input and cannot be defined"));
            return;
        }
        let domain_len = self.program.tensors[target].domain.len();
        let num_bounds = self.program.dims.len();
        let Some(when) = define.when().and_then(IntegerSet::from_attribute) else {
            self.error(op, "temporal.define needs an affine_set attribute 'when'".into());
            return;
        };
        if let Err(e) = crate::affine::check_divisions(when.constraints.iter().map(|c| &c.expr)) {
            self.error(op, format!("condition of '{tensor_name}': {e}"));
            return;
        }
        if when.num_dims != domain_len || when.num_symbols != num_bounds {
            self.error(
                op,
                format!(
                    "condition of '{tensor_name}' must have {domain_len} dims (its domain) and {num_bounds} symbols (the bounds), has ({})[{}]",
                    when.num_dims, when.num_symbols
                ),
            );
            return;
        }
        let Some(block) = define.body().first_block() else {
            self.error(op, "temporal.define body is empty".into());
            return;
        };
        let ops = block_operations(block);
        let mut values: Vec<Value<'c, '_>> = Vec::new();
        let mut nodes: Vec<Node<'c>> = Vec::new();
        let mut result = None;
        for (position, body_op) in ops.iter().enumerate() {
            let name = op_name(*body_op);
            if name == "gpu.yield" {
                if position + 1 != ops.len() || body_op.operand_count() != 1 {
                    self.error(
                        *body_op,
                        "a temporal.define body ends with exactly one 'gpu.yield' of one value".into(),
                    );
                    return;
                }
                let yielded = body_op.operand(0).expect("one operand");
                match values.iter().position(|v| v.to_raw().ptr == yielded.to_raw().ptr) {
                    Some(i) => result = Some(i),
                    None => {
                        self.error(*body_op, "the yielded value must be computed in the same body".into());
                        return;
                    }
                }
                continue;
            }
            let Some(node) = self.node(*body_op, target, &values, &nodes) else { return };
            values.push(body_op.result(0).expect("checked one result").into());
            nodes.push(node);
        }
        let Some(result) = result else {
            self.error(op, "a temporal.define body must end with 'gpu.yield' of the defined value".into());
            return;
        };
        let expected = &self.program.tensors[target].point;
        if &nodes[result].ty != expected {
            let got = nodes[result].ty.clone();
            let expected = expected.clone();
            self.error(op, format!("branch of '{tensor_name}' yields {got} but the tensor holds {expected}"));
            return;
        }
        if let Err((node, message)) = super::dynamic_sizes::check_branch(&nodes) {
            self.errors.push(PassDiagnostic::new(nodes[node].location, message));
            return;
        }
        self.program.tensors[target].branches.push(Branch { when, nodes, result, location: op.location() });
    }
}

mod collectives;
mod nodes;

/// `count` elements of a dense attribute, row-major (a splat's one value
/// repeated), each read by `read` at its position.
fn elements<T: Clone>(attr: Attribute, count: usize, read: impl Fn(mlir_sys::MlirAttribute, isize) -> T) -> Vec<T> {
    let raw = attr.to_raw();
    if unsafe { mlir_sys::mlirDenseElementsAttrIsSplat(raw) } {
        // One read, not one C API call per element (a weight-shaped splat
        // is read again by every pass that rebuilds the program).
        let value = read(raw, 0);
        let mut out = Vec::with_capacity(count);
        out.resize_with(count, || value.clone());
        return out;
    }
    (0..count).map(|i| read(raw, i as isize)).collect()
}

/// Elements of a dense attribute, row-major, as f64 (splats expanded).
fn dense_values(attr: Attribute, count: usize, element: ElementType) -> Vec<f64> {
    use mlir_sys::{mlirDenseElementsAttrGetDoubleValue, mlirDenseElementsAttrGetFloatValue};
    match element {
        ElementType::F32 => {
            elements(attr, count, |raw, i| unsafe { mlirDenseElementsAttrGetFloatValue(raw, i) } as f64)
        }
        ElementType::F64 => elements(attr, count, |raw, i| unsafe { mlirDenseElementsAttrGetDoubleValue(raw, i) }),
        _ => dense_integers(attr, count, element).into_iter().map(|v| v as f64).collect(),
    }
}

/// The elements of a dense integer attribute, exact (empty for floats).
pub(crate) fn dense_integers(attr: Attribute, count: usize, element: ElementType) -> Vec<i64> {
    use mlir_sys::{
        mlirDenseElementsAttrGetBoolValue, mlirDenseElementsAttrGetInt32Value, mlirDenseElementsAttrGetInt64Value,
    };
    match element {
        ElementType::F32 | ElementType::F64 => Vec::new(),
        ElementType::I32 => {
            elements(attr, count, |raw, i| unsafe { mlirDenseElementsAttrGetInt32Value(raw, i) } as i64)
        }
        ElementType::I1 => elements(attr, count, |raw, i| unsafe { mlirDenseElementsAttrGetBoolValue(raw, i) } as i64),
        ElementType::I64 => elements(attr, count, |raw, i| unsafe { mlirDenseElementsAttrGetInt64Value(raw, i) }),
    }
}

/// Runs `f` on the program of `module`, turning model errors into a pass result.
pub fn with_program<'c>(
    module: OperationRef<'c, '_>,
    f: impl FnOnce(&Program<'c>) -> PassResult<'c>,
) -> PassResult<'c> {
    let program = Program::from_module(module)?;
    f(&program)
}
