//! Hostile use of the library surfaces, for `tempo-fuzz` (issue 40): the
//! Rust builder API (random model-like programs built with random bad
//! calls) and the C API (loaded with `dlopen` as a C host loads it, called
//! with NULL pointers, DLPack tensors on another device, of other types,
//! lanes, ranks, extents and strides, wrong counts and bounds, destroyed
//! executables). Each case is a pure function of its seed and runs in a
//! child process of `tempo-fuzz` (`--surface-case`), so a crash is seen as
//! a signal, not lost with the harness.
//!
//! Classes, as for MLIR text: a panic, a signal, a hang, a rejection
//! without a message (or, for a program built through the API, without
//! the builder's `file:line:col`), and a compiled run that disagrees with
//! the interpreter (results, or one side refusing what the other runs).

use rand::{Rng, seq::IndexedRandom};
use std::ffi::{CStr, CString, c_char, c_void};
use std::path::Path;
use tempo::{Cond, Data, Expr, HostArray, Program, f32s, i64s};

/// What one surface case found: its kind and what it did, the outcome of
/// each call (`(surface, outcome)`), failures (`(kind, detail)`) and
/// rejections whose message does not say where.
#[derive(Default, Debug)]
pub struct SurfaceReport {
    pub kind: String,
    pub detail: String,
    pub outcomes: Vec<(String, String)>,
    pub failures: Vec<(String, String)>,
    pub unlocated: Vec<String>,
}

impl SurfaceReport {
    /// The report as lines for the parent process (tab-separated, one
    /// finding per line; newlines in details escaped).
    pub fn to_lines(&self) -> String {
        let clean = |s: &str| s.replace('\\', "\\\\").replace('\n', "\\n").replace('\t', " ");
        let mut out = format!("kind\t{}\t{}\n", clean(&self.kind), clean(&self.detail));
        for (a, b) in &self.outcomes {
            out.push_str(&format!("outcome\t{}\t{}\n", clean(a), clean(b)));
        }
        for (a, b) in &self.failures {
            out.push_str(&format!("failure\t{}\t{}\n", clean(a), clean(b)));
        }
        for line in &self.unlocated {
            out.push_str(&format!("unlocated\t{}\n", clean(line)));
        }
        out
    }

    /// The report a child printed with [`SurfaceReport::to_lines`].
    pub fn from_lines(text: &str) -> SurfaceReport {
        let unclean = |s: &str| s.replace("\\n", "\n").replace("\\\\", "\\");
        let mut report = SurfaceReport::default();
        for line in text.lines() {
            let parts: Vec<&str> = line.split('\t').collect();
            match parts.as_slice() {
                ["kind", kind, detail] => {
                    report.kind = unclean(kind);
                    report.detail = unclean(detail);
                }
                ["outcome", a, b] => report.outcomes.push((unclean(a), unclean(b))),
                ["failure", a, b] => report.failures.push((unclean(a), unclean(b))),
                ["unlocated", a] => report.unlocated.push(unclean(a)),
                _ => {}
            }
        }
        report
    }
}

/// The bad calls a builder case may make.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    /// None: a well-formed program.
    Nothing,
    /// A weight of the wrong shape for its product.
    WrongShape,
    /// An integer value added to a float one.
    WrongElement,
    /// A tensor of another program read, defined or output.
    ForeignTensor,
    /// A dimension of another program used in a read.
    ForeignDim,
    /// A read past the bound (`x[t + 2]`).
    OutsideDomain,
    /// A read with too many coordinates.
    WrongArity,
    /// A name that is not an identifier.
    BadName,
    /// A negative or zero size in a declared shape.
    BadSize,
    /// An input defined by a branch.
    DefinedInput,
    /// A tensor output but never defined.
    Undefined,
    /// A reshape to another number of elements, a slice outside.
    BadMovement,
    /// A run with a missing, unknown or negative bound.
    BadBound,
    /// An input array of the wrong shape or element type.
    BadArray,
    /// A read through data at a coordinate outside the bound.
    DataOutside,
}

