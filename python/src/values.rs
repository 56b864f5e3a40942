//! The values of `tempo` that are no method: contractions, choices,
//! elementwise extremes, ranges, constants and seeded random values, each
//! the Rust API's (`Expr::einsum`, `Expr::select`, ...) at the Python
//! caller's line.

use super::{Operand, PyCond, PyExpr, element_of, located, operand_pair, point_type};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use tempo::{Expr, PointType};

/// `einsum(spec, *operands)`: a contraction in NumPy's notation.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> y = p.tensor("y", [t], [2])
/// >>> m = tempo.constant([[1.0, 2.0], [3.0, 4.0]])
/// >>> p.otherwise(y, tempo.einsum("ij,j->i", m, tempo.constant([1.0, 1.0])))
/// >>> p.output(y)
/// >>> p.compile().run(T=1)["y"].tolist()
/// [[3.0, 7.0]]
#[pyfunction]
#[pyo3(signature = (spec, *operands))]
pub(super) fn einsum(py: Python<'_>, spec: &str, operands: Vec<PyRef<PyExpr>>) -> PyExpr {
    let operands: Vec<&Expr> = operands.iter().map(|o| &o.expr).collect();
    PyExpr { expr: located(py, || Expr::einsum(spec, &operands)) }
}

/// `where(condition, a, b)`: `a` where `condition` (booleans) holds, else
/// `b`, elementwise and broadcast; `a` or `b` may be a number (a scalar of
/// the other's dtype): `tempo.where(x > 0, x, 0.0)`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> x = p.input("x", [t], [3])
/// >>> y = p.tensor("y", [t], [3])
/// >>> p.otherwise(y, tempo.where(x[t] > 0, x[t], 0.0))
/// >>> p.output(y)
/// >>> p.compile().run(T=1, x=np.array([[-1, 2, -3]], np.float32))["y"].tolist()
/// [[0.0, 2.0, 0.0]]
#[pyfunction(name = "where")]
pub(super) fn select(
    py: Python<'_>,
    condition: &PyExpr,
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || condition.expr.select(&a, &b)) })
}

/// `maximum(a, b)`: the elementwise maximum (broadcast), either side a
/// number: `tempo.maximum(x, 0.0)`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> x = p.input("x", [t], [3])
/// >>> y = p.tensor("y", [t], [3])
/// >>> p.otherwise(y, tempo.maximum(x[t], 0.0))
/// >>> p.output(y)
/// >>> p.compile().run(T=1, x=np.array([[-1, 2, -3]], np.float32))["y"].tolist()
/// [[0.0, 2.0, 0.0]]
#[pyfunction]
pub(super) fn maximum(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || a.max(&b)) })
}

/// `minimum(a, b)`: the elementwise minimum (broadcast), either side a
/// number: `tempo.minimum(ratio, 1.2)`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> x = p.input("x", [t], [3])
/// >>> y = p.tensor("y", [t], [3])
/// >>> p.otherwise(y, tempo.minimum(1.0, x[t]))
/// >>> p.output(y)
/// >>> p.compile().run(T=1, x=np.array([[-1, 2, -3]], np.float32))["y"].tolist()
/// [[-1.0, 1.0, -3.0]]
#[pyfunction]
pub(super) fn minimum(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyExpr> {
    let (a, b) = located(py, || operand_pair(a, b))?;
    Ok(PyExpr { expr: located(py, || a.min(&b)) })
}

/// `arange(n, dtype="int64")`: the vector `[0, 1, ..., n - 1]`. Compared
/// with token ids it makes one-hot rows (targets as ids, not one-hot
/// inputs): `tempo.arange(V).equals(y[t].reshape([B, 1])).astype("float32")`
/// for ids `y[t]` of `[B]`, rows of `[B, V]`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> ids = p.input("ids", [t], [2], "int64")
/// >>> y = p.tensor("y", [t], [2, 3])
/// >>> p.otherwise(y, (tempo.arange(3) == ids[t].reshape([2, 1])).astype("float32"))
/// >>> p.output(y)
/// >>> p.compile().run(T=1, ids=np.array([[2, 0]]))["y"].tolist()
/// [[[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]]
#[pyfunction]
#[pyo3(signature = (n, dtype = "int64"))]
pub(super) fn arange(py: Python<'_>, n: i64, dtype: &str) -> PyResult<PyExpr> {
    let element = element_of(dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::arange(n, element)) })
}

/// `constant(value, dtype="float32", shape=None)`: a constant value. A
/// number is one value everywhere (a scalar, or of `shape`):
/// `tempo.constant(0.9)`, `tempo.constant(0, "int64", [4])`; a list or a
/// NumPy array gives the elements (and the shape):
/// `tempo.constant([1.0, -2.0, 0.5], "float64")`.
/// A float for an integer dtype must be an integer's value (NaN, an
/// infinity or a fraction is a `TempoError` at compile time).
///
/// >>> p = tempo.Program(); i = p.dim("i", "I")
/// >>> d = p.tensor("d", [i], [])
/// >>> p.define(d, i == 0, tempo.constant(1.0))
/// >>> p.otherwise(d, d[i - 1] * tempo.constant(0.5))
/// >>> p.output(d)
/// >>> p.compile().run(I=3)["d"].tolist()
/// [1.0, 0.5, 0.25]
#[pyfunction]
#[pyo3(signature = (value, dtype = "float32", shape = None))]
pub(super) fn constant(
    py: Python<'_>,
    value: &Bound<'_, PyAny>,
    dtype: &str,
    shape: Option<Vec<i64>>,
) -> PyResult<PyExpr> {
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
pub(super) fn random_uniform(py: Python<'_>, seed: i64, shape: Vec<i64>, dtype: &str) -> PyResult<PyExpr> {
    let ty = point_type(shape, dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::random_uniform(seed, ty)) })
}

/// `random_normal(seed, shape, dtype="float32")`: seeded standard normal
/// values (mean 0, standard deviation 1), a pure function of `seed`, the
/// point and the element, as `random_uniform`'s. Floats only:
/// `mean + sigma * tempo.random_normal(3, [4])`.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> r = p.tensor("r", [t], [1000])
/// >>> p.otherwise(r, tempo.random_normal(3, [1000]))
/// >>> p.output(r)
/// >>> out = p.compile().run(T=2)["r"]
/// >>> bool(abs(out.mean()) < 0.1 and abs(out.std() - 1) < 0.1)
/// True
#[pyfunction]
#[pyo3(signature = (seed, shape, dtype = "float32"))]
pub(super) fn random_normal(py: Python<'_>, seed: i64, shape: Vec<i64>, dtype: &str) -> PyResult<PyExpr> {
    let ty = point_type(shape, dtype)?;
    Ok(PyExpr { expr: located(py, || Expr::random_normal(seed, ty)) })
}

/// A condition that always holds.
///
/// >>> p = tempo.Program(); t = p.dim("t", "T")
/// >>> y = p.tensor("y", [t], [])
/// >>> p.define(y, tempo.always(), 1.0)
/// >>> p.output(y)
/// >>> p.compile().run(T=2)["y"].tolist()
/// [1.0, 1.0]
#[pyfunction]
pub(super) fn always() -> PyCond {
    PyCond { cond: tempo::Cond::always() }
}
