//! Compiling a temporal program once and running it many times from C,
//! with tensors exchanged as DLPack tensors (`DLManagedTensor`, the C
//! tensor interface PyTorch, JAX and NumPy speak).
//!
//! An executable owns an MLIR context of its own: the host's module is
//! copied into it (printed with its locations and parsed back), so the
//! host's context and module are neither changed nor needed afterwards,
//! and diagnostics still point at the host's source. Errors come back as
//! messages (`char *`, freed with `tempoFreeError`), never as an abort.

use mlir_sys::MlirModule;
use std::ffi::{CStr, CString, c_char, c_void};
use tempo_driver::{CompiledProgram, Data, HostArray, RunOptions};
use tempo_passes::program::{ElementType, PointType};

/// DLPack's device (`DLDevice`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDevice {
    pub device_type: i32,
    pub device_id: i32,
}

/// DLPack's element type (`DLDataType`).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

/// DLPack's tensor (`DLTensor`).
#[repr(C)]
pub struct DLTensor {
    pub data: *mut c_void,
    pub device: DLDevice,
    pub ndim: i32,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}

/// DLPack's managed tensor (`DLManagedTensor`).
#[repr(C)]
pub struct DLManagedTensor {
    pub dl_tensor: DLTensor,
    pub manager_ctx: *mut c_void,
    pub deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// DLPack's CPU device type and type codes.
const CPU: i32 = 1;
const INT: u8 = 0;
const FLOAT: u8 = 2;
const BOOL: u8 = 6;

/// A bound's value for a run.
#[repr(C)]
pub struct TempoBound {
    pub name: *const c_char,
    pub value: i64,
}

/// A compiled program, with its inputs', outputs' and bounds' names.
pub struct TempoExecutable {
    compiled: CompiledProgram,
    /// Held during a run: the compiled code keeps state of its own between
    /// calls (its globals: stop lengths, memory counts, buffers of batched
    /// groups), so runs of one executable from several threads take turns.
    /// Separate executables run at the same time.
    running: std::sync::Mutex<()>,
    inputs: Vec<(CString, PointType)>,
    outputs: Vec<(CString, PointType)>,
    bounds: Vec<CString>,
}

/// The executables made and not yet destroyed (by address): every entry
/// point checks its handle here, so a destroyed (or made-up) handle gets a
/// message or a neutral answer, never a use after free.
static LIVE: std::sync::Mutex<std::collections::BTreeSet<usize>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, std::collections::BTreeSet<usize>> {
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A new executable, registered as live.
fn register(executable: Box<TempoExecutable>) -> *mut TempoExecutable {
    let pointer = Box::into_raw(executable);
    live().insert(pointer as usize);
    pointer
}

/// The executable behind `handle`, if it is live. The reference is valid
/// until the handle is destroyed: destroying an executable while another
/// thread uses it is the caller's error (as for any C object).
fn executable_ref<'a>(handle: *const TempoExecutable) -> Option<&'a TempoExecutable> {
    if handle.is_null() || !live().contains(&(handle as usize)) {
        return None;
    }
    unsafe { handle.as_ref() }
}

fn error_out(error: *mut *mut c_char, message: &str) {
    if !error.is_null() {
        let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
        unsafe { *error = text.into_raw() };
    }
}

/// Frees a message returned by the library.
#[unsafe(no_mangle)]
pub extern "C" fn tempoFreeError(error: *mut c_char) {
    if !error.is_null() {
        drop(unsafe { CString::from_raw(error) });
    }
}

/// Runs `body`, turning a panic into a message: nothing unwinds into C.
fn guarded<T>(error: *mut *mut c_char, body: impl FnOnce() -> Result<T, String>) -> Option<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(Ok(value)) => Some(value),
        Ok(Err(message)) => {
            error_out(error, &message);
            None
        }
        Err(panic) => {
            let what = tempo_passes::fault::panic_message(panic.as_ref());
            error_out(
                error,
                &format!("compiler fault in libTempoCAPI: {what}; please report it with the input program"),
            );
            None
        }
    }
}

