//! The GPU lowering's `temporal.all_reduce`: the compiled host code calls
//! [`tempo_gpu_all_reduce`] on a flat buffer (the operand copied into it by
//! a kernel; `lowering/src/temporal_to_loops/collectives.rs`), reduced in
//! place across the processes of the run.
//!
//! On the CUDA target the buffer is device memory (`gpu-place-memory`
//! leaves it there: the call is one of the runtime's `tempo_gpu_*`
//! functions, which do not touch data on the host), and the all-reduce is
//! NCCL's, queued on the stream the kernels run on: it runs after the
//! kernels that wrote the buffer and before those that read it, and the
//! host does not wait. NCCL is loaded at run time (`cudarc`'s `nccl`
//! bindings, dynamic loading), so that only a CUDA run of a program with
//! collectives needs `libnccl.so.2`; without it the run ends with a clear
//! error. The communicator is made once per process, on first use: rank 0
//! makes NCCL's unique id and the processes share it through MPI (an
//! all-reduce of the id's bytes to which the other ranks add zeros; the
//! runtime's MPI is open for any program with collectives), then each
//! joins with its MPI rank and the number of processes
//! (`ncclCommInitRank`). A process started without a launcher is a
//! communicator of one: its all-reduce is the identity, still done by
//! NCCL (the smoke test of a one-GPU machine). Each process uses the GPU
//! of its local rank (`crate::cuda::open`), so that one launcher starts
//! one process per GPU of a machine.
//!
//! In a dry run (no driver) the call is recorded
//! ([`crate::cuda::DryRun::collectives`]) and nothing is reduced. Where the
//! GPU lowering runs on the CPU (`Target::GpuLoopsOnCpu`, the check of the
//! GPU lowering on machines without one) the buffer is host memory and the
//! all-reduce is MPI's, as on the CPU target ([`set_device_buffers`]
//! tells which).

use crate::cuda_driver::{STREAM, dry, record_failure};
use cudarc::nccl::sys;
use std::ffi::c_void;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Element types by the lowering's code (`element` of
/// [`tempo_gpu_all_reduce`], `collectives::element_code`): f32, f64, i32,
/// i64.
const ELEMENTS: [(sys::ncclDataType_t, usize); 4] = [
    (sys::ncclDataType_t::ncclFloat32, 4),
    (sys::ncclDataType_t::ncclFloat64, 8),
    (sys::ncclDataType_t::ncclInt32, 4),
    (sys::ncclDataType_t::ncclInt64, 8),
];

/// Reductions by the lowering's code (`op`, `collectives::reduction_code`):
/// sum, max, min.
const OPS: [sys::ncclRedOp_t; 3] = [sys::ncclRedOp_t::ncclSum, sys::ncclRedOp_t::ncclMax, sys::ncclRedOp_t::ncclMin];

/// Whether the buffers of the run are device memory (the CUDA target) or
/// host memory (the GPU lowering run on the CPU).
static DEVICE_BUFFERS: AtomicBool = AtomicBool::new(false);

/// Says where the buffers of the runs that follow are: device memory
/// (`true`, the CUDA target: NCCL) or host memory (MPI).
pub fn set_device_buffers(device: bool) {
    DEVICE_BUFFERS.store(device, Ordering::SeqCst);
}

/// This process's NCCL communicator (a `ncclComm_t`), made on first use.
static COMMUNICATOR: Mutex<Option<usize>> = Mutex::new(None);

