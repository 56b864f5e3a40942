//! `lower-temporal-to-loops`: lowers a verified temporal program to one
//! function of `affine` loops over the stores of the `store` dialect (the
//! memory level) with `linalg` spatial work.
//!
//! What it produces: `func.func @tempo_main(%T: index, ..., inputs...,
//! outputs...)` (bounds in dimension order, then one memref per input in
//! declaration order, then one per output in output order, each shaped
//! `[domain bounds..., point shape...]`), marked `llvm.emit_c_interface`.
//!
//! The order is the module's `@tempo_schedule` when it has one (written by
//! `temporal-schedule` or by hand; checked against the reads), otherwise
//! the scheduler's ([`crate::schedule`]): one `affine.for` nest per nest of
//! the schedule, forward or backward per dimension, tensors computed in body
//! order; each branch is an arm of an `affine.if` chain on its condition;
//! reads compute their coordinates with `affine.apply` of the read's own
//! index map. Outputs are computed directly into the output buffers; every
//! other tensor gets a `store.alloc` of the kind store selection chose
//! (before the nest computing it; `store.free` after the last nest reading
//! it), each point is computed into `store.write` and ended by `store.seal`,
//! and reads are `store.read`/`store.read_range`. `lower-store-to-memref`
//! lowers those. With `memory-budget` (and the run's `bounds`), tensors the
//! swap planning picks ([`crate::schedule::swaps`]) get a `blocks` store with
//! a swap space, `store.spill` at the end of the forward iterations that
//! complete a block, and `store.reload` and `store.discard` around the
//! backward iterations that enter and leave one.
//!
//! Assumes a program accepted by `temporal-verify`; programs with no legal
//! schedule, or an illegal `@tempo_schedule`, are refused with a located
//! diagnostic. Whether
//! every read point exists and every needed point is defined depends on the
//! bounds and is checked before execution ([`crate::point_checks`]).
//!
//! This file holds the loop nests, stores and reads; the lowering of each
//! kind of spatial op lives in the submodules: `contractions` (matmul,
//! einsum), `elementwise`, `reductions`, `movement` (movements, slices,
//! gathers), `random` and `external_call`.

pub(crate) use crate::generated_text::{memref_layout, sanitize};

mod approximations;
mod attention;
mod branch_body;
mod contractions;
mod destinations;
mod elementwise;
mod external_call;
mod gpu_attention;
mod gpu_matmul;
mod gpu_reduction;
mod kernels;
pub mod library_gemm;
mod matmul_kernel;
mod movement;
mod random;
mod reads;
mod reductions;
mod row_fusion;
mod scalar;
pub(crate) mod swaps;

use crate::schedule::{Schedule, Step, Storage};
use elementwise::Elementwise;
use std::collections::HashMap;
use std::fmt::Write;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::fault::Origins;
use tempo_passes::pass::{OptionKind, PassOption, PassOptions, TempoPass};
use tempo_passes::program::{DYNAMIC, ElementType, NodeKind, PointType, Program, row_major_strides};
use tempo_passes::support::splice::replace_module_body;
use tempo_passes::verify::verify_program;

use melior::ir::OperationRef;

/// How many row groups (see `row_fusion`) the branches of `program` have:
/// what the CPU lowering fuses into one loop nest per row.
pub fn row_groups_in(program: &Program) -> usize {
    program.tensors.iter().flat_map(|t| &t.branches).map(|b| row_fusion::row_groups(b).len()).sum()
}

/// Name of the generated entry function.
pub const ENTRY: &str = "tempo_main";

/// The global `memref<2xi64>` holding `[live, peak]` bytes of the stores
/// (not inputs, outputs or temporaries) while the compiled code runs.
pub use crate::store_to_memref::MEMORY_STATS;

/// The `lower-temporal-to-loops` pass.
pub struct LowerTemporalToLoops;