/// The compile options of `text`: space-separated `O=0..3` (the
/// optimization level, 2 by default: the temporal passes' and LLVM's, as
/// `tempo-run -O` and the Rust API), `fast-math`, `threads=N`,
/// `memory-budget=BYTES`, `bound:NAME=VALUE` (bounds the optimizations may
/// size for).
fn options(text: &str, source_name: &str) -> Result<RunOptions, String> {
    let mut options =
        RunOptions { source_name: source_name.to_string(), front: tempo_driver::Front::C, ..Default::default() };
    for item in text.split_whitespace() {
        let (key, value) = item.split_once('=').unwrap_or((item, ""));
        let number = |what: &str| -> Result<u64, String> {
            value.parse().map_err(|_| format!("option '{item}': {what} is a non-negative integer"))
        };
        match key {
            "O" => {
                let level = number("the level")?;
                if level > 3 {
                    return Err(format!("option '{item}': the level is 0 to 3"));
                }
                options.compile.level = level as u8;
            }
            "fast-math" if value.is_empty() => options.compile.fast_math = true,
            "threads" => options.compile.threads = number("the thread count")? as usize,
            "memory-budget" => options.compile.memory_budget = Some(number("the budget")?),
            _ if key.starts_with("bound:") => {
                options.compile.bounds.insert(key["bound:".len()..].to_string(), number("a bound")? as i64);
            }
            _ => {
                return Err(format!(
                    "unknown option '{item}' (O=0..3, fast-math, threads=N, memory-budget=BYTES, bound:NAME=VALUE)"
                ));
            }
        }
    }
    Ok(options)
}

fn c_string(text: &str) -> CString {
    CString::new(text.replace('\0', " ")).unwrap_or_default()
}

/// Compiles the temporal program `source` (named `source_name` in
/// diagnostics) in a context of its own.
fn compile(source: &str, source_name: &str, option_text: &str) -> Result<Box<TempoExecutable>, String> {
    let options = options(option_text, source_name)?;
    let compiled = CompiledProgram::compile(source, source_name, &options).map_err(|lines| lines.join("\n"))?;
    let executable = compiled.executable();
    let (inputs, outputs) = executable.interface().map_err(|lines| lines.join("\n"))?;
    let named =
        |list: Vec<(String, PointType, Vec<usize>)>| list.into_iter().map(|(n, p, _)| (c_string(&n), p)).collect();
    let bounds = executable.bounds().map_err(|lines| lines.join("\n"))?.iter().map(|b| c_string(b)).collect();
    let (inputs, outputs) = (named(inputs), named(outputs));
    Ok(Box::new(TempoExecutable { compiled, running: std::sync::Mutex::new(()), inputs, outputs, bounds }))
}

fn text_of(pointer: *const c_char) -> Result<String, String> {
    if pointer.is_null() {
        return Ok(String::new());
    }
    unsafe { CStr::from_ptr(pointer) }.to_str().map(str::to_string).map_err(|_| "a string that is not UTF-8".into())
}

/// Compiles the temporal program `source` (MLIR text, named `sourceName`
/// in diagnostics) with `options`; NULL and a message in `*error` when it
/// cannot.
#[unsafe(no_mangle)]
pub extern "C" fn tempoCompileSource(
    source: *const c_char,
    source_name: *const c_char,
    options: *const c_char,
    error: *mut *mut c_char,
) -> *mut TempoExecutable {
    guarded(error, || {
        if source.is_null() {
            return Err("tempoCompileSource: a null source".into());
        }
        compile(&text_of(source)?, &text_of(source_name)?, &text_of(options)?)
    })
    .map_or(std::ptr::null_mut(), register)
}

/// Compiles `module` (a temporal program in any context, left unchanged)
/// with `options`; NULL and a message in `*error` when it cannot.
#[unsafe(no_mangle)]
pub extern "C" fn tempoCompile(
    module: MlirModule,
    options: *const c_char,
    error: *mut *mut c_char,
) -> *mut TempoExecutable {
    guarded(error, || {
        if module.ptr.is_null() {
            return Err("tempoCompile: a null module".into());
        }
        // The module's text with its locations, so diagnostics keep
        // pointing at the host's source.
        // SAFETY: a non-null module handle from the caller.
        let op = unsafe { melior::ir::OperationRef::from_raw(mlir_sys::mlirModuleGetOperation(module)) };
        let text = tempo_driver::module_text(op);
        compile(&text, "-", &text_of(options)?)
    })
    .map_or(std::ptr::null_mut(), register)
}

/// Frees an executable.
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableDestroy(executable: *mut TempoExecutable) {
    // A handle that is not live (NULL, destroyed already) is ignored.
    if live().remove(&(executable as usize)) {
        drop(unsafe { Box::from_raw(executable) });
    }
}

/// How many inputs, outputs and bounds the program has.
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableNumInputs(executable: *const TempoExecutable) -> usize {
    executable_ref(executable).map_or(0, |e| e.inputs.len())
}
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableNumOutputs(executable: *const TempoExecutable) -> usize {
    executable_ref(executable).map_or(0, |e| e.outputs.len())
}
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableNumBounds(executable: *const TempoExecutable) -> usize {
    executable_ref(executable).map_or(0, |e| e.bounds.len())
}