const FAULTS: &[Fault] = &[
    Fault::Nothing,
    Fault::WrongShape,
    Fault::WrongElement,
    Fault::ForeignTensor,
    Fault::ForeignDim,
    Fault::OutsideDomain,
    Fault::WrongArity,
    Fault::BadName,
    Fault::BadSize,
    Fault::DefinedInput,
    Fault::Undefined,
    Fault::BadMovement,
    Fault::BadBound,
    Fault::BadArray,
    Fault::DataOutside,
];

/// This file's name as `#[track_caller]` records it: a program built here
/// must be refused at a line of it.
const BUILDER_FILE: &str = "fuzz_surfaces.rs";

/// A model-like program built through the Rust API (an RNN or a gated
/// cell over `t`, optionally with causal attention over the prefix and a
/// read through data), with `faults` made along the way; the bounds and
/// inputs of a run, which some faults spoil too.
fn build(rng: &mut impl Rng, faults: &[Fault]) -> (Program, Vec<(String, i64)>, Vec<HostArray>) {
    let has = |f: Fault| faults.contains(&f);
    let width = rng.random_range(1..=4i64);
    let steps = rng.random_range(1..=6i64);
    let mut p = Program::new();
    let t_name = if has(Fault::BadName) { *["1t", "mod", "t-1", ""].choose(rng).unwrap_or(&"mod") } else { "t" };
    let t = p.dim(t_name, "T");
    let x_shape = if has(Fault::BadSize) { vec![*[-3i64, 0, -1].choose(rng).unwrap_or(&0)] } else { vec![width] };
    let x = p.input("x", &[&t], f32s(&x_shape));
    let w_cols = if has(Fault::WrongShape) { width + 1 } else { width };
    let w =
        p.input(if has(Fault::BadName) && rng.random_bool(0.5) { "w\"x" } else { "w" }, &[], f32s(&[width, w_cols]));
    let next = p.input("next", &[&t], i64s(&[]));
    let h = p.tensor("h", &[&t], f32s(&[width]));
    let mut other = Program::new();
    let s = other.dim("s", "S");
    let foreign = other.tensor("foreign", &[&s], f32s(&[width]));
    let _ = other.tensor("more", &[&s], f32s(&[width]));
    // h[0] = tanh(x W); h[t] = tanh(h[t-1] W + x[t]) (or a gated form).
    let first = x.here().matmul(&w.here()).tanh();
    p.define(&h, t.eq(0), first);
    let previous = match (has(Fault::OutsideDomain), has(Fault::ForeignDim), has(Fault::WrongArity)) {
        (true, _, _) => h.at([&t + 2]),
        (_, true, _) => h.at([&s - 1]),
        (_, _, true) => h.at([&t - 1, &t - 1]),
        _ => h.at([&t - 1]),
    };
    let mixed = previous.matmul(&w.here());
    let gated = rng.random_bool(0.5);
    let mut value = if gated {
        let gate = (mixed.clone() + x.here()).sigmoid();
        gate.clone() * previous + (1.0 - gate) * x.here().tanh()
    } else {
        (mixed + x.here()).tanh()
    };
    if has(Fault::WrongElement) {
        value = value + t.position(tempo::ElementType::I64);
    }
    if has(Fault::BadMovement) {
        value = match rng.random_range(0..3) {
            0 => value.reshape(&[width + 1]),
            1 => value.slice(&[1], &[width]),
            _ => value.concat(&value, 1),
        };
    }
    if has(Fault::DataOutside) || rng.random_bool(0.3) {
        // A read through data of the input at a coordinate of the data.
        value = value + x.at_data([&next.here()]);
    }
    p.define(&h, Cond::always(), value);
    if has(Fault::ForeignTensor) {
        match rng.random_range(0..3) {
            0 => p.define(&foreign, Cond::always(), x.here()),
            1 => p.output(&foreign),
            _ => {
                let y = p.tensor("y", &[&t], f32s(&[width]));
                p.define(&y, Cond::always(), foreign.at([&t]));
                p.output(&y);
            }
        }
    }
    if has(Fault::DefinedInput) {
        p.define(&x, Cond::always(), h.here());
    }
    if has(Fault::Undefined) {
        let u = p.tensor("u", &[&t], f32s(&[width]));
        p.output(&u);
    }
    // Attention over the prefix, in half the programs.
    if rng.random_bool(0.5) {
        let o = p.tensor("o", &[&t], f32s(&[width]));
        let keys = h.range(0, &t + 1);
        let scores = Expr::einsum("d,nd->n", &[&h.here(), &keys]).softmax();
        p.define(&o, Cond::always(), Expr::einsum("n,nd->d", &[&scores, &keys]));
        p.output(&o);
    }
    p.output(&h);
    let mut bounds = vec![("T".to_string(), steps)];
    if has(Fault::BadBound) {
        match rng.random_range(0..3) {
            0 => bounds.clear(),
            1 => bounds[0].1 = -rng.random_range(1..5),
            _ => bounds.push(("Q".into(), 3)),
        }
    }
    let floats = |rng: &mut dyn rand::RngCore, n: usize| -> Vec<f32> {
        (0..n).map(|_| (rng.next_u32() as f32 / u32::MAX as f32) * 2.0 - 1.0).collect()
    };
    let n = steps.max(0) as usize;
    let w_n = (width * w_cols) as usize;
    let x_array = if has(Fault::BadArray) && rng.random_bool(0.5) {
        HostArray {
            name: "x".into(),
            shape: vec![n + 1, width as usize],
            data: Data::F32(floats(rng, (n + 1) * width as usize)),
        }
    } else {
        let elements = n * x_shape.iter().map(|&d| d.max(0) as usize).product::<usize>();
        HostArray {
            name: "x".into(),
            shape: std::iter::once(n).chain(x_shape.iter().map(|&d| d.max(0) as usize)).collect(),
            data: Data::F32(floats(rng, elements)),
        }
    };
    let w_array = if has(Fault::BadArray) {
        HostArray { name: "w".into(), shape: vec![width as usize, w_cols as usize], data: Data::F64(vec![0.5; w_n]) }
    } else {
        HostArray { name: "w".into(), shape: vec![width as usize, w_cols as usize], data: Data::F32(floats(rng, w_n)) }
    };
    // Coordinates of the read through data: inside, or (a fault) one past.
    let next_values: Vec<i64> = (0..n as i64)
        .map(|k| {
            if has(Fault::DataOutside) && k + 1 == n as i64 {
                n as i64 + rng.random_range(0..3)
            } else {
                (k + 1) % n.max(1) as i64
            }
        })
        .collect();
    let next_array = HostArray { name: "next".into(), shape: vec![n], data: Data::I64(next_values) };
    (p, bounds, vec![x_array, w_array, next_array])
}