impl TempoPass for LowerTemporalToLoops {
    fn name(&self) -> &'static str {
        "lower-temporal-to-loops"
    }
    fn summary(&self) -> &'static str {
        "Lower a temporal program to affine loop nests (following @tempo_schedule if present) over store-dialect stores, with linalg spatial work"
    }
    fn options(&self) -> &'static [PassOption] {
        &[
            PassOption {
                name: "fast-math",
                kind: OptionKind::Flag(false),
                summary: "contractions multiply and add with one rounding (FMA) instead of two; off: results bit-exact with the interpreter",
            },
            PassOption {
                name: "library-gemm",
                kind: OptionKind::Flag(false),
                summary: "with fast-math: large float matrix products call the runtime's tempo_gemm (cache-blocked, multithreaded, any strides) instead of the register-tiled kernel; the caller must provide that symbol (tempo-run and the Rust API do)",
            },
            PassOption {
                name: "parallel",
                kind: OptionKind::Flag(false),
                summary: "large contractions spread their column panels over threads (scf.parallel); results are the same",
            },
            PassOption {
                name: "gpu",
                kind: OptionKind::Flag(false),
                summary: "contractions as linalg named ops instead of the CPU register-tiled kernel, so that the GPU mapping (temporal-to-cuda) parallelizes them",
            },
            PassOption {
                name: "test-fault",
                kind: OptionKind::Text,
                summary: "for testing fault reports: KIND:OP (KIND parse, verify, build or panic) breaks the code generated for the first op named OP (temporal.matmul) that way (build: its typed kernel fails to build); the environment variable TEMPO_TEST_FAULT does the same where no option can be given",
            },
            PassOption {
                name: "memory-budget",
                kind: OptionKind::Unsigned,
                summary: "bytes: when the stores, sized at the bounds given, exceed it, tensors written by a forward loop and read back by a later backward one (back-propagation through time) are swapped to a file block by block (see temporal-print-schedule); needs bounds",
            },
            PassOption {
                name: "bounds",
                kind: OptionKind::Bounds,
                summary: "bound values for memory-budget, NAME=VALUE separated by commas (a dimension without one counts as exceeding the budget)",
            },
            PassOption {
                name: "fuse",
                kind: OptionKind::Flag(true),
                summary: "on by default: elementwise chains computed in their user's loop, row-wise work (norms, softmax: reductions along the last axis with the elementwise ops around them) in one loop nest per row, matrix products without a separate fill; false: one loop nest per op (results are the same either way)",
            },
        ]
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let (fast_math, parallel, gpu) = (options.flag("fast-math"), options.flag("parallel"), options.flag("gpu"));
        let (library_gemm, fuse) = (options.flag("library-gemm"), options.flag("fuse"));
        // The option, or (for tools and the Rust API, which take no pass
        // options) the environment variable TEMPO_TEST_FAULT.
        let test_fault =
            options.text("test-fault").map(str::to_string).or_else(|| std::env::var("TEMPO_TEST_FAULT").ok());
        let test_fault = match test_fault {
            None => None,
            Some(value) => Some(TestFault::parse(&value).map_err(|e| vec![PassDiagnostic::new(op.location(), e)])?),
        };
        let mut program = verify_program(op)?;
        if program.tensors.is_empty() {
            return Ok(());
        }
        let mut schedule = match crate::schedule_pass::read_schedule(op, &program)? {
            Some((nests, location)) => Schedule::with_nests(&program, nests, location)?,
            None => Schedule::new(&program)?,
        };
        if let Some((budget, bounds)) =
            swaps::memory_budget(&program, options).map_err(|e| vec![PassDiagnostic::new(op.location(), e)])?
        {
            schedule.plan_swaps(&program, budget, &bounds);
        }
        // Ops whose values reach no branch result or external call are
        // never evaluated (the language is demand-driven; the schedule and
        // the stores, chosen with their reads, stay valid without them).
        tempo_passes::rewrite::remove_dead_nodes(&mut program);
        let mut emitter = Emitter::new(&program, &schedule);
        emitter.fast_math = fast_math;
        emitter.library_gemm = library_gemm;
        emitter.parallel = parallel;
        emitter.gpu = gpu;
        emitter.fuse = fuse;
        emitter.test_fault = test_fault;
        let config = kernels::Config { gpu, fast_math, parallel };
        let (text, origins, kernels) = emitter.emit();
        drop(program);
        crate::schedule_pass::remove_schedule(op);
        replace_module_body(op, &text, Some(&origins), |name| name.starts_with("temporal.")).map_err(|e| vec![e])?;
        kernels::build(op, &kernels, config).map_err(|e| vec![e])
    }
}

use melior::ir::operation::OperationLike;

/// The memref type of a point view: `memref<4x3xf32, strided<[3, 1], offset: ?>>`.
pub fn view_type(point: &PointType) -> String {
    let strides: Vec<String> = row_major_strides(&point.shape).iter().map(i64::to_string).collect();
    format!("memref<{}, strided<[{}], offset: ?>>", shape_prefix(&point.shape, point.element), strides.join(", "))
}

fn shape_prefix(shape: &[i64], element: ElementType) -> String {
    let mut s = String::new();
    for &d in shape {
        if d == DYNAMIC {
            s.push_str("?x");
        } else {
            let _ = write!(s, "{d}x");
        }
    }
    s + element.mlir()
}

/// `memref<PREFIX x S x e>` with a leading dimension (`?` or a size).
fn stacked_type(lead: &str, point: &PointType) -> String {
    format!("memref<{lead}x{}>", shape_prefix(&point.shape, point.element))
}