/// The name of input, output or bound `k` (NULL out of range); it lives
/// as long as the executable.
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableInputName(executable: *const TempoExecutable, k: usize) -> *const c_char {
    let name = executable_ref(executable).and_then(|e| e.inputs.get(k));
    name.map_or(std::ptr::null(), |(n, _)| n.as_ptr())
}
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableOutputName(executable: *const TempoExecutable, k: usize) -> *const c_char {
    let name = executable_ref(executable).and_then(|e| e.outputs.get(k));
    name.map_or(std::ptr::null(), |(n, _)| n.as_ptr())
}
#[unsafe(no_mangle)]
pub extern "C" fn tempoExecutableBoundName(executable: *const TempoExecutable, k: usize) -> *const c_char {
    let name = executable_ref(executable).and_then(|e| e.bounds.get(k));
    name.map_or(std::ptr::null(), |n| n.as_ptr())
}

/// DLPack's type of an element type.
fn dtype(element: ElementType) -> DLDataType {
    let (code, bits) = match element {
        ElementType::F32 => (FLOAT, 32),
        ElementType::F64 => (FLOAT, 64),
        ElementType::I32 => (INT, 32),
        ElementType::I64 => (INT, 64),
        ElementType::I1 => (BOOL, 8),
    };
    DLDataType { code, bits, lanes: 1 }
}

/// The sizes of DLPack tensor `t`: its rank (not negative) of sizes (not
/// negative), read from its `shape` (which may be NULL only at rank 0).
fn shape_of(t: &DLTensor) -> Result<Vec<i64>, String> {
    let rank = usize::try_from(t.ndim).map_err(|_| format!("a negative rank ({})", t.ndim))?;
    if rank == 0 {
        return Ok(Vec::new());
    }
    if t.shape.is_null() {
        return Err(format!("a tensor of rank {rank} whose shape is NULL"));
    }
    let shape = unsafe { std::slice::from_raw_parts(t.shape, rank) }.to_vec();
    if shape.iter().any(|&d| d < 0) {
        return Err(format!("a negative size in {shape:?}"));
    }
    Ok(shape)
}

