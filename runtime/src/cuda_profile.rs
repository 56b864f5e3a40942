//! A kernel profile of CUDA runs, for finding where a GPU run's time goes
//! on a machine without a profiler: with `TEMPO_CUDA_PROFILE=FILE` in the
//! environment, every launch is timed alone (the stream is synchronized
//! before and after it, so the run is slower than without the profile, and
//! each time includes one launch's latency) and, at the end of each run,
//! FILE gets a table of the kernels by time: launches, total and mean time,
//! the last launch's grid, block and shared memory, then the host's waits
//! for kernels, and the PTX of the kernels that took most time (kernels are
//! numbered in the order their modules load: the order of the lowered
//! program). In a dry run (`crate::cuda_driver::set_dry_run`) launches are counted
//! and times are zero. Without the variable nothing is recorded.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Kernels whose PTX the report ends with.
const PTX_SHOWN: usize = 6;

#[derive(Default)]
struct Kernel {
    launches: u64,
    time: Duration,
    grid: [i64; 3],
    block: [i64; 3],
    shared_bytes: i32,
}

#[derive(Default)]
struct Profile {
    /// Each loaded module's PTX, in load order.
    modules: Vec<String>,
    /// Module handle to its index in `modules`.
    module_index: HashMap<usize, usize>,
    /// Function handle to its module's index.
    function_module: HashMap<usize, usize>,
    /// By module index.
    kernels: HashMap<usize, Kernel>,
    waits: u64,
    wait_time: Duration,
}

static PROFILE: Mutex<Option<Profile>> = Mutex::new(None);

/// The report's path set by [`set_path`], before the environment's.
static SET: Mutex<Option<Option<String>>> = Mutex::new(None);

/// Profiles into `path` (`None`: not at all), whatever the environment
/// says (for tests and embedders).
pub fn set_path(path: Option<String>) {
    *SET.lock().unwrap_or_else(|e| e.into_inner()) = Some(path);
    *PROFILE.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// The report's path, when profiling.
fn path() -> Option<String> {
    static ENVIRONMENT: OnceLock<Option<String>> = OnceLock::new();
    if let Some(set) = SET.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
        return set.clone();
    }
    ENVIRONMENT.get_or_init(|| std::env::var("TEMPO_CUDA_PROFILE").ok().filter(|p| !p.is_empty())).clone()
}

/// Whether launches are profiled.
pub(crate) fn on() -> bool {
    path().is_some()
}

fn with(f: impl FnOnce(&mut Profile)) {
    if on() {
        f(PROFILE.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(Profile::default))
    }
}

/// A module was loaded from `ptx` as `handle`.
pub(crate) fn module_loaded(handle: usize, ptx: impl FnOnce() -> String) {
    with(|p| {
        let index = p.modules.len();
        p.modules.push(ptx());
        p.module_index.insert(handle, index);
    })
}

/// `function` was looked up in `module`.
pub(crate) fn function_found(module: usize, function: usize) {
    with(|p| {
        let index = p.module_index.get(&module).copied().unwrap_or(usize::MAX);
        p.function_module.insert(function, index);
    })
}

/// `function` ran once, in `time`.
pub(crate) fn launched(function: usize, grid: [i64; 3], block: [i64; 3], shared_bytes: i32, time: Duration) {
    with(|p| {
        let index = p.function_module.get(&function).copied().unwrap_or(usize::MAX);
        let k = p.kernels.entry(index).or_default();
        k.launches += 1;
        k.time += time;
        (k.grid, k.block, k.shared_bytes) = (grid, block, shared_bytes);
    })
}

/// The host waited `time` for launched kernels.
pub(crate) fn waited(time: Duration) {
    with(|p| {
        p.waits += 1;
        p.wait_time += time;
    })
}

/// Writes the report (of all runs of this process so far) to the file of
/// `TEMPO_CUDA_PROFILE`; a failure to write is printed, not fatal.
pub(crate) fn write() {
    let Some(path) = path() else { return };
    let guard = PROFILE.lock().unwrap_or_else(|e| e.into_inner());
    let Some(p) = guard.as_ref() else { return };
    let mut rows: Vec<(&usize, &Kernel)> = p.kernels.iter().collect();
    rows.sort_by(|a, b| b.1.time.cmp(&a.1.time).then(a.0.cmp(b.0)));
    let total: Duration = rows.iter().map(|(_, k)| k.time).sum();
    let launches: u64 = rows.iter().map(|(_, k)| k.launches).sum();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut text = format!(
        "# tempo CUDA profile: {} kernels, {launches} launches, {:.3} ms in launches (each timed alone, the stream \
         synchronized before and after); {} waits of the host for kernels\n",
        p.modules.len(),
        ms(total),
        p.waits
    );
    text += "# kernel launches total_ms mean_us share grid block shared_bytes\n";
    for (index, k) in &rows {
        let share = if total.is_zero() { 0.0 } else { k.time.as_secs_f64() / total.as_secs_f64() };
        let name = if **index == usize::MAX { "?".to_string() } else { index.to_string() };
        text += &format!(
            "{name} {} {:.3} {:.2} {:.1}% {}x{}x{} {}x{}x{} {}\n",
            k.launches,
            ms(k.time),
            k.time.as_secs_f64() * 1e6 / k.launches.max(1) as f64,
            share * 100.0,
            k.grid[0],
            k.grid[1],
            k.grid[2],
            k.block[0],
            k.block[1],
            k.block[2],
            k.shared_bytes
        );
    }
    for (index, _) in rows.iter().take(PTX_SHOWN) {
        if let Some(ptx) = p.modules.get(**index) {
            text += &format!("\n# PTX of kernel {index}\n{ptx}\n");
        }
    }
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!("tempo: TEMPO_CUDA_PROFILE: cannot write {path}: {e}");
    }
}
