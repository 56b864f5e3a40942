//! The processes of a run, for programs with collectives
//! (`temporal.all_reduce`) or that ask for their rank or number of
//! processes (`temporal.rank`, `temporal.world_size`).
//!
//! A program without those never touches MPI. A run started without a
//! launcher (no `OMPI_COMM_WORLD_SIZE` from Open MPI's `mpirun`, no
//! `PMI_SIZE` from an MPICH one) is one process, rank 0, and needs no MPI
//! library: an all-reduce of one process is its operand, and the compiled
//! code's two MPI calls (`MPI_Comm_rank`, `MPI_Allreduce`, lowered for
//! MPICH's ABI) resolve to the runtime's own one-process versions.
//!
//! Under a launcher, the MPI library is loaded at run time (`dlopen`,
//! global, so that the JIT resolves the compiled code's MPI symbols in it):
//! `TEMPO_MPI_LIBRARY`, or the launcher's usual soname. Loading it at run
//! time rather than linking every binary against libmpi keeps the tools,
//! the tests and the Rust API's users free of an MPI dependency (and of
//! MPI's start-up) unless a program needs one, and lets one build run with
//! Open MPI or MPICH. Its implementation, from `MPI_Get_library_version`,
//! picks the ABI the compiled code is lowered for (the DLTI entry
//! `"MPI:Implementation"` of MLIR's `mpi` lowering); a library of another
//! implementation than the launcher's, or one that sees another number of
//! processes than the launcher started, is refused with a message. MPI is
//! initialized once per process (`MPI_Init_thread`, serialized calls from
//! any thread, unless the host already did) and finalized at exit.
//!
//! The interpreter calls `MPI_Allreduce` through the same handles, so an
//! interpreted run under `mpirun` is a run across processes too.
//!
//! A watchdog bounds every wait for the other processes: initialization
//! and each all-reduce (the compiled code's `MPI_Allreduce` resolves to
//! the runtime's [`watched_allreduce`], which calls the library's). A
//! process whose wait lasts longer than `TEMPO_MPI_TIMEOUT` seconds
//! (default 300) says so on stderr and exits with status 1, and the
//! launcher then ends the others: a process that died without
//! `MPI_Abort`, hangs, or runs another program (other bounds, other
//! collectives) ends the run with a message instead of a hang. (A killed
//! process is usually noticed by Open MPI's `mpirun` itself, which ends
//! the others at once; the watchdog covers what it does not notice.)
//!
//! The process counts its all-reduces, their bytes and the time spent in
//! them (waiting for the others included): [`collective_stats`], printed
//! on stderr at exit when `TEMPO_MPI_STATS` is set.

use crate::array::Data;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tempo_passes::program::{Collective, NodeKind, Program};

/// An MPI ABI the compiled code can be lowered for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implementation {
    OpenMpi,
    /// MPICH and the libraries of its ABI (Intel MPI, MVAPICH).
    Mpich,
}

impl Implementation {
    /// The value of the module's DLTI entry `"MPI:Implementation"`, which
    /// MLIR's lowering of the `mpi` dialect reads.
    pub fn dlti(self) -> &'static str {
        match self {
            Self::OpenMpi => "OpenMPI",
            Self::Mpich => "MPICH",
        }
    }
}

/// `MPI_Allreduce`, with every handle passed as a machine word: Open MPI's
/// handles are pointers, MPICH's `int`s, which the x86-64 calling
/// convention passes in the same registers (the callee reads the low
/// 32 bits).
type Allreduce = unsafe extern "C" fn(*const c_void, *mut c_void, c_int, usize, usize, usize) -> c_int;
/// `MPI_Comm_rank` and `MPI_Comm_size`.
type CommQuery = unsafe extern "C" fn(usize, *mut c_int) -> c_int;
/// `MPI_Initialized`, `MPI_Finalized`.
type Flag = unsafe extern "C" fn(*mut c_int) -> c_int;

/// The loaded library's entry points and handles.
struct Library {
    allreduce: Allreduce,
    comm_world: usize,
    in_place: usize,
    /// Datatypes of f32, f64, i32, i64.
    types: [usize; 4],
    /// Operations sum, max, min.
    ops: [usize; 3],
}

