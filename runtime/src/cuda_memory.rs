//! Memory of the CUDA target's compiled code (placed by `gpu-place-memory`):
//!
//! - buffers in device memory (`cuMemAlloc`), in managed memory
//!   (`cuMemAllocManaged`), or in managed memory placed on the host (swap
//!   buffers: `cuMemAdvise` prefers the CPU, so kernels read and write them
//!   over the bus without moving pages to the device);
//! - growing block stores in device memory through CUDA virtual memory
//!   management, as the CPU grows them with `mmap`/`mprotect`: the bound's
//!   worth of device address space is reserved (`cuMemAddressReserve`);
//!   committing blocks maps physical device memory under them
//!   (`cuMemCreate`, `cuMemMap`, `cuMemSetAccess`) and releasing them
//!   unmaps it, in chunks of the device's allocation granularity (2 MiB
//!   on current GPUs). A chunk is mapped while any committed byte lies in
//!   it ([`Chunks`]), so blocks smaller than a chunk share it;
//! - block stores host code touches, in managed memory reserved whole.
//!
//! Every allocation a run makes is freed when it ends, whatever the
//! compiled code freed. In a dry run (`crate::cuda_driver::set_dry_run`) memory
//! is host memory and device reservations are address space only; the
//! bookkeeping (chunks mapped, peak bytes) is the same.

use crate::cuda_driver::{check, dry, failed, in_dry_run};
use cudarc::driver::sys;
use std::ffi::c_void;
use std::sync::Mutex;

/// Committed bytes per chunk of a device reservation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunks {
    chunk: u64,
    committed: Vec<u64>,
}

impl Chunks {
    /// Chunks of `chunk` bytes covering `length` bytes, none committed.
    pub fn new(length: u64, chunk: u64) -> Self {
        Chunks { chunk, committed: vec![0; length.div_ceil(chunk) as usize] }
    }

    /// The chunks of `[offset, offset + length)` with the bytes of each,
    /// clipped to the reservation.
    fn pieces(&self, offset: u64, length: u64) -> Vec<(usize, u64)> {
        let end = (offset.saturating_add(length)).min(self.chunk * self.committed.len() as u64);
        let mut pieces = Vec::new();
        let mut at = offset;
        while at < end {
            let k = (at / self.chunk) as usize;
            let chunk_end = (k as u64 + 1) * self.chunk;
            let next = chunk_end.min(end);
            pieces.push((k, next - at));
            at = next;
        }
        pieces
    }

    /// Commits `[offset, offset + length)`: the chunks that had no committed
    /// byte and now have some (to map).
    pub fn commit(&mut self, offset: u64, length: u64) -> Vec<usize> {
        let mut newly = Vec::new();
        for (k, bytes) in self.pieces(offset, length) {
            if self.committed[k] == 0 {
                newly.push(k);
            }
            self.committed[k] += bytes;
        }
        newly
    }

    /// Releases `[offset, offset + length)`: the chunks left with no
    /// committed byte (to unmap). Bytes never committed are ignored.
    pub fn release(&mut self, offset: u64, length: u64) -> Vec<usize> {
        let mut emptied = Vec::new();
        for (k, bytes) in self.pieces(offset, length) {
            if self.committed[k] == 0 {
                continue;
            }
            self.committed[k] = self.committed[k].saturating_sub(bytes);
            if self.committed[k] == 0 {
                emptied.push(k);
            }
        }
        emptied
    }

    /// Chunks with committed bytes.
    pub fn mapped(&self) -> Vec<usize> {
        (0..self.committed.len()).filter(|&k| self.committed[k] > 0).collect()
    }
}

/// What the device memory of a run amounted to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    /// Buffers allocated in device memory, managed memory, and managed
    /// memory placed on the host (swap buffers).
    pub device_buffers: usize,
    pub managed_buffers: usize,
    pub host_buffers: usize,
    /// Bytes of device address space reserved for growing block stores.
    pub reserved_bytes: u64,
    /// Bytes of device memory mapped under block stores: now, and at most.
    pub mapped_bytes: u64,
    pub peak_mapped_bytes: u64,
    /// Bytes of buffers allocated in device or managed memory now, and the
    /// most that buffers and mapped block-store memory held together (the
    /// run's peak device memory, the CUDA context aside).
    pub buffer_bytes: u64,
    pub peak_bytes: u64,
    /// Chunks mapped and unmapped over the run.
    pub maps: usize,
    pub unmaps: usize,
}

