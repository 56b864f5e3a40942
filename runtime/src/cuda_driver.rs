//! What every part of the CUDA runtime shares, below the `mgpu*` functions
//! (module `cuda`) and the memory functions (module `cuda_memory`): the
//! first failure of a driver call ([`check`], [`take_error`]), dry runs
//! ([`set_dry_run`]), and the one stream kernels are queued on with the
//! wait for them ([`wait`]). Both of those modules use it; it uses
//! neither.

use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Mutex;

/// The first failure of a CUDA call since the last [`take_error`].
static ERROR: Mutex<Option<String>> = Mutex::new(None);

/// Dry runs: what the host code of a CUDA run asks for, recorded instead of
/// done (see [`set_dry_run`]).
static DRY_RUN: Mutex<Option<DryRun>> = Mutex::new(None);

/// What a dry run saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DryRun {
    /// Kernel modules loaded (their PTX, as given).
    pub modules: Vec<String>,
    /// Kernels looked up by name.
    pub functions: Vec<String>,
    /// Launches: grid and block sizes, and the number of parameters.
    pub launches: Vec<([i64; 3], [i64; 3], i64)>,
    /// Times the host waited for launched kernels to finish.
    pub waits: usize,
    /// Bytes of each block-store reservation in managed memory
    /// (`tempo_gpu_mmap`) and in device address space
    /// (`tempo_gpu_reserve_device`).
    pub reservations: Vec<i64>,
    pub device_reservations: Vec<i64>,
    /// All-reduces of the GPU lowering (`crate::nccl`): elements, bytes
    /// per element, reduction (0 sum, 1 max, 2 min).
    pub collectives: Vec<(i64, i64, i32)>,
}

/// Turns dry runs on (`true`) or off. In a dry run the CUDA target needs no
/// driver or GPU: memory is host memory, module loads and launches are
/// recorded and no kernel runs, so outputs are not computed. It tests the
/// host side of the target (symbols, module constructors, launch
/// parameters, managed allocations) on any machine.
pub fn set_dry_run(on: bool) {
    *DRY_RUN.lock().unwrap_or_else(|e| e.into_inner()) = on.then(DryRun::default);
}

/// What the dry run recorded so far.
pub fn dry_run_record() -> Option<DryRun> {
    DRY_RUN.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether a dry run is on.
pub(crate) fn in_dry_run() -> bool {
    dry(|_| ()).is_some()
}

pub(crate) fn dry<R>(f: impl FnOnce(&mut DryRun) -> R) -> Option<R> {
    DRY_RUN.lock().unwrap_or_else(|e| e.into_inner()).as_mut().map(f)
}

fn fail(what: &str, result: sys::CUresult) {
    record_failure(format!("CUDA: {what} failed ({result:?})"));
}

/// Records a failure of the runtime's own (the first one is reported).
pub(crate) fn record_failure(message: String) {
    let mut error = ERROR.lock().unwrap_or_else(|e| e.into_inner());
    if error.is_none() {
        *error = Some(message);
    }
}

pub(crate) fn failed() -> bool {
    ERROR.lock().unwrap_or_else(|e| e.into_inner()).is_some()
}

/// Checks a driver call; records a failure.
pub(crate) fn check(what: &str, result: sys::CUresult) -> bool {
    if result == sys::CUresult::CUDA_SUCCESS {
        true
    } else {
        fail(what, result);
        false
    }
}

/// The recorded failure, if any, clearing it.
pub fn take_error() -> Option<String> {
    ERROR.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// The stream every launch uses: `gpu-to-llvm` creates and destroys one
/// per launch; one stream, made once, serves them all, so kernels run in
/// launch (schedule) order.
pub(crate) static STREAM: Mutex<usize> = Mutex::new(0);

/// Whether kernels were launched since the host last waited for them.
pub(crate) static PENDING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Waits for the kernels launched so far, if any are pending.
pub(crate) fn wait() {
    if !PENDING.swap(false, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    if dry(|d| d.waits += 1).is_some() {
        return;
    }
    let start = std::time::Instant::now();
    let stream = *STREAM.lock().unwrap_or_else(|e| e.into_inner());
    synchronize(stream as *mut c_void);
    crate::cuda_profile::waited(start.elapsed());
}

/// Waits for what `stream` (0: none) has queued.
pub(crate) fn synchronize(stream: *mut c_void) {
    if !stream.is_null() && !in_dry_run() {
        // SAFETY: the stream of `mgpu_stream_create`.
        check("running a kernel (cuStreamSynchronize)", unsafe { sys::cuStreamSynchronize(stream as sys::CUstream) });
    }
}
