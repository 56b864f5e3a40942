//! The CUDA runtime of compiled programs, on the CUDA driver API through
//! `cudarc`, which loads `libcuda.so` when first asked (so the project
//! builds, and everything but a CUDA run works, on machines without a GPU
//! or a driver).
//!
//! The host code of the CUDA target (`tempo_lowering::temporal_to_cuda`)
//! calls, through `gpu-to-llvm`, the `mgpu*` functions of MLIR's CUDA
//! runtime wrappers, which Debian does not ship: they are implemented here
//! and registered with the JIT ([`symbols`]), with the memory functions of
//! `gpu-place-memory` (`crate::cuda_memory`: device, managed and host
//! buffers, block stores grown by mapping device memory).
//!
//! These functions are called from compiled code and cannot return errors
//! to it: the first failure is recorded ([`take_error`]), later calls do
//! nothing (allocations return null, which the run then reports), and the
//! engine reports the failure after the run.

pub(crate) use crate::cuda_driver::wait;
pub use crate::cuda_driver::{DryRun, dry_run_record, set_dry_run, take_error};
use crate::cuda_driver::{PENDING, STREAM, check, dry, failed, in_dry_run, synchronize};
use cudarc::driver::sys;
use std::ffi::{c_char, c_void};
use std::sync::Mutex;

/// The primary context of device 0, once [`open`] succeeded.
static CONTEXT: Mutex<Option<usize>> = Mutex::new(None);

/// A stand-in handle for dry runs (never dereferenced).
const DRY_HANDLE: usize = 0x7e40;

/// Loads the driver and makes the primary context of the device of this
/// process ([`local_rank`]; device 0 without a launcher) current on this
/// thread; a clear error where there is no driver or no device.
pub fn open() -> Result<(), String> {
    if in_dry_run() {
        return Ok(());
    }
    // SAFETY: `is_culib_present` only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("--target cuda: no CUDA driver on this machine (libcuda.so not found); \
                    compile with --emit-ptx to get the kernels without running them"
            .into());
    }
    let mut context = CONTEXT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(ctx) = *context {
        // SAFETY: a context retained below, never released.
        let result = unsafe { sys::cuCtxSetCurrent(ctx as sys::CUcontext) };
        return if result == sys::CUresult::CUDA_SUCCESS { Ok(()) } else { Err(format!("CUDA: {result:?}")) };
    }
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        let result = sys::cuInit(0);
        if result != sys::CUresult::CUDA_SUCCESS {
            return Err(format!("--target cuda: the CUDA driver does not start ({result:?}): no usable GPU"));
        }
        let mut count = 0;
        let result = sys::cuDeviceGetCount(&mut count);
        if result != sys::CUresult::CUDA_SUCCESS || count == 0 {
            return Err("--target cuda: no CUDA device on this machine".into());
        }
        let mut device = 0;
        let mut ctx = std::ptr::null_mut();
        let ok = sys::cuDeviceGet(&mut device, local_rank() % count) == sys::CUresult::CUDA_SUCCESS
            && sys::cuDevicePrimaryCtxRetain(&mut ctx, device) == sys::CUresult::CUDA_SUCCESS
            && sys::cuCtxSetCurrent(ctx) == sys::CUresult::CUDA_SUCCESS;
        if !ok {
            return Err("--target cuda: cannot create a context on device 0".into());
        }
        *context = Some(ctx as usize);
    }
    Ok(())
}

/// This process's rank among the processes of the run on its machine,
/// as the launcher gives it (Open MPI's `OMPI_COMM_WORLD_LOCAL_RANK`,
/// MPICH's `MPI_LOCALRANKID`; 0 without a launcher): each process of a
/// data-parallel run uses the GPU of its local rank (modulo the GPUs), so
/// that `mpirun -np N` on a machine of N GPUs gives each its own.
fn local_rank() -> i32 {
    ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.trim().parse::<i32>().ok())
        .unwrap_or(0)
        .max(0)
}