/// Whether every line of a builder error names a line of this file, or
/// is about the run's arguments (bounds, arrays), which have none.
fn builder_error_located(message: &str) -> bool {
    message.lines().filter(|l| l.contains("error")).all(|l| {
        l.contains(BUILDER_FILE)
            || ["bound", "input '", "is not an input", "missing input", "must be", "outside", "needed"]
                .iter()
                .any(|k| l.contains(k))
    })
}

/// One builder case: a program with 0 to 2 faults, compiled and
/// interpreted.
pub fn builder_case(rng: &mut impl Rng) -> SurfaceReport {
    let count = rng.random_range(0..=2);
    let faults: Vec<Fault> = (0..count).map(|_| *FAULTS.choose(rng).unwrap_or(&Fault::Nothing)).collect();
    let seed = rng.random_range(0..1000u64);
    let (program, bounds, arrays) = build(rng, &faults);
    let mut report = SurfaceReport { kind: "rust-builder".into(), detail: format!("{faults:?}"), ..Default::default() };
    let runner = |interpret: bool| {
        let mut r = program.runner().seed(seed);
        for (name, value) in &bounds {
            r = r.bound(name, *value);
        }
        for a in &arrays {
            r = r.input(a.clone());
        }
        if interpret { r.interpret() } else { r.run() }
    };
    let compiled = runner(false);
    let interpreted = runner(true);
    for (surface, result) in [("rust-builder compiled", &compiled), ("rust-builder interpreted", &interpreted)] {
        let outcome = match result {
            Ok(_) => "accepted",
            Err(e) => {
                let text = e.to_string();
                if text.trim().is_empty() {
                    report.failures.push(("silent-rejection".into(), format!("{surface}: {faults:?}")));
                } else if !builder_error_located(&text) {
                    report.unlocated.push(text.lines().next().unwrap_or("").to_string());
                }
                "rejected"
            }
        };
        report.outcomes.push((surface.into(), outcome.into()));
    }
    match (&compiled, &interpreted) {
        (Ok(c), Ok(i)) if c != i => {
            report.failures.push(("disagreement".into(), format!("{faults:?}: results differ")));
        }
        (Ok(_), Err(e)) => {
            report.failures.push(("disagreement".into(), format!("{faults:?}: compiled accepts, interpreter: {e}")));
        }
        (Err(e), Ok(_)) => {
            report.failures.push(("disagreement".into(), format!("{faults:?}: interpreter accepts, compiled: {e}")));
        }
        _ => {}
    }
    let steps = bounds.iter().find(|(name, _)| name == "T").map_or(0, |&(_, n)| n);
    // (The read of the previous step makes one of its faults: past the
    // bound, then a foreign dimension, then too many coordinates.)
    let shadowed = |f: Fault| match f {
        Fault::ForeignDim => faults.contains(&Fault::OutsideDomain),
        Fault::WrongArity => faults.contains(&Fault::OutsideDomain) || faults.contains(&Fault::ForeignDim),
        _ => false,
    };
    if let Some(fault) = faults.iter().find(|&&f| !shadowed(f) && f.always_refused(steps))
        && compiled.is_ok()
    {
        report.failures.push(("bad call accepted".into(), format!("{fault:?} in {faults:?}")));
    }
    if faults.iter().all(|&f| f == Fault::Nothing) && compiled.is_err() {
        report.failures.push(("well-formed refused".into(), format!("{:?}", compiled.err())));
    }
    report
}