static STATS: Mutex<DeviceMemory> = Mutex::new(DeviceMemory {
    device_buffers: 0,
    managed_buffers: 0,
    host_buffers: 0,
    reserved_bytes: 0,
    mapped_bytes: 0,
    peak_mapped_bytes: 0,
    buffer_bytes: 0,
    peak_bytes: 0,
    maps: 0,
    unmaps: 0,
});

fn stats<R>(f: impl FnOnce(&mut DeviceMemory) -> R) -> R {
    f(&mut STATS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The device memory of the run so far.
pub fn device_memory() -> DeviceMemory {
    stats(|s| s.clone())
}

/// Counts `bytes` of a run's inputs or outputs in managed memory as taken
/// (`taken`) or given back.
pub(crate) fn count_run_buffer(bytes: u64, taken: bool) {
    stats(|s| {
        if taken {
            s.buffer_bytes += bytes;
            s.peak_bytes = s.peak_bytes.max(s.buffer_bytes + s.mapped_bytes);
        } else {
            s.buffer_bytes = s.buffer_bytes.saturating_sub(bytes);
        }
    });
}

/// Clears the counts (at the start of a run).
pub fn reset_device_memory() {
    stats(|s| *s = DeviceMemory::default());
}

/// Buffers compiled code allocated: address and bytes.
static ALLOCATIONS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// A block store's reservation.
struct Reservation {
    base: u64,
    /// Bytes reserved (whole chunks for a device reservation).
    length: u64,
    /// Device reservation: its chunks and the physical memory of each.
    device: Option<(Chunks, Vec<Option<sys::CUmemGenericAllocationHandle>>)>,
}

static RESERVATIONS: Mutex<Vec<Reservation>> = Mutex::new(Vec::new());

/// Managed (`host_shared`) or device memory of `bytes`; null on failure.
pub(crate) fn allocate(bytes: u64, managed: bool) -> *mut c_void {
    if failed() {
        return std::ptr::null_mut();
    }
    let pointer = if in_dry_run() {
        // SAFETY: plain allocation, freed by `release`/`free_run_memory`.
        unsafe { libc::calloc(bytes.max(1) as usize, 1) as u64 }
    } else {
        let mut pointer = 0;
        // SAFETY: a valid out-pointer; the context is current.
        let ok = if managed {
            check("cuMemAllocManaged", unsafe { sys::cuMemAllocManaged(&mut pointer, bytes.max(1) as usize, 1) })
        } else {
            check("cuMemAlloc", unsafe { sys::cuMemAlloc_v2(&mut pointer, bytes.max(1) as usize) })
        };
        if !ok {
            return std::ptr::null_mut();
        }
        pointer
    };
    if pointer != 0 {
        ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner()).push((pointer, bytes));
        stats(|s| {
            if managed {
                s.managed_buffers += 1
            } else {
                s.device_buffers += 1
            }
            s.buffer_bytes += bytes;
            s.peak_bytes = s.peak_bytes.max(s.buffer_bytes + s.mapped_bytes);
        });
    }
    pointer as *mut c_void
}

fn free_one(pointer: u64) {
    if in_dry_run() {
        // SAFETY: `calloc`ed by `allocate`.
        unsafe { libc::free(pointer as *mut c_void) };
    } else {
        // SAFETY: memory of `allocate` (device or managed), freed once.
        unsafe { sys::cuMemFree_v2(pointer) };
    }
}

/// Frees a buffer of [`allocate`] (anything else is ignored).
pub(crate) fn release(pointer: u64) {
    if pointer == 0 {
        return;
    }
    let mut allocations = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = allocations.iter().position(|&(p, _)| p == pointer) {
        let (_, bytes) = allocations.swap_remove(k);
        drop(allocations);
        stats(|s| s.buffer_bytes = s.buffer_bytes.saturating_sub(bytes));
        // (Kernels still queued may use it.)
        crate::cuda_driver::wait();
        free_one(pointer);
    }
}

/// Places a managed buffer of [`allocate`] on the host (a swap buffer).
pub(crate) fn place_on_host(pointer: u64) {
    let bytes = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|&&(p, _)| p == pointer).map(|p| p.1);
    let Some(bytes) = bytes else { return };
    stats(|s| {
        s.managed_buffers = s.managed_buffers.saturating_sub(1);
        s.host_buffers += 1;
    });
    if in_dry_run() || failed() {
        return;
    }
    let advise = sys::CUmem_advise::CU_MEM_ADVISE_SET_PREFERRED_LOCATION;
    // SAFETY: managed memory of `allocate`; -1 is CU_DEVICE_CPU.
    check("cuMemAdvise (preferring the host)", unsafe { sys::cuMemAdvise(pointer, bytes as usize, advise, -1) });
    let accessed = sys::CUmem_advise::CU_MEM_ADVISE_SET_ACCESSED_BY;
    // SAFETY: as above; the device maps the pages instead of moving them.
    check("cuMemAdvise (mapped for the device)", unsafe { sys::cuMemAdvise(pointer, bytes as usize, accessed, 0) });
}

