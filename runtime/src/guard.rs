//! Runs of the compiled code that fail cleanly (issue 40): an allocation the
//! system refuses (a `RLIMIT_AS` below the stores' needs), a swap file that
//! cannot be made or written (a full disk, a `RLIMIT_FSIZE`) end the run
//! with a message, free what the run allocated, and leave the process and
//! the executable ready for the next run; no partly written output is
//! reported as a result.
//!
//! How: the compiled code's calls of `malloc`, `aligned_alloc`, `free`,
//! `mmap`, `munmap`, `mprotect`, `tmpfile` and `fclose` resolve to the
//! wrappers here (the JIT's symbols override the process's), which keep
//! what each run holds and, where the system refuses, record why and
//! unwind the run (`shim/guard.c`: the entry is called under `setjmp`;
//! the failure jumps back with `longjmp`, across compiled frames only).
//! The lowering's own checks (a short `pwrite`, say) call `perror` then
//! `abort`, which resolve here too ([`tempo_perror`], [`tempo_abort`]).
//! [`call`] then frees what the run still holds.
//!
//! Parallel loops' worker threads are not under the guard: a failure there
//! prints its reason and aborts, as before (their allocations are few and
//! small; a store's are made on the run's thread).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;

unsafe extern "C" {
    fn tempo_guarded_call(entry: unsafe extern "C" fn(*mut *mut c_void), args: *mut *mut c_void) -> c_int;
    fn tempo_guard_active() -> c_int;
    fn tempo_guard_unwind() -> !;
}

/// What a run holds: heap blocks, mappings (with their length), open files.
#[derive(Clone, Copy)]
enum Held {
    Heap,
    Mapping(usize),
    File,
}

/// Everything the guarded runs hold, by address, with the run holding it.
static HELD: Mutex<BTreeMap<usize, (u64, Held)>> = Mutex::new(BTreeMap::new());
static NEXT_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A refusal armed for testing ([`fail_allocation_for_testing`]): the
/// allocation of that number (0 first) of the next guarded run fails.
static ARMED: Mutex<Option<u64>> = Mutex::new(None);

/// Makes allocation `n` (0 for the first: `malloc`, `aligned_alloc`,
/// `mmap` or `mprotect`) of the next guarded run fail as if the system
/// refused it, to test the failure path where limits cannot be set
/// precisely. `TEMPO_TEST_FAIL_ALLOCATION=N` in the environment arms it
/// for the process's first run.
pub fn fail_allocation_for_testing(n: u64) {
    *ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(n);
}