impl Fault {
    /// Whether a run of `steps` steps of a program with this fault is
    /// refused, however the rest of it is drawn. The reads past the bound
    /// and through data outside it are in the branch of the steps after
    /// the first: a run of one step never makes them.
    fn always_refused(self, steps: i64) -> bool {
        match self {
            Fault::Nothing => false,
            Fault::OutsideDomain | Fault::DataOutside => steps > 1,
            _ => true,
        }
    }
}

/// DLPack's structures, as a C host declares them.
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}
#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}
#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}
#[repr(C)]
struct TempoBound {
    name: *const c_char,
    value: i64,
}

type Compile = unsafe extern "C" fn(*const c_char, *const c_char, *const c_char, *mut *mut c_char) -> *mut c_void;
type Run = unsafe extern "C" fn(
    *mut c_void,
    *const TempoBound,
    usize,
    *const *const DlManagedTensor,
    usize,
    *mut *mut DlManagedTensor,
    usize,
    *mut *mut c_char,
) -> bool;
type Destroy = unsafe extern "C" fn(*mut c_void);
type Count = unsafe extern "C" fn(*const c_void) -> usize;
type FreeError = unsafe extern "C" fn(*mut c_char);

/// The C API's entry points, from the shared library a C host links.
struct CApi {
    compile: Compile,
    run: Run,
    destroy: Destroy,
    inputs: Count,
    outputs: Count,
    free_error: FreeError,
}