/// A host array with the data of DLPack tensor `t` (on the CPU, of `element`,
/// any strides), named `name`.
fn read_tensor(name: &str, t: &DLTensor, element: ElementType) -> Result<HostArray, String> {
    if t.device.device_type != CPU {
        return Err(format!("input '{name}': a tensor on device type {}, not the CPU (1)", t.device.device_type));
    }
    let want = dtype(element);
    let found = t.dtype;
    let bool_as_uint8 = element == ElementType::I1 && found.code == 1 && found.bits == 8;
    if !((found.code == want.code && found.bits == want.bits) || bool_as_uint8) || found.lanes != 1 {
        return Err(format!(
            "input '{name}': elements of DLPack type code {} with {} bits, not the program's {}",
            found.code,
            found.bits,
            element.numpy()
        ));
    }
    let shape = shape_of(t).map_err(|e| format!("input '{name}': {e}"))?;
    let rank = shape.len();
    let strides: Vec<i64> = if t.strides.is_null() {
        tempo_passes::program::row_major_strides(&shape)
    } else {
        unsafe { std::slice::from_raw_parts(t.strides, rank) }.to_vec()
    };
    let count: usize = shape.iter().map(|&d| d as usize).product();
    let size = element.byte_size();
    let base = unsafe { (t.data as *const u8).add(t.byte_offset as usize) };
    let mut bytes = vec![0u8; count * size];
    if count > 0 {
        if t.data.is_null() {
            return Err(format!("input '{name}': no data"));
        }
        let mut index = vec![0i64; rank];
        for k in 0..count {
            let offset: i64 = index.iter().zip(&strides).map(|(i, s)| i * s).sum();
            unsafe {
                std::ptr::copy_nonoverlapping(
                    base.offset((offset * size as i64) as isize),
                    bytes[k * size..].as_mut_ptr(),
                    size,
                )
            };
            for d in (0..rank).rev() {
                index[d] += 1;
                if index[d] < shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }
    let data = Data::from_bytes(element, &bytes)?;
    Ok(HostArray { name: name.to_string(), shape: shape.iter().map(|&d| d as usize).collect(), data })
}

/// Tensor `t` as a view the run reads in place: on the CPU, of exactly
/// `element`'s DLPack type, row-major (no strides, or row-major ones) with
/// data; `None` otherwise.
fn view_of(t: &DLTensor, element: ElementType) -> Option<tempo_driver::ArrayView> {
    let want = dtype(element);
    if t.device.device_type != CPU || t.dtype.code != want.code || t.dtype.bits != want.bits || t.dtype.lanes != 1 {
        return None;
    }
    let shape = shape_of(t).ok()?;
    let rank = shape.len();
    if t.data.is_null() {
        return None;
    }
    if !t.strides.is_null() {
        let strides = unsafe { std::slice::from_raw_parts(t.strides, rank) };
        let row_major = tempo_passes::program::row_major_strides(&shape);
        // (A stride along a dimension of size 1 does not matter.)
        if strides.iter().zip(&row_major).zip(&shape).any(|((s, r), &d)| s != r && d != 1) {
            return None;
        }
    }
    let data = unsafe { (t.data as *const u8).add(t.byte_offset as usize) };
    Some(tempo_driver::ArrayView { shape: shape.iter().map(|&d| d as usize).collect(), element, data })
}

/// What a managed output tensor owns.
struct Owned {
    array: HostArray,
    shape: Vec<i64>,
}

unsafe extern "C" fn delete_output(tensor: *mut DLManagedTensor) {
    if tensor.is_null() {
        return;
    }
    let tensor = unsafe { Box::from_raw(tensor) };
    drop(unsafe { Box::from_raw(tensor.manager_ctx as *mut Owned) });
}

/// `array` as a DLPack tensor the caller owns (its deleter frees it).
fn managed(array: HostArray) -> *mut DLManagedTensor {
    let element = array.data.element();
    let mut owned = Box::new(Owned { shape: array.shape.iter().map(|&d| d as i64).collect(), array });
    let tensor = DLTensor {
        data: owned.array.data.as_mut_ptr() as *mut c_void,
        device: DLDevice { device_type: CPU, device_id: 0 },
        ndim: owned.shape.len() as i32,
        dtype: dtype(element),
        shape: owned.shape.as_mut_ptr(),
        strides: std::ptr::null_mut(),
        byte_offset: 0,
    };
    let context = Box::into_raw(owned) as *mut c_void;
    Box::into_raw(Box::new(DLManagedTensor { dl_tensor: tensor, manager_ctx: context, deleter: Some(delete_output) }))
}

/// Runs `executable` at `bounds` (every bound of the program, by name) on
/// `inputs` (one per input, in the program's order; read during the call,
/// not taken: the caller still owns them): on success `outputs[k]` holds
/// output `k` as a new tensor the caller owns (free it with its deleter).
/// False and a message in `*error` otherwise (no output is made).
#[unsafe(no_mangle)]
pub extern "C" fn tempoRun(
    executable: *mut TempoExecutable,
    bounds: *const TempoBound,
    num_bounds: usize,
    inputs: *const *const DLManagedTensor,
    num_inputs: usize,
    outputs: *mut *mut DLManagedTensor,
    num_outputs: usize,
    error: *mut *mut c_char,
) -> bool {
    guarded(error, || {
        let this = executable_ref(executable)
            .ok_or("tempoRun: not a live executable (NULL, destroyed, or not made by tempoCompile)")?;
        for (what, pointer, count) in [
            ("bounds", bounds.is_null(), num_bounds),
            ("inputs", inputs.is_null(), num_inputs),
            ("outputs", outputs.is_null(), num_outputs),
        ] {
            if pointer && count > 0 {
                return Err(format!("tempoRun: {what} is NULL with a count of {count}"));
            }
        }
        if num_inputs != this.inputs.len() {
            return Err(format!("tempoRun: the program has {} inputs, {num_inputs} given", this.inputs.len()));
        }
        if num_outputs != this.outputs.len() {
            return Err(format!(
                "tempoRun: the program has {} outputs, room for {num_outputs} given",
                this.outputs.len()
            ));
        }
        let mut run = RunOptions { front: tempo_driver::Front::C, ..Default::default() };
        for k in 0..num_bounds {
            let bound = unsafe { &*bounds.add(k) };
            run.bounds.insert(text_of(bound.name)?, bound.value);
        }
        for (k, (name, point)) in this.inputs.iter().enumerate() {
            let tensor = unsafe { (*inputs.add(k)).as_ref() }.ok_or_else(|| format!("tempoRun: input {k} is null"))?;
            let name = name.to_string_lossy().into_owned();
            // A row-major CPU tensor of the program's type is read in
            // place; others (strided, bytes for booleans) are copied.
            match view_of(&tensor.dl_tensor, point.element) {
                Some(view) => {
                    run.input_views.insert(name, view);
                }
                None => {
                    let array = read_tensor(&name, &tensor.dl_tensor, point.element)?;
                    run.inputs.insert(name, array);
                }
            }
        }
        let turn = this.running.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (arrays, _) = this.compiled.run(&run).map_err(|lines| lines.join("\n"))?;
        drop(turn);
        for (k, array) in arrays.into_iter().enumerate() {
            unsafe { *outputs.add(k) = managed(array) };
        }
        Ok(())
    })
    .is_some()
}
