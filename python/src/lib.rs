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
mod errors;
mod executable;
mod parallel;
mod rl;
mod training;
mod values;

use errors::{TempoError, caller, refused, tempo_error};
use executable::{PyExecutable, arrays, arrays_of, split_arguments};

/// Runs `f` with the ops it builds located at the Python caller's line
/// and column.
fn located<R>(py: Python<'_>, f: impl FnOnce() -> R) -> R {
    let at = caller(py);
    tempo::site::at_column(&at.file, at.line, at.column, f)
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

/// The `TempoError` of an error of the Rust API met by Python call `op`
/// (`Program.compile`): located where the diagnostic says (the line that
/// built the offending op), else at the call.
fn error(py: Python<'_>, op: &str, e: tempo::Error) -> PyErr {
    tempo_error(py, e.to_string(), Some(op), Some(caller(py)))
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
    /// `self == other` (or another predicate) elementwise where `other` is
    /// an operand; `NotImplemented` otherwise, so Python falls back to
    /// identity (`expr == "text"` is False).
    fn compared_or_not(
        &self,
        py: Python<'_>,
        predicate: tempo::Predicate,
        other: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        if operand(other).is_err() {
            return Ok(py.NotImplemented());
        }
        Ok(Py::new(py, self.compared(py, predicate, other)?)?.into_any())
    }
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
    /// Elementwise equality (booleans), as NumPy's `==`: with token ids,
    /// one-hot rows: `tempo.arange(V) == ids.reshape([B, 1])` is `[B, V]`.
    /// (`==` and `!=` on values are elementwise; on dimensions and indices
    /// they are conditions, `t == 0`.)
    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.compared_or_not(py, tempo::Predicate::Eq, other)
    }
    /// Elementwise inequality (booleans), as NumPy's `!=`.
    fn __ne__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<Py<PyAny>> {
        self.compared_or_not(py, tempo::Predicate::Ne, other)
    }
    /// Refused: a value is known only when the program runs, so it has no
    /// truth value while the program is built (`if x > 0:`, `x and y`).
    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        Err(refused(
            py,
            "Expr.__bool__",
            "a value has no truth value while the program is built: choose elementwise with \
             `tempo.where(x > 0, a, b)`, or branch on the point with a condition (`p.define(y, t == 0, ...)`)",
        ))
    }
    /// Elementwise equality (booleans): `tok.equals(EOS)`, the same as
    /// `tok == EOS`. With token ids, one-hot rows:
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> ids = p.input("ids", [t], [2], "int64")
    /// >>> y = p.tensor("y", [t], [2, 4])
    /// >>> p.otherwise(y, tempo.arange(4).equals(ids[t].reshape([2, 1])).astype("float32"))
    /// >>> p.output(y)
    /// >>> p.compile().run(T=1, ids=np.array([[3, 0]]))["y"].tolist()
    /// [[[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]]]
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
    /// GELU in its tanh form, elementwise (floats): GPT-2's activation,
    /// PyTorch's `gelu(x, approximate="tanh")`,
    /// `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))` (the Rust API's
    /// `Expr::gelu`, composed of `tanh`, products and sums).
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> x = p.input("x", [t], [3], "float64")
    /// >>> y = p.tensor("y", [t], [3], "float64")
    /// >>> p.otherwise(y, x[t].gelu())
    /// >>> p.output(y)
    /// >>> p.compile().run(T=1, x=np.array([[-1.0, 0.0, 2.0]]))["y"].round(4).tolist()
    /// [[-0.1588, 0.0, 1.9546]]
    fn gelu(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.gelu()) }
    }
    /// SiLU (swish), `x * sigmoid(x)`, elementwise (floats): LLaMA's MLP
    /// activation (the Rust API's `Expr::silu`).
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> x = p.input("x", [t], [3], "float64")
    /// >>> y = p.tensor("y", [t], [3], "float64")
    /// >>> p.otherwise(y, x[t].silu())
    /// >>> p.output(y)
    /// >>> p.compile().run(T=1, x=np.array([[-1.0, 0.0, 2.0]]))["y"].round(4).tolist()
    /// [[-0.2689, 0.0, 1.7616]]
    fn silu(&self, py: Python<'_>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.silu()) }
    }
    /// The same value, through which no gradient passes: for
    /// `Program.grad` it is a constant, so the gradient is the partial one
    /// along the other paths (a target network's values, a baseline).
    ///
    /// It is not required in a parameter's update
    /// `w[i] = w[i - 1] - lr * g[i - 1]`: `g[i]` is the gradient of the
    /// loss through `w[i]` itself, never through the later points of `w`
    /// that the update computes from it, so the updates are the same with
    /// or without it (`tempo.optim` writes it, to say that the update is
    /// not differentiated).
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
    /// The box at `offsets` of `sizes` (static offsets; `slice_at` takes
    /// offsets that move with the point).
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> y = p.tensor("y", [t], [2], "int64")
    /// >>> p.otherwise(y, tempo.arange(5).slice([1], [2]))
    /// >>> p.output(y)
    /// >>> p.compile().run(T=1)["y"].tolist()
    /// [[1, 2]]
    fn slice(&self, py: Python<'_>, offsets: Vec<i64>, sizes: Vec<i64>) -> PyExpr {
        PyExpr { expr: located(py, || self.expr.slice(&offsets, &sizes)) }
    }
    /// The box of static `sizes` at `offsets` that depend on the point: one
    /// affine index per axis over the dimensions of the tensor being
    /// defined and the bounds (a `Dim`, an `Index` such as `t - 1` or
    /// `2 * h`, or an int). Position embeddings take row `t` of a table
    /// (`wpe[()].slice_at([t, 0], [1, D])`); attention heads, rows
    /// `h * 8` on. An offset past the value's end is a `TempoError` (at
    /// compile time where the bounds tell, else when the run reaches it).
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> wpe = p.input("wpe", [], [8, 2])
    /// >>> x = p.input("x", [t], [2])
    /// >>> h = p.tensor("h", [t], [2])
    /// >>> p.otherwise(h, x[t] + wpe[()].slice_at([t, 0], [1, 2]).reshape([2]))
    /// >>> p.output(h)
    /// >>> table = np.arange(16, dtype=np.float32).reshape(8, 2)
    /// >>> p.compile().run(T=3, wpe=table, x=np.zeros((3, 2), np.float32))["h"].tolist()
    /// [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    fn slice_at(&self, py: Python<'_>, offsets: Vec<Bound<'_, PyAny>>, sizes: Vec<i64>) -> PyResult<PyExpr> {
        let offsets: Vec<Index> = offsets.iter().map(index_of).collect::<PyResult<_>>()?;
        if offsets.len() != self.expr.rank() || sizes.len() != self.expr.rank() {
            return Err(refused(
                py,
                "Expr.slice_at",
                format!(
                    "slice_at of a value of rank {} takes {} offsets and {} sizes, not {} and {}",
                    self.expr.rank(),
                    self.expr.rank(),
                    self.expr.rank(),
                    offsets.len(),
                    sizes.len()
                ),
            ));
        }
        Ok(PyExpr { expr: located(py, || self.expr.slice_at(offsets, &sizes)) })
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
    fn output(&mut self, py: Python<'_>, tensor: &PyTensor) {
        located(py, || self.program.output(&tensor.tensor))
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
    /// `wrt`'s domain: at each point of `wrt`, through that point only
    /// (not through the later points of `wrt` an update computes from it).
    /// A training loop updates a parameter over an iteration dimension `i`
    /// from the previous iteration's gradient (`tempo.optim` writes such
    /// updates); reading it through `stop_gradient` states that the update
    /// is not differentiated but changes nothing: without it the updates
    /// are the same.
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
    fn mlir(&self, py: Python<'_>) -> PyResult<String> {
        self.program.to_mlir().map_err(|e| error(py, "Program.mlir", e))
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
        py: Python<'_>,
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
        PyExecutable::new(py, runner.compile().map_err(|e| error(py, "Program.compile", e))?)
    }
    /// Evaluates the program with the reference interpreter: bounds and
    /// inputs as keyword arguments (`T=10, x=array`), `seed` for inputs not
    /// given. Returns `{output name: numpy array}`. Inputs are taken as
    /// `Executable.run` takes them (not converted). The GIL is released
    /// while the interpreter runs, so other Python threads go on (a
    /// function of `Program.call` takes it back while it runs).
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> x = p.input("x", [t], [], "int64")
    /// >>> s = p.tensor("s", [t], [], "int64")
    /// >>> p.define(s, t == 0, x[t])
    /// >>> p.otherwise(s, s[t - 1] + x[t])
    /// >>> p.output(s)
    /// >>> p.interpret(T=4, x=np.arange(4))["s"].tolist()
    /// [0, 1, 3, 6]
    #[pyo3(signature = (seed = None, **arguments))]
    fn interpret<'py>(
        &self,
        py: Python<'py>,
        seed: Option<u64>,
        arguments: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let bound_names: Vec<String> = self.program.bounds();
        let (bounds, views, _keep) =
            split_arguments(py, "Program.interpret", &bound_names, &self.program.inputs(), arguments)?;
        let inputs = arrays_of(&views);
        let program = OnThisThread(&self.program);
        let outputs = py.detach(move || {
            let program = program;
            let mut runner = program.0.runner().front(tempo::Front::Python);
            for (name, value) in &bounds {
                runner = runner.bound(name, *value);
            }
            for input in inputs {
                runner = runner.input(input);
            }
            if let Some(seed) = seed {
                runner = runner.seed(seed);
            }
            runner.interpret()
        });
        let outputs = outputs.map_err(|e| error(py, "Program.interpret", e))?;
        arrays(py, outputs)
    }
}