impl CApi {
    fn load(library: &Path) -> Result<CApi, String> {
        let path = CString::new(library.display().to_string()).map_err(|e| e.to_string())?;
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            let why = unsafe { CStr::from_ptr(libc::dlerror()) }.to_string_lossy().into_owned();
            return Err(format!("cannot load {}: {why}", library.display()));
        }
        let symbol = |name: &str| -> Result<*mut c_void, String> {
            let c = CString::new(name).map_err(|e| e.to_string())?;
            let s = unsafe { libc::dlsym(handle, c.as_ptr()) };
            if s.is_null() { Err(format!("{} has no {name}", library.display())) } else { Ok(s) }
        };
        // SAFETY: the symbols have these C signatures (include/tempo-c/Tempo.h).
        unsafe {
            Ok(CApi {
                compile: std::mem::transmute::<*mut c_void, Compile>(symbol("tempoCompileSource")?),
                run: std::mem::transmute::<*mut c_void, Run>(symbol("tempoRun")?),
                destroy: std::mem::transmute::<*mut c_void, Destroy>(symbol("tempoExecutableDestroy")?),
                inputs: std::mem::transmute::<*mut c_void, Count>(symbol("tempoExecutableNumInputs")?),
                outputs: std::mem::transmute::<*mut c_void, Count>(symbol("tempoExecutableNumOutputs")?),
                free_error: std::mem::transmute::<*mut c_void, FreeError>(symbol("tempoFreeError")?),
            })
        }
    }

    /// Takes the message of a failed call (NULL counts as no message).
    fn message(&self, error: *mut c_char) -> Option<String> {
        if error.is_null() {
            return None;
        }
        let text = unsafe { CStr::from_ptr(error) }.to_string_lossy().into_owned();
        unsafe { (self.free_error)(error) };
        Some(text)
    }
}

/// A tensor the case owns: its sizes, strides and data stay alive as long
/// as the tensor. `elements` of 8 bytes each back every dtype it claims.
struct Owned {
    shape: Vec<i64>,
    strides: Vec<i64>,
    data: Vec<u64>,
    managed: Box<DlManagedTensor>,
}

