//! External calls with Python functions: `Program.call` registers a
//! Python callable as the Rust API's external function (`Program::external`)
//! and returns the call's value (`Expr::call`). The compiled code (or the
//! interpreter) calls it through the runtime's trampoline, once per point
//! of the tensor whose definition holds the call, on the call's own
//! buffers (`Program::external_raw`: the arguments copied once into NumPy
//! arrays, the result once into the call's buffer); it takes the GIL only
//! while the function runs. An exception in it ends the run with a
//! `TempoError` carrying the Python traceback and the line of `p.call`.

use super::{PyExpr, PyProgram, describe, element_of, located, numpy_name, point_type, refused};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyByteArray, PyBytes, PyTuple};
use tempo::{ElementType, Expr, PointType};

/// NumPy's functions a call uses, looked up once.
struct NumPy {
    frombuffer: Py<PyAny>,
    asarray: Py<PyAny>,
    ascontiguousarray: Py<PyAny>,
    ndarray: Py<PyAny>,
}

static NUMPY: PyOnceLock<NumPy> = PyOnceLock::new();

fn numpy(py: Python<'_>) -> PyResult<&NumPy> {
    NUMPY.get_or_try_init(py, || {
        let numpy = py.import("numpy")?;
        Ok(NumPy {
            frombuffer: numpy.getattr("frombuffer")?.unbind(),
            asarray: numpy.getattr("asarray")?.unbind(),
            ascontiguousarray: numpy.getattr("ascontiguousarray")?.unbind(),
            ndarray: numpy.getattr("ndarray")?.unbind(),
        })
    })
}

/// The element type of a NumPy array's dtype character (`float32` is
/// `f`; `int64` is `l`, or `q` as `longlong`).
fn element_of_char(c: char) -> Option<ElementType> {
    Some(match c {
        'f' => ElementType::F32,
        'd' => ElementType::F64,
        'i' => ElementType::I32,
        'l' | 'q' => ElementType::I64,
        '?' => ElementType::I1,
        _ => return None,
    })
}

/// The arguments as new NumPy arrays, each over a `bytearray` of its own
/// (the one copy of the point: the function may keep and change them).
fn numpy_arguments<'py>(py: Python<'py>, args: &[(&PointType, &[u8])]) -> PyResult<Bound<'py, PyTuple>> {
    let np = numpy(py)?;
    let mut arrays = Vec::with_capacity(args.len());
    for (ty, bytes) in args {
        let buffer = PyByteArray::new(py, bytes);
        let flat = np.frombuffer.bind(py).call1((buffer, numpy_name(ty.element)))?;
        arrays.push(flat.call_method1("reshape", (PyTuple::new(py, &ty.shape)?,))?);
    }
    PyTuple::new(py, arrays)
}

/// Results of this many bytes and more are copied from the array's own
/// memory; smaller ones through `tobytes` (cheaper than finding the
/// address, for a second copy of a few bytes).
const LARGE_RESULT: usize = 1 << 16;

/// Writes the function's result into the call's result buffer `out`: an
/// array (or anything NumPy turns into one) of exactly the declared shape
/// and dtype, or a plain Python number, which takes the declared dtype.
fn write_result(py: Python<'_>, value: &Bound<'_, PyAny>, ty: &PointType, out: &mut [u8]) -> Result<(), String> {
    let mut convert = || -> PyResult<Result<(), String>> {
        let np = numpy(py)?;
        let array = if value.is_instance(np.ndarray.bind(py))? {
            value.clone()
        } else {
            let number = value.is_instance_of::<pyo3::types::PyFloat>()
                || value.is_instance_of::<pyo3::types::PyInt>()
                || value.is_instance_of::<pyo3::types::PyBool>();
            let converted = if number {
                np.asarray.bind(py).call1((value, numpy_name(ty.element)))
            } else {
                np.asarray.bind(py).call1((value,))
            };
            match converted {
                Ok(array) => array,
                Err(e) => {
                    let kind = value.get_type().name()?;
                    return Ok(Err(format!("it returned a {kind}, which is not an array ({e})")));
                }
            }
        };
        let dtype = array.getattr("dtype")?;
        let code: char = dtype.getattr("char")?.extract()?;
        if element_of_char(code) != Some(ty.element) {
            let name: String = dtype.str()?.extract()?;
            let hint = match element_of(&name) {
                Ok(_) => format!(" (results are not converted: use .astype(np.{}))", numpy_name(ty.element)),
                Err(_) => String::new(),
            };
            return Ok(Err(format!("it returned an array of {name}; declared {}{hint}", describe(ty))));
        }
        let shape: Vec<i64> = array.getattr("shape")?.extract()?;
        if shape != ty.shape {
            let got = PointType { shape, element: ty.element };
            return Ok(Err(format!("it must return {}, returned {}", describe(ty), describe(&got))));
        }
        if out.len() >= LARGE_RESULT {
            // One copy, from the array's memory (in C order first if it is
            // not: `ascontiguousarray` copies only then).
            let contiguous = np.ascontiguousarray.bind(py).call1((&array,))?;
            let address: usize = contiguous.getattr("__array_interface__")?.get_item("data")?.get_item(0)?.extract()?;
            // SAFETY: `contiguous` is a C-order array of the declared shape
            // and dtype, `out.len()` bytes at `address`, alive here.
            let source = unsafe { std::slice::from_raw_parts(address as *const u8, out.len()) };
            out.copy_from_slice(source);
            return Ok(Ok(()));
        }
        // The elements in C order, whatever the array's strides.
        let bytes = array.call_method0("tobytes")?;
        let bytes = bytes.cast::<PyBytes>()?.as_bytes();
        if bytes.len() != out.len() {
            return Ok(Err(format!("it returned {} bytes for {}", bytes.len(), describe(ty))));
        }
        out.copy_from_slice(bytes);
        Ok(Ok(()))
    };
    convert().unwrap_or_else(|e| Err(format!("its result could not be read: {e}")))
}

