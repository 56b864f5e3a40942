//! `tempo._tempo`: the Python package's classes, a thin layer over the Rust
//! API (`tempo::Program`, `Expr`, `Runner::compile`): nothing here builds or
//! checks programs itself. Every op a Python line builds carries that
//! line's file and line number (`tempo::site`), so errors point at the
//! user's Python source, and come back as `tempo.TempoError`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PySlice, PyTuple};
use tempo::{Coordinate, ElementType, Expr, Index, PointType};

mod calls;
mod executable;
mod rl;
mod training;

use executable::{PyExecutable, arrays, arrays_of, split_arguments};

pyo3::create_exception!(
    _tempo,
    TempoError,
    pyo3::exceptions::PyException,
    "A program refused, or a run that failed; the message names the Python line."
);

/// The Python file and line running now (the caller of a method).
fn caller(py: Python<'_>) -> (String, u32) {
    let frame = py.import("sys").and_then(|sys| sys.getattr("_getframe")?.call1((0,)));
    let found = frame.and_then(|f| {
        let file: String = f.getattr("f_code")?.getattr("co_filename")?.extract()?;
        let line: u32 = f.getattr("f_lineno")?.extract()?;
        Ok((file, line))
    });
    found.unwrap_or_else(|_| ("<python>".into(), 0))
}

/// Runs `f` with the ops it builds located at the Python caller's line.
fn located<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
    let (file, line) = caller(py);
    tempo::site::at(&file, line, f)
}

fn element_of(dtype: &str) -> PyResult<ElementType> {
    Ok(match dtype {
        "float32" | "f32" => ElementType::F32,
        "float64" | "f64" => ElementType::F64,
        "int32" | "i32" => ElementType::I32,
        "int64" | "i64" => ElementType::I64,
        "bool" | "i1" => ElementType::I1,
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown dtype '{dtype}' (float32, float64, int32, int64, bool)"
            )));
        }
    })
}

fn numpy_name(element: ElementType) -> &'static str {
    match element {
        ElementType::F32 => "float32",
        ElementType::F64 => "float64",
        ElementType::I32 => "int32",
        ElementType::I64 => "int64",
        ElementType::I1 => "bool",
    }
}

fn error(e: tempo::Error) -> PyErr {
    TempoError::new_err(e.to_string())
}

/// A `TempoError` for a call the Python caller made wrongly, at its line
/// (`file:line:1: error: ...`, as the program's own diagnostics read).
fn refused(py: Python<'_>, message: impl std::fmt::Display) -> PyErr {
    let (file, line) = caller(py);
    TempoError::new_err(format!("{file}:{line}:1: error: {message}"))
}

/// A point type as NumPy users write it: `float32[4, 8]`.
fn describe(point: &PointType) -> String {
    let sizes: Vec<String> = point.shape.iter().map(i64::to_string).collect();
    format!("{}[{}]", numpy_name(point.element), sizes.join(", "))
}

/// A temporal dimension: a variable in `0..bound`.
#[pyclass(unsendable, name = "Dim", module = "tempo")]
#[derive(Clone)]
struct PyDim {
    dim: tempo::Dim,
}

/// An affine index over dimension variables and bounds (`t - 1`, `T - 1 - t`).
#[pyclass(unsendable, name = "Index", module = "tempo")]
#[derive(Clone)]
struct PyIndex {
    index: Index,
}

/// A conjunction of affine conditions (`t == 0`, `(t >= 1) & (t < T)`).
#[pyclass(unsendable, name = "Cond", module = "tempo")]
#[derive(Clone)]
struct PyCond {
    cond: tempo::Cond,
}

fn index_of(value: &Bound<'_, PyAny>) -> PyResult<Index> {
    if let Ok(d) = value.extract::<PyRef<PyDim>>() {
        return Ok(d.dim.var());
    }
    if let Ok(i) = value.extract::<PyRef<PyIndex>>() {
        return Ok(i.index.clone());
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(Index::from(n));
    }
    Err(PyTypeError::new_err("an index is a Dim, an Index or an int"))
}