fn plain_type(point: &PointType) -> String {
    format!("memref<{}>", shape_prefix(&point.shape, point.element))
}

use tempo_passes::print::{header as map_header, set_text};

struct Emitter<'p, 'c> {
    program: &'p Program<'c>,
    schedule: &'p Schedule,
    globals: String,
    entry: String,
    body: String,
    exit: String,
    next_id: usize,
    /// SSA name of each tensor's store (ring, full store, input or output argument).
    store: Vec<String>,
    /// SSA name of each bound argument, by dimension.
    bound_args: Vec<String>,
    /// SSA name of each dimension's current index inside a nest.
    index_of: HashMap<usize, String>,
    /// Contractions use fused multiply-add (see `contraction`), and on the
    /// CPU `exp`, `tanh` and `sigmoid` on `f32` are polynomials
    /// (`approximations`).
    fast_math: bool,
    /// With `fast_math`: large products call the runtime's GEMM.
    library_gemm: bool,
    /// Large contractions spread their panels over threads (`scf.parallel`).
    parallel: bool,
    /// Contractions as `linalg` named ops (for the GPU mapping).
    gpu: bool,
    /// Ops fused into shared loop nests (elementwise chains, row groups,
    /// contraction fills and epilogues); off: one nest per op.
    fuse: bool,
    /// The epilogue the next register-tiled contraction applies (taken by
    /// it; left in place where the kernel does not apply).
    epilogue: Option<contractions::PendingEpilogue>,
    /// For a dynamic size (the SSA name of a range read's length), an
    /// entry-block value it never exceeds.
    size_caps: HashMap<String, String>,
    /// Lengths of range reads capped only by a bound (ranges that grow with
    /// a dimension, as a prefix does), not by a static width.
    growing_lengths: std::collections::HashSet<String>,
    /// The user ops the generated code lowers (markers before their code,
    /// see `tempo_passes::fault`).
    origins: Origins<'c>,
    /// A fault to inject (the `test-fault` option), until injected.
    test_fault: Option<TestFault>,
    /// Spatial ops built as typed IR once the text is parsed (`kernels`).
    kernels: Vec<(kernels::Kernel, String)>,
    /// The op whose next kernel is to fail to build (the `build` test
    /// fault).
    kernel_fault: Option<String>,
}

/// A fault the `test-fault` option injects into the code of the first op
/// of a name, to test how faults are reported.
#[derive(Clone, Debug)]
struct TestFault {
    kind: TestFaultKind,
    op: String,
}

#[derive(Clone, Copy, Debug)]
enum TestFaultKind {
    /// A line that does not parse.
    Parse,
    /// A line that parses but does not verify.
    Verify,
    /// A typed kernel that fails to build.
    Build,
    /// A panic while lowering the op.
    Panic,
}

impl TestFault {
    fn parse(value: &str) -> Result<Self, String> {
        let (kind, op) = value.split_once(':').unwrap_or(("", ""));
        let kind = match kind {
            "parse" => TestFaultKind::Parse,
            "verify" => TestFaultKind::Verify,
            "build" => TestFaultKind::Build,
            "panic" => TestFaultKind::Panic,
            _ => {
                return Err(format!(
                    "test-fault expects KIND:OP with KIND parse, verify, build or panic, got '{value}'"
                ));
            }
        };
        Ok(Self { kind, op: op.to_string() })
    }
}