/// The processes of this run, as this process sees them.
pub struct World {
    pub rank: i32,
    pub size: i32,
    /// The ABI compiled code is lowered for: the loaded library's (MPICH's
    /// for one process without a library, whose MPI functions the runtime
    /// provides).
    pub implementation: Implementation,
    /// The library's path and version line, when one is loaded.
    pub library: Option<String>,
    mpi: Option<Library>,
}

static WORLD: OnceLock<Result<World, String>> = OnceLock::new();

/// The processes of this run; the first call loads and initializes MPI
/// when the process was started by a launcher.
pub fn world() -> Result<&'static World, String> {
    WORLD.get_or_init(open).as_ref().map_err(Clone::clone)
}

/// The world, if a program opened it.
pub fn opened() -> Option<&'static World> {
    WORLD.get().and_then(|w| w.as_ref().ok())
}

/// The world of a program (the module `op`) that uses the processes of its
/// run (`temporal.rank`, `temporal.world_size`, `temporal.all_reduce`, a
/// `temporal.grad` with `all_reduce`),
/// opened on first use; `None` for any other program, which never touches
/// MPI.
pub fn world_for(op: melior::ir::OperationRef) -> Result<Option<&'static World>, String> {
    // A gradient with `all_reduce` becomes an all-reduce in temporal-autodiff:
    // the program uses the processes from the start (the compilation
    // cache's key names the MPI the code will call).
    let uses = ["temporal.rank", "temporal.world_size", "temporal.all_reduce"]
        .iter()
        .any(|name| crate::ir::contains_op(op, name))
        || crate::ir::contains_op_with(op, "temporal.grad", Some("all_reduce"));
    if uses { world().map(Some) } else { Ok(None) }
}

/// The environment variable by which a launcher gives the number of
/// processes, who sets it, and its value.
fn launcher() -> Option<(&'static str, &'static str, String)> {
    [("OMPI_COMM_WORLD_SIZE", "Open MPI's mpirun"), ("PMI_SIZE", "an MPICH (PMI) launcher")]
        .into_iter()
        .find_map(|(var, who)| std::env::var(var).ok().map(|value| (var, who, value)))
}