macro_rules! index_arithmetic {
    ($class:ident, $own:expr, { $($extra:tt)* }) => {
        #[pymethods]
        impl $class {
            $($extra)*

            fn __add__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyIndex> {
                Ok(PyIndex { index: ($own)(self) + index_of(other)? })
            }
            fn __radd__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyIndex> {
                Ok(PyIndex { index: index_of(other)? + ($own)(self) })
            }
            fn __sub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyIndex> {
                Ok(PyIndex { index: ($own)(self) - index_of(other)? })
            }
            fn __rsub__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyIndex> {
                Ok(PyIndex { index: index_of(other)? - ($own)(self) })
            }
            fn __mul__(&self, k: i64) -> PyIndex {
                PyIndex { index: ($own)(self) * k }
            }
            fn __rmul__(&self, k: i64) -> PyIndex {
                PyIndex { index: ($own)(self) * k }
            }
            fn __mod__(&self, k: i64) -> PyIndex {
                PyIndex { index: ($own)(self).modulo(k) }
            }
            fn __floordiv__(&self, k: i64) -> PyIndex {
                PyIndex { index: ($own)(self).floordiv(k) }
            }
            fn __neg__(&self) -> PyIndex {
                PyIndex { index: -($own)(self) }
            }
            fn __eq__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyCond> {
                Ok(PyCond { cond: ($own)(self).eq(index_of(other)?) })
            }
            fn __ge__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyCond> {
                Ok(PyCond { cond: ($own)(self).ge(index_of(other)?) })
            }
            fn __gt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyCond> {
                Ok(PyCond { cond: ($own)(self).gt(index_of(other)?) })
            }
            fn __le__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyCond> {
                Ok(PyCond { cond: ($own)(self).le(index_of(other)?) })
            }
            fn __lt__(&self, other: &Bound<'_, PyAny>) -> PyResult<PyCond> {
                Ok(PyCond { cond: ($own)(self).lt(index_of(other)?) })
            }
            fn __repr__(&self) -> String {
                ($own)(self).to_string()
            }
        }
    };
}

index_arithmetic!(PyDim, |d: &PyDim| d.dim.var(), {
    /// The dimension's bound (`T`) as an index.
    #[getter]
    fn bound(&self) -> PyIndex {
        PyIndex { index: self.dim.bound() }
    }
    /// The dimension's name (`t` of `p.dim("t", "T")`).
    #[getter]
    fn name(&self) -> String {
        self.dim.name().to_string()
    }
    /// The position along this dimension as a value (a scalar of `dtype`).
    #[pyo3(signature = (dtype = "float32"))]
    fn position(&self, py: Python<'_>, dtype: &str) -> PyResult<PyExpr> {
        let element = element_of(dtype)?;
        Ok(PyExpr { expr: located(py, || self.dim.position(element)) })
    }
    /// The bound as a value (a scalar of `dtype`).
    #[pyo3(signature = (dtype = "float32"))]
    fn bound_value(&self, py: Python<'_>, dtype: &str) -> PyResult<PyExpr> {
        let element = element_of(dtype)?;
        Ok(PyExpr { expr: located(py, || self.dim.bound_value(element)) })
    }
});
index_arithmetic!(PyIndex, |i: &PyIndex| i.index.clone(), {});

#[pymethods]
impl PyCond {
    fn __and__(&self, other: &PyCond) -> PyCond {
        PyCond { cond: self.cond.clone().and(other.cond.clone()) }
    }
}

/// A value of a definition: reads, constants and ops on them.
#[pyclass(unsendable, name = "Expr", module = "tempo")]
#[derive(Clone)]
struct PyExpr {
    expr: Expr,
}

impl PyExpr {
    fn compared(&self, py: Python<'_>, predicate: tempo::Predicate, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let other = operand_expr(other, &self.expr)?;
        Ok(PyExpr { expr: located(py, || self.expr.compare(predicate, &other)) })
    }
}

/// An operand of an elementwise op (or a branch's value): an expression
/// or a number.
enum Operand {
    Expr(Expr),
    Float(f64),
    Int(i64),
}

fn operand(value: &Bound<'_, PyAny>) -> PyResult<Operand> {
    if let Ok(e) = value.extract::<PyRef<PyExpr>>() {
        return Ok(Operand::Expr(e.expr.clone()));
    }
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err("a bool is not an operand here"));
    }
    if let Ok(n) = value.extract::<i64>() {
        return Ok(Operand::Int(n));
    }
    if let Ok(x) = value.extract::<f64>() {
        return Ok(Operand::Float(x));
    }
    if value.is_instance_of::<PyTensor>() {
        return Err(PyTypeError::new_err("a Tensor is not a value: read a point of it (`x[t]`, `w[()]`)"));
    }
    Err(PyTypeError::new_err("an operand is an Expr, an int or a float"))
}

impl Operand {
    /// The operand as an expression: a number becomes a constant of type
    /// `ty`, one value everywhere.
    fn or_splat(self, ty: PointType) -> Expr {
        match self {
            Operand::Expr(e) => e,
            Operand::Float(x) => Expr::splat(x, ty),
            Operand::Int(n) => Expr::splat_int(n, ty),
        }
    }
}

/// A scalar of `element`.
fn scalar_of(element: ElementType) -> PointType {
    PointType { shape: Vec::new(), element }
}