impl<'p, 'c> Emitter<'p, 'c> {
    fn new(program: &'p Program<'c>, schedule: &'p Schedule) -> Self {
        Self {
            program,
            schedule,
            globals: String::new(),
            entry: String::new(),
            body: String::new(),
            exit: String::new(),
            next_id: 0,
            fast_math: false,
            library_gemm: false,
            parallel: false,
            gpu: false,
            fuse: true,
            epilogue: None,
            size_caps: HashMap::new(),
            growing_lengths: std::collections::HashSet::new(),
            origins: Origins::new(),
            test_fault: None,
            kernels: Vec::new(),
            kernel_fault: None,
            store: vec![String::new(); program.tensors.len()],
            bound_args: (0..program.dims.len())
                .map(|d| format!("%bound{d}_{}", sanitize(&program.dims[d].bound)))
                .collect(),
            index_of: HashMap::new(),
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next_id += 1;
        format!("%{prefix}{}", self.next_id)
    }

    fn symbols(&self) -> String {
        self.bound_args.join(", ")
    }

    /// The dimensions of tensor `i`'s store before its point shape: per
    /// domain position the store has (in domain order), its static size
    /// (`None`: the dimension's bound, or a `blocks` store's reservation).
    /// Inputs, outputs and `full` stores have every domain dimension.
    fn store_dims(&self, i: usize) -> Vec<(usize, Option<usize>)> {
        let t = &self.program.tensors[i];
        let storage = self.schedule.storage[i];
        match (storage, storage.slicing()) {
            (Storage::Point, _) => Vec::new(),
            (_, Some(slicing)) => slicing
                .kept(t.domain.len())
                .map(|k| (k, if k == slicing.along { storage.slots() } else { None }))
                .collect(),
            _ => (0..t.domain.len()).map(|k| (k, None)).collect(),
        }
    }

    /// The memref type of tensor `i`'s store.
    fn store_type(&self, i: usize) -> String {
        let t = &self.program.tensors[i];
        let dims = self.store_dims(i);
        if dims.is_empty() {
            return plain_type(&t.point);
        }
        let lead: Vec<String> = dims.iter().map(|(_, n)| n.map_or("?".to_string(), |n| n.to_string())).collect();
        stacked_type(&lead.join("x"), &t.point)
    }

    /// The generated module's text, the user ops its code lowers and the
    /// kernels its calls stand for.
    fn emit(mut self) -> (String, Origins<'c>, Vec<(kernels::Kernel, String)>) {
        let program = self.program;
        let mut args: Vec<String> = self.bound_args.iter().map(|a| format!("{a}: index")).collect();
        for (i, t) in program.tensors.iter().enumerate() {
            if t.is_input {
                let name = format!("%in{i}_{}", sanitize(&t.name));
                args.push(format!("{name}: {}", self.store_type(i)));
                self.store[i] = name;
            }
        }
        for &i in &program.outputs {
            let name = format!("%out{i}_{}", sanitize(&program.tensors[i].name));
            args.push(format!("{name}: {}", self.store_type(i)));
            // An input marked as output keeps being read from its input
            // array; the caller copies it to the output.
            if !program.tensors[i].is_input {
                self.store[i] = name;
            }
        }
        let _ = writeln!(self.entry, "    %zero_index = arith.constant 0 : index");
        for d in 0..program.dims.len() {
            let _ = writeln!(
                self.entry,
                "    %last{d} = affine.apply affine_map<()[s0] -> (s0 - 1)>()[{}]",
                self.bound_args[d]
            );
        }
        // Stores live from just before the nest computing them to just after
        // the last nest reading them; `tempo_memory_stats` counts the bytes
        // of live stores ([live, peak]).
        let _ = writeln!(self.globals, "  memref.global @{MEMORY_STATS} : memref<2xi64> = dense<0>");
        let nest_of: HashMap<usize, usize> = self
            .schedule
            .nests
            .iter()
            .enumerate()
            .flat_map(|(k, nest)| nest.body.iter().map(move |&t| (t, k)))
            .collect();
        let mut last_use: HashMap<usize, usize> = HashMap::new();
        for (reader, t) in program.tensors.iter().enumerate() {
            for node in t.branches.iter().flat_map(|b| &b.nodes) {
                if let NodeKind::Read { source, .. } | NodeKind::ReadRange { source, .. } = &node.kind
                    && let (Some(&r), Some(&s)) = (nest_of.get(&reader), nest_of.get(source))
                {
                    let last = last_use.entry(*source).or_insert(s);
                    *last = (*last).max(r);
                }
            }
        }
        let stored: Vec<usize> = (0..program.tensors.len())
            .filter(|&i| {
                matches!(
                    self.schedule.storage[i],
                    Storage::Point | Storage::Ring(..) | Storage::Window(..) | Storage::Blocks(..) | Storage::Full
                )
            })
            .collect();
        // Tensors no nest computes (none today) would be allocated up front.
        for &i in &stored {
            self.store[i] = format!("%store{i}_{}", sanitize(&program.tensors[i].name));
        }
        for (k, nest) in self.schedule.nests.iter().enumerate() {
            for &i in stored.iter().filter(|&&i| nest_of.get(&i) == Some(&k)) {
                let mut text = String::new();
                let tensor = &program.tensors[i];
                self.origins.mark(tensor.location, &format!("the store of '{}'", tensor.name), "    ", &mut text);
                self.allocate_store(i, &mut text);
                self.body += &text;
            }
            let mut code = String::new();
            self.place(&nest.steps(program), "    ", &mut code);
            self.body += &code;
            for &i in stored.iter().filter(|&&i| last_use.get(&i).copied().or(nest_of.get(&i).copied()) == Some(k)) {
                let mut text = String::new();
                let tensor = &program.tensors[i];
                self.origins.mark(tensor.location, &format!("the store of '{}'", tensor.name), "    ", &mut text);
                self.free_store(i, &mut text);
                self.body += &text;
            }
        }
        let bounds: Vec<String> = program.dims.iter().map(|d| format!("\"{}\"", d.bound)).collect();
        let inputs: Vec<String> =
            program.tensors.iter().filter(|t| t.is_input).map(|t| format!("\"{}\"", t.name)).collect();
        let outputs: Vec<String> =
            program.outputs.iter().map(|&i| format!("\"{}\"", program.tensors[i].name)).collect();
        // The code after the nests (deallocations) lowers no one op.
        if let Some(location) = program.location {
            let mut exit = String::new();
            self.origins.mark(location, "the program", "    ", &mut exit);
            self.exit.insert_str(0, &exit);
        }
        let text = format!(
            "module {{\n{}  func.func @{ENTRY}({}) attributes {{llvm.emit_c_interface, tempo.bounds = [{}], tempo.inputs = [{}], tempo.outputs = [{}]}} {{\n{}{}{}    return\n  }}\n}}\n",
            self.globals,
            args.join(", "),
            bounds.join(", "),
            inputs.join(", "),
            outputs.join(", "),
            self.entry,
            self.body,
            self.exit
        );
        (text, self.origins, self.kernels)
    }

    /// Emits `steps`: tensors in place, loops around their bodies.
    fn place(&mut self, steps: &[Step], indent: &str, code: &mut String) {
        for step in steps {
            match step {
                Step::Compute(i) => self.tensor(*i, indent, code),
                Step::Loop { dim: d, forward, body } => {
                    let d = *d;
                    let bound = self.bound_args[d].clone();
                    let var = format!("%{}{}", sanitize(&self.program.dims[d].name), self.next_id + 1);
                    self.next_id += 1;
                    // A retimed loop runs as many iterations past its bound
                    // as its latest tensor is late (`Nest::lags`).
                    let lags: Vec<i64> = body
                        .iter()
                        .map(|step| match step {
                            Step::Compute(t) => self.lag(*t),
                            Step::Loop { .. } => 0,
                        })
                        .collect();
                    let latest = lags.iter().copied().max().unwrap_or(0);
                    if *forward && latest > 0 {
                        let _ = writeln!(
                            code,
                            "{indent}affine.for {var} = 0 to affine_map<()[s0] -> (s0 + {latest})>()[{bound}] {{"
                        );
                        let inner = format!("{indent}  ");
                        for (step, lag) in body.iter().zip(lags) {
                            let Step::Compute(t) = step else { unreachable!("a retimed loop is innermost") };
                            // Iteration v computes point v - lag, when in bounds.
                            let _ = writeln!(
                                code,
                                "{inner}affine.if affine_set<(d0)[s0] : (d0 - {lag} >= 0, s0 - 1 - d0 + {lag} >= 0)>({var})[{bound}] {{"
                            );
                            let point = if lag == 0 {
                                var.clone()
                            } else {
                                let point = format!("{var}_late{t}");
                                let _ = writeln!(
                                    code,
                                    "{inner}  {point} = affine.apply affine_map<(d0) -> (d0 - {lag})>({var})"
                                );
                                point
                            };
                            self.index_of.insert(d, point);
                            self.tensor(*t, &format!("{inner}  "), code);
                            let _ = writeln!(code, "{inner}}}");
                        }
                        self.index_of.insert(d, var);
                        let _ = writeln!(code, "{indent}}}");
                        continue;
                    }
                    let inner = format!("{indent}  ");
                    if *forward {
                        let _ = writeln!(code, "{indent}affine.for {var} = 0 to {bound} {{");
                    } else {
                        let step = format!("{var}_step");
                        let _ = writeln!(code, "{indent}affine.for {step} = 0 to {bound} {{");
                        let _ = writeln!(
                            code,
                            "{indent}  {var} = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>({step})[{bound}]"
                        );
                    }
                    self.index_of.insert(d, var.clone());
                    let swapped = self.swapped_in(d, body);
                    if !*forward {
                        for &(i, _) in swapped.iter().filter(|(_, reading)| *reading) {
                            self.reload(i, &var, &bound, &inner, code);
                        }
                    }
                    self.place(body, &inner, code);
                    for &(i, reading) in &swapped {
                        if reading {
                            self.discard(i, &var, &inner, code);
                        } else if *forward {
                            self.spill(i, &var, &inner, code);
                        }
                    }
                    let _ = writeln!(code, "{indent}}}");
                }
            }
        }
    }

    /// How many iterations late tensor `i` is computed ([`crate::schedule::Nest::lags`]).
    fn lag(&self, i: usize) -> i64 {
        self.schedule.lag(i)
    }

    /// The coordinates of tensor `i`'s store ops: one per domain dimension,
    /// less those a sliced store drops.
    fn store_coords(&self, i: usize, coords: &[String]) -> Vec<String> {
        match self.schedule.storage[i].slicing() {
            Some(slicing) => slicing.kept(coords.len()).map(|k| coords[k].clone()).collect(),
            None => coords.to_vec(),
        }
    }

    /// Whether tensor `i` lives in a store of the `store` dialect (not an
    /// input or output buffer).
    fn in_store(&self, i: usize) -> bool {
        !matches!(self.schedule.storage[i], Storage::Input | Storage::Output)
    }

    fn allocate_store(&mut self, i: usize, out: &mut String) {
        let t = &self.program.tensors[i];
        let name = self.store[i].clone();
        let ty = self.store_type(i);
        let storage = self.schedule.storage[i];
        let (kind, extent) = match storage {
            Storage::Point => ("point", 1),
            Storage::Ring(k, _) => ("ring", k),
            Storage::Window(w, _) => ("window", w),
            Storage::Blocks(b, _) => ("blocks", b),
            _ => ("full", 0),
        };
        // Sizes of the store's dynamic dimensions, in order; where the
        // store runs along one of them (`along`).
        let dims = self.store_dims(i);
        let sizes: Vec<String> =
            dims.iter().filter(|(_, n)| n.is_none()).map(|&(k, _)| self.bound_args[t.domain[k]].clone()).collect();
        let along = match storage.slicing() {
            Some(slicing) if slicing.along_in_store() > 0 => format!(", along = {} : i64", slicing.along_in_store()),
            _ => String::new(),
        };
        let size_types: Vec<&str> = sizes.iter().map(|_| "index").collect();
        let names: Vec<&str> = t.domain.iter().map(|&d| self.program.dims[d].name.as_str()).collect();
        let _ = writeln!(out, "    // store of '{}': {}", t.name, storage.describe(&names));
        let along = if self.schedule.swaps.contains_key(&i) { along + ", swap_space = \"file\"" } else { along };
        let _ = writeln!(
            out,
            "    {name} = \"store.alloc\"({}) {{kind = \"{kind}\", extent = {extent} : i64{along}}} : ({}) -> {ty}",
            sizes.join(", "),
            size_types.join(", ")
        );
    }

    fn free_store(&mut self, i: usize, out: &mut String) {
        let name = self.store[i].clone();
        let ty = self.store_type(i);
        let _ = writeln!(out, "    \"store.free\"({name}) : ({ty}) -> ()");
    }

    /// Emits the computation of tensor `i` at the current point of its nest.
    fn tensor(&mut self, i: usize, indent: &str, out: &mut String) {
        let program = self.program;
        let tensor = &program.tensors[i];
        let dims: Vec<String> = tensor.domain.iter().map(|d| self.index_of[d].clone()).collect();
        let dims_text = dims.join(", ");
        let symbols = self.symbols();
        let _ = writeln!(out, "{indent}// {}[{}]", tensor.name, program.domain_names(i).join(", "));
        let slot = self.point_view(i, &dims, true, indent, out);
        let mut closers = Vec::new();
        let mut inner = indent.to_string();
        for (b, branch) in tensor.branches.iter().enumerate() {
            let last = b + 1 == tensor.branches.len();
            if branch.when.is_universe() {
                self.branch(i, b, &slot, &inner, out);
                break;
            }
            let _ = writeln!(out, "{inner}affine.if {}({dims_text})[{symbols}] {{", set_text(&branch.when));
            self.branch(i, b, &slot, &format!("{inner}  "), out);
            if last {
                let _ = writeln!(out, "{inner}}}");
            } else {
                let _ = writeln!(out, "{inner}}} else {{");
                closers.push(format!("{inner}}}"));
                inner += "  ";
            }
        }
        for closer in closers.into_iter().rev() {
            let _ = writeln!(out, "{closer}");
        }
        if self.in_store(i) && !tensor.domain.is_empty() {
            let coords = self.store_coords(i, &dims);
            let types: Vec<&str> = coords.iter().map(|_| "index").collect();
            let _ = writeln!(
                out,
                "{indent}\"store.seal\"({}, {}) : ({}, {}) -> ()",
                self.store[i],
                coords.join(", "),
                self.store_type(i),
                types.join(", ")
            );
        }
    }

    fn cast(&mut self, value: &str, point: &PointType, indent: &str, out: &mut String) -> String {
        let name = self.fresh("v");
        let _ = writeln!(out, "{indent}{name} = memref.cast {value} : {} to {}", plain_type(point), view_type(point));
        name
    }

    /// A view of one point of tensor `i` at `coords` (SSA indices, one per
    /// domain dimension in domain order): `store.write` when `writing` the
    /// point, `store.read` otherwise, or a subview of an input or output.
    fn point_view(&mut self, i: usize, coords: &[String], writing: bool, indent: &str, out: &mut String) -> String {
        let tensor = &self.program.tensors[i];
        let store = self.store[i].clone();
        if tensor.domain.is_empty() {
            return self.cast(&store, &tensor.point, indent, out);
        }
        let name = self.fresh("v");
        if self.in_store(i) {
            let coords = self.store_coords(i, coords);
            let op = if writing { "store.write" } else { "store.read" };
            let types: Vec<&str> = coords.iter().map(|_| "index").collect();
            let _ = writeln!(
                out,
                "{indent}{name} = \"{op}\"({store}, {}) : ({}, {}) -> {}",
                coords.join(", "),
                self.store_type(i),
                types.join(", "),
                view_type(&tensor.point)
            );
            return name;
        }
        let rank = tensor.point.shape.len();
        let offsets: Vec<String> = coords.iter().cloned().chain((0..rank).map(|_| "0".into())).collect();
        let sizes: Vec<String> =
            coords.iter().map(|_| "1".to_string()).chain(tensor.point.shape.iter().map(i64::to_string)).collect();
        let strides: Vec<String> = (0..offsets.len()).map(|_| "1".to_string()).collect();
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {store}[{}] [{}] [{}] : {} to {}",
            offsets.join(", "),
            sizes.join(", "),
            strides.join(", "),
            self.store_type(i),
            view_type(&tensor.point)
        );
        name
    }