/// The text of a Python exception with its traceback, as Python prints it.
fn traceback_text(py: Python<'_>, error: &PyErr) -> String {
    let text = py.import("traceback").and_then(|traceback| {
        let lines =
            traceback.call_method1("format_exception", (error.get_type(py), error.value(py), error.traceback(py)))?;
        let joined: String = pyo3::types::PyString::new(py, "").call_method1("join", (lines,))?.extract()?;
        Ok(joined)
    });
    text.unwrap_or_else(|_| error.to_string()).trim_end().to_string()
}

/// Calls `function` on the points `args` (with the GIL) and writes its
/// result into `out`.
fn invoke(
    py: Python<'_>,
    function: &Py<PyAny>,
    args: &[(&PointType, &[u8])],
    ty: &PointType,
    out: &mut [u8],
) -> Result<(), String> {
    let arrays = numpy_arguments(py, args).map_err(|e| format!("its arguments could not be made: {e}"))?;
    match function.call1(py, arrays) {
        Ok(value) => write_result(py, value.bind(py), ty, out),
        Err(e) => Err(format!("the Python function raised an exception:\n{}", traceback_text(py, &e))),
    }
}

/// `invoke` for a batched function (`batched=True`), which always gets a
/// leading batch dimension: a call of one point (`ty` the declared type)
/// gets a batch of one, and returns one row.
fn invoke_batched(
    py: Python<'_>,
    function: &Py<PyAny>,
    args: &[(&PointType, &[u8])],
    ty: &PointType,
    declared: &PointType,
    out: &mut [u8],
) -> Result<(), String> {
    if ty != declared {
        return invoke(py, function, args, ty, out);
    }
    let one = |t: &PointType| PointType {
        shape: std::iter::once(1).chain(t.shape.iter().copied()).collect(),
        element: t.element,
    };
    let types: Vec<PointType> = args.iter().map(|(t, _)| one(t)).collect();
    let rows: Vec<(&PointType, &[u8])> = types.iter().zip(args).map(|(t, (_, bytes))| (t, *bytes)).collect();
    let arrays = numpy_arguments(py, &rows).map_err(|e| format!("its arguments could not be made: {e}"))?;
    match function.call1(py, arrays) {
        Ok(value) => write_result(py, value.bind(py), &one(ty), out),
        Err(e) => Err(format!("the Python function raised an exception:\n{}", traceback_text(py, &e))),
    }
}

/// The values `args` of `p.call`: expressions.
fn argument_exprs(py: Python<'_>, args: &Bound<'_, PyAny>) -> PyResult<Vec<Expr>> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(one) = args.cast::<PyExpr>() {
        vec![one.clone().into_any()]
    } else {
        match args.try_iter() {
            Ok(items) => items.collect::<PyResult<_>>()?,
            Err(_) => return Err(refused(py, "Program.call", "the arguments of a call are a list of Expr")),
        }
    };
    items
        .iter()
        .map(|item| match item.cast::<PyExpr>() {
            Ok(e) => Ok(e.borrow().expr.clone()),
            Err(_) => {
                let kind = item.get_type().name().map(|n| n.to_string()).unwrap_or_default();
                Err(refused(
                    py,
                    "Program.call",
                    format!("an argument of a call is an Expr (a read such as `x[t - 1]`), not a {kind}"),
                ))
            }
        })
        .collect()
}

