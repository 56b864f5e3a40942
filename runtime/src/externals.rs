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

/// Callbacks by the name `temporal.call` gives as `callee`.
#[derive(Clone, Default)]
pub struct Externals {
    functions: IndexMap<String, Callback>,
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
        self.functions.insert(name.to_string(), Arc::new(callback));
    }

    /// Registers an already shared callback.
    pub fn register_shared(&mut self, name: &str, callback: Callback) {
        self.functions.insert(name.to_string(), callback);
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
        let callback =
            self.functions.get(callee).ok_or_else(|| format!("external function '{callee}' is not registered"))?;
        let result = callback(args).map_err(|e| format!("external function '{callee}' failed: {e}"))?;
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

fn static_shape(ty: &PointType) -> Vec<usize> {
    ty.shape.iter().map(|&d| d as usize).collect()
}

fn elements(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// What the trampoline needs during one compiled run.
pub(crate) struct CallContext {
    pub externals: Externals,
    /// Per site: callee, argument types and result type.
    pub sites: Vec<(String, Vec<PointType>, PointType)>,
    /// The first error and the call site it happened at; later calls do
    /// nothing.
    pub error: Option<(Option<usize>, String)>,
}

thread_local! {
    pub(crate) static CURRENT: RefCell<Option<CallContext>> = const { RefCell::new(None) };
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