    /// Emits one branch body computing into `slot`.
    fn branch(&mut self, i: usize, b: usize, slot: &str, indent: &str, out: &mut String) {
        let program = self.program;
        let reader = &program.tensors[i];
        let reader_dims: Vec<String> = reader.domain.iter().map(|d| self.index_of[d].clone()).collect();
        let branch = &reader.branches[b];
        self.origins.mark(branch.location, &format!("a definition of '{}'", reader.name), indent, out);
        // Reads along dimensions the reader does not loop over need those
        // dimensions to be non-empty; where one is empty the point cannot be
        // needed (the point checks ensure it) and the body is skipped.
        let mut guarded: Vec<usize> = Vec::new();
        for node in &branch.nodes {
            if let NodeKind::Read { source, .. } = &node.kind {
                for &d in &program.tensors[*source].domain {
                    if !reader.domain.contains(&d) && !guarded.contains(&d) {
                        guarded.push(d);
                    }
                }
            }
        }
        guarded.sort();
        if !guarded.is_empty() {
            let constraints: Vec<String> = guarded.iter().map(|d| format!("s{d} - 1 >= 0")).collect();
            let _ = writeln!(
                out,
                "{indent}affine.if affine_set<{} : ({})>({})[{}] {{",
                map_header(reader_dims.len(), program.dims.len()),
                constraints.join(", "),
                reader_dims.join(", "),
                self.symbols()
            );
            self.branch_body(i, b, slot, &format!("{indent}  "), out);
            let _ = writeln!(out, "{indent}}}");
        } else {
            self.branch_body(i, b, slot, indent, out);
        }
    }
}