/// The properties of the physical memory of device reservations.
fn chunk_properties() -> sys::CUmemAllocationProp {
    // SAFETY: a plain C struct, all zeros is its empty value.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    // The device of the current context (the process's, `crate::cuda::open`).
    let mut device = 0;
    if !in_dry_run() {
        // SAFETY: a valid out-pointer; on failure the device stays 0.
        unsafe { sys::cuCtxGetDevice(&mut device) };
    }
    prop.location.id = device;
    prop
}

/// The device's allocation granularity (the chunk), 2 MiB in dry runs.
fn granularity() -> u64 {
    const DEFAULT: u64 = 2 << 20;
    if in_dry_run() {
        return DEFAULT;
    }
    let mut granularity = 0usize;
    let prop = chunk_properties();
    let minimum = sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM;
    // SAFETY: valid pointers.
    let ok = unsafe { sys::cuMemGetAllocationGranularity(&mut granularity, &prop, minimum) };
    if ok == sys::CUresult::CUDA_SUCCESS && granularity > 0 { granularity as u64 } else { DEFAULT }
}

/// `MAP_FAILED`.
const MAP_FAILED: *mut c_void = usize::MAX as *mut c_void;

/// A block store's reservation in managed memory (reserved whole, pages
/// backed as touched).
pub(crate) fn reserve_managed(length: u64) -> *mut c_void {
    dry(|d| d.reservations.push(length as i64));
    let pointer = allocate(length, true);
    if pointer.is_null() {
        return MAP_FAILED;
    }
    let reservation = Reservation { base: pointer as u64, length, device: None };
    RESERVATIONS.lock().unwrap_or_else(|e| e.into_inner()).push(reservation);
    pointer
}

/// A block store's reservation of device address space (no memory yet).
pub(crate) fn reserve_device(length: u64) -> *mut c_void {
    if failed() {
        return MAP_FAILED;
    }
    dry(|d| d.device_reservations.push(length as i64));
    let chunk = granularity();
    let rounded = length.max(1).div_ceil(chunk) * chunk;
    let base = if in_dry_run() {
        // Address space only: nothing touches it in a dry run.
        // SAFETY: an anonymous reservation, unmapped in `free_reservation`.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                rounded as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if at == libc::MAP_FAILED {
            return MAP_FAILED;
        }
        at as u64
    } else {
        let mut base = 0;
        // SAFETY: a valid out-pointer.
        if !check("cuMemAddressReserve", unsafe {
            sys::cuMemAddressReserve(&mut base, rounded as usize, chunk as usize, 0, 0)
        }) {
            return MAP_FAILED;
        }
        base
    };
    let chunks = Chunks::new(rounded, chunk);
    let handles = vec![None; rounded.div_ceil(chunk) as usize];
    stats(|s| s.reserved_bytes += rounded);
    let reservation = Reservation { base, length: rounded, device: Some((chunks, handles)) };
    RESERVATIONS.lock().unwrap_or_else(|e| e.into_inner()).push(reservation);
    base as *mut c_void
}