/// The program, reached without the GIL by the thread that holds it.
struct OnThisThread<'a>(&'a tempo::Program);

// SAFETY: `Python::detach` runs its closure on the calling thread, the one
// the (unsendable) `Program` belongs to; the GIL is released only so that
// other threads run Python meanwhile. No other thread can reach the program
// (PyO3 refuses an unsendable object to them), and a function the
// interpreter calls on this thread takes the GIL back first (and, holding
// the program borrowed, PyO3 refuses it a mutable borrow).
unsafe impl Send for OnThisThread<'_> {}

#[pymodule]
fn _tempo(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyProgram>()?;
    m.add_class::<PyDim>()?;
    m.add_class::<PyIndex>()?;
    m.add_class::<PyCond>()?;
    m.add_class::<PyTensor>()?;
    m.add_class::<PyExpr>()?;
    m.add_class::<PyExecutable>()?;
    m.add_function(wrap_pyfunction!(values::einsum, m)?)?;
    m.add_function(wrap_pyfunction!(values::select, m)?)?;
    m.add_function(wrap_pyfunction!(values::always, m)?)?;
    m.add_function(wrap_pyfunction!(values::maximum, m)?)?;
    m.add_function(wrap_pyfunction!(values::minimum, m)?)?;
    m.add_function(wrap_pyfunction!(values::arange, m)?)?;
    m.add_function(wrap_pyfunction!(values::constant, m)?)?;
    m.add_function(wrap_pyfunction!(values::random_uniform, m)?)?;
    m.add_function(wrap_pyfunction!(values::random_normal, m)?)?;
    training::register(m)?;
    rl::register(m)?;
    parallel::register(m)?;
    m.add("TempoError", m.py().get_type::<TempoError>())?;
    Ok(())
}