/// A DLPack tensor of `shape` (f32 data in row-major order, or in the
/// layout `strides` describes over enough memory), then spoiled by `fault`.
fn tensor(rng: &mut impl Rng, shape: &[i64], fault: usize) -> (Owned, String) {
    let mut shape = shape.to_vec();
    let count: i64 = shape.iter().product::<i64>().max(1);
    // Enough memory for any layout made below (column-major, one zero stride).
    let mut owned = Owned {
        shape: Vec::new(),
        strides: Vec::new(),
        data: vec![0u64; count as usize + 8],
        managed: Box::new(DlManagedTensor {
            dl_tensor: DlTensor {
                data: std::ptr::null_mut(),
                device: DlDevice { device_type: 1, device_id: 0 },
                ndim: 0,
                dtype: DlDataType { code: 2, bits: 32, lanes: 1 },
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: None,
        }),
    };
    for (k, word) in owned.data.iter_mut().enumerate() {
        let value = ((k as f32) * 0.37).sin();
        *word = value.to_bits() as u64 | ((value.to_bits() as u64) << 32);
    }
    let mut what = "a good tensor".to_string();
    let t = &mut owned.managed.dl_tensor;
    match fault {
        1 => what = "a NULL data pointer".into(),
        2 => {
            t.device.device_type = *[2, 4, 7, 13].choose(rng).unwrap_or(&2);
            what = format!("device type {}", t.device.device_type);
        }
        3 => {
            t.dtype.code = rng.random_range(0..8);
            t.dtype.bits = *[1, 8, 16, 32, 64].choose(rng).unwrap_or(&64);
            what = format!("dtype code {} bits {}", t.dtype.code, t.dtype.bits);
        }
        4 => {
            t.dtype.lanes = rng.random_range(2..5);
            what = format!("{} lanes", t.dtype.lanes);
        }
        5 => {
            if !shape.is_empty() {
                shape.remove(0);
            } else {
                shape.push(1);
            }
            what = "another rank".into();
        }
        6 => {
            if let Some(d) = shape.first_mut() {
                *d = (*d - 1).max(0);
            }
            what = "another extent (smaller)".into();
        }
        7 => {
            if let Some(d) = shape.first_mut() {
                *d = -*d - 1;
            }
            what = "a negative extent".into();
        }
        8 => what = "a NULL shape".into(),
        9 => {
            // Column-major strides (a valid layout, read through them).
            let mut stride = 1;
            owned.strides = shape
                .iter()
                .map(|&d| {
                    let s = stride;
                    stride *= d.max(1);
                    s
                })
                .collect();
            what = "column-major strides".into();
        }
        10 => {
            // A zero stride on the first axis (every row the same).
            let mut strides = tempo_passes::program::row_major_strides(&shape);
            if let Some(s) = strides.first_mut() {
                *s = 0;
            }
            owned.strides = strides;
            what = "a zero stride".into();
        }
        11 => {
            t.byte_offset = 4 * rng.random_range(1..4u64);
            what = format!("byte offset {}", t.byte_offset);
        }
        12 => {
            t.ndim = -rng.random_range(1..3);
            what = "a negative rank".into();
        }
        _ => {}
    }
    owned.shape = shape;
    let t = &mut owned.managed.dl_tensor;
    if fault != 12 {
        t.ndim = owned.shape.len() as i32;
    }
    t.shape = if fault == 8 { std::ptr::null_mut() } else { owned.shape.as_mut_ptr() };
    t.strides = if owned.strides.is_empty() { std::ptr::null_mut() } else { owned.strides.as_mut_ptr() };
    t.data = if fault == 1 { std::ptr::null_mut() } else { owned.data.as_mut_ptr() as *mut c_void };
    (owned, what)
}

/// Programs a C host might compile, with their inputs' point shapes.
const C_PROGRAMS: &[(&str, &[&[i64]])] = &[
    ("counter.mlir", &[]),
    ("running_sum.mlir", &[&[3]]),
    ("rnn.mlir", &[&[4, 4], &[4, 3], &[3]]),
    ("causal_attention.mlir", &[&[4], &[4, 4], &[4, 4], &[4, 4]]),
];

/// One C API case: a program compiled with random options (or a bad
/// source), then runs with random faults, and perhaps a destroyed handle.
pub fn capi_case(rng: &mut impl Rng, library: &Path, examples: &Path) -> SurfaceReport {
    let mut report = SurfaceReport { kind: "c-api".into(), ..Default::default() };
    let api = match CApi::load(library) {
        Ok(api) => api,
        Err(e) => {
            report.failures.push(("setup".into(), e));
            return report;
        }
    };
    let &(file, shapes) = C_PROGRAMS.choose(rng).unwrap_or(&C_PROGRAMS[0]);
    let source = std::fs::read_to_string(examples.join(file)).unwrap_or_default();
    let options = *["", "O=0", "O=2", "O=3", "fast-math", "threads=2", "O=9", "bogus", "memory-budget=0", "bound:T=3"]
        .choose(rng)
        .unwrap_or(&"");
    let (source_kind, source_text) = match rng.random_range(0..10) {
        0 => ("NULL", None),
        1 => (
            "garbage",
            Some(
                String::from_utf8_lossy(&(0..40).map(|_| rng.random_range(1..128u8)).collect::<Vec<_>>()).into_owned(),
            ),
        ),
        _ => ("good", Some(source)),
    };
    let c_source = source_text.as_ref().map(|s| CString::new(s.replace('\0', " ")).unwrap_or_default());
    let name = CString::new(file).unwrap_or_default();
    let c_options = CString::new(options).unwrap_or_default();
    let mut error: *mut c_char = std::ptr::null_mut();
    let source_pointer = c_source.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
    let exe = unsafe { (api.compile)(source_pointer, name.as_ptr(), c_options.as_ptr(), &mut error) };
    report.detail = format!("{file} ({source_kind} source) options '{options}'");
    if exe.is_null() {
        match api.message(error) {
            Some(m) if !m.trim().is_empty() => report.outcomes.push(("c-api compile".into(), "rejected".into())),
            _ => report.failures.push(("silent-rejection".into(), format!("tempoCompileSource: {}", report.detail))),
        }
        return report;
    }
    report.outcomes.push(("c-api compile".into(), "accepted".into()));
    let inputs = unsafe { (api.inputs)(exe) };
    let outputs = unsafe { (api.outputs)(exe) };
    let mut destroyed = false;
    for _ in 0..rng.random_range(1..=4) {
        let steps = rng.random_range(1..6i64);
        let mut tensors = Vec::new();
        let mut faults = Vec::new();
        for shape in shapes.iter().take(inputs) {
            let full: Vec<i64> =
                if file == "rnn.mlir" && shape.len() == 2 || file == "causal_attention.mlir" && shape.len() == 2 {
                    shape.to_vec()
                } else {
                    std::iter::once(steps).chain(shape.iter().copied()).collect()
                };
            let fault = if rng.random_bool(0.3) { rng.random_range(1..13) } else { 0 };
            let (t, what) = tensor(rng, &full, fault);
            faults.push(what);
            tensors.push(t);
        }
        let mut pointers: Vec<*const DlManagedTensor> =
            tensors.iter().map(|t| &*t.managed as *const DlManagedTensor).collect();
        if !pointers.is_empty() && rng.random_bool(0.05) {
            pointers[0] = std::ptr::null();
            faults.push("a NULL input".into());
        }
        let t_name = CString::new("T").unwrap_or_default();
        let q_name = CString::new("Q").unwrap_or_default();
        let mut bounds = vec![TempoBound { name: t_name.as_ptr(), value: steps }];
        match rng.random_range(0..12) {
            0 => {
                bounds.clear();
                faults.push("no bound".into());
            }
            1 => {
                bounds[0].value = -steps;
                faults.push("a negative bound".into());
            }
            2 => {
                bounds.push(TempoBound { name: q_name.as_ptr(), value: 2 });
                faults.push("an unknown bound".into());
            }
            3 => {
                bounds[0].name = std::ptr::null();
                faults.push("a NULL bound name".into());
            }
            _ => {}
        }
        let mut outs: Vec<*mut DlManagedTensor> = vec![std::ptr::null_mut(); outputs + 1];
        let (mut num_inputs, mut num_outputs) = (pointers.len(), outputs);
        let (mut bounds_pointer, mut inputs_pointer, mut outputs_pointer) =
            (bounds.as_ptr(), pointers.as_ptr(), outs.as_mut_ptr());
        match rng.random_range(0..16) {
            0 => {
                num_inputs += 1;
                faults.push("one input too many".into());
            }
            1 => {
                num_outputs = num_outputs.saturating_sub(1);
                faults.push("room for one output less".into());
            }
            2 if !bounds.is_empty() => {
                bounds_pointer = std::ptr::null();
                faults.push("NULL bounds".into());
            }
            3 if num_inputs > 0 => {
                inputs_pointer = std::ptr::null();
                faults.push("NULL inputs".into());
            }
            4 => {
                outputs_pointer = std::ptr::null_mut();
                faults.push("NULL outputs".into());
            }
            5 if !destroyed => {
                unsafe { (api.destroy)(exe) };
                destroyed = true;
                faults.push("a destroyed executable".into());
            }
            _ => {}
        }
        // More inputs claimed than the array holds: only where the array
        // has the room (a C host lying about its array is undefined).
        let padded: Vec<*const DlManagedTensor> =
            pointers.iter().copied().chain(std::iter::once(std::ptr::null())).collect();
        if num_inputs > pointers.len() && !inputs_pointer.is_null() {
            inputs_pointer = padded.as_ptr();
        }
        let mut error: *mut c_char = std::ptr::null_mut();
        let ran = unsafe {
            (api.run)(
                exe,
                bounds_pointer,
                bounds.len(),
                inputs_pointer,
                num_inputs,
                outputs_pointer,
                num_outputs,
                &mut error,
            )
        };
        let what = if faults.is_empty() { "no fault".to_string() } else { faults.join(", ") };
        if ran {
            report.outcomes.push(("c-api run".into(), "accepted".into()));
            for &out in outs.iter().take(outputs) {
                if out.is_null() {
                    report.failures.push(("missing output".into(), what.clone()));
                } else if let Some(deleter) = unsafe { (*out).deleter } {
                    unsafe { deleter(out) };
                }
            }
        } else {
            match api.message(error) {
                Some(m) if !m.trim().is_empty() => report.outcomes.push(("c-api run".into(), "rejected".into())),
                _ => report.failures.push(("silent-rejection".into(), format!("tempoRun with {what}"))),
            }
        }
        report.detail.push_str(&format!("; run: {what}"));
    }
    unsafe { (api.destroy)(exe) };
    report
}