fn open() -> Result<World, String> {
    let Some((var, who, started)) = launcher() else {
        return Ok(World { rank: 0, size: 1, implementation: Implementation::Mpich, library: None, mpi: None });
    };
    if started.parse::<i32>().is_ok_and(|n| n > 1) {
        start_watchdog()?;
    }
    let (path, handle) = load_library(var)?;
    let symbol = |name: &str| -> Result<*mut c_void, String> {
        let cname = CString::new(name).expect("no NUL");
        let found = unsafe { libc::dlsym(handle, cname.as_ptr()) };
        if found.is_null() { Err(format!("the MPI library {path} has no symbol {name}")) } else { Ok(found) }
    };
    // SAFETY (every transmute below): the symbols are MPI's functions of
    // these C signatures (handles as words, see `Allreduce`).
    let version: unsafe extern "C" fn(*mut c_char, *mut c_int) -> c_int =
        unsafe { std::mem::transmute(symbol("MPI_Get_library_version")?) };
    let mut text = vec![0 as c_char; 8192];
    let mut length: c_int = 0;
    // MPI-3 allows this call before initialization.
    unsafe { version(text.as_mut_ptr(), &mut length) };
    let version = unsafe { CStr::from_ptr(text.as_ptr()) }.to_string_lossy();
    let version = version.lines().next().unwrap_or("").trim().to_string();
    let implementation = if version.contains("Open MPI") {
        Implementation::OpenMpi
    } else if ["MPICH", "Intel(R) MPI", "MVAPICH"].iter().any(|v| version.contains(v)) {
        Implementation::Mpich
    } else {
        return Err(format!(
            "the MPI library {path} ('{version}') is neither Open MPI nor of MPICH's ABI, the two the compiled code can call"
        ));
    };
    let library = format!("{path} ({version})");
    if var == "OMPI_COMM_WORLD_SIZE" && implementation != Implementation::OpenMpi {
        return Err(format!(
            "this process was started by {who} ({var} is set), but the MPI library loaded is {library}: \
             start it with that library's launcher, or set TEMPO_MPI_LIBRARY to Open MPI's libmpi.so"
        ));
    }
    let initialized: Flag = unsafe { std::mem::transmute(symbol("MPI_Initialized")?) };
    let mut flag: c_int = 0;
    unsafe { initialized(&mut flag) };
    if flag == 0 {
        type InitThread = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
        let init: InitThread = unsafe { std::mem::transmute(symbol("MPI_Init_thread")?) };
        let finalize: unsafe extern "C" fn() -> c_int = unsafe { std::mem::transmute(symbol("MPI_Finalize")?) };
        let finalized: Flag = unsafe { std::mem::transmute(symbol("MPI_Finalized")?) };
        // MPI_THREAD_SERIALIZED (2 in both ABIs): calls from any thread,
        // one at a time (a run's collectives come from the thread that
        // runs it).
        let mut provided: c_int = 0;
        let rc = {
            let _watch = Watch::start(Waiting::Init);
            unsafe { init(std::ptr::null_mut(), std::ptr::null_mut(), 2, &mut provided) }
        };
        if rc != 0 {
            return Err(format!("MPI_Init_thread failed (error {rc}) in {library}"));
        }
        let _ = FINALIZE.set((finalized, finalize));
        // SAFETY: registering a plain function to run at exit.
        unsafe { libc::atexit(finalize_at_exit) };
    }
    let comm_world = match implementation {
        Implementation::OpenMpi => symbol("ompi_mpi_comm_world")? as usize,
        Implementation::Mpich => 0x4400_0000,
    };
    let comm_rank: CommQuery = unsafe { std::mem::transmute(symbol("MPI_Comm_rank")?) };
    let comm_size: CommQuery = unsafe { std::mem::transmute(symbol("MPI_Comm_size")?) };
    let (mut rank, mut size): (c_int, c_int) = (0, 0);
    unsafe {
        comm_rank(comm_world, &mut rank);
        comm_size(comm_world, &mut size);
    }
    if started.parse::<i32>().ok() != Some(size) {
        return Err(format!(
            "{who} started {started} processes ({var}={started}), but MPI sees {size}: the MPI library loaded, \
             {library}, is not the launcher's"
        ));
    }
    let (types, ops, in_place) = match implementation {
        Implementation::OpenMpi => {
            let handle = |name: &str| symbol(name).map(|p| p as usize);
            (
                [
                    handle("ompi_mpi_float")?,
                    handle("ompi_mpi_double")?,
                    handle("ompi_mpi_int32_t")?,
                    handle("ompi_mpi_int64_t")?,
                ],
                [handle("ompi_mpi_op_sum")?, handle("ompi_mpi_op_max")?, handle("ompi_mpi_op_min")?],
                1,
            )
        }
        // MPICH's handles are constants of its ABI (MPI_FLOAT, MPI_DOUBLE,
        // MPI_INT32_T, MPI_INT64_T; MPI_SUM, MPI_MAX, MPI_MIN).
        Implementation::Mpich => {
            ([0x4c00_040a, 0x4c00_080b, 0x4c00_0439, 0x4c00_083a], [0x5800_0003, 0x5800_0001, 0x5800_0002], usize::MAX)
        }
    };
    let allreduce: Allreduce = unsafe { std::mem::transmute(symbol("MPI_Allreduce")?) };
    let mpi = Library { allreduce, comm_world, in_place, types, ops };
    Ok(World { rank, size, implementation, library: Some(library), mpi: Some(mpi) })
}

/// Loads the MPI library (globally: the JIT resolves the compiled code's
/// MPI symbols among the process's): `TEMPO_MPI_LIBRARY`, or the usual
/// sonames of the launcher's implementation.
fn load_library(var: &str) -> Result<(String, *mut c_void), String> {
    let candidates: Vec<String> = match std::env::var("TEMPO_MPI_LIBRARY") {
        Ok(path) => vec![path],
        Err(_) if var == "OMPI_COMM_WORLD_SIZE" => vec!["libmpi.so.40".into(), "libmpi.so".into()],
        Err(_) => vec!["libmpi.so.12".into(), "libmpich.so.12".into(), "libmpi.so".into()],
    };
    let mut errors = Vec::new();
    for path in &candidates {
        let cpath = CString::new(path.as_str()).map_err(|_| format!("TEMPO_MPI_LIBRARY: '{path}' holds a NUL"))?;
        let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if !handle.is_null() {
            return Ok((path.clone(), handle));
        }
        let error = unsafe { libc::dlerror() };
        if !error.is_null() {
            errors.push(unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned());
        }
    }
    Err(format!(
        "this process was started by an MPI launcher ({var} is set), but no MPI library could be loaded ({}): \
         install one (tools/setup.sh installs Open MPI) or set TEMPO_MPI_LIBRARY",
        errors.join("; ")
    ))
}