/// The name of this process's device (after [`open`]).
pub fn device_name() -> String {
    if in_dry_run() {
        return "no device (a dry run)".into();
    }
    let mut name = [0 as c_char; 256];
    // SAFETY: a buffer of the given length.
    unsafe {
        let mut device = 0;
        if sys::cuCtxGetDevice(&mut device) != sys::CUresult::CUDA_SUCCESS
            || sys::cuDeviceGetName(name.as_mut_ptr(), name.len() as i32, device) != sys::CUresult::CUDA_SUCCESS
        {
            return "an unnamed CUDA device".into();
        }
        std::ffi::CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned()
    }
}

/// A managed buffer (host and device share its address).
pub struct Managed {
    pub pointer: u64,
    pub bytes: usize,
}

impl Managed {
    /// `bytes` (at least 1) of managed memory.
    pub fn new(bytes: usize) -> Result<Self, String> {
        if in_dry_run() {
            // SAFETY: plain allocation, freed in `drop`.
            let pointer = unsafe { libc::calloc(bytes.max(1), 1) } as u64;
            if pointer == 0 {
                return Err("cannot allocate".into());
            }
            crate::cuda_memory::count_run_buffer(bytes as u64, true);
            return Ok(Managed { pointer, bytes });
        }
        let mut pointer = 0;
        // SAFETY: a valid out-pointer; the context is current after `open`.
        let result = unsafe { sys::cuMemAllocManaged(&mut pointer, bytes.max(1), 1) };
        if result != sys::CUresult::CUDA_SUCCESS {
            return Err(format!("CUDA: cannot allocate {bytes} bytes of managed memory ({result:?})"));
        }
        crate::cuda_memory::count_run_buffer(bytes as u64, true);
        Ok(Managed { pointer, bytes })
    }

    /// Moves the buffer's pages to the device ahead of the kernels that use
    /// them (what the host wrote is then read at the device's speed from the
    /// first kernel on, instead of migrating page by page on faults). A
    /// hint: where the driver refuses it, pages move on demand as before.
    pub fn prefetch_to_device(&self) {
        if in_dry_run() || self.bytes == 0 {
            return;
        }
        let location = sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: 0 };
        // SAFETY: managed memory of `new`, `bytes` long; the null stream.
        let _ = unsafe { sys::cuMemPrefetchAsync_v2(self.pointer, self.bytes, location, 0, std::ptr::null_mut()) };
    }

    pub fn as_mut_ptr(&self) -> *mut u8 {
        self.pointer as *mut u8
    }
}

impl Drop for Managed {
    fn drop(&mut self) {
        crate::cuda_memory::count_run_buffer(self.bytes as u64, false);
        if in_dry_run() {
            // SAFETY: `calloc`ed in `new`.
            unsafe { libc::free(self.pointer as *mut c_void) };
            return;
        }
        // SAFETY: memory allocated by `new`, freed once.
        unsafe { sys::cuMemFree_v2(self.pointer) };
    }
}

/// Frees what compiled code allocated or reserved and did not free (the
/// upstream lowering drops a synchronous `gpu.dealloc`).
pub fn free_run_allocations() {
    wait();
    crate::cuda_memory::free_run_memory();
    crate::cuda_profile::write();
}

/// `mgpuModuleLoadJIT`: a module from PTX text (NUL-terminated).
unsafe extern "C" fn mgpu_module_load_jit(data: *const c_void, _opt_level: i32) -> *mut c_void {
    // SAFETY: the NUL-terminated PTX global.
    let text = || unsafe { std::ffi::CStr::from_ptr(data as *const c_char) }.to_string_lossy().into_owned();
    if dry(|d| d.modules.push(text())).is_some() {
        crate::cuda_profile::module_loaded(DRY_HANDLE, text);
        return DRY_HANDLE as *mut c_void;
    }
    let mut module = std::ptr::null_mut();
    if failed() {
        return module as *mut c_void;
    }
    // SAFETY: the PTX global the GPU translation embeds.
    let loaded = unsafe { sys::cuModuleLoadDataEx(&mut module, data, 0, std::ptr::null_mut(), std::ptr::null_mut()) };
    check("loading a kernel module (cuModuleLoadDataEx)", loaded);
    crate::cuda_profile::module_loaded(module as usize, text);
    module as *mut c_void
}