/// `other` as an expression beside `like`: itself, or a number as a scalar
/// of `like`'s element type (broadcast as NumPy does).
fn operand_expr(other: &Bound<'_, PyAny>, like: &Expr) -> PyResult<Expr> {
    Ok(operand(other)?.or_splat(scalar_of(like.point_type().element)))
}

/// Two operands of which at least one is an expression: a number becomes a
/// scalar of the other's element type.
fn operand_pair(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<(Expr, Expr)> {
    match (operand(a)?, operand(b)?) {
        (Operand::Expr(x), other) => {
            let y = other.or_splat(scalar_of(x.point_type().element));
            Ok((x, y))
        }
        (other, Operand::Expr(y)) => Ok((other.or_splat(scalar_of(y.point_type().element)), y)),
        _ => Err(PyTypeError::new_err(
            "two numbers: give one of them as an Expr (tempo.constant(0.5, \"float64\")) so that its dtype is known",
        )),
    }
}

/// `a op b`, or `b op a` when `reversed`, located at the Python caller.
fn binary(
    py: Python<'_>,
    a: &Expr,
    other: &Bound<'_, PyAny>,
    reversed: bool,
    op: fn(&Expr, &Expr) -> Expr,
) -> PyResult<PyExpr> {
    let b = located(py, || operand_expr(other, a))?;
    let expr = located(py, || if reversed { op(&b, a) } else { op(a, &b) });
    Ok(PyExpr { expr })
}

/// Refuses `pow(x, y, modulo)`: values have no modulus.
fn no_modulo(modulo: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match modulo {
        Some(m) if !m.is_none() => Err(PyTypeError::new_err("pow() with a modulus is not defined on an Expr")),
        _ => Ok(()),
    }
}

/// Normalizes a possibly negative `axis` of a value of `rank`.
fn axis_of(axis: i64, rank: usize) -> PyResult<usize> {
    let a = if axis < 0 { axis + rank as i64 } else { axis };
    if a < 0 || a as usize >= rank.max(1) {
        return Err(PyValueError::new_err(format!("axis {axis} of a value of rank {rank}")));
    }
    Ok(a as usize)
}

#[pymethods]
impl PyExpr {
    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a + b)
    }
    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, true, |a, b| a + b)
    }
    fn __sub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a - b)
    }
    fn __rsub__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, true, |a, b| a - b)
    }
    fn __mul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a * b)
    }
    fn __rmul__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, true, |a, b| a * b)
    }
    fn __truediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a / b)
    }
    fn __rtruediv__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, true, |a, b| a / b)
    }

    /// `self ** exponent` elementwise (floats), the exponent an `Expr` or
    /// a number: `x ** 2`, `2.0 ** x`.
    fn __pow__(&self, py: Python<'_>, other: &Bound<'_, PyAny>, modulo: Option<&Bound<'_, PyAny>>) -> PyResult<PyExpr> {
        no_modulo(modulo)?;
        binary(py, &self.expr, other, false, |a, b| a.pow(b))
    }
    fn __rpow__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyExpr> {
        no_modulo(modulo)?;
        binary(py, &self.expr, other, true, |a, b| a.pow(b))
    }
    /// `self ** exponent` elementwise (floats): `x.pow(0.5)`, `x.pow(y)`.
    fn pow(&self, py: Python<'_>, exponent: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, exponent, false, |a, b| a.pow(b))
    }
    /// The elementwise maximum with `other` (an `Expr` or a number,
    /// broadcast): `x.maximum(0.0)` is ReLU. (`max` is the reduction.)
    fn maximum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a.max(b))
    }
    /// The elementwise minimum with `other` (an `Expr` or a number,
    /// broadcast): `ratio.minimum(1.2)`.
    fn minimum(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        binary(py, &self.expr, other, false, |a, b| a.min(b))
    }

    fn __neg__(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || -&self.expr) }
    }
    fn __matmul__(&self, py: Python<'_>, other: &PyExpr) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.matmul(&other.expr)) }
    }
    /// Elementwise comparisons (booleans), with a value or a number.
    fn __lt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.compared(py, tempo::Predicate::Lt, other)
    }
    fn __gt__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.compared(py, tempo::Predicate::Gt, other)
    }
    fn __le__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.compared(py, tempo::Predicate::Le, other)
    }
    fn __ge__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.compared(py, tempo::Predicate::Ge, other)
    }
    /// Elementwise equality (booleans): `tok.equals(EOS)`.
    fn equals(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        self.compared(py, tempo::Predicate::Eq, other)
    }
    /// The point's shape (a dynamic size is -1).
    #[getter]
    fn shape(&self) -> Vec<i64> {
        self.expr.point_type().shape.clone()
    }
    /// The element type, as NumPy names it (`float32`, ...).
    #[getter]
    fn dtype(&self) -> &'static str {
        numpy_name(self.expr.point_type().element)
    }
    /// `e ** x`, elementwise.
    fn exp(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.exp()) }
    }
    /// The natural logarithm, elementwise.
    fn log(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.log()) }
    }
    /// The square root, elementwise.
    fn sqrt(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.sqrt()) }
    }
    /// The hyperbolic tangent, elementwise.
    fn tanh(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.tanh()) }
    }
    /// The logistic sigmoid `1 / (1 + e ** -x)`, elementwise.
    fn sigmoid(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.sigmoid()) }
    }
    /// `max(x, 0)`, elementwise.
    fn relu(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.relu()) }
    }
    /// The sine, elementwise.
    fn sin(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.sin()) }
    }
    /// The cosine, elementwise.
    fn cos(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.cos()) }
    }
    /// The absolute value, elementwise.
    fn abs(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.abs()) }
    }
    /// The same value, through which no gradient passes: for
    /// `Program.grad` it is a constant, so the gradient is the partial one
    /// along the other paths. An update reads its gradient through it,
    /// `w[i - 1] - lr * g[i - 1].stop_gradient()` (as `tempo.optim` does).
    fn stop_gradient(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.stop_gradient()) }
    }
    /// Sum along `axis` (the last by default), keeping it as size 1 with
    /// `keepdims`.
    #[pyo3(signature = (axis = -1, keepdims = false))]
    #[pyo3(text_signature = "($self, axis=-1, keepdims=False)")]
    fn sum(&self, py: Python<'_>, axis: i64, keepdims: bool) -> PyResult<PyExpr> {
        self.reduce(py, axis, keepdims, Expr::sum, Expr::sum_keepdims)
    }
    /// The maximum along `axis` (the last by default), keeping it as size
    /// 1 with `keepdims`: a reduction (`maximum` is elementwise).
    #[pyo3(signature = (axis = -1, keepdims = false))]
    #[pyo3(text_signature = "($self, axis=-1, keepdims=False)")]
    fn max(&self, py: Python<'_>, axis: i64, keepdims: bool) -> PyResult<PyExpr> {
        self.reduce(py, axis, keepdims, Expr::max_along, Expr::max_keepdims)
    }
    /// The mean along `axis` (the last by default), keeping it as size 1
    /// with `keepdims`.
    #[pyo3(signature = (axis = -1, keepdims = false))]
    #[pyo3(text_signature = "($self, axis=-1, keepdims=False)")]
    fn mean(&self, py: Python<'_>, axis: i64, keepdims: bool) -> PyResult<PyExpr> {
        self.reduce(py, axis, keepdims, Expr::mean, Expr::mean_keepdims)
    }
    /// Layer normalization along `axis` (no scale or shift).
    #[pyo3(signature = (eps = 1e-5, axis = -1))]
    #[pyo3(text_signature = "($self, eps=1e-05, axis=-1)")]
    fn layer_norm(&self, py: Python<'_>, eps: f64, axis: i64) -> PyResult<PyExpr> {
        let axis = axis_of(axis, self.expr.rank())?;
        Ok(PyExpr { expr: located(py, || self.expr.layer_norm_along(axis, eps)) })
    }
    /// RMS normalization along `axis` (no scale).
    #[pyo3(signature = (eps = 1e-5, axis = -1))]
    #[pyo3(text_signature = "($self, eps=1e-05, axis=-1)")]
    fn rms_norm(&self, py: Python<'_>, eps: f64, axis: i64) -> PyResult<PyExpr> {
        let axis = axis_of(axis, self.expr.rank())?;
        Ok(PyExpr { expr: located(py, || self.expr.rms_norm_along(axis, eps)) })
    }
    /// The box at `offsets` of `sizes`.
    fn slice(&self, py: Python<'_>, offsets: Vec<i64>, sizes: Vec<i64>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.slice(&offsets, &sizes)) }
    }
    /// The concatenation with `other` along `axis`.
    fn concat(&self, py: Python<'_>, other: &PyExpr, axis: usize) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.concat(&other.expr, axis)) }
    }
    /// Rows of this table at integer `indices`.
    fn gather(&self, py: Python<'_>, indices: &PyExpr) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.gather(&indices.expr)) }
    }
    /// The index (int64) of the first maximum along `axis`.
    #[pyo3(signature = (axis = -1))]
    #[pyo3(text_signature = "($self, axis=-1)")]
    fn argmax(&self, py: Python<'_>, axis: i64) -> PyResult<PyExpr> {
        let axis = axis_of(axis, self.expr.rank())?;
        Ok(PyExpr { expr: located(py, || self.expr.argmax(axis)) })
    }
    /// The softmax along `axis` (the maximum taken out first).
    #[pyo3(signature = (axis = -1))]
    #[pyo3(text_signature = "($self, axis=-1)")]
    fn softmax(&self, py: Python<'_>, axis: i64) -> PyResult<PyExpr> {
        let axis = axis_of(axis, self.expr.rank())?;
        Ok(PyExpr { expr: located(py, || self.expr.softmax_along(axis)) })
    }
    /// The same elements in another shape (row-major; one dynamic size,
    /// -1, where the value has one).
    fn reshape(&self, py: Python<'_>, shape: Vec<i64>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.reshape(&shape)) }
    }
    /// The axes permuted: result axis `k` is axis `permutation[k]`.
    fn permute(&self, py: Python<'_>, permutation: Vec<usize>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.permute(&permutation)) }
    }
    /// Every element converted to `dtype` (float32, float64, int32,
    /// int64, bool).
    fn astype(&self, py: Python<'_>, dtype: &str) -> PyResult<PyExpr> {
        let element = element_of(dtype)?;
        Ok(PyExpr { expr: located(py, || self.expr.cast(element)) })
    }
}