thread_local! {
    /// Allocations left before the armed refusal on this thread's run.
    static COUNTDOWN: Cell<Option<u64>> = const { Cell::new(None) };
    /// The run this thread executes under the guard (0: none).
    static RUN: Cell<u64> = const { Cell::new(0) };
    /// Why the run failed.
    static FAILURE: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
    /// What the compiled code's `perror` said, for its `abort`.
    static PERROR: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

fn held() -> std::sync::MutexGuard<'static, BTreeMap<usize, (u64, Held)>> {
    HELD.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn hold(address: usize, what: Held) {
    let run = RUN.with(Cell::get);
    if run != 0 && address != 0 {
        held().insert(address, (run, what));
    }
}

fn release(address: usize) {
    held().remove(&address);
}

/// Ends the run on this thread with `message`: unwinds to [`call`] where
/// there is a guard, else prints and aborts.
fn fail(message: String) -> ! {
    if unsafe { tempo_guard_active() } != 0 {
        FAILURE.with(|f| {
            f.borrow_mut().get_or_insert(message);
        });
    } else {
        eprintln!("tempo: {message}");
    }
    unsafe { tempo_guard_unwind() }
}

/// Ends the guarded run of this thread at once, with `message` unless a
/// reason was recorded first; returns (does nothing) where no guarded run
/// is active on this thread (parallel loops' workers, the CUDA target).
pub(crate) fn unwind_if_guarded(message: &str) {
    if unsafe { tempo_guard_active() } != 0 {
        fail(message.to_string());
    }
}

/// Whether this allocation is the one armed to fail (counting down).
fn refused_for_testing() -> bool {
    COUNTDOWN.with(|c| match c.get() {
        Some(0) => {
            c.set(None);
            // As the system says it.
            unsafe { *libc::__errno_location() = libc::ENOMEM };
            true
        }
        Some(n) => {
            c.set(Some(n - 1));
            false
        }
        None => false,
    })
}

fn errno_text() -> String {
    std::io::Error::last_os_error().to_string()
}

/// Runs `entry` (a compiled entry's packed interface) on `args` under the
/// guard: `Err` with the reason when the run failed, after freeing what it
/// still held.
///
/// # Safety
/// `entry` is a packed entry of compiled code and `args` its arguments.
pub unsafe fn call(entry: unsafe extern "C" fn(*mut *mut c_void), args: *mut *mut c_void) -> Result<(), String> {
    let run = NEXT_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let outer = RUN.with(|r| r.replace(run));
    FAILURE.with(|f| f.borrow_mut().take());
    static FROM_ENVIRONMENT: std::sync::Once = std::sync::Once::new();
    FROM_ENVIRONMENT.call_once(|| {
        if let Some(n) = std::env::var("TEMPO_TEST_FAIL_ALLOCATION").ok().and_then(|v| v.parse().ok()) {
            fail_allocation_for_testing(n);
        }
    });
    let armed = ARMED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take();
    COUNTDOWN.with(|c| c.set(armed));
    let unwound = unsafe { tempo_guarded_call(entry, args) } != 0;
    RUN.with(|r| r.set(outer));
    COUNTDOWN.with(|c| c.set(None));
    // What the run still holds: freed after a failure; after a success,
    // only forgotten (the code freed what it meant to).
    let mine: Vec<(usize, Held)> = {
        let mut map = held();
        let (mine, others): (BTreeMap<_, _>, BTreeMap<_, _>) =
            std::mem::take(&mut *map).into_iter().partition(|(_, (r, _))| *r == run);
        *map = others;
        mine.into_iter().map(|(a, (_, what))| (a, what)).collect()
    };
    if !unwound {
        return Ok(());
    }
    for (address, what) in mine {
        unsafe {
            match what {
                Held::Heap => deallocate(address as *mut c_void),
                Held::Mapping(length) => {
                    libc::munmap(address as *mut c_void, length);
                }
                Held::File => {
                    libc::fclose(address as *mut libc::FILE);
                }
            }
        }
    }
    // A failed run leaves no memory cached: the process is as before it.
    crate::host_pool::release_cached();
    Err(FAILURE.with(|f| f.borrow_mut().take()).unwrap_or_else(|| "the run failed".into()))
}

/// A block of `size` bytes aligned to `alignment`: large ones from the
/// pool of reused mappings ([`crate::host_pool`]), others from the C
/// library (`malloc` where `alignment` is 0).
fn allocate(size: usize, alignment: usize) -> *mut c_void {
    use crate::host_pool;
    if size >= host_pool::LARGE && alignment <= 4096 && host_pool::cache_limit() > 0 {
        return host_pool::allocate(size, alignment);
    }
    if alignment == 0 { unsafe { libc::malloc(size) } } else { unsafe { libc::aligned_alloc(alignment, size) } }
}

/// Frees a block of [`allocate`].
fn deallocate(p: *mut c_void) {
    if !crate::host_pool::free(p) {
        unsafe { libc::free(p) }
    }
}

/// The compiled code's `malloc`.
pub extern "C" fn tempo_malloc(size: usize) -> *mut c_void {
    let p = if refused_for_testing() { std::ptr::null_mut() } else { allocate(size, 0) };
    if p.is_null() && size > 0 {
        fail(format!("out of memory: an allocation of {size} bytes failed ({})", errno_text()));
    }
    hold(p as usize, Held::Heap);
    p
}

/// The compiled code's `aligned_alloc`.
pub extern "C" fn tempo_aligned_alloc(alignment: usize, size: usize) -> *mut c_void {
    let p = if refused_for_testing() { std::ptr::null_mut() } else { allocate(size, alignment) };
    if p.is_null() && size > 0 {
        fail(format!("out of memory: an allocation of {size} bytes failed ({})", errno_text()));
    }
    hold(p as usize, Held::Heap);
    p
}

/// The compiled code's `free`.
pub extern "C" fn tempo_free(p: *mut c_void) {
    release(p as usize);
    deallocate(p)
}

/// The compiled code's `mmap` (the reservations of growing stores).
pub extern "C" fn tempo_mmap(
    address: *mut c_void,
    length: usize,
    protection: c_int,
    flags: c_int,
    fd: c_int,
    offset: i64,
) -> *mut c_void {
    let p = if refused_for_testing() {
        libc::MAP_FAILED
    } else {
        unsafe { libc::mmap(address, length, protection, flags, fd, offset) }
    };
    if p == libc::MAP_FAILED {
        fail(format!("out of memory: reserving {length} bytes for a store failed ({})", errno_text()));
    }
    hold(p as usize, Held::Mapping(length));
    p
}

/// The compiled code's `munmap`.
pub extern "C" fn tempo_munmap(address: *mut c_void, length: usize) -> c_int {
    release(address as usize);
    unsafe { libc::munmap(address, length) }
}

/// The compiled code's `mprotect` (committing a store's blocks).
pub extern "C" fn tempo_mprotect(address: *mut c_void, length: usize, protection: c_int) -> c_int {
    let r = if refused_for_testing() { -1 } else { unsafe { libc::mprotect(address, length, protection) } };
    if r != 0 {
        fail(format!("out of memory: committing {length} bytes of a store failed ({})", errno_text()));
    }
    r
}

/// The compiled code's `tmpfile` (a store's swap file).
pub extern "C" fn tempo_tmpfile() -> *mut libc::FILE {
    let f = unsafe { libc::tmpfile() };
    if f.is_null() {
        fail(format!("cannot make the swap file of a store ({})", errno_text()));
    }
    hold(f as usize, Held::File);
    f
}

/// The compiled code's `fclose`.
pub extern "C" fn tempo_fclose(f: *mut libc::FILE) -> c_int {
    release(f as usize);
    unsafe { libc::fclose(f) }
}

/// The compiled code's `perror`, which its own checks (a swap file written
/// or read short) call before `abort`: `what` failed, for the system's
/// reason (`errno`); kept for [`tempo_abort`].
///
/// # Safety
/// `what` is NULL or a NUL-terminated string.
pub unsafe extern "C" fn tempo_perror(what: *const c_char) {
    let reason = errno_text();
    let what = if what.is_null() {
        "the run failed".to_string()
    } else {
        unsafe { CStr::from_ptr(what) }.to_string_lossy().into_owned()
    };
    PERROR.with(|p| *p.borrow_mut() = Some(format!("{what}: {reason}")));
}

/// The compiled code's `abort` (after [`tempo_perror`]): ends the run with
/// the message kept.
pub extern "C" fn tempo_abort() {
    let message = PERROR.with(|p| p.borrow_mut().take()).unwrap_or_else(|| "the run failed".into());
    fail(message)
}

/// The symbols the compiled code's calls resolve to (name, address).
pub fn symbols() -> Vec<(&'static str, *mut ())> {
    vec![
        ("malloc", tempo_malloc as *mut ()),
        ("aligned_alloc", tempo_aligned_alloc as *mut ()),
        ("free", tempo_free as *mut ()),
        ("mmap", tempo_mmap as *mut ()),
        ("munmap", tempo_munmap as *mut ()),
        ("mprotect", tempo_mprotect as *mut ()),
        ("tmpfile", tempo_tmpfile as *mut ()),
        ("fclose", tempo_fclose as *mut ()),
        ("perror", tempo_perror as *mut ()),
        ("abort", tempo_abort as *mut ()),
    ]
}