/// Maps physical device memory under chunk `k` of a reservation at `base`.
fn map_chunk(base: u64, chunk: u64, k: usize) -> Option<sys::CUmemGenericAllocationHandle> {
    stats(|s| {
        s.maps += 1;
        s.mapped_bytes += chunk;
        s.peak_mapped_bytes = s.peak_mapped_bytes.max(s.mapped_bytes);
        s.peak_bytes = s.peak_bytes.max(s.buffer_bytes + s.mapped_bytes);
    });
    if in_dry_run() {
        return Some(0);
    }
    let at = base + k as u64 * chunk;
    let mut handle = 0;
    let prop = chunk_properties();
    // SAFETY: valid pointers; `at` is a chunk of a live reservation.
    unsafe {
        if !check("cuMemCreate", sys::cuMemCreate(&mut handle, chunk as usize, &prop, 0)) {
            return None;
        }
        if !check("cuMemMap", sys::cuMemMap(at, chunk as usize, 0, handle, 0)) {
            sys::cuMemRelease(handle);
            return None;
        }
        let mut access: sys::CUmemAccessDesc = std::mem::zeroed();
        access.location = prop.location;
        access.flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if !check("cuMemSetAccess", sys::cuMemSetAccess(at, chunk as usize, &access, 1)) {
            sys::cuMemUnmap(at, chunk as usize);
            sys::cuMemRelease(handle);
            return None;
        }
    }
    Some(handle)
}

fn unmap_chunk(base: u64, chunk: u64, k: usize, handle: sys::CUmemGenericAllocationHandle) {
    stats(|s| {
        s.unmaps += 1;
        s.mapped_bytes = s.mapped_bytes.saturating_sub(chunk);
    });
    if in_dry_run() {
        return;
    }
    // SAFETY: a chunk mapped by `map_chunk`.
    unsafe {
        check("cuMemUnmap", sys::cuMemUnmap(base + k as u64 * chunk, chunk as usize));
        check("cuMemRelease", sys::cuMemRelease(handle));
    }
}

/// `mprotect` on part of a reservation: read/write commits it (device
/// memory is mapped under it), `PROT_NONE` releases it. 0, or -1 where the
/// address is in no reservation or the driver failed.
pub(crate) fn protect(at: u64, length: u64, protection: i32) -> i32 {
    let mut reservations = RESERVATIONS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(r) = reservations.iter_mut().find(|r| r.base <= at && at < r.base + r.length.max(1)) else {
        return -1;
    };
    let base = r.base;
    let Some((chunks, handles)) = &mut r.device else { return 0 };
    let chunk = chunks.chunk;
    if protection != 0 {
        for k in chunks.commit(at - base, length) {
            match map_chunk(base, chunk, k) {
                Some(handle) => handles[k] = Some(handle),
                None => return -1,
            }
        }
    } else {
        let emptied = chunks.release(at - base, length);
        if !emptied.is_empty() {
            // (Kernels still queued may use the memory.)
            crate::cuda_driver::wait();
        }
        for k in emptied {
            if let Some(handle) = handles[k].take() {
                unmap_chunk(base, chunk, k, handle);
            }
        }
    }
    0
}

/// Unmaps and frees a reservation (`munmap` of its base).
fn free_reservation(r: Reservation) {
    match r.device {
        None => release(r.base),
        Some((chunks, mut handles)) => {
            for k in chunks.mapped() {
                if let Some(handle) = handles[k].take() {
                    unmap_chunk(r.base, chunks.chunk, k, handle);
                }
            }
            if in_dry_run() {
                // SAFETY: the anonymous reservation of `reserve_device`.
                unsafe { libc::munmap(r.base as *mut c_void, r.length as usize) };
            } else {
                // SAFETY: address space of `reserve_device`, now unmapped.
                unsafe { sys::cuMemAddressFree(r.base, r.length as usize) };
            }
        }
    }
}

/// `munmap` of a reservation's base: frees it. 0, or -1 for another address.
pub(crate) fn unreserve(at: u64) -> i32 {
    let mut reservations = RESERVATIONS.lock().unwrap_or_else(|e| e.into_inner());
    let Some(k) = reservations.iter().position(|r| r.base == at) else { return -1 };
    let r = reservations.swap_remove(k);
    drop(reservations);
    crate::cuda_driver::wait();
    free_reservation(r);
    0
}