impl PyExpr {
    /// A reduction along `axis` (negative from the end): `plain`, or
    /// `kept` keeping the axis as size 1.
    fn reduce(
        &self,
        py: Python<'_>,
        axis: i64,
        keepdims: bool,
        plain: fn(&Expr, usize) -> Expr,
        kept: fn(&Expr, usize) -> Expr,
    ) -> PyResult<PyExpr> {
        let axis = axis_of(axis, self.expr.rank())?;
        let reduce = if keepdims { kept } else { plain };
        Ok(PyExpr { expr: located(py, || reduce(&self.expr, axis)) })
    }
}

/// `einsum(spec, *operands)`: a contraction in NumPy's notation.
#[pyfunction]
#[pyo3(signature = (spec, *operands))]
fn einsum(py: Python<'_>, spec: &str, operands: Vec<PyRef<PyExpr>>) -> PyExpr {
    let operands: Vec<&Expr> = operands.iter().map(|o| &o.expr).collect();
    PyExpr { expr: located(py, || Expr::einsum(spec, &operands)) }
}

/// `where(condition, a, b)`: `a` where `condition` (booleans) holds, else
/// `b`, elementwise and broadcast; `a` or `b` may be a number (a scalar of
/// the other's dtype): `tempo.where(x > 0, x, 0.0)`.
#[pyfunction(name = "where")]
fn select(py: Python<'_>, condition: &PyExpr, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || condition.expr.select(&a, &b)) })
}

