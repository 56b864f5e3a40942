//! External functions: user callbacks that `temporal.call` runs once per
//! point, registered by name. The interpreter calls them directly; compiled
//! code calls them through one C trampoline, [`tempo_external_call`], which
//! the JIT resolves and which dispatches by call site.

use crate::array::{Data, HostArray};
use indexmap::IndexMap;
use std::cell::RefCell;
use std::sync::Arc;
use tempo_passes::program::{CallSite, PointType};

/// A callback: argument arrays (shaped like the declared argument types)
/// in, one array of the declared result type out; an `Err` stops the run.
pub type Callback = Arc<dyn Fn(&[HostArray]) -> Result<HostArray, String> + Send + Sync>;

/// A callback on the call's own buffers, without copies: each argument's
/// declared type and bytes (row-major), then the result's declared type
/// and its buffer, which the callback fills whole; an `Err` stops the run.
/// Compiled code hands it the buffers the call passes the trampoline (the
/// arguments' bytes are valid only during the call).
pub type RawCallback = Arc<dyn Fn(&[(&PointType, &[u8])], &PointType, &mut [u8]) -> Result<(), String> + Send + Sync>;

/// A registered function of either form.
#[derive(Clone)]
enum Function {
    Arrays(Callback),
    Raw(RawCallback),
}

/// Callbacks by the name `temporal.call` gives as `callee`.
#[derive(Clone, Default)]
pub struct Externals {
    functions: IndexMap<String, Function>,
}

impl std::fmt::Debug for Externals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.functions.keys()).finish()
    }
}

impl Externals {
    /// Registers (or replaces) `name`.
    pub fn register(
        &mut self,
        name: &str,
        callback: impl Fn(&[HostArray]) -> Result<HostArray, String> + Send + Sync + 'static,
    ) {
        self.functions.insert(name.to_string(), Function::Arrays(Arc::new(callback)));
    }

    /// Registers an already shared callback.
    pub fn register_shared(&mut self, name: &str, callback: Callback) {
        self.functions.insert(name.to_string(), Function::Arrays(callback));
    }

    /// Registers (or replaces) `name` as a callback on raw buffers
    /// ([`RawCallback`]).
    pub fn register_raw(
        &mut self,
        name: &str,
        callback: impl Fn(&[(&PointType, &[u8])], &PointType, &mut [u8]) -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.functions.insert(name.to_string(), Function::Raw(Arc::new(callback)));
    }

    /// Whether `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.functions.contains_key(name)
    }

    /// The callee of every call site that is not registered, with the site.
    pub fn missing<'a, 'c>(&self, sites: &'a [CallSite<'c>]) -> Vec<&'a CallSite<'c>> {
        sites.iter().filter(|s| !self.contains(&s.callee)).collect()
    }

    /// Calls `callee` on `args` and checks that it returned `ty`.
    pub fn call(&self, callee: &str, ty: &PointType, args: &[HostArray]) -> Result<HostArray, String> {
        let function =
            self.functions.get(callee).ok_or_else(|| format!("external function '{callee}' is not registered"))?;
        let result = match function {
            Function::Arrays(callback) => callback(args).map_err(|e| failed(callee, e))?,
            Function::Raw(callback) => {
                let types: Vec<PointType> = args.iter().map(|a| array_type(a)).collect();
                let views: Vec<(&PointType, &[u8])> =
                    types.iter().zip(args).map(|(t, a)| (t, bytes_of(&a.data))).collect();
                let mut data = Data::zeros(ty.element, elements(&static_shape(ty)));
                let size = data.len() * ty.element.byte_size();
                // SAFETY: `data` holds `size` bytes of plain values.
                let out = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr(), size) };
                callback(&views, ty, out).map_err(|e| failed(callee, e))?;
                HostArray { name: "result".into(), shape: static_shape(ty), data }
            }
        };
        let shape = static_shape(ty);
        if result.shape != shape || result.data.element() != ty.element || result.data.len() != elements(&shape) {
            return Err(format!(
                "external function '{callee}' must return {}{:?}, returned {}{:?} with {} elements",
                ty.element.numpy(),
                shape,
                result.data.element().numpy(),
                result.shape,
                result.data.len()
            ));
        }
        Ok(result)
    }
}

/// The error of a callback that failed.
fn failed(callee: &str, e: String) -> String {
    format!("external function '{callee}' failed: {e}")
}

/// The point type of an array.
fn array_type(a: &HostArray) -> PointType {
    PointType { shape: a.shape.iter().map(|&n| n as i64).collect(), element: a.data.element() }
}