/// The compiled code's all-reduce of `count` elements (of type `element`,
/// an index into [`ELEMENTS`]) at `pointer`, in place, by `op` (an index
/// into [`OPS`]). Called from compiled code, it cannot return an error:
/// the first failure is recorded for the engine to report after the run
/// (as the CUDA runtime's failures), and later calls do nothing.
pub extern "C" fn tempo_gpu_all_reduce(pointer: i64, count: i64, element: i32, op: i32) {
    if crate::cuda_driver::failed() {
        return;
    }
    let (Some(&(datatype, size)), Some(&reduction)) = (ELEMENTS.get(element as usize), OPS.get(op as usize)) else {
        record_failure(format!("tempo_gpu_all_reduce: element type {element} or reduction {op} unknown"));
        return;
    };
    if dry(|d| d.collectives.push((count, size as i64, op))).is_some() {
        return;
    }
    if !DEVICE_BUFFERS.load(Ordering::SeqCst) {
        // SAFETY: the compiled code's flat buffer of `count` elements.
        let done =
            unsafe { crate::mpi::all_reduce_in_place(pointer as *mut c_void, count, element as usize, op as usize) };
        if let Err(e) = done {
            record_failure(format!("temporal.all_reduce: {e}"));
        }
        return;
    }
    let start = std::time::Instant::now();
    let result = communicator().and_then(|comm| {
        let stream = *STREAM.lock().unwrap_or_else(|e| e.into_inner());
        let buffer = pointer as *mut c_void;
        // SAFETY: an in-place all-reduce of the device buffer the compiled
        // code allocated (`count` elements), queued on the kernels' stream.
        let rc = unsafe {
            sys::ncclAllReduce(buffer, buffer, count as usize, datatype, reduction, comm, stream as sys::cudaStream_t)
        };
        nccl_check("ncclAllReduce", rc)
    });
    match result {
        Ok(()) => {
            crate::cuda_driver::PENDING.store(true, Ordering::SeqCst);
            crate::mpi::record_collective(count.max(0) as u64 * size as u64, start);
        }
        Err(e) => record_failure(e),
    }
}

/// The process's communicator, made on first use (see the module's
/// documentation).
fn communicator() -> Result<sys::ncclComm_t, String> {
    let mut slot = COMMUNICATOR.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(comm) = *slot {
        return Ok(comm as sys::ncclComm_t);
    }
    // SAFETY: only tries to load the library.
    if !unsafe { sys::is_culib_present() } {
        return Err("temporal.all_reduce on the CUDA target needs NCCL (libnccl.so.2), which this machine lacks: \
                    install it (the NVIDIA package libnccl2, or pip's nvidia-nccl-cu12) or put it on LD_LIBRARY_PATH"
            .into());
    }
    let world = crate::mpi::world()?;
    let mut id = sys::ncclUniqueId { internal: [0; 128] };
    if world.rank == 0 {
        // SAFETY: a valid out-pointer.
        nccl_check("ncclGetUniqueId", unsafe { sys::ncclGetUniqueId(&mut id) })?;
    }
    if world.size > 1 {
        // Rank 0's id to every process: an all-reduce (sum) of 16 words
        // to which the others add zeros.
        let mut words = [0i64; 16];
        // SAFETY: both are 128 bytes of plain data.
        unsafe {
            std::ptr::copy_nonoverlapping(id.internal.as_ptr().cast::<u8>(), words.as_mut_ptr().cast::<u8>(), 128)
        };
        // SAFETY: 16 i64 (element type 3) summed (op 0) in place.
        unsafe { crate::mpi::all_reduce_in_place(words.as_mut_ptr().cast(), 16, 3, 0)? };
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr().cast::<u8>(), id.internal.as_mut_ptr().cast::<u8>(), 128)
        };
    }
    let mut comm: sys::ncclComm_t = std::ptr::null_mut();
    // SAFETY: a valid out-pointer; every process joins with the same id.
    nccl_check("ncclCommInitRank", unsafe { sys::ncclCommInitRank(&mut comm, world.size, id, world.rank) })?;
    *slot = Some(comm as usize);
    Ok(comm)
}

/// An error for a failed NCCL call, with NCCL's own words.
fn nccl_check(what: &str, rc: sys::ncclResult_t) -> Result<(), String> {
    if rc == sys::ncclResult_t::ncclSuccess {
        return Ok(());
    }
    // SAFETY: NCCL returns a static string.
    let text = unsafe { std::ffi::CStr::from_ptr(sys::ncclGetErrorString(rc)) }.to_string_lossy().into_owned();
    Err(format!("NCCL: {what} failed: {text} ({rc:?})"))
}