/// `mgpuModuleLoad`: a module from a binary (cubin or fatbin) of `size` bytes.
unsafe extern "C" fn mgpu_module_load(data: *const c_void, _size: usize) -> *mut c_void {
    if dry(|d| d.modules.push("(binary)".into())).is_some() {
        return DRY_HANDLE as *mut c_void;
    }
    let mut module = std::ptr::null_mut();
    if failed() {
        return module as *mut c_void;
    }
    // SAFETY: the binary global the GPU translation embeds.
    check("loading a kernel module (cuModuleLoadData)", unsafe { sys::cuModuleLoadData(&mut module, data) });
    module as *mut c_void
}

unsafe extern "C" fn mgpu_module_unload(module: *mut c_void) {
    if !module.is_null() && !in_dry_run() {
        // SAFETY: a module of `mgpu_module_load*`.
        unsafe { sys::cuModuleUnload(module as sys::CUmodule) };
    }
}

unsafe extern "C" fn mgpu_module_get_function(module: *mut c_void, name: *const c_char) -> *mut c_void {
    // SAFETY: the kernel's NUL-terminated name.
    let text = || unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy().into_owned();
    if dry(|d| d.functions.push(text())).is_some() {
        crate::cuda_profile::function_found(module as usize, DRY_HANDLE);
        return DRY_HANDLE as *mut c_void;
    }
    let mut function = std::ptr::null_mut();
    if failed() || module.is_null() {
        return function as *mut c_void;
    }
    // SAFETY: a loaded module and the kernel's NUL-terminated name.
    check("finding a kernel (cuModuleGetFunction)", unsafe {
        sys::cuModuleGetFunction(&mut function, module as sys::CUmodule, name)
    });
    crate::cuda_profile::function_found(module as usize, function as usize);
    function as *mut c_void
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn mgpu_launch_kernel(
    function: *mut c_void,
    grid_x: i64,
    grid_y: i64,
    grid_z: i64,
    block_x: i64,
    block_y: i64,
    block_z: i64,
    shared_bytes: i32,
    stream: *mut c_void,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    _count: i64,
) {
    if failed() || function.is_null() {
        return;
    }
    if grid_x == 0 || grid_y == 0 || grid_z == 0 {
        // An empty loop: nothing to launch.
        return;
    }
    let launch = ([grid_x, grid_y, grid_z], [block_x, block_y, block_z], _count);
    PENDING.store(true, std::sync::atomic::Ordering::SeqCst);
    let profiled = crate::cuda_profile::on();
    let timed = |time| crate::cuda_profile::launched(function as usize, launch.0, launch.1, shared_bytes, time);
    if dry(|d| d.launches.push(launch)).is_some() {
        if profiled {
            timed(std::time::Duration::ZERO);
        }
        return;
    }
    if profiled {
        // Timed alone: what was queued before runs first.
        synchronize(stream);
    }
    let start = std::time::Instant::now();
    // SAFETY: the parameters the lowering packed for this kernel.
    check("launching a kernel (cuLaunchKernel)", unsafe {
        sys::cuLaunchKernel(
            function as sys::CUfunction,
            grid_x as u32,
            grid_y as u32,
            grid_z as u32,
            block_x as u32,
            block_y as u32,
            block_z as u32,
            shared_bytes as u32,
            stream as sys::CUstream,
            params,
            extra,
        )
    });
    if profiled {
        synchronize(stream);
        timed(start.elapsed());
    }
}

unsafe extern "C" fn mgpu_stream_create() -> *mut c_void {
    if in_dry_run() {
        return DRY_HANDLE as *mut c_void;
    }
    let mut cached = STREAM.lock().unwrap_or_else(|e| e.into_inner());
    if *cached == 0 && !failed() {
        let mut stream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        if check("cuStreamCreate", unsafe { sys::cuStreamCreate(&mut stream, 1) }) {
            *cached = stream as usize;
        }
    }
    *cached as *mut c_void
}

/// `gpu-to-llvm` waits for each launch right after it; launches are
/// asynchronous instead: the host runs ahead, queueing kernels in schedule
/// order on the one stream, and waits ([`wait`]) only where it needs their
/// results: before host code touches memory kernels share
/// (`@tempo_gpu_wait`, placed by `gpu-place-memory`), before memory is
/// freed or unmapped, and at the end of the run.
unsafe extern "C" fn mgpu_stream_synchronize(_stream: *mut c_void) {}

unsafe extern "C" fn tempo_gpu_wait() {
    wait()
}

/// The shared stream outlives the launch that asked for it.
unsafe extern "C" fn mgpu_stream_destroy(_stream: *mut c_void) {}

unsafe extern "C" fn mgpu_mem_alloc(bytes: u64, _stream: *mut c_void, host_shared: bool) -> *mut c_void {
    crate::cuda_memory::allocate(bytes, host_shared)
}

unsafe extern "C" fn mgpu_mem_free(pointer: *mut c_void, _stream: *mut c_void) {
    crate::cuda_memory::release(pointer as u64)
}

unsafe extern "C" fn tempo_gpu_free(pointer: usize) {
    crate::cuda_memory::release(pointer as u64)
}

unsafe extern "C" fn tempo_gpu_place_on_host(pointer: usize) {
    crate::cuda_memory::place_on_host(pointer as u64)
}

/// A block store's reservation in managed memory (host code touches it);
/// `MAP_FAILED` on failure.
unsafe extern "C" fn tempo_gpu_mmap(_at: *mut c_void, length: i64, _p: i32, _f: i32, _fd: i32, _o: i64) -> *mut c_void {
    crate::cuda_memory::reserve_managed(length.max(0) as u64)
}

/// A block store's reservation of device address space (only kernels touch
/// it); `MAP_FAILED` on failure.
unsafe extern "C" fn tempo_gpu_reserve_device(
    _at: *mut c_void,
    length: i64,
    _p: i32,
    _f: i32,
    _fd: i32,
    _o: i64,
) -> *mut c_void {
    crate::cuda_memory::reserve_device(length.max(0) as u64)
}

/// Committing (read/write) or releasing (`PROT_NONE`) blocks of a
/// reservation: device memory is mapped or unmapped under them.
unsafe extern "C" fn tempo_gpu_mprotect(at: *mut c_void, length: i64, protection: i32) -> i32 {
    crate::cuda_memory::protect(at as u64, length.max(0) as u64, protection)
}

/// Releasing is done by `tempo_gpu_mprotect(PROT_NONE)`.
unsafe extern "C" fn tempo_gpu_madvise(_at: *mut c_void, _length: i64, _advice: i32) -> i32 {
    0
}

unsafe extern "C" fn tempo_gpu_munmap(at: *mut c_void, _length: i64) -> i32 {
    crate::cuda_memory::unreserve(at as u64)
}

/// The functions compiled CUDA host code calls, by symbol name.
pub fn symbols() -> Vec<(&'static str, *mut ())> {
    vec![
        ("mgpuModuleLoadJIT", mgpu_module_load_jit as *mut ()),
        ("mgpuModuleLoad", mgpu_module_load as *mut ()),
        ("mgpuModuleUnload", mgpu_module_unload as *mut ()),
        ("mgpuModuleGetFunction", mgpu_module_get_function as *mut ()),
        ("mgpuLaunchKernel", mgpu_launch_kernel as *mut ()),
        ("mgpuStreamCreate", mgpu_stream_create as *mut ()),
        ("mgpuStreamSynchronize", mgpu_stream_synchronize as *mut ()),
        ("mgpuStreamDestroy", mgpu_stream_destroy as *mut ()),
        ("mgpuMemAlloc", mgpu_mem_alloc as *mut ()),
        ("mgpuMemFree", mgpu_mem_free as *mut ()),
        ("tempo_gpu_free", tempo_gpu_free as *mut ()),
        ("tempo_gpu_place_on_host", tempo_gpu_place_on_host as *mut ()),
        ("tempo_gpu_wait", tempo_gpu_wait as *mut ()),
        ("tempo_gpu_mmap", tempo_gpu_mmap as *mut ()),
        ("tempo_gpu_reserve_device", tempo_gpu_reserve_device as *mut ()),
        ("tempo_gpu_mprotect", tempo_gpu_mprotect as *mut ()),
        ("tempo_gpu_madvise", tempo_gpu_madvise as *mut ()),
        ("tempo_gpu_munmap", tempo_gpu_munmap as *mut ()),
    ]
}
