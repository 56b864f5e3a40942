//! `Executable`: a compiled program run from Python, from any thread, the
//! GIL released while its code runs (callbacks take it back), and the
//! conversions of its arguments and results.

use super::errors::{caller, refused, tempo_error};
use super::{element_of, error, numpy_name};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PySlice, PyTuple};
use tempo::{Data, HostArray, PointType};

/// A compiled program that any thread may use: every use goes through the
/// mutex, so one thread at a time touches its MLIR context and its code
/// (whose globals keep state between runs), as the C API's executables.
struct SharedCompiled(std::sync::Mutex<tempo::Compiled>);

// SAFETY: the `Compiled` (an MLIR context, its module and the JIT's code)
// is only reached through the mutex: never by two threads at once, and
// neither MLIR nor the compiled code ties it to the thread that made it.
unsafe impl Send for SharedCompiled {}
unsafe impl Sync for SharedCompiled {}

/// A program compiled once (`Program.compile`), run many times, from any
/// thread. The GIL is released while the compiled code runs, so other
/// Python threads go on (an external call's Python function takes it back
/// while it runs). Runs of one executable from several threads take turns
/// (its code keeps state between runs): each gets its own, correct
/// results; separate executables run in parallel. A function called by
/// the program may not run the executable that called it (a `TempoError`).
#[pyclass(name = "Executable", module = "tempo")]
pub(crate) struct PyExecutable {
    compiled: std::sync::Arc<SharedCompiled>,
    bounds: Vec<String>,
    /// Each input's name and point type.
    inputs: Vec<(String, PointType)>,
    /// Each output's name, point type and domain (bound positions).
    outputs: Vec<(String, PointType, Vec<usize>)>,
    /// Where each data-dependent stop ended in the last run.
    stop_lengths: std::sync::Mutex<Vec<Vec<i64>>>,
}

impl PyExecutable {
    /// The executable of a compiled program.
    pub(crate) fn new(py: Python<'_>, compiled: tempo::Compiled) -> PyResult<Self> {
        let failed = |e| error(py, "Program.compile", e);
        let bounds = compiled.bounds().map_err(failed)?;
        let outputs = compiled.outputs().map_err(failed)?;
        let inputs = compiled.inputs().map_err(failed)?.into_iter().map(|(name, point, _)| (name, point)).collect();
        let compiled = std::sync::Arc::new(SharedCompiled(std::sync::Mutex::new(compiled)));
        Ok(PyExecutable { compiled, bounds, inputs, outputs, stop_lengths: Default::default() })
    }
}

/// What a run hands to the thread that runs it without the GIL: the views
/// of the input and output arrays (raw addresses into NumPy arrays that
/// the caller keeps alive until the run returns).
struct Job {
    views: Vec<(String, tempo::ArrayView)>,
    targets: Vec<(String, tempo::ArrayViewMut)>,
}

// SAFETY: the views are addresses of arrays that the calling thread keeps
// alive (and does not touch) until the run returns; the run reads and
// writes them on this same thread, with the GIL released.
unsafe impl Send for Job {}