impl Emitter<'_, '_> {
    /// Opens `scf.for` loops over `sizes` (SSA indices or literals), in the
    /// order `order` (dimension numbers, outer first). Returns the induction
    /// variable of each dimension (by dimension number), the indentation
    /// inside, and the constants 0 and 1.
    fn open_loops(&mut self, sizes: &[String], order: &[usize], indent: &str, out: &mut String) -> LoopNest {
        let zero = self.fresh("c");
        let one = self.fresh("c");
        let _ = writeln!(out, "{indent}{zero} = arith.constant 0 : index");
        let _ = writeln!(out, "{indent}{one} = arith.constant 1 : index");
        let mut ivs = vec![String::new(); sizes.len()];
        let mut inner = indent.to_string();
        for &k in order {
            let size = self.index_value(&sizes[k], &inner, out);
            let iv = self.fresh("k");
            let _ = writeln!(out, "{inner}scf.for {iv} = {zero} to {size} step {one} {{");
            ivs[k] = iv;
            inner += "  ";
        }
        LoopNest { ivs, inner, depth: order.len() }
    }
}

impl Emitter<'_, '_> {
    /// Opens one `scf.parallel` loop over `sizes` (SSA indices or
    /// literals); closed like [`Emitter::open_loops`]' nests.
    fn open_parallel_loop(&mut self, sizes: &[String], indent: &str, out: &mut String) -> LoopNest {
        let zero = self.fresh("c");
        let one = self.fresh("c");
        let _ = writeln!(out, "{indent}{zero} = arith.constant 0 : index");
        let _ = writeln!(out, "{indent}{one} = arith.constant 1 : index");
        let bounds: Vec<String> = sizes.iter().map(|s| self.index_value(s, indent, out)).collect();
        let ivs: Vec<String> = sizes.iter().map(|_| self.fresh("k")).collect();
        let zeros = vec![zero.clone(); sizes.len()];
        let ones = vec![one.clone(); sizes.len()];
        let _ = writeln!(
            out,
            "{indent}scf.parallel ({}) = ({}) to ({}) step ({}) {{",
            ivs.join(", "),
            zeros.join(", "),
            bounds.join(", "),
            ones.join(", ")
        );
        LoopNest { ivs, inner: format!("{indent}  "), depth: 1 }
    }
}

