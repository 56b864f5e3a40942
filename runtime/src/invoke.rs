//! Invoking compiled code: the JIT'd module (ORC's for the CPU, MLIR's
//! ExecutionEngine for the CUDA target's host code), symbol lookup and
//! definition, and the packed arguments of a run (bounds, then one memref
//! descriptor per input and output; managed memory on the GPU).

use crate::array::{Data, HostArray};
use melior::ir::Module;
use tempo_passes::program::ElementType;

/// An input in the caller's memory: row-major elements of `element` at
/// `data`, of `shape`. Whoever puts one in [`RunOptions::input_views`]
/// keeps the memory alive and unchanged until the run returns.
#[derive(Clone, Debug)]
pub struct ArrayView {
    pub shape: Vec<usize>,
    pub element: ElementType,
    pub data: *const u8,
}

/// Memory of the caller an output is written into: room for `shape`'s
/// elements of `element`, row-major, at `data`, which whoever puts it in
/// [`RunOptions::output_views`] keeps alive until the run returns.
#[derive(Clone, Debug)]
pub struct ArrayViewMut {
    pub shape: Vec<usize>,
    pub element: ElementType,
    pub data: *mut u8,
}

/// An input of a run: an array, or a view of the caller's memory.
pub enum Input<'o> {
    Array(std::borrow::Cow<'o, HostArray>),
    View(&'o ArrayView),
}

impl Input<'_> {
    /// The first element's address.
    pub fn data(&self) -> *const u8 {
        match self {
            Input::Array(a) => a.data.as_ptr(),
            Input::View(v) => v.data,
        }
    }
    pub fn shape(&self) -> &[usize] {
        match self {
            Input::Array(a) => &a.shape,
            Input::View(v) => &v.shape,
        }
    }
    pub fn bytes(&self) -> usize {
        match self {
            Input::Array(a) => a.data.len() * a.data.element().byte_size(),
            Input::View(v) => v.shape.iter().product::<usize>() * v.element.byte_size(),
        }
    }
    /// The elements, copied.
    pub fn to_data(&self) -> Data {
        match self {
            Input::Array(a) => a.data.clone(),
            Input::View(v) => {
                // SAFETY: the view's owner keeps `bytes` bytes at `data`
                // alive during the run (`ArrayView`).
                let bytes = unsafe { std::slice::from_raw_parts(v.data, self.bytes()) };
                Data::from_bytes(v.element, bytes).unwrap_or_else(|_| Data::zeros(v.element, 0))
            }
        }
    }
    /// The input as an array (a view's elements copied).
    pub fn to_array(&self, name: &str) -> std::borrow::Cow<'_, HostArray> {
        match self {
            Input::Array(a) => std::borrow::Cow::Borrowed(a.as_ref()),
            Input::View(v) => std::borrow::Cow::Owned(HostArray {
                name: name.to_string(),
                shape: v.shape.clone(),
                data: self.to_data(),
            }),
        }
    }
}

/// The LLVM OpenMP runtime (Debian's `libomp-22-dev`), loaded into the JIT
/// for parallel loops.
pub const OPENMP_RUNTIME: &str = "/usr/lib/llvm-22/lib/libomp.so";

/// The entry's arguments for one run: the bounds, then a memref descriptor
/// per input and output. The compiled code only reads inputs, so their
/// descriptors may point into the caller's arrays; on the GPU, inputs and
/// outputs live in managed memory (copied in here, out by
/// [`Arguments::copy_back`]). `arguments` points into the other fields'
/// heap storage, which moving the struct does not move.
pub struct Arguments {
    _bounds: Vec<i64>,
    managed: Vec<crate::cuda::Managed>,
    _descriptors: Vec<Vec<i64>>,
    _pointers: Vec<*mut i64>,
    /// The packed arguments of the entry (what `Engine::invoke` takes).
    pub arguments: Vec<*mut ()>,
}