/// `MPI_Finalized` and `MPI_Finalize`, when this runtime initialized MPI.
static FINALIZE: OnceLock<(Flag, unsafe extern "C" fn() -> c_int)> = OnceLock::new();

extern "C" fn finalize_at_exit() {
    if std::env::var_os("TEMPO_MPI_STATS").is_some()
        && let Some(world) = opened()
    {
        let stats = collective_stats();
        // One write of the whole line: `eprintln!` writes its pieces one by
        // one, and the launcher, forwarding every process's standard error
        // to one stream, interleaved two processes' pieces.
        let line = format!(
            "tempo: rank {} of {}: {} all-reduces, {} bytes, {:.6} s in them\n",
            world.rank, world.size, stats.calls, stats.bytes, stats.seconds
        );
        let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    }
    if let Some((finalized, finalize)) = FINALIZE.get() {
        let mut flag: c_int = 0;
        unsafe {
            finalized(&mut flag);
            if flag == 0 {
                finalize();
            }
        }
    }
}

/// Ends every process of the run after an error in this one (so that none
/// waits forever in a collective this one will not reach): `MPI_Abort`
/// when MPI runs several processes; nothing otherwise.
pub fn abort_others(code: i32) {
    let Some(Ok(world)) = WORLD.get() else { return };
    if world.size <= 1 {
        return;
    }
    let Some(mpi) = &world.mpi else { return };
    let abort = CString::new("MPI_Abort").expect("no NUL");
    let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, abort.as_ptr()) };
    if !symbol.is_null() {
        let abort: unsafe extern "C" fn(usize, c_int) -> c_int = unsafe { std::mem::transmute(symbol) };
        unsafe { abort(mpi.comm_world, code) };
    }
}

/// The elementwise `kind` of `data` over the processes of the run (the
/// interpreter's `temporal.all_reduce`): `MPI_Allreduce` in place, then
/// for the mean a division by the number of processes (as the compiled
/// code divides).
pub fn all_reduce(kind: Collective, data: &Data) -> Result<Data, String> {
    let world = world()?;
    let mut out = data.clone();
    use tempo_passes::collectives::{element_code, reduction_code};
    let element = element_code(out.element()).ok_or("temporal.all_reduce of booleans")?;
    let (buffer, count) = match &mut out {
        Data::F32(v) => (v.as_mut_ptr() as *mut c_void, v.len()),
        Data::F64(v) => (v.as_mut_ptr() as *mut c_void, v.len()),
        Data::I32(v) => (v.as_mut_ptr() as *mut c_void, v.len()),
        Data::I64(v) => (v.as_mut_ptr() as *mut c_void, v.len()),
        Data::Bool(v) => (v.as_mut_ptr() as *mut c_void, v.len()),
    };
    // SAFETY: `buffer` holds the `count` elements of `out`.
    unsafe { all_reduce_in_place(buffer, count as i64, element, reduction_code(kind))? };
    if kind == Collective::Mean {
        match &mut out {
            Data::F32(v) => v.iter_mut().for_each(|x| *x /= world.size as f32),
            Data::F64(v) => v.iter_mut().for_each(|x| *x /= world.size as f64),
            _ => return Err("temporal.all_reduce \"mean\" of integers".into()),
        }
    }
    Ok(out)
}