/// Loops opened by [`Emitter::open_loops`].
struct LoopNest {
    ivs: Vec<String>,
    inner: String,
    depth: usize,
}

impl LoopNest {
    /// Closes the loops.
    fn close(mut self, out: &mut String) {
        for _ in 0..self.depth {
            self.inner.truncate(self.inner.len() - 2);
            let _ = writeln!(out, "{}}}", self.inner);
        }
    }
}

/// The smallest value of an element type (-inf for floats), as MLIR text.
fn lowest_literal(element: ElementType) -> String {
    match element {
        ElementType::F32 => "0xFF800000".to_string(),
        ElementType::F64 => "0xFFF0000000000000".to_string(),
        ElementType::I32 => i32::MIN.to_string(),
        _ => i64::MIN.to_string(),
    }
}

/// An SSA memref holding a value of a branch, with its type and the size of
/// each dimension (an SSA index or a literal).
#[derive(Clone)]
struct View {
    name: String,
    ty: String,
    sizes: Vec<String>,
}

/// `memref.transpose` of `input`: result dimension `i` is input dimension
/// `permutation[i]`.
fn transposed_view(input: &View, permutation: &[usize], name: String, indent: &str, out: &mut String) -> View {
    let (dims, element, strides, offset) =
        memref_layout(&input.ty).expect("views are memrefs with a strided or identity layout");
    let shape: String = permutation.iter().map(|&k| format!("{}x", dims[k])).collect();
    let permuted: Vec<&str> = permutation.iter().map(|&k| strides[k].as_str()).collect();
    let ty = format!("memref<{shape}{element}, strided<[{}], offset: {offset}>>", permuted.join(", "));
    let ds: Vec<String> = (0..permutation.len()).map(|k| format!("d{k}")).collect();
    let results: Vec<String> = permutation.iter().map(|&k| format!("d{k}")).collect();
    let _ = writeln!(
        out,
        "{indent}{name} = memref.transpose {} ({}) -> ({}) : {} to {ty}",
        input.name,
        ds.join(", "),
        results.join(", "),
        input.ty
    );
    View { name, ty, sizes: permutation.iter().map(|&k| input.sizes[k].clone()).collect() }
}