#[pymethods]
impl PyProgram {
    /// `call(name, function, args, shape, dtype="float32")`: the value
    /// `function(*args)` computes, a point of `shape` and `dtype`: an
    /// external call (the Rust API's `Program::external` and `Expr::call`).
    /// The program calls `function` once per point of the tensor whose
    /// definition holds the call, in the schedule's order (the order the
    /// dependences give: a stateful function, an environment, is ordered
    /// by passing what it returned back into its next call), with the GIL
    /// held only while it runs (`Executable.run` releases it otherwise).
    /// Only calls whose tensor some output depends on run (the compiler
    /// removes the others).
    ///
    /// `function` gets one NumPy array per argument, the argument's point
    /// (its own copy: it may keep it), and returns an array of exactly
    /// `shape` and `dtype` (results are not converted; a plain Python
    /// number takes `dtype`). An exception raised in it, or a result of
    /// another shape or dtype, ends the run with a `TempoError` that names
    /// this line and carries the Python traceback; the executable runs
    /// again afterwards. `name` identifies the function in the program
    /// (several calls may use one name with the same function; another
    /// function under a used name is refused).
    ///
    /// Batches: write the batch into the point (`[N, 4]` for `N`
    /// environments) and the function steps all of them in one call
    /// (`examples/python/ppo.py` steps `N` Gymnasium environments so). Or,
    /// for a batch dimension `b` of the domain whose points are
    /// independent, `batched=True`: the function always gets a leading
    /// batch dimension on every argument and returns one on its result
    /// (row `k` computed from row `k` alone); where the compiler batches
    /// `b` (`compile(bounds={"B": n})`, at `opt` 2 and up, when every
    /// tensor over `b` allows it) it gets all `n` points of `b` at once,
    /// elsewhere (and in the interpreter) a batch of one.
    ///
    /// >>> import numpy as np, tempo
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> s = p.tensor("s", [t], [2])
    /// >>> def step(state):                      # a NumPy environment
    /// ...     return (state * 0.5 + 1.0).astype(np.float32)
    /// >>> p.define(s, t == 0, 0.0)
    /// >>> p.otherwise(s, p.call("step", step, [s[t - 1]], [2]))
    /// >>> p.output(s)
    /// >>> p.compile().run(T=3)["s"].tolist()
    /// [[0.0, 0.0], [1.0, 1.0], [1.5, 1.5]]
    #[pyo3(signature = (name, function, args, shape, dtype = "float32", batched = false))]
    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        py: Python<'_>,
        name: &str,
        function: &Bound<'_, PyAny>,
        args: &Bound<'_, PyAny>,
        shape: Vec<i64>,
        dtype: &str,
        batched: bool,
    ) -> PyResult<PyExpr> {
        if !function.is_callable() {
            let kind = function.get_type().name()?;
            return Err(refused(
                py,
                "Program.call",
                format!("the function of call '{name}' is a {kind}, which is not callable"),
            ));
        }
        if name.is_empty() {
            return Err(refused(py, "Program.call", "a call's name is not empty"));
        }
        if let Some(n) = shape.iter().find(|&&n| n < 0) {
            return Err(refused(py, "Program.call", format!("call '{name}': a size of the result's shape is {n}")));
        }
        let ty = point_type(shape, dtype).map_err(|e| refused(py, "Program.call", e.value(py).to_string()))?;
        let args = argument_exprs(py, args)?;
        if batched && args.is_empty() {
            return Err(refused(
                py,
                "Program.call",
                format!("batched call '{name}' takes an argument (a batch's size is its rows)"),
            ));
        }
        match self.callbacks.iter().find(|(n, _, _, _)| n == name) {
            Some((_, known, _, _)) if !known.bind(py).is(function) => {
                return Err(refused(
                    py,
                    "Program.call",
                    format!("call '{name}' names another function already: give this one its own name"),
                ));
            }
            Some((_, _, known, _)) if *known != ty => {
                return Err(refused(
                    py,
                    "Program.call",
                    format!(
                        "call '{name}' returns {} where it was called before, not {}",
                        describe(known),
                        describe(&ty)
                    ),
                ));
            }
            Some((_, _, _, was)) if *was != batched => {
                let was = if *was { "True" } else { "False" };
                return Err(refused(
                    py,
                    "Program.call",
                    format!("call '{name}' was batched={was} where it was called before"),
                ));
            }
            Some(_) => {}
            None if batched => {
                self.callbacks.push((name.to_string(), function.clone().unbind(), ty.clone(), true));
                let callee: Py<PyAny> = function.clone().unbind();
                let declared = ty.clone();
                self.program.external_raw(name, move |args, ty, out| {
                    Python::attach(|py| invoke_batched(py, &callee, args, ty, &declared, out))
                });
            }
            None => {
                self.callbacks.push((name.to_string(), function.clone().unbind(), ty.clone(), false));
                let callee: Py<PyAny> = function.clone().unbind();
                self.program
                    .external_raw(name, move |args, ty, out| Python::attach(|py| invoke(py, &callee, args, ty, out)));
            }
        }
        let refs: Vec<&Expr> = args.iter().collect();
        let expr = if batched {
            located(py, || Expr::call_batched(name, &refs, ty))
        } else {
            located(py, || Expr::call(name, &refs, ty))
        };
        Ok(PyExpr { expr })
    }
}