/// `maximum(a, b)`: the elementwise maximum (broadcast), either side a
/// number: `tempo.maximum(x, 0.0)`.
#[pyfunction]
fn maximum(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || a.max(&b)) })
}

/// `minimum(a, b)`: the elementwise minimum (broadcast), either side a
/// number: `tempo.minimum(ratio, 1.2)`.
#[pyfunction]
fn minimum(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || a.min(&b)) })
}

/// `arange(n, dtype="int64")`: the vector `[0, 1, ..., n - 1]`. Compared
/// with token ids it makes one-hot rows (targets as ids, not one-hot
/// inputs): `tempo.arange(V).equals(y[t].reshape([B, 1])).astype("float32")`
/// for ids `y[t]` of `[B]`, rows of `[B, V]`.
#[pyfunction]
#[pyo3(signature = (n, dtype = "int64"))]
fn arange(py: Python<'_>, n: i64, dtype: &str) -> PyResult<PyExpr> {
    let element = element_of(dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::arange(n, element)) })
}

/// `constant(value, dtype="float32", shape=None)`: a constant value. A
/// number is one value everywhere (a scalar, or of `shape`):
/// `tempo.constant(0.9)`, `tempo.constant(0, "int64", [4])`; a list or a
/// NumPy array gives the elements (and the shape):
/// `tempo.constant([1.0, -2.0, 0.5], "float64")`.
#[pyfunction]
#[pyo3(signature = (value, dtype = "float32", shape = None))]
fn constant(py: Python<'_>, value: &Bound<'_, PyAny>, dtype: &str, shape: Option<Vec<i64>>) -> PyResult<PyExpr> {
    let element = element_of(dtype)?;
    if value.is_instance_of::<PyExpr>() {
        return Err(PyTypeError::new_err("constant() takes a number, a list or an array, not an Expr"));
    }
    if value.is_instance_of::<pyo3::types::PyFloat>() || value.is_instance_of::<pyo3::types::PyInt>() {
        let ty = PointType { shape: shape.unwrap_or_default(), element };
        let number = if value.is_instance_of::<pyo3::types::PyFloat>() {
            Operand::Float(value.extract()?)
        } else {
            Operand::Int(value.extract()?)
        };
        return Ok(PyExpr { expr: located(py, || number.or_splat(ty)) });
    }
    let numpy = py.import("numpy")?;
    let array = numpy.call_method1("asarray", (value, if element.is_float() { "float64" } else { "int64" }))?;
    let sizes: Vec<i64> = array.getattr("shape")?.extract()?;
    if let Some(shape) = shape.filter(|s| *s != sizes) {
        return Err(PyValueError::new_err(format!("constant() of shape {sizes:?} given shape {shape:?}")));
    }
    let ty = PointType { shape: sizes, element };
    let flat = array.call_method0("ravel")?.call_method0("tolist")?;
    let expr = if element.is_float() {
        let values: Vec<f64> = flat.extract()?;
        located(py, || Expr::constant(values, ty))
    } else {
        let values: Vec<i64> = flat.extract()?;
        located(py, || Expr::constant_ints(values, ty))
    };
    Ok(PyExpr { expr })
}