impl Arguments {
    pub fn new(
        bounds: &[i64],
        inputs: &[Input],
        outputs: &mut [HostArray],
        targets: &[Option<*mut u8>],
        cuda: bool,
    ) -> Result<Self, Vec<String>> {
        let mut bound_values: Vec<i64> = bounds.to_vec();
        // Each output's memory (the caller's, where given) and bytes.
        let output_bytes = |a: &HostArray| a.shape.iter().product::<usize>() * a.data.element().byte_size();
        let output_memory: Vec<(*mut u8, usize)> =
            outputs.iter_mut().zip(targets).map(|(a, t)| (t.unwrap_or(a.data.as_mut_ptr()), output_bytes(a))).collect();
        let managed: Vec<crate::cuda::Managed> = if cuda {
            let mut buffers = Vec::new();
            let sources = inputs
                .iter()
                .map(|a| (a.data(), a.bytes()))
                .chain(output_memory.iter().map(|&(data, bytes)| (data as *const u8, bytes)));
            for (data, bytes) in sources {
                let buffer = crate::cuda::Managed::new(bytes).map_err(|e| vec![format!("error: {e}")])?;
                // SAFETY: both hold `bytes` bytes.
                unsafe { std::ptr::copy_nonoverlapping(data, buffer.as_mut_ptr(), bytes) };
                buffer.prefetch_to_device();
                buffers.push(buffer);
            }
            buffers
        } else {
            Vec::new()
        };
        let mut descriptors: Vec<Vec<i64>> = if cuda {
            let shapes = inputs.iter().map(|a| a.shape()).chain(outputs.iter().map(|a| a.shape.as_slice()));
            shapes.zip(&managed).map(|(shape, m)| descriptor(m.as_mut_ptr(), shape)).collect()
        } else {
            inputs
                .iter()
                .map(|a| descriptor(a.data() as *mut u8, a.shape()))
                .chain(outputs.iter().zip(&output_memory).map(|(a, &(data, _))| descriptor(data, &a.shape)))
                .collect()
        };
        let mut pointers: Vec<*mut i64> = descriptors.iter_mut().map(|d| d.as_mut_ptr()).collect();
        let mut arguments: Vec<*mut ()> = bound_values.iter_mut().map(|b| b as *mut i64 as *mut ()).collect();
        arguments.extend(pointers.iter_mut().map(|p| p as *mut *mut i64 as *mut ()));
        Ok(Arguments { _bounds: bound_values, managed, _descriptors: descriptors, _pointers: pointers, arguments })
    }

    /// On the GPU, after the run: frees the run's device allocations (after
    /// the kernels finish), reports a CUDA error, copies the outputs (the
    /// managed buffers after the `inputs` first ones) back.
    pub fn copy_back(
        &self,
        outputs: &mut [HostArray],
        targets: &[Option<*mut u8>],
        inputs: usize,
    ) -> Result<(), Vec<String>> {
        crate::cuda::free_run_allocations();
        if let Some(e) = crate::cuda::take_error() {
            return Err(vec![format!("error: {e}")]);
        }
        for ((a, m), target) in outputs.iter_mut().zip(&self.managed[inputs..]).zip(targets) {
            let bytes = a.shape.iter().product::<usize>() * a.data.element().byte_size();
            let to = target.unwrap_or(a.data.as_mut_ptr());
            // SAFETY: both hold `bytes` bytes; the kernels have finished
            // (`free_run_allocations` waited for them).
            unsafe { std::ptr::copy_nonoverlapping(m.as_mut_ptr(), to, bytes) };
        }
        Ok(())
    }
}

/// A memref descriptor `{allocated, aligned, offset, sizes[r], strides[r]}`
/// for a row-major host array (pointers stored as 64-bit words).
pub fn descriptor(data: *mut u8, shape: &[usize]) -> Vec<i64> {
    let ptr = data as i64;
    let sizes: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let strides = tempo_passes::program::row_major_strides(&sizes);
    let mut words = vec![ptr, ptr, 0];
    words.extend(shape.iter().map(|&d| d as i64));
    words.extend(strides);
    words
}

/// How a module was compiled: MLIR's ExecutionEngine (the CUDA target's
/// host code) or our ORC JIT (the CPU), with its objects.
pub enum Backend {
    Mlir(mlir_sys::MlirExecutionEngine),
    /// The linked objects, and whether they call the OpenMP runtime.
    Orc(crate::orc::OrcEngine, Vec<Vec<u8>>, bool),
}