/// An all-reduce in place of `count` elements of type `element` (f32,
/// f64, i32, i64: 0 to 3) at `buffer`, by `op` (sum, max, min: 0 to 2),
/// across the processes of the run; nothing in a run of one process. The
/// GPU lowering's all-reduce where it runs on the CPU, and the sharing of
/// NCCL's id (`crate::nccl`).
///
/// # Safety
/// `buffer` holds `count` elements of the type.
pub unsafe fn all_reduce_in_place(buffer: *mut c_void, count: i64, element: usize, op: usize) -> Result<(), String> {
    let world = world()?;
    let Some(mpi) = &world.mpi else { return Ok(()) };
    let (Some(&datatype), Some(&reduction)) = (mpi.types.get(element), mpi.ops.get(op)) else {
        return Err(format!("an all-reduce of element type {element} by reduction {op}"));
    };
    let count = c_int::try_from(count).map_err(|_| "an all-reduce of more than 2^31 elements".to_string())?;
    let start = Instant::now();
    let rc = {
        let _watch = Watch::start(Waiting::AllReduce);
        // SAFETY: the caller's buffer of `count` elements, in place.
        unsafe { (mpi.allreduce)(mpi.in_place as *const c_void, buffer, count, datatype, reduction, mpi.comm_world) }
    };
    record(mpi, count, datatype, start);
    if rc != 0 {
        return Err(format!("MPI_Allreduce failed (error {rc})"));
    }
    Ok(())
}

/// Counts one all-reduce of `bytes` begun at `start` that MPI did not
/// make (NCCL's, `crate::nccl`).
pub(crate) fn record_collective(bytes: u64, start: Instant) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    BYTES.fetch_add(bytes, Ordering::Relaxed);
    NANOS.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
}

/// Checks, at the start of a run of `program` with `bounds` across several
/// processes, that every process runs the same collectives: a fingerprint
/// of the bounds and of each all-reduce (its tensor, reduction and type,
/// in program order; not the rest, which may differ by rank: each
/// process's own data, or its part of a batch) is all-reduced (its maximum
/// and minimum, one `MPI_Allreduce`, not counted in [`collective_stats`]),
/// and processes whose fingerprints differ all stop with an error instead
/// of waiting in a collective another never reaches, or reducing buffers
/// of other sizes. Nothing in a run of one process or without
/// collectives.
pub fn check_same_collectives(program: &Program, bounds: &[i64]) -> Result<(), String> {
    use std::hash::{Hash, Hasher};
    let Some(world) = opened() else { return Ok(()) };
    let Some(mpi) = &world.mpi else { return Ok(()) };
    if world.size <= 1 || !program.has_collectives() {
        return Ok(());
    }
    // SipHash with fixed keys: the same in every process of one build.
    let mut hasher = std::hash::DefaultHasher::new();
    bounds.hash(&mut hasher);
    for tensor in &program.tensors {
        for node in tensor.branches.iter().flat_map(|b| &b.nodes) {
            if let NodeKind::AllReduce(kind, _) = node.kind {
                (&tensor.name, &tensor.domain, kind, &node.ty.shape, node.ty.element).hash(&mut hasher);
            }
        }
    }
    let mine = hasher.finish() as i64;
    // The maximum of the fingerprints and of their complements (the
    // complement of the minimum): equal everywhere only if all are.
    let mut values = [mine, !mine];
    let rc = {
        let _watch = Watch::start(Waiting::AllReduce);
        let buffer = values.as_mut_ptr().cast::<c_void>();
        unsafe { (mpi.allreduce)(mpi.in_place as *const c_void, buffer, 2, mpi.types[3], mpi.ops[1], mpi.comm_world) }
    };
    if rc != 0 {
        return Err(format!("MPI_Allreduce failed (error {rc})"));
    }
    if values[0] != !values[1] {
        return Err(format!(
            "rank {} of {}: the processes of this run do not run the same collectives (the bounds, or the \
             all-reduces of the program, differ between processes): every process must run the same program \
             with the same bounds",
            world.rank, world.size
        ));
    }
    Ok(())
}

/// Waits until every process of the run gets here (an all-reduce of one
/// integer, watched as any, not counted in [`collective_stats`]): so that
/// the processes start a run together (timings then leave out one
/// process's longer compilation). Nothing in a run of one process.
pub fn barrier() -> Result<(), String> {
    let world = world()?;
    let Some(mpi) = &world.mpi else { return Ok(()) };
    let mut value: i32 = 0;
    let rc = {
        let _watch = Watch::start(Waiting::AllReduce);
        let buffer = (&mut value as *mut i32).cast::<c_void>();
        unsafe { (mpi.allreduce)(mpi.in_place as *const c_void, buffer, 1, mpi.types[2], mpi.ops[0], mpi.comm_world) }
    };
    if rc != 0 {
        return Err(format!("MPI_Allreduce failed (error {rc})"));
    }
    Ok(())
}