/// Frees what compiled code allocated or reserved and did not free.
pub(crate) fn free_run_memory() {
    let reservations: Vec<Reservation> = RESERVATIONS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
    for r in reservations {
        free_reservation(r);
    }
    let allocations: Vec<(u64, u64)> = ALLOCATIONS.lock().unwrap_or_else(|e| e.into_inner()).drain(..).collect();
    for (pointer, bytes) in allocations {
        free_one(pointer);
        stats(|s| s.buffer_bytes = s.buffer_bytes.saturating_sub(bytes));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn blocks_smaller_than_a_chunk_share_it() {
        let mut chunks = Chunks::new(8 * MIB, 2 * MIB);
        // Blocks of 64 KiB: the first maps chunk 0, the next ones nothing.
        assert_eq!(chunks.commit(0, 64 << 10), vec![0]);
        assert_eq!(chunks.commit(64 << 10, 64 << 10), Vec::<usize>::new());
        // Releasing one of two blocks keeps the chunk; the other frees it.
        assert_eq!(chunks.release(0, 64 << 10), Vec::<usize>::new());
        assert_eq!(chunks.release(64 << 10, 64 << 10), vec![0]);
        assert!(chunks.mapped().is_empty());
    }

    #[test]
    fn a_span_across_chunks_maps_each_once() {
        let mut chunks = Chunks::new(8 * MIB, 2 * MIB);
        assert_eq!(chunks.commit(MIB, 4 * MIB), vec![0, 1, 2]);
        assert_eq!(chunks.commit(5 * MIB, 2 * MIB), vec![3]);
        assert_eq!(chunks.mapped(), vec![0, 1, 2, 3]);
        // Release the middle: chunk 1 is wholly released, 2 still holds
        // [5, 6) MiB.
        assert_eq!(chunks.release(2 * MIB, 3 * MIB), vec![1]);
        assert_eq!(chunks.mapped(), vec![0, 2, 3]);
        // A span committed again (a swap in) maps the chunk again.
        assert_eq!(chunks.commit(2 * MIB, 3 * MIB), vec![1]);
    }

    #[test]
    fn ranges_past_the_reservation_are_clipped() {
        let mut chunks = Chunks::new(3 * MIB, 2 * MIB);
        assert_eq!(chunks.commit(3 * MIB, 10 * MIB), vec![1]);
        assert_eq!(chunks.commit(10 * MIB, MIB), Vec::<usize>::new());
        assert_eq!(chunks.release(0, MIB), Vec::<usize>::new(), "never committed");
        assert_eq!(chunks.release(2 * MIB, 10 * MIB), vec![1]);
    }

    /// A block store's life on the GPU, as the compiled code calls the
    /// runtime (in a dry run): grow block by block, swap a range out (its
    /// blocks released, the memory unmapped) and back in (mapped again),
    /// then free.
    #[test]
    fn a_device_block_store_grows_swaps_and_is_freed() {
        crate::cuda_driver::set_dry_run(true);
        reset_device_memory();
        let block = 512 << 10; // blocks of 512 KiB: four per chunk
        let base = reserve_device(10 * block) as u64;
        assert_ne!(base as usize, usize::MAX);
        for k in 0..10 {
            assert_eq!(protect(base + k * block, block, 3), 0);
        }
        let grown = device_memory();
        assert_eq!(grown.reserved_bytes, 3 * 2 * MIB, "10 blocks in 3 chunks");
        assert_eq!((grown.maps, grown.mapped_bytes), (3, 6 * MIB));
        // Swap out blocks 0..8: chunks 0 and 1 are wholly released.
        assert_eq!(protect(base, 8 * block, 0), 0);
        assert_eq!((device_memory().unmaps, device_memory().mapped_bytes), (2, 2 * MIB));
        // Swap them back in.
        assert_eq!(protect(base, 8 * block, 3), 0);
        assert_eq!(device_memory().mapped_bytes, 6 * MIB);
        assert_eq!(device_memory().peak_mapped_bytes, 6 * MIB);
        // Buffers count towards the peak with the mapped blocks.
        let buffer = allocate(3 * MIB, false) as u64;
        assert_eq!(device_memory().buffer_bytes, 3 * MIB);
        release(buffer);
        assert_eq!((device_memory().buffer_bytes, device_memory().peak_bytes), (0, 9 * MIB));
        // An address outside every reservation is an error, as for mprotect.
        assert_eq!(protect(8, 8, 3), -1);
        assert_eq!(unreserve(base), 0);
        assert_eq!(unreserve(base), -1, "freed once");
        let freed = device_memory();
        assert_eq!((freed.mapped_bytes, freed.maps, freed.unmaps), (0, 5, 5));
        crate::cuda_driver::set_dry_run(false);
    }
}