thread_local! {
    /// The executables (their shared state's addresses) running on this
    /// thread: an external call's function running one of them again
    /// would wait for itself.
    static RUNNING: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Marks an executable running on this thread until dropped.
struct Running(usize);

impl Running {
    fn enter(id: usize) -> Running {
        RUNNING.with(|r| r.borrow_mut().push(id));
        Running(id)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        RUNNING.with(|r| {
            let mut running = r.borrow_mut();
            if let Some(k) = running.iter().rposition(|&id| id == self.0) {
                running.remove(k);
            }
        });
    }
}

/// Keyword arguments as bounds (ints named like a bound) and inputs:
/// NumPy arrays (or DLPack tensors, or anything NumPy takes) in C order,
/// returned with the arrays that hold their memory.
#[allow(clippy::type_complexity)]
pub(crate) fn split_arguments<'py>(
    py: Python<'py>,
    op: &str,
    bound_names: &[String],
    inputs: &[(String, PointType)],
    arguments: Option<&Bound<'py, PyDict>>,
) -> PyResult<(Vec<(String, i64)>, Vec<(String, tempo::ArrayView)>, Vec<Bound<'py, PyAny>>)> {
    let mut bounds = Vec::new();
    let mut views = Vec::new();
    let mut keep = Vec::new();
    let Some(arguments) = arguments else { return Ok((bounds, views, keep)) };
    let numpy = py.import("numpy")?;
    let ndarray = numpy.getattr("ndarray")?;
    for (key, value) in arguments.iter() {
        let name: String = key.extract()?;
        if bound_names.contains(&name) {
            let is_int = value.is_instance_of::<pyo3::types::PyInt>() && !value.is_instance_of::<pyo3::types::PyBool>();
            let integer = if is_int {
                value.extract::<i64>().ok()
            } else {
                value.extract::<i64>().ok().filter(|_| value.hasattr("__index__").unwrap_or(false))
            };
            let Some(n) = integer else {
                let shown = value.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
                return Err(refused(py, op, format!("bound {name} is an int, not {shown}")));
            };
            bounds.push((name, n));
            continue;
        }
        // A DLPack tensor (PyTorch, JAX) is seen through NumPy, without a
        // copy; a C-order array is used in place (ascontiguousarray copies
        // only what is not).
        let value = if !value.is_instance(&ndarray)? && value.hasattr("__dlpack__")? {
            numpy.call_method1("from_dlpack", (&value,))?
        } else {
            value
        };
        // A plain Python number (a learning rate, a temperature) takes the
        // declared input's dtype; NumPy values keep theirs. `asarray` with
        // C order keeps a 0-d array 0-d (`ascontiguousarray` makes it 1-d).
        let declared = inputs.iter().find(|(n, _)| *n == name).map(|(_, p)| numpy_name(p.element));
        let python_number = value.is_instance_of::<pyo3::types::PyFloat>()
            || value.is_instance_of::<pyo3::types::PyInt>()
            || value.is_instance_of::<pyo3::types::PyBool>();
        let keywords = PyDict::new(py);
        keywords.set_item("order", "C")?;
        if let (true, Some(dtype)) = (python_number, declared) {
            keywords.set_item("dtype", dtype)?;
        }
        let array = numpy.call_method("asarray", (value,), Some(&keywords))?;
        let dtype: String = array.getattr("dtype")?.str()?.extract()?;
        let element = element_of(&dtype)
            .map_err(|_| refused(py, op, format!("input '{name}': arrays of {dtype} are not supported")))?;
        let shape: Vec<usize> = array.getattr("shape")?.extract()?;
        let address: usize = array.getattr("ctypes")?.getattr("data")?.extract()?;
        views.push((name, tempo::ArrayView { shape, element, data: address as *const u8 }));
        keep.push(array);
    }
    Ok((bounds, views, keep))
}

/// The views' elements copied into arrays (for the interpreter).
pub(crate) fn arrays_of(views: &[(String, tempo::ArrayView)]) -> Vec<HostArray> {
    views
        .iter()
        .map(|(name, view)| {
            let bytes = view.shape.iter().product::<usize>() * view.element.byte_size();
            // SAFETY: the view points into an array kept alive by the caller.
            let data = unsafe { std::slice::from_raw_parts(view.data, bytes) };
            HostArray {
                name: name.clone(),
                shape: view.shape.clone(),
                data: Data::from_bytes(view.element, data).unwrap_or_else(|_| Data::F32(Vec::new())),
            }
        })
        .collect()
}

/// Outputs as `{name: numpy array}`.
pub(crate) fn arrays<'py>(py: Python<'py>, outputs: Vec<HostArray>) -> PyResult<Bound<'py, PyDict>> {
    let numpy = py.import("numpy")?;
    let result = PyDict::new(py);
    for output in outputs {
        let element = output.data.element();
        let size = output.data.len() * element.byte_size();
        let bytes = unsafe { std::slice::from_raw_parts(output.data.as_ptr(), size) };
        let flat = numpy.call_method1("frombuffer", (PyBytes::new(py, bytes), numpy_name(element)))?;
        let shaped = flat.call_method1("reshape", (PyTuple::new(py, &output.shape)?,))?.call_method0("copy")?;
        result.set_item(output.name, shaped)?;
    }
    Ok(result)
}