/// Sizes of an elementwise result under NumPy broadcasting: operands
/// aligned at their last dimension, a static size 1 stretching to the
/// others' size (which the verifier proved equal).
fn broadcast_sizes(operands: &[&View]) -> Vec<String> {
    let rank = operands.iter().map(|v| v.sizes.len()).max().unwrap_or(0);
    let mut sizes = vec!["1".to_string(); rank];
    for v in operands {
        let skip = rank - v.sizes.len();
        for (j, size) in v.sizes.iter().enumerate() {
            // Prefer static sizes; otherwise any operand's dynamic size.
            let slot = &mut sizes[skip + j];
            if size != "1" && (*slot == "1" || size.parse::<i64>().is_ok()) {
                *slot = size.clone();
            }
        }
    }
    sizes
}

impl View {
    /// A view of static shape with the standard strided type.
    fn fixed(name: String, point: &PointType) -> View {
        View { name, ty: view_type(point), sizes: point.shape.iter().map(i64::to_string).collect() }
    }
}

fn zero_literal(element: ElementType) -> &'static str {
    match element {
        ElementType::F32 | ElementType::F64 => "0.0",
        ElementType::I1 => "false",
        _ => "0",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempo_passes::affine::{AffineExpr, Constraint, IntegerSet};

    #[test]
    fn view_types_are_row_major_strided() {
        let p = PointType { shape: vec![4, 3], element: ElementType::F32 };
        assert_eq!(view_type(&p), "memref<4x3xf32, strided<[3, 1], offset: ?>>");
        let s = PointType { shape: vec![], element: ElementType::I64 };
        assert_eq!(view_type(&s), "memref<i64, strided<[], offset: ?>>");
    }

    #[test]
    fn sets_print_in_mlir_syntax() {
        let set = IntegerSet {
            num_dims: 1,
            num_symbols: 1,
            constraints: vec![Constraint {
                expr: AffineExpr::Add(Box::new(AffineExpr::Dim(0)), Box::new(AffineExpr::Constant(-1))),
                is_equality: false,
            }],
        };
        assert_eq!(set_text(&set), "affine_set<(d0)[s0] : (d0 - 1 >= 0)>");
    }
}
