//! The compiled code's large host buffers, kept for reuse (a caching
//! allocator, as PyTorch keeps device memory).
//!
//! Why: a training step allocates and frees its temporaries (the scratch
//! buffers of a body, the per-iteration stores) every iteration and every
//! run. Through `malloc`, a block past glibc's mmap threshold is a fresh
//! mapping each time: every page faulted in and zeroed by the kernel, then
//! unmapped at `free`. The GPT-style training step (bench/train, width 64,
//! T 256) faulted 270 MiB of fresh pages per run, three times its peak of
//! live stores, and spent about a fifth of its time in the kernel.
//!
//! What: blocks of [`LARGE`] bytes or more are mappings of a size class
//! (sizes rounded up to a quarter of a power of two: at most 25% of
//! address space unused, the unused tail never touched, so never
//! resident); a freed block goes to a cache by class and the next
//! allocation of that class (or, failing one, of up to half the class of
//! a cached block) takes it back, its pages already resident. Before a new
//! mapping, as many cached bytes are given back (least recently freed
//! first), so the process holds about what the code holds at once at its
//! peak, not a block of every size it ever used.
//! The cache holds at most [`cache_limit`] bytes (`TEMPO_HOST_CACHE_BYTES`,
//! default 1 GiB; 0 turns caching off), the least recently freed blocks
//! unmapped first; [`release_cached`] unmaps them all (after a failed
//! run, and before an allocation the system refuses is retried). Smaller
//! blocks go to `malloc`.
//!
//! Assumes: every block this module hands out comes back through
//! [`free`] (the compiled code frees what it allocates; a failed run's
//! blocks are freed by the guard); alignments up to a page.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Mutex;

/// Blocks of this many bytes or more are mapped and cached.
pub const LARGE: usize = 256 * 1024;

const PAGE: usize = 4096;

struct Pool {
    /// Blocks handed out, by address: their class (mapped length).
    live: HashMap<usize, usize>,
    /// Cached blocks by class, the most recently freed last.
    cached: HashMap<usize, Vec<(usize, u64)>>,
    cached_bytes: usize,
    /// A clock for least-recently-freed eviction.
    clock: u64,
}

impl Pool {
    /// Takes the least recently freed cached block out of the cache:
    /// (address, class), for the caller to unmap.
    fn evict_oldest(&mut self) -> Option<(usize, usize)> {
        let (&oldest, _) =
            self.cached.iter().filter(|(_, blocks)| !blocks.is_empty()).min_by_key(|(_, blocks)| blocks[0].1)?;
        let (address, _) = self.cached.get_mut(&oldest).expect("class present").remove(0);
        self.cached_bytes -= oldest;
        Some((address, oldest))
    }
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

fn pool<R>(f: impl FnOnce(&mut Pool) -> R) -> R {
    let mut guard = POOL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let pool =
        guard.get_or_insert_with(|| Pool { live: HashMap::new(), cached: HashMap::new(), cached_bytes: 0, clock: 0 });
    f(pool)
}

/// Bytes the cache may hold: `TEMPO_HOST_CACHE_BYTES`, default 1 GiB.
pub fn cache_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("TEMPO_HOST_CACHE_BYTES").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1 << 30)
    })
}

/// The size class of a request of `size` bytes: `size` rounded up to a
/// page and then to the next of `2^k`, `1.25 * 2^k`, `1.5 * 2^k`,
/// `1.75 * 2^k`.
pub fn class_of(size: usize) -> usize {
    let size = size.max(1).div_ceil(PAGE) * PAGE;
    let top = usize::BITS - 1 - size.leading_zeros();
    if top < 2 {
        return size;
    }
    let quarter = 1usize << (top - 2);
    size.div_ceil(quarter) * quarter
}

fn map(length: usize) -> *mut c_void {
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            length,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED { std::ptr::null_mut() } else { p }
}