/// `random_uniform(seed, shape, dtype="float32")`: seeded uniform values
/// in [0, 1), a pure function of `seed`, the point of the tensor whose
/// branch reads it and the element: the same seed gives the same values
/// run after run, and each point its own (dropout masks, exploration
/// noise). Floats only. (`Executable.run`'s `seed` is another thing: the
/// values of inputs not given.)
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> u = p.tensor("u", [t], [2])
/// >>> p.otherwise(u, tempo.random_uniform(7, [2]))
/// >>> p.output(u)
/// >>> out = p.compile().run(T=3)["u"]
/// >>> out.shape, bool(((0 <= out) & (out < 1)).all())
/// ((3, 2), True)
#[pyfunction]
#[pyo3(signature = (seed, shape, dtype = "float32"))]
fn random_uniform(py: Python<'_>, seed: i64, shape: Vec<i64>, dtype: &str) -> PyResult<PyExpr> {
    let ty = point_type(shape, dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::random_uniform(seed, ty)) })
}

/// `random_normal(seed, shape, dtype="float32")`: seeded standard normal
/// values (mean 0, standard deviation 1), a pure function of `seed`, the
/// point and the element, as `random_uniform`'s. Floats only:
/// `mean + sigma * tempo.random_normal(3, [4])`.
#[pyfunction]
#[pyo3(signature = (seed, shape, dtype = "float32"))]
fn random_normal(py: Python<'_>, seed: i64, shape: Vec<i64>, dtype: &str) -> PyResult<PyExpr> {
    let ty = point_type(shape, dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::random_normal(seed, ty)) })
}

/// A condition that always holds.
#[pyfunction]
fn always() -> PyCond {
    PyCond { cond: tempo::Cond::always() }
}

/// A recurrent tensor: an input or a tensor defined by conditional
/// definitions over its domain.
#[pyclass(unsendable, name = "Tensor", module = "tempo")]
struct PyTensor {
    tensor: tempo::Tensor,
    domain: Vec<tempo::Dim>,
}

#[pymethods]
impl PyTensor {
    /// A read: `x[t - 1]` one point, `k[0:t + 1]` a range (a slice along a
    /// dimension), `w[()]` a tensor of no dimension, `h[left[n]]` a point
    /// whose coordinates are values of the program (scalar integers: a read
    /// through data).
    fn __getitem__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
        let items: Vec<Bound<'_, PyAny>> = match key.cast::<PyTuple>() {
            Ok(t) => t.iter().collect(),
            Err(_) => vec![key.clone()],
        };
        if items.len() != self.domain.len() {
            return Err(PyValueError::new_err(format!(
                "'{}' has {} dimensions, {} coordinates given",
                self.tensor.name(),
                self.domain.len(),
                items.len()
            )));
        }
        let values = items.iter().filter(|i| i.is_instance_of::<PyExpr>()).count();
        if values > 0 {
            if values != items.len() {
                return Err(PyValueError::new_err(
                    "a read through data gives every coordinate as a value (an index such as `t - 1` is `t.position()` arithmetic then)",
                ));
            }
            let exprs: Vec<tempo::Expr> =
                items.iter().map(|i| i.cast::<PyExpr>().map(|e| e.borrow().expr.clone())).collect::<Result<_, _>>()?;
            return Ok(PyExpr { expr: located(py, || self.tensor.at_data(&exprs)) });
        }
        let ranged = items.iter().any(|i| i.is_instance_of::<PySlice>());
        if !ranged {
            let index: Vec<Index> = items.iter().map(index_of).collect::<PyResult<_>>()?;
            return Ok(PyExpr { expr: located(py, || self.tensor.at(index)) });
        }
        let mut coordinates = Vec::new();
        for (item, dim) in items.iter().zip(&self.domain) {
            let coordinate = match item.cast::<PySlice>() {
                Ok(slice) => {
                    if !slice.getattr("step")?.is_none() {
                        return Err(PyValueError::new_err("a range read takes no step"));
                    }
                    let lo = slice.getattr("start")?;
                    let hi = slice.getattr("stop")?;
                    let lo = if lo.is_none() { Index::from(0) } else { index_of(&lo)? };
                    let hi = if hi.is_none() { dim.bound() } else { index_of(&hi)? };
                    Coordinate::range(lo, hi)
                }
                Err(_) => Coordinate::Point(index_of(item)?),
            };
            coordinates.push((dim, coordinate));
        }
        Ok(PyExpr { expr: located(py, || self.tensor.read_box(coordinates)) })
    }
    /// The tensor's name.
    #[getter]
    fn name(&self) -> String {
        self.tensor.name().to_string()
    }
}