/// A JIT-compiled module (null-checked, unlike melior's wrapper).
pub struct Engine {
    pub backend: Backend,
}

impl Engine {
    pub fn new(module: &Module, opt_level: usize, openmp: bool, dump: bool) -> Option<Self> {
        // The engine reads the paths as C strings: NUL-terminated.
        let path = std::ffi::CString::new(OPENMP_RUNTIME).expect("no NUL in the path");
        let libraries = [mlir_sys::MlirStringRef { data: path.as_ptr(), length: OPENMP_RUNTIME.len() }];
        let count = if openmp { 1 } else { 0 };
        let raw = unsafe {
            mlir_sys::mlirExecutionEngineCreate(
                module.to_raw(),
                opt_level as i32,
                count,
                libraries.as_ptr(),
                dump,
                false,
            )
        };
        (!raw.ptr.is_null()).then_some(Self { backend: Backend::Mlir(raw) })
    }

    /// The address of symbol `name` in the compiled code.
    pub fn lookup(&self, name: &str) -> Option<*mut ()> {
        self.lookup_checked(name).ok()
    }

    /// [`Engine::lookup`], with the JIT's reason when it fails.
    pub fn lookup_checked(&self, name: &str) -> Result<*mut (), String> {
        match &self.backend {
            Backend::Mlir(raw) => {
                let pointer =
                    unsafe { mlir_sys::mlirExecutionEngineLookup(*raw, melior::StringRef::new(name).to_raw()) };
                if pointer.is_null() { Err(format!("'{name}' is not defined")) } else { Ok(pointer as *mut ()) }
            }
            Backend::Orc(orc, ..) => orc.lookup(name),
        }
    }

    /// Makes `name` resolve to `pointer` in the compiled code.
    pub fn register_symbol(&self, name: &str, pointer: *mut ()) {
        match &self.backend {
            Backend::Mlir(raw) => unsafe {
                mlir_sys::mlirExecutionEngineRegisterSymbol(
                    *raw,
                    melior::StringRef::new(name).to_raw(),
                    pointer as *mut std::ffi::c_void,
                )
            },
            // (Defining a name twice is the only failure: the first stays.)
            Backend::Orc(orc, ..) => {
                let _ = orc.define(name, pointer);
            }
        }
    }

    /// [`Engine::invoke`] under the runtime's guard ([`crate::guard`]): a
    /// run the system refuses (memory, swap files) ends with its reason,
    /// what it held freed.
    pub fn invoke_guarded(&self, name: &str, arguments: &mut [*mut ()]) -> Result<(), String> {
        // What `mlirExecutionEngineInvokePacked` calls: the packed form of
        // the C interface.
        let packed = format!("_mlir__mlir_ciface_{name}");
        let entry = self.lookup(&packed).ok_or_else(|| format!("cannot call '{name}' in the compiled module"))?;
        // SAFETY: `_mlir__mlir_ciface_NAME` is the packed interface
        // (`void(void **)`) of the entry's C interface, and `arguments` are
        // its arguments (as `invoke` passes them).
        unsafe {
            let entry: unsafe extern "C" fn(*mut *mut std::ffi::c_void) = std::mem::transmute(entry);
            crate::guard::call(entry, arguments.as_mut_ptr() as *mut *mut std::ffi::c_void)
        }
    }

    pub fn invoke(&self, name: &str, arguments: &mut [*mut ()]) -> Result<(), String> {
        let Backend::Mlir(raw) = &self.backend else {
            return self.invoke_guarded(name, arguments);
        };
        let result = unsafe {
            mlir_sys::mlirExecutionEngineInvokePacked(
                *raw,
                melior::StringRef::new(name).to_raw(),
                arguments.as_mut_ptr() as *mut *mut std::ffi::c_void,
            )
        };
        if result.value == 0 { Err(format!("cannot call '{name}' in the compiled module")) } else { Ok(()) }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Backend::Mlir(raw) = &self.backend {
            unsafe { mlir_sys::mlirExecutionEngineDestroy(*raw) }
        }
    }
}