/// The compiled code's `temporal.world_size`: MLIR 22.1.8 does not lower
/// `mpi.comm_size` (the op stays in the IR, no error), so the lowering
/// calls this instead (`lowering/src/temporal_to_loops/collectives.rs`).
pub extern "C" fn tempo_mpi_world_size() -> i64 {
    world().map_or(1, |w| w.size as i64)
}

/// One process's `MPI_Comm_rank` (MPICH's ABI): rank 0.
extern "C" fn one_process_comm_rank(_comm: usize, rank: *mut c_int) -> c_int {
    // SAFETY: the compiled code passes a pointer to an int.
    unsafe { *rank = 0 };
    0
}

/// One process's `MPI_Allreduce` (MPICH's ABI): the operand itself, copied
/// when not in place (an MPICH datatype handle holds its size in bytes in
/// bits 8 to 15).
extern "C" fn one_process_allreduce(
    send: *const c_void,
    receive: *mut c_void,
    count: c_int,
    datatype: usize,
    _op: usize,
    _comm: usize,
) -> c_int {
    if send as usize != usize::MAX && !std::ptr::eq(send, receive) && count > 0 {
        let bytes = count as usize * ((datatype as u32 >> 8) & 0xff) as usize;
        // SAFETY: both buffers hold `count` elements of the datatype.
        unsafe { std::ptr::copy_nonoverlapping(send as *const u8, receive as *mut u8, bytes) };
    }
    0
}

/// The symbols the compiled code of a program using the processes of a
/// run needs from the runtime besides the MPI library's.
pub fn symbols(world: &World) -> Vec<(&'static str, *mut ())> {
    let mut symbols = vec![(WORLD_SIZE, tempo_mpi_world_size as *mut ())];
    match &world.mpi {
        None => {
            symbols.push(("MPI_Comm_rank", one_process_comm_rank as *mut ()));
            symbols.push(("MPI_Allreduce", one_process_allreduce as *mut ()));
        }
        // MLIR 22.1.8 lowers MPI_SUM, MPI_MAX and MPI_MIN for Open MPI to
        // the globals `ompi_mpi_sum`, `ompi_mpi_max`, `ompi_mpi_min`, which
        // Open MPI does not define (its are `ompi_mpi_op_sum`, ...): the
        // JIT resolves MLIR's names to Open MPI's objects.
        Some(mpi) => {
            // The library's MPI_Allreduce under the watchdog.
            symbols.push(("MPI_Allreduce", watched_allreduce as *mut ()));
            if world.implementation == Implementation::OpenMpi {
                symbols.push(("ompi_mpi_sum", mpi.ops[0] as *mut ()));
                symbols.push(("ompi_mpi_max", mpi.ops[1] as *mut ()));
                symbols.push(("ompi_mpi_min", mpi.ops[2] as *mut ()));
            }
        }
    }
    symbols
}

/// The compiled code's `MPI_Allreduce` under a launcher: the library's,
/// its wait bounded by the watchdog (see the module's documentation).
extern "C" fn watched_allreduce(
    send: *const c_void,
    receive: *mut c_void,
    count: c_int,
    datatype: usize,
    op: usize,
    comm: usize,
) -> c_int {
    let Some(mpi) = opened().and_then(|w| w.mpi.as_ref()) else {
        // Registered only once the library is open.
        return one_process_allreduce(send, receive, count, datatype, op, comm);
    };
    let start = Instant::now();
    let rc = {
        let _watch = Watch::start(Waiting::AllReduce);
        // SAFETY: the compiled code's arguments, passed on unchanged.
        unsafe { (mpi.allreduce)(send, receive, count, datatype, op, comm) }
    };
    record(mpi, count, datatype, start);
    rc
}

/// This process's all-reduces so far: how many, their bytes (one
/// process's buffer each) and the seconds spent in them, waiting for the
/// other processes included.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CollectiveStats {
    pub calls: u64,
    pub bytes: u64,
    pub seconds: f64,
}