/// A program of recurrent tensors.
#[pyclass(unsendable, name = "Program", module = "tempo")]
struct PyProgram {
    program: tempo::Program,
    /// The Python functions of `call`, by name, with their result type
    /// and whether they take batches.
    callbacks: Vec<(String, Py<PyAny>, PointType, bool)>,
}

fn point_type(shape: Vec<i64>, dtype: &str) -> PyResult<PointType> {
    Ok(PointType { shape, element: element_of(dtype)? })
}

/// The compile options of keyword arguments.
struct Settings {
    opt: u8,
    fast_math: bool,
    threads: usize,
}

#[pymethods]
impl PyProgram {
    #[new]
    fn new() -> Self {
        PyProgram { program: tempo::Program::new(), callbacks: Vec::new() }
    }
    /// A dimension `name` of bound `bound` (`p.dim("t", "T")`).
    fn dim(&mut self, name: &str, bound: &str) -> PyDim {
        PyDim { dim: self.program.dim(name, bound) }
    }
    /// An input over `domain` with points of `shape` and `dtype`.
    #[pyo3(signature = (name, domain, shape, dtype = "float32"))]
    fn input(
        &mut self,
        py: Python<'_>,
        name: &str,
        domain: Vec<PyRef<PyDim>>,
        shape: Vec<i64>,
        dtype: &str,
    ) -> PyResult<PyTensor> {
        let dims: Vec<tempo::Dim> = domain.iter().map(|d| d.dim.clone()).collect();
        let refs: Vec<&tempo::Dim> = dims.iter().collect();
        let ty = point_type(shape, dtype)?;
        let tensor = located(py, || self.program.input(name, &refs, ty));
        Ok(PyTensor { tensor, domain: dims })
    }
    /// A tensor over `domain`, defined by `define`/`otherwise`.
    #[pyo3(signature = (name, domain, shape, dtype = "float32"))]
    fn tensor(
        &mut self,
        py: Python<'_>,
        name: &str,
        domain: Vec<PyRef<PyDim>>,
        shape: Vec<i64>,
        dtype: &str,
    ) -> PyResult<PyTensor> {
        let dims: Vec<tempo::Dim> = domain.iter().map(|d| d.dim.clone()).collect();
        let refs: Vec<&tempo::Dim> = dims.iter().collect();
        let ty = point_type(shape, dtype)?;
        let tensor = located(py, || self.program.tensor(name, &refs, ty));
        Ok(PyTensor { tensor, domain: dims })
    }
    /// `tensor` is `value` where `when` holds (the first definition that
    /// holds, in order, gives a point its value). `value` is an `Expr` or a
    /// number (one value for the whole point, of the tensor's dtype):
    /// `p.define(w, i == 0, 0.0)`.
    fn define(&mut self, py: Python<'_>, tensor: &PyTensor, when: &PyCond, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = operand(value)?;
        located(py, || {
            let value = value.or_splat(tensor.tensor.point_type().clone());
            self.program.define(&tensor.tensor, when.cond.clone(), value)
        });
        Ok(())
    }
    /// `tensor` is `value` wherever no earlier definition holds; `value` an
    /// `Expr` or a number, as in `define`.
    fn otherwise(&mut self, py: Python<'_>, tensor: &PyTensor, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let value = operand(value)?;
        located(py, || {
            let value = value.or_splat(tensor.tensor.point_type().clone());
            self.program.otherwise(&tensor.tensor, value)
        });
        Ok(())
    }
    /// Marks `tensor` as an output: `run` returns its whole domain.
    fn output(&mut self, tensor: &PyTensor) {
        self.program.output(&tensor.tensor)
    }
    /// Ends dimension `dim` where `done` (bool points over `dim`) first
    /// holds: decode until an end token (`temporal.stop`). Over other
    /// dimensions too (`done[b, t]`), each of their points stops on its own
    /// and outputs hold zeros past each point's length.
    fn stop(&mut self, py: Python<'_>, done: &PyTensor, dim: &PyDim) {
        located(py, || self.program.stop(&done.tensor, &dim.dim))
    }
    /// The gradient of the sum of `of`'s points (scalar floats: a loss)
    /// with respect to each point of `wrt`, a tensor named `name` over
    /// `wrt`'s domain. A training loop updates a parameter over an
    /// iteration dimension `i` from the previous iteration's gradient,
    /// read through `stop_gradient` (`tempo.optim` writes such updates):
    ///
    /// >>> p = tempo.Program(); i = p.dim("i", "I")
    /// >>> w = p.tensor("w", [i], [], "float64")
    /// >>> loss = p.tensor("loss", [i], [], "float64")
    /// >>> p.otherwise(loss, (w[i] - 3.0) * (w[i] - 3.0))
    /// >>> g = p.grad("g", loss, w)       # g[i] = 2 (w[i] - 3)
    /// >>> p.define(w, i == 0, 0.0)
    /// >>> p.otherwise(w, w[i - 1] - 0.25 * g[i - 1].stop_gradient())
    /// >>> p.output(w)
    /// >>> p.compile().run(I=4)["w"].tolist()
    /// [0.0, 1.5, 2.25, 2.625]
    fn grad(&mut self, py: Python<'_>, name: &str, of: &PyTensor, wrt: &PyTensor) -> PyTensor {
        let tensor = located(py, || self.program.grad(name, &of.tensor, &wrt.tensor));
        PyTensor { domain: wrt.domain.clone(), tensor }
    }
    /// The program as temporal MLIR.
    fn mlir(&self) -> PyResult<String> {
        self.program.to_mlir().map_err(error)
    }
    /// Compiles once: `opt` (0 to 3), `fast_math`, `threads` (0: every
    /// core). `bounds` (`{"B": 8}`), when given, are the bound values
    /// every run will use: the compiler specializes the program to them
    /// (at `opt` 2 and up `temporal-vectorize` turns a dimension of
    /// independent points into batches, where a batched `Program.call`
    /// gets the whole batch at once); a run with other values is refused.
    #[pyo3(signature = (opt = 2, fast_math = false, threads = 0, bounds = None))]
    fn compile(
        &self,
        opt: u8,
        fast_math: bool,
        threads: usize,
        bounds: Option<std::collections::BTreeMap<String, i64>>,
    ) -> PyResult<PyExecutable> {
        let settings = Settings { opt, fast_math, threads };
        let mut runner = self
            .program
            .runner()
            .front(tempo::Front::Python)
            .optimize(settings.opt)
            .fast_math(settings.fast_math)
            .threads(settings.threads);
        for (name, value) in bounds.unwrap_or_default() {
            runner = runner.bound(&name, value);
        }
        PyExecutable::new(runner.compile().map_err(error)?)
    }
    /// Evaluates the program with the reference interpreter: bounds and
    /// inputs as keyword arguments (`T=10, x=array`), `seed` for inputs not
    /// given. Returns `{output name: numpy array}`.
    #[pyo3(signature = (seed = None, **arguments))]
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        seed: Option<u64>,
        arguments: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let bound_names: Vec<String> = self.program.bounds();
        let (bounds, views, _keep) = split_arguments(py, &bound_names, &self.program.inputs(), arguments)?;
        let inputs = arrays_of(&views);
        let mut runner = self.program.runner().front(tempo::Front::Python);
        for (name, value) in &bounds {
            runner = runner.bound(name, *value);
        }
        for input in inputs {
            runner = runner.input(input);
        }
        if let Some(seed) = seed {
            runner = runner.seed(seed);
        }
        let outputs = runner.interpret().map_err(error)?;
        arrays(py, outputs)
    }
}

#[pymodule]
fn _tempo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProgram>()?;
    m.add_class::<PyDim>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PyCond>()?;
    m.add_class::<PyTensor>()?;
    m.add_class::<PyExpr>()?;
    m.add_class::<PyExecutable>()?;
    m.add_function(wrap_pyfunction!(einsum, m)?)?;
    m.add_function(wrap_pyfunction!(select, m)?)?;
    m.add_function(wrap_pyfunction!(always, m)?)?;
    m.add_function(wrap_pyfunction!(maximum, m)?)?;
    m.add_function(wrap_pyfunction!(minimum, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(constant, m)?)?;
    m.add_function(wrap_pyfunction!(random_uniform, m)?)?;
    m.add_function(wrap_pyfunction!(random_normal, m)?)?;
    training::register(m)?;
    rl::register(m)?;
    m.add("TempoError", m.py().get_type::<TempoError>())?;
    Ok(())
}