/// A block of `size` bytes aligned to `alignment` (at most a page) from the
/// cache or a new mapping; null where the system refuses (errno set).
pub fn allocate(size: usize, alignment: usize) -> *mut c_void {
    debug_assert!(size >= LARGE && alignment <= PAGE);
    let class = class_of(size);
    let mut unmap = Vec::new();
    let reused = pool(|pool| {
        // The block of this class freed last, else the smallest cached one
        // of at most twice the size (its pages are resident already).
        let fits = pool
            .cached
            .iter()
            .filter(|(c, blocks)| **c >= class && **c <= 2 * class && !blocks.is_empty())
            .map(|(c, _)| *c)
            .min();
        if let Some(c) = fits {
            let (address, _) = pool.cached.get_mut(&c).expect("class present").pop().expect("a block");
            pool.cached_bytes -= c;
            pool.live.insert(address, c);
            return Some(address);
        }
        // A new mapping: first give back as many cached bytes (the least
        // recently freed), so that what the process holds grows with what
        // the code holds at once, not with every size it ever used.
        let mut freed = 0;
        while freed < class {
            let Some((address, c)) = pool.evict_oldest() else { break };
            freed += c;
            unmap.push((address, c));
        }
        None
    });
    for (address, length) in unmap {
        unsafe { libc::munmap(address as *mut c_void, length) };
    }
    if let Some(address) = reused {
        return address as *mut c_void;
    }
    let mut p = map(class);
    if p.is_null() {
        // What the cache holds may be what stands in the way.
        release_cached();
        p = map(class);
    }
    if !p.is_null() {
        pool(|pool| pool.live.insert(p as usize, class));
    }
    p
}

/// Whether `p` is a block of this pool handed out and not yet freed.
pub fn owns(p: *mut c_void) -> bool {
    pool(|pool| pool.live.contains_key(&(p as usize)))
}

/// Takes back a block of this pool ([`owns`]): cached, or unmapped where
/// the cache is full. Returns false (does nothing) for another block.
pub fn free(p: *mut c_void) -> bool {
    // Blocks of the pool are mappings, so page-aligned: the compiled
    // code's many small frees skip the pool's lock.
    if !(p as usize).is_multiple_of(PAGE) || p.is_null() {
        return false;
    }
    let limit = cache_limit();
    let mut unmap = Vec::new();
    let ours = pool(|pool| {
        let Some(class) = pool.live.remove(&(p as usize)) else { return false };
        if class > limit {
            unmap.push((p as usize, class));
            return true;
        }
        pool.clock += 1;
        let clock = pool.clock;
        pool.cached.entry(class).or_default().push((p as usize, clock));
        pool.cached_bytes += class;
        while pool.cached_bytes > limit {
            let Some(block) = pool.evict_oldest() else { break };
            unmap.push(block);
        }
        true
    });
    for (address, length) in unmap {
        unsafe { libc::munmap(address as *mut c_void, length) };
    }
    ours
}

/// Unmaps every cached block (the process's resident memory drops by
/// them); blocks in use stay.
pub fn release_cached() {
    let blocks: Vec<(usize, usize)> = pool(|pool| {
        pool.cached_bytes = 0;
        pool.cached.drain().flat_map(|(class, blocks)| blocks.into_iter().map(move |(a, _)| (a, class))).collect()
    });
    for (address, length) in blocks {
        unsafe { libc::munmap(address as *mut c_void, length) };
    }
}

/// Bytes held in the cache now.
pub fn cached_bytes() -> usize {
    pool(|pool| pool.cached_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_quarters() {
        assert_eq!(class_of(1), PAGE);
        assert_eq!(class_of(LARGE), LARGE);
        assert_eq!(class_of(LARGE + 1), LARGE + LARGE / 4);
        assert_eq!(class_of(3 << 20), 3 << 20);
        assert_eq!(class_of((3 << 20) + 1), (3 << 20) + (1 << 19));
        for size in [LARGE, 300_000, 1_000_000, 77_777_777] {
            let c = class_of(size);
            assert!(c >= size && c - size <= size / 4 + PAGE, "{size} -> {c}");
        }
    }

    #[test]
    fn a_freed_block_is_reused_and_released() {
        let size = 3 * LARGE + 12345;
        let a = allocate(size, 64);
        assert!(!a.is_null() && owns(a));
        unsafe { std::ptr::write_bytes(a as *mut u8, 7, size) };
        assert!(free(a));
        assert!(!owns(a));
        assert!(!free(a), "a block is taken back once");
        let b = allocate(size - 100, 64);
        assert_eq!(a, b, "the cached block of the same class is handed out again");
        assert_eq!(unsafe { *(b as *const u8) }, 7, "its pages stay resident");
        assert!(free(b));
        assert!(cached_bytes() >= class_of(size));
        release_cached();
        let mut x = 0u8;
        assert!(!free(&mut x as *mut u8 as *mut c_void), "not a block of the pool");
    }
}