static CALLS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
static NANOS: AtomicU64 = AtomicU64::new(0);

/// Counts one all-reduce of `count` elements of `datatype` begun at `start`.
fn record(mpi: &Library, count: c_int, datatype: usize, start: Instant) {
    // f32, f64, i32, i64.
    let size = mpi.types.iter().position(|&t| t == datatype).map_or(0, |k| [4, 8, 4, 8][k]);
    record_collective(count.max(0) as u64 * size, start);
}

/// This process's all-reduces so far (none in a run of one process).
pub fn collective_stats() -> CollectiveStats {
    CollectiveStats {
        calls: CALLS.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
        seconds: NANOS.load(Ordering::Relaxed) as f64 * 1e-9,
    }
}

/// What a process waits for the others in.
#[derive(Clone, Copy)]
#[repr(u64)]
enum Waiting {
    Init = 1,
    AllReduce = 2,
}

/// The wait in progress: what (the low 2 bits) and since when (the rest:
/// milliseconds since [`EPOCH`], plus one), or 0.
static WAITING: AtomicU64 = AtomicU64::new(0);
static EPOCH: OnceLock<Instant> = OnceLock::new();

/// A wait for the other processes, watched while it lives.
struct Watch;

impl Watch {
    fn start(what: Waiting) -> Watch {
        let epoch = EPOCH.get_or_init(Instant::now);
        let since = epoch.elapsed().as_millis() as u64 + 1;
        WAITING.store((since << 2) | what as u64, Ordering::SeqCst);
        Watch
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        WAITING.store(0, Ordering::SeqCst);
    }
}

/// How long a process waits for the others before it gives up:
/// `TEMPO_MPI_TIMEOUT` seconds, 300 by default.
fn timeout() -> Result<Duration, String> {
    match std::env::var("TEMPO_MPI_TIMEOUT") {
        Err(_) => Ok(Duration::from_secs(300)),
        Ok(text) => match text.trim().parse::<f64>() {
            Ok(seconds) if seconds > 0.0 && seconds.is_finite() => Ok(Duration::from_secs_f64(seconds)),
            _ => Err(format!("TEMPO_MPI_TIMEOUT: '{text}' is not a positive number of seconds")),
        },
    }
}

/// Starts the thread that ends this process when a wait for the others
/// lasts longer than [`timeout`].
fn start_watchdog() -> Result<(), String> {
    let limit = timeout()?;
    let epoch = *EPOCH.get_or_init(Instant::now);
    // The launcher's rank variable: the world is not open yet.
    let rank = ["OMPI_COMM_WORLD_RANK", "PMI_RANK"].iter().find_map(|v| std::env::var(v).ok());
    let rank = rank.map_or_else(|| "this process".to_string(), |r| format!("rank {r}"));
    let poll = (limit / 10).clamp(Duration::from_millis(10), Duration::from_millis(500));
    std::thread::Builder::new()
        .name("tempo-mpi-watchdog".into())
        .spawn(move || {
            loop {
                std::thread::sleep(poll);
                let waiting = WAITING.load(Ordering::SeqCst);
                if waiting == 0 {
                    continue;
                }
                let since = Duration::from_millis((waiting >> 2) - 1);
                let waited = epoch.elapsed().saturating_sub(since);
                if waited < limit {
                    continue;
                }
                let what = if waiting & 3 == Waiting::Init as u64 { "MPI's initialization" } else { "an all-reduce" };
                eprintln!(
                    "error: {rank}: {what} has waited {:.1} s for the other processes of the run (TEMPO_MPI_TIMEOUT): \
                     one of them has died, hangs, or runs another program (other bounds or collectives); ending this one",
                    waited.as_secs_f64()
                );
                // Another thread is inside MPI (initialized for serialized
                // calls): end the process without calling MPI again; the
                // launcher ends the others.
                unsafe { libc::_exit(1) };
            }
        })
        .map_err(|e| format!("cannot start the MPI watchdog thread: {e}"))?;
    Ok(())
}

/// The runtime function giving the number of processes to compiled code.
pub use tempo_passes::collectives::WORLD_SIZE;