/// The bytes of `data`.
fn bytes_of(data: &Data) -> &[u8] {
    // SAFETY: `data` holds `len` plain values of its element type.
    unsafe { std::slice::from_raw_parts(data.as_ptr(), data.len() * data.element().byte_size()) }
}

fn static_shape(ty: &PointType) -> Vec<usize> {
    ty.shape.iter().map(|&d| d as usize).collect()
}

fn elements(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// What the trampoline needs during one compiled run.
pub struct CallContext {
    pub externals: Externals,
    /// Per site: callee, argument types and result type.
    pub sites: Vec<(String, Vec<PointType>, PointType)>,
    /// The first error and the call site it happened at; later calls do
    /// nothing.
    pub error: Option<(Option<usize>, String)>,
}

thread_local! {
    pub static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
}

/// Reads `ty` from a contiguous buffer at `pointer`.
///
/// # Safety
/// `pointer` must point to `ty`'s element count of initialized elements.
unsafe fn read_array(name: String, ty: &PointType, pointer: *const u8) -> HostArray {
    let shape = static_shape(ty);
    let mut data = Data::zeros(ty.element, elements(&shape));
    let bytes = data.len() * ty.element.byte_size();
    // SAFETY: the caller guarantees `bytes` readable bytes at `pointer`;
    // `data` owns `bytes` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(pointer, data.as_mut_ptr(), bytes) };
    HostArray { name, shape, data }
}

/// The trampoline compiled code calls for every `temporal.call`: `site`
/// numbers the call site, `arguments` points to one buffer address per
/// argument (contiguous, row-major), `result` to the result buffer.
///
/// # Safety
/// Only compiled code calls it, with buffers of the declared types.
pub unsafe extern "C" fn tempo_external_call(site: i64, arguments: *const i64, result: *mut u8) {
    // The run's context leaves the thread's slot while the callback runs
    // (and comes back when it returns or panics), so that a callback may
    // run other compiled code on this thread: that run installs and takes
    // its own context.
    let taken = CURRENT.with(|current| current.borrow_mut().take());
    let mut slot = Restore(taken);
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let Some(context) = slot.0.as_mut() else { return };
        if context.error.is_some() {
            return;
        }
        let Some((callee, args, ty)) = context.sites.get(site as usize) else {
            context.error = Some((None, format!("internal error: unknown external call site {site}")));
            return;
        };
        if let Some(Function::Raw(callback)) = context.externals.functions.get(callee.as_str()) {
            // The call's own buffers, without copies.
            let views: Vec<(&PointType, &[u8])> = args
                .iter()
                .enumerate()
                .map(|(k, arg)| {
                    let bytes = elements(&static_shape(arg)) * arg.element.byte_size();
                    // SAFETY: compiled code passes one buffer of type `arg`
                    // per argument, valid during the call.
                    (arg, unsafe { std::slice::from_raw_parts(*arguments.add(k) as *const u8, bytes) })
                })
                .collect();
            let bytes = elements(&static_shape(ty)) * ty.element.byte_size();
            // SAFETY: `result` is a buffer of type `ty`, written by nothing
            // else during the call.
            let out = unsafe { std::slice::from_raw_parts_mut(result, bytes) };
            if let Err(e) = callback(&views, ty, out) {
                context.error = Some((Some(site as usize), failed(callee, e)));
            }
            return;
        }
        let values: Vec<HostArray> = args
            .iter()
            .enumerate()
            .map(|(k, arg)| {
                // SAFETY: compiled code passes one buffer of type `arg` per argument.
                unsafe { read_array(format!("arg{k}"), arg, *arguments.add(k) as *const u8) }
            })
            .collect();
        match context.externals.call(callee, ty, &values) {
            Ok(mut value) => {
                let bytes = value.data.len() * ty.element.byte_size();
                // SAFETY: `result` is a buffer of type `ty`; `call` checked the size.
                unsafe { std::ptr::copy_nonoverlapping(value.data.as_mut_ptr(), result, bytes) };
            }
            Err(e) => context.error = Some((Some(site as usize), e)),
        }
    }));
    if let Err(panic) = run {
        let what = tempo_passes::fault::panic_message(panic.as_ref());
        if let Some(context) = slot.0.as_mut() {
            context
                .error
                .get_or_insert_with(|| (usize::try_from(site).ok(), format!("the external function panicked: {what}")));
        }
    }
}

/// Puts a run's call context back into the thread's slot when dropped.
struct Restore(Option<CallContext>);

impl Drop for Restore {
    fn drop(&mut self) {
        if let Some(context) = self.0.take() {
            CURRENT.with(|current| *current.borrow_mut() = Some(context));
        }
    }
}