#[pymethods]
impl PyExecutable {
    /// Runs the compiled code: bounds and inputs as keyword arguments
    /// (`T=10, x=array`), `seed` for random inputs not given. Returns
    /// `{output name: numpy array}`.
    ///
    /// Inputs are not converted: an array must have the input's dtype (a
    /// float64 array for a float32 input is refused with a `TempoError`;
    /// convert it with `.astype(np.float32)`); only plain Python numbers
    /// take the input's dtype. C-order arrays are read in place; others
    /// (strided views, Fortran order) are copied to C order first;
    /// read-only arrays are fine (inputs are only read). A bound missing
    /// or not an int, an input missing (without `seed`) or of the wrong
    /// shape is a `TempoError` naming this call's line, with a hint.
    ///
    /// >>> p = tempo.Program(); t = p.dim("t", "T")
    /// >>> x = p.input("x", [t], [2])
    /// >>> y = p.tensor("y", [t], [2])
    /// >>> p.otherwise(y, x[t] * 2.0)
    /// >>> p.output(y)
    /// >>> exe = p.compile()
    /// >>> exe.run(T=1, x=np.array([[1.0, 2.0]], np.float32))["y"].tolist()
    /// [[2.0, 4.0]]
    /// >>> try:
    /// ...     exe.run(T=1, x=np.array([[1.0, 2.0]]))  # float64: refused
    /// ... except tempo.TempoError as e:
    /// ...     print(e.op, "|", e.hint)
    /// Executable.run | inputs are not converted: give an array of the input's dtype (`.astype(np.float32)`)
    #[pyo3(signature = (seed = None, **arguments))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        seed: Option<u64>,
        arguments: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let (bounds, views, keep) = split_arguments(py, "Executable.run", &self.bounds, &self.inputs, arguments)?;
        // The outputs' arrays, made here and written by the run in place
        // (when every bound they are sized by is given; otherwise the run
        // reports the missing one and nothing is made).
        let value_of = |d: usize| bounds.iter().find(|(n, _)| *n == self.bounds[d]).map(|(_, v)| *v);
        let numpy = py.import("numpy")?;
        let mut made: Vec<(String, Bound<'py, PyAny>)> = Vec::new();
        let mut targets = Vec::new();
        for (name, point, domain) in &self.outputs {
            let lead: Option<Vec<usize>> = domain.iter().map(|&d| value_of(d).map(|v| v.max(0) as usize)).collect();
            let Some(lead) = lead else {
                made.clear();
                targets.clear();
                break;
            };
            let shape: Vec<usize> = lead.into_iter().chain(point.shape.iter().map(|&n| n as usize)).collect();
            let array = numpy.call_method1("empty", (PyTuple::new(py, &shape)?, numpy_name(point.element)))?;
            let address: usize = array.getattr("ctypes")?.getattr("data")?.extract()?;
            targets
                .push((name.clone(), tempo::ArrayViewMut { shape, element: point.element, data: address as *mut u8 }));
            made.push((name.clone(), array));
        }
        let id = std::sync::Arc::as_ptr(&self.compiled) as usize;
        if RUNNING.with(|r| r.borrow().contains(&id)) {
            return Err(refused(
                py,
                "Executable.run",
                "this executable is running on this thread already: a function it calls (Program.call) cannot run it again",
            ));
        }
        let job = Job { views, targets };
        let shared = std::sync::Arc::clone(&self.compiled);
        // The compiled code runs without the GIL (other threads go on; a
        // called Python function takes it back); the lock is taken without
        // it too, so a thread waiting for its turn holds nothing another
        // needs.
        let ran = py.detach(move || {
            let job = job;
            let compiled = shared.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let _running = Running::enter(id);
            let bounds: Vec<(&str, i64)> = bounds.iter().map(|(n, v)| (n.as_str(), *v)).collect();
            // SAFETY: the caller keeps the arrays the input views point
            // into (`keep`) and those the outputs are written into (`made`)
            // until the run returns.
            unsafe { compiled.run_in_place(&bounds, job.views, job.targets, seed) }
        });
        let (outputs, report) =
            ran.map_err(|e| tempo_error(py, e.to_string(), Some("Executable.run"), Some(caller(py))))?;
        drop(keep);
        *self.stop_lengths.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = report.stop_lengths;
        if made.is_empty() {
            return arrays(py, outputs);
        }
        let result = PyDict::new(py);
        for (name, array) in made {
            // A stopped dimension: the part the run produced.
            let produced = outputs.iter().find(|o| o.name == name).map(|o| o.shape.clone());
            let full: Vec<usize> = array.getattr("shape")?.extract()?;
            match produced {
                Some(shape) if shape.len() == full.len() && shape != full => {
                    let parts: Vec<Bound<'py, PySlice>> =
                        shape.iter().map(|&n| PySlice::new(py, 0, n as isize, 1)).collect();
                    result.set_item(name, array.get_item(PyTuple::new(py, parts)?)?)?;
                }
                _ => result.set_item(name, array)?,
            }
        }
        Ok(result)
    }
    /// The program's bound names.
    #[getter]
    fn bounds(&self) -> Vec<String> {
        self.bounds.clone()
    }
    /// Where each data-dependent stop (`Program.stop`, in order) ended in
    /// the last run: one length, or for a stop over more dimensions one
    /// per point of the others (row-major).
    #[getter]
    fn stop_lengths(&self) -> Vec<Vec<i64>> {
        self.stop_lengths.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}
