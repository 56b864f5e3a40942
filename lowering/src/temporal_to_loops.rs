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

mod approximations;
mod attention;
mod branch_body;
pub mod by_depth;
pub mod collectives;
mod contractions;
mod destinations;
mod elementwise;
mod external_call;
pub mod flash;
mod gpu_attention;
mod gpu_matmul;
mod gpu_reduction;
mod kernels;
pub mod library_gemm;
mod matmul_kernel;
mod movement;
mod node_kinds;
mod random;
mod reads;
mod reduction_parts;
mod reductions;
mod row_fusion;
mod scalar;
mod scratch;
pub mod stops;
mod stores;
pub(crate) mod swaps;
mod values;
mod views;

use crate::ir_builder::{Builder, declare};
use crate::schedule::{Schedule, Step};
use melior::Context;
use melior::ir::{
    Attribute, Block, BlockLike, Location, OperationRef, Region, RegionLike, Type, Value, ValueLike,
    attribute::{ArrayAttribute, StringAttribute, TypeAttribute},
    operation::{OperationBuilder, OperationLike},
    r#type::FunctionType,
};
use std::collections::{HashMap, HashSet};
use tempo_passes::affine::{AffineExpr, Constraint, IntegerSet};
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::fault::{Origins, verify_built};
use tempo_passes::pass::{OptionKind, PassOption, PassOptions, TempoPass};
use tempo_passes::program::{NodeKind, Program};
use tempo_passes::support::splice::remove_ops;
use tempo_passes::verify::verify_program;

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
                summary: "for testing fault reports: KIND:OP (KIND verify, build or panic) breaks the code generated for the first op named OP (temporal.matmul) that way (verify: an op that does not verify; build: an op that fails to build); the environment variable TEMPO_TEST_FAULT does the same where no option can be given",
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
            PassOption {
                name: "vector-bits",
                kind: OptionKind::Unsigned,
                summary: "width in bits of the vector registers the register-tiled contraction kernel sizes its tiles for (512 for AVX-512, 256 for AVX2); 0 (the default): the host's",
            },
            PassOption {
                name: "vector-registers",
                kind: OptionKind::Unsigned,
                summary: "number of vector registers the kernel's tiles fit in (32 for AVX-512, 16 for AVX2); 0 (the default): the host's; results are the same for every tile",
            },
            PassOption {
                name: "mpi-implementation",
                kind: OptionKind::Text,
                summary: "for programs using the processes of a run (temporal.all_reduce, temporal.rank, temporal.world_size): the MPI ABI the code calls, MPICH (the default) or OpenMPI, written as the module's DLTI entry \"MPI:Implementation\" that convert-to-llvm reads; tempo-run and the Rust API give the loaded library's",
            },
            PassOption {
                name: "batch-by-depth",
                kind: OptionKind::Flag(true),
                summary: "on by default: the points of one depth of a cycle through reads through data (and one choice of branches) are computed together, as batched values; false: one by one in the order of their depths (results are the same either way)",
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
        stops::refuse_unsupported(&program, &schedule, gpu)?;
        collectives::prepare(op, &program, options.text("mpi-implementation"))?;
        let batch_by_depth = options.flag("batch-by-depth");
        let registers = matmul_kernel::RegisterFile::from_options(
            options.unsigned("vector-bits").unwrap_or(0),
            options.unsigned("vector-registers").unwrap_or(0),
        );
        let options = Options { fast_math, library_gemm, parallel, gpu, fuse, batch_by_depth, registers };
        let (function, origins) = build(op, &program, &schedule, options, test_fault).map_err(|e| vec![e])?;
        drop(program);
        crate::schedule_pass::remove_schedule(op);
        remove_ops(op, |name| name.starts_with("temporal.")).map_err(|e| vec![e])?;
        verify_built(function, op, &origins, (op.location(), "the program")).map_err(|e| vec![e])
    }
}

/// The pass's options that shape the code.
#[derive(Clone, Copy)]
struct Options {
    fast_math: bool,
    /// The vector registers contraction tiles are sized for.
    registers: matmul_kernel::RegisterFile,
    library_gemm: bool,
    batch_by_depth: bool,
    parallel: bool,
    gpu: bool,
    fuse: bool,
}

type Built<T> = Result<T, String>;

/// Builds `@tempo_main` for `program` at the end of `module`: its
/// arguments, the stores and the loop nests in `schedule`'s order. Returns
/// the function and the user ops its code lowers; a failure to build is a
/// compiler fault at the op being lowered.
fn build<'c, 'a>(
    module: OperationRef<'c, 'a>,
    program: &Program<'c>,
    schedule: &Schedule,
    options: Options,
    test_fault: Option<TestFault>,
) -> Result<(OperationRef<'c, 'a>, Origins<'c>), PassDiagnostic<'c>> {
    let fault = |message: String| PassDiagnostic::new(module.location(), message);
    let location = program.location.unwrap_or(module.location());
    let context_ref = module.context();
    // The reference points into `context_ref`, which outlives its uses here.
    let context = unsafe { context_ref.to_ref() };
    let body = module
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| fault("compiler fault: a module without a body".into()))?;
    // Arguments: the bounds, the inputs, the outputs.
    let mut types: Vec<Type<'c>> = vec![Type::index(context); program.dims.len()];
    let types_of = |i: usize| stores::store_type(context, program, schedule, i);
    let inputs: Vec<usize> = (0..program.tensors.len()).filter(|&i| program.tensors[i].is_input).collect();
    types.extend(inputs.iter().map(|&i| types_of(i)));
    types.extend(program.outputs.iter().map(|&i| types_of(i)));
    let function = body.append_operation(function(context, location, program, &types).map_err(fault)?);
    let block = function
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| fault("compiler fault: a function without a body".into()))?;
    let arguments: Vec<Value<'c, 'a>> = (0..types.len())
        .map(|k| block.argument(k).map(Value::from))
        .collect::<Result<_, _>>()
        .map_err(|e| fault(e.to_string()))?;
    // The entry block: constants and buffers made once, then the nests,
    // then what is freed on exit, each before a marker op erased at the end.
    let marker = |b: &Builder<'c, 'a>| b.index(0);
    let exit_anchor =
        block.terminator().ok_or_else(|| fault("compiler fault: a function without its return".into()))?;
    let exit = Builder::before(exit_anchor).map_err(fault)?;
    let body_marker = marker(&exit).map_err(fault)?;
    let exit_marker = marker(&exit).map_err(fault)?;
    let defining = |v: Value<'c, 'a>| unsafe { OperationRef::from_raw(mlir_sys::mlirOpResultGetOwner(v.to_raw())) };
    let (body_anchor, exit_anchor) = (defining(body_marker), defining(exit_marker));
    let entry = Builder::before(body_anchor).map_err(fault)?;
    let nests = Builder::before(exit_anchor).map_err(fault)?;
    let globals = Builder::before(function).map_err(fault)?;
    let mut emitter = Emitter::new(program, schedule, context, Builders { globals, entry, exit }, &arguments, options);
    emitter.test_fault = test_fault;
    let built = emitter.emit(&nests);
    let origins = std::mem::take(&mut emitter.origins);
    if let Err(message) = built {
        let (location, what) = origins.last().unwrap_or((location, "the program"));
        let message = message.strip_prefix("compiler fault: ").unwrap_or(&message);
        return Err(PassDiagnostic::new(
            location,
            format!("compiler fault while lowering '{what}': {message}; please report it with the input program"),
        ));
    }
    kernels::erase(body_anchor);
    kernels::erase(exit_anchor);
    Ok((function, origins))
}

/// `func.func @tempo_main(types) attributes {llvm.emit_c_interface,
/// tempo.bounds, tempo.inputs, tempo.outputs}` with an entry block holding
/// its return.
fn function<'c>(
    context: &'c Context,
    location: Location<'c>,
    program: &Program<'c>,
    types: &[Type<'c>],
) -> Built<melior::ir::Operation<'c>> {
    let names = |names: Vec<&str>| -> Attribute<'c> {
        let items: Vec<Attribute> = names.into_iter().map(|n| StringAttribute::new(context, n).into()).collect();
        ArrayAttribute::new(context, &items).into()
    };
    let bounds = names(program.dims.iter().map(|d| d.bound.as_str()).collect());
    let inputs = names(program.tensors.iter().filter(|t| t.is_input).map(|t| t.name.as_str()).collect());
    let outputs = names(program.outputs.iter().map(|&i| program.tensors[i].name.as_str()).collect());
    let region = Region::new();
    let arguments: Vec<(Type<'c>, Location<'c>)> = types.iter().map(|&t| (t, location)).collect();
    let block = region.append_block(Block::new(&arguments));
    let ret = OperationBuilder::new("func.return", location)
        .build()
        .map_err(|e| format!("compiler fault: cannot build 'func.return': {e}"))?;
    block.append_operation(ret);
    let ty = FunctionType::new(context, types, &[]);
    let attribute = |name: &str, value: Attribute<'c>| (melior::ir::Identifier::new(context, name), value);
    OperationBuilder::new("func.func", location)
        .add_attributes(&[
            attribute("sym_name", StringAttribute::new(context, ENTRY).into()),
            attribute("function_type", TypeAttribute::new(ty.into()).into()),
            attribute("llvm.emit_c_interface", Attribute::unit(context)),
            attribute("tempo.bounds", bounds),
            attribute("tempo.inputs", inputs),
            attribute("tempo.outputs", outputs),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| format!("compiler fault: cannot build the function: {e}"))
}

/// Where code made once goes: module symbols (before the function), the
/// entry block's start (buffers, constants) and its end (deallocations).
struct Builders<'c, 'a> {
    globals: Builder<'c, 'a>,
    entry: Builder<'c, 'a>,
    exit: Builder<'c, 'a>,
}

/// What the nest being built holds: the dimensions' current indices,
/// how coordinates are built, a pending contraction epilogue, and the data
/// group or stop being computed.
#[derive(Default)]
struct Nest<'c, 'a> {
    /// Each dimension's current index inside a nest.
    index_of: HashMap<usize, Value<'c, 'a>>,
    /// The epilogue the next register-tiled contraction applies (taken by
    /// it; left in place where the kernel does not apply).
    epilogue: Option<contractions::PendingEpilogue<'c, 'a>>,
    /// Whether the reader's variables are computed values (a point of a
    /// data group, loaded from the order of its depths) rather than affine
    /// loop variables: coordinates and conditions are then built with
    /// `arith` ops instead of affine ones ([`Emitter::apply`],
    /// [`Emitter::when`]).
    arith_indices: bool,
    /// While the points of one segment of a data group are computed
    /// together ([`by_depth::Batch`]).
    batch: Option<by_depth::Batch<'c, 'a>>,
    /// While the nest computing a stop's tensor is built: the stop's
    /// number, its dimension and its tensor ([`stops`]).
    stop: Option<(usize, usize, usize)>,
}

/// What the function being built holds: where code made once goes, the
/// tensors' stores, the bounds' arguments and the values made once at
/// entry, and the buffers the nests share.
struct Function<'c, 'a> {
    /// Module symbols: constants' globals, before the function.
    globals: Builder<'c, 'a>,
    /// The entry block before the nests: buffers and values made once.
    entry: Builder<'c, 'a>,
    /// The entry block after the nests: deallocations.
    exit: Builder<'c, 'a>,
    /// Each tensor's store (ring, full store, input or output argument).
    store: Vec<Option<Value<'c, 'a>>>,
    /// Each dimension's bound argument.
    bound_args: Vec<Value<'c, 'a>>,
    /// Index 0 and each dimension's last index (bound - 1), at entry.
    zero_index: Value<'c, 'a>,
    last_index: Vec<Value<'c, 'a>>,
    /// For a dynamic size (a range read's length, by [`views::key`]), an
    /// entry-block value it never exceeds.
    size_caps: HashMap<usize, Value<'c, 'a>>,
    /// Lengths of range reads capped only by a bound (ranges that grow with
    /// a dimension, as a prefix does), not by a static width.
    growing_lengths: HashSet<usize>,
    /// Lengths of range reads capped by a static width (windows): the width.
    window_widths: HashMap<usize, i64>,
    /// Splat constants' buffers, filled once at entry, by the constant's
    /// text (its value and type): one per distinct constant, however many
    /// ops use it (an optimizer's rates, one per weight and layer).
    splats: HashMap<String, Value<'c, 'a>>,
    /// Scratch buffers of the bodies' values, shared (`scratch`).
    scratch: Vec<scratch::Pooled<'c, 'a>>,
}

/// The stops' state while the function is built ([`stops`]).
#[derive(Default)]
struct Stops<'c, 'a> {
    /// Per stop, its `[stopped, length]` buffer.
    stop_states: HashMap<usize, Value<'c, 'a>>,
    /// Per ragged stop, its buffers.
    ragged: HashMap<usize, stops::Ragged<'c, 'a>>,
    /// The ragged stops whose nests are built: later tensors over their
    /// batch dimensions see their lengths.
    ragged_done: Vec<usize>,
}

/// The lowering of one program: the program and its schedule, the
/// pass's options, and what is being built (the function, the nest, the
/// stops' state), with the user ops the code lowers.
struct Emitter<'p, 'c, 'a> {
    program: &'p Program<'c>,
    schedule: &'p Schedule,
    context: &'c Context,
    next_id: usize,
    /// The pass's options that shape the code.
    options: Options,
    /// The function being built.
    function: Function<'c, 'a>,
    /// The nest being built.
    nest: Nest<'c, 'a>,
    /// The stops' state.
    stops: Stops<'c, 'a>,
    /// The user ops the code built lowers, in order (for faults).
    origins: Origins<'c>,
    /// A fault to inject (the `test-fault` option), until injected.
    test_fault: Option<TestFault>,
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
    /// An op that does not verify.
    Verify,
    /// An op that fails to build.
    Build,
    /// A panic while lowering the op.
    Panic,
}

impl TestFault {
    fn parse(value: &str) -> Result<Self, String> {
        let (kind, op) = value.split_once(':').unwrap_or(("", ""));
        let kind = match kind {
            "verify" => TestFaultKind::Verify,
            "build" => TestFaultKind::Build,
            "panic" => TestFaultKind::Panic,
            _ => {
                return Err(format!("test-fault expects KIND:OP with KIND verify, build or panic, got '{value}'"));
            }
        };
        Ok(Self { kind, op: op.to_string() })
    }
}

impl<'p, 'c, 'a> Emitter<'p, 'c, 'a> {
    fn new(
        program: &'p Program<'c>,
        schedule: &'p Schedule,
        context: &'c Context,
        builders: Builders<'c, 'a>,
        arguments: &[Value<'c, 'a>],
        options: Options,
    ) -> Self {
        let Builders { globals, entry, exit } = builders;
        let dims = program.dims.len();
        let mut store = vec![None; program.tensors.len()];
        let mut next = dims;
        for (i, t) in program.tensors.iter().enumerate() {
            if t.is_input {
                store[i] = Some(arguments[next]);
                next += 1;
            }
        }
        for &i in &program.outputs {
            // An input marked as output keeps being read from its input
            // array; the caller copies it to the output.
            if !program.tensors[i].is_input {
                store[i] = Some(arguments[next]);
            }
            next += 1;
        }
        let bound_args = arguments[..dims].to_vec();
        Self {
            program,
            schedule,
            context,
            next_id: 0,
            options,
            function: Function {
                globals,
                entry,
                exit,
                store,
                zero_index: bound_args.first().copied().unwrap_or(arguments[0]),
                last_index: Vec::new(),
                bound_args,
                size_caps: HashMap::new(),
                growing_lengths: HashSet::new(),
                window_widths: HashMap::new(),
                splats: HashMap::new(),
                scratch: Vec::new(),
            },
            nest: Nest::default(),
            stops: Stops::default(),
            origins: Origins::new(),
            test_fault: None,
        }
    }

    /// What the kinds' lowerings need of the options.
    fn config(&self) -> kernels::Config {
        kernels::Config { gpu: self.options.gpu, fast_math: self.options.fast_math, parallel: self.options.parallel }
    }

    /// The ops built from now on lower `what` at `location` (for faults).
    fn enter(&mut self, location: Location<'c>, what: &str) {
        self.origins.enter(location, what);
    }

    /// A fresh number for a module symbol.
    fn fresh_id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// The operands of a map over the reader's variables `dims` and the
    /// bounds.
    fn with_symbols(&self, dims: &[Value<'c, 'a>]) -> Vec<Value<'c, 'a>> {
        dims.iter().chain(&self.function.bound_args).copied().collect()
    }

    /// Builds the function's body: the constants at entry, then per nest
    /// its stores' allocations, the nest (at `nests`) and the frees of the
    /// stores it reads last.
    fn emit(&mut self, nests: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        if let Some(location) = program.location {
            self.enter(location, "the program");
        }
        self.function.zero_index = self.function.entry.index(0)?;
        let last = affine_map_of(self.context, 0, 1, &[AffineExpr::Symbol(0) + -1]);
        self.function.last_index = (0..program.dims.len())
            .map(|d| self.function.entry.affine_value("affine.apply", last, &[self.function.bound_args[d]]))
            .collect::<Built<_>>()?;
        // Stores live from just before the nest computing them to just after
        // the last nest reading them; `tempo_memory_stats` counts the bytes
        // of live stores ([live, peak]).
        crate::ir_builder::declare_zeros(self.function.globals.module()?, MEMORY_STATS, 2)?;
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
                if let NodeKind::Read { source, .. }
                | NodeKind::ReadRange { source, .. }
                | NodeKind::ReadAt { source, .. } = &node.kind
                    && let (Some(&r), Some(&s)) = (nest_of.get(&reader), nest_of.get(source))
                {
                    let last = last_use.entry(*source).or_insert(s);
                    *last = (*last).max(r);
                }
            }
        }
        let stored: Vec<usize> = (0..program.tensors.len()).filter(|&i| self.in_store(i)).collect();
        let groups = tempo_passes::data_reads::data_groups(program).map_err(|d| d.message)?;
        for (k, nest) in self.schedule.nests.iter().enumerate() {
            for &i in stored.iter().filter(|&&i| nest_of.get(&i) == Some(&k)) {
                let tensor = &program.tensors[i];
                self.enter(tensor.location, &format!("the store of '{}'", tensor.name));
                self.allocate_store(i, &nests.at(tensor.location))?;
            }
            let stop = program.stops.iter().position(|s| nest.body.contains(&s.done));
            if let Some(k) = stop {
                let stop = &program.stops[k];
                self.nest.stop = Some((k, stop.dim, stop.done));
                if stop.is_ragged(program) {
                    self.ragged_setup(k, nests)?;
                }
            }
            match groups.iter().find(|g| crate::schedule::is_data_nest(program, nest) && g.tensors[0] == nest.body[0]) {
                Some(group) => self.by_depth(group, nests)?,
                None => self.place(&nest.steps(program), nests)?,
            }
            if let Some(k) = stop {
                self.nest.stop = None;
                self.after_stop(k, nests)?;
            }
            for &i in stored.iter().filter(|&&i| last_use.get(&i).copied().or(nest_of.get(&i).copied()) == Some(k)) {
                let tensor = &program.tensors[i];
                self.enter(tensor.location, &format!("the store of '{}'", tensor.name));
                self.free_store(i, &nests.at(tensor.location))?;
            }
        }
        Ok(())
    }

    /// Builds `steps`: tensors in place, loops around their bodies.
    fn place(&mut self, steps: &[Step], b: &Builder<'c, 'a>) -> Built<()> {
        let context = self.context;
        let zero = affine_map_of(context, 0, 0, &[AffineExpr::Constant(0)]);
        for step in steps {
            match step {
                Step::Compute(i) => self.tensor(*i, b)?,
                Step::Loop { dim: d, forward, body } => {
                    let d = *d;
                    let bound = self.function.bound_args[d];
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
                        let upper = affine_map_of(context, 0, 1, &[AffineExpr::Symbol(0) + latest]);
                        let (inner, var) = b.affine_for((zero, &[]), (upper, &[bound]))?;
                        for (step, lag) in body.iter().zip(lags) {
                            let Step::Compute(t) = step else {
                                return Err("compiler fault: a retimed loop is not innermost".into());
                            };
                            // Iteration v computes point v - lag, when in bounds.
                            let d0 = AffineExpr::Dim(0);
                            let condition = IntegerSet {
                                num_dims: 1,
                                num_symbols: 1,
                                constraints: vec![
                                    Constraint::at_least_zero(d0.clone() + -lag),
                                    Constraint::at_least_zero((AffineExpr::Symbol(0) + (lag - 1)) - d0.clone()),
                                ],
                            };
                            let (then, _) = inner.affine_if(&condition, &[var, bound], false)?;
                            let point = match lag {
                                0 => var,
                                _ => then.affine_value(
                                    "affine.apply",
                                    affine_map_of(context, 1, 0, &[d0 + -lag]),
                                    &[var],
                                )?,
                            };
                            self.nest.index_of.insert(d, point);
                            self.tensor(*t, &then)?;
                        }
                        self.nest.index_of.insert(d, var);
                        continue;
                    }
                    if let Some((k, dim, done)) = self.nest.stop
                        && dim == d
                        && !self.stops.ragged.contains_key(&k)
                    {
                        self.stop_loop(k, d, done, body, b)?;
                        continue;
                    }
                    let to_bound = affine_map_of(context, 0, 1, &[AffineExpr::Symbol(0)]);
                    let (inner, var) = if *forward {
                        b.affine_for((zero, &[]), (to_bound, &[bound]))?
                    } else {
                        let (inner, step) = b.affine_for((zero, &[]), (to_bound, &[bound]))?;
                        let reverse = (AffineExpr::Symbol(0) + -1) - AffineExpr::Dim(0);
                        let var = inner.affine_value(
                            "affine.apply",
                            affine_map_of(context, 1, 1, &[reverse]),
                            &[step, bound],
                        )?;
                        (inner, var)
                    };
                    self.nest.index_of.insert(d, var);
                    let swapped = self.swapped_in(d, body);
                    if !*forward {
                        for &(i, _) in swapped.iter().filter(|(_, reading)| *reading) {
                            self.reload(i, var, bound, &inner)?;
                        }
                    }
                    if !self.ragged_body(d, body, &inner)? {
                        self.place(body, &inner)?;
                    }
                    for &(i, reading) in &swapped {
                        if reading {
                            self.discard(i, var, &inner)?;
                        } else if *forward {
                            self.spill(i, var, &inner)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Calls the runtime's [`stops::UNDEFINED_POINT`] for the current
    /// point of stop `stop`'s tensor: its coordinate along the stopped
    /// dimension and the row-major number of its batch point. The point
    /// then holds (`slot`, a single `i1`, is set): the run has failed, so
    /// nothing more of the dimension is computed, and the loop never
    /// branches on a value nobody wrote.
    fn undefined_stop_point(&mut self, stop: usize, slot: Value<'c, 'a>, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let s = &program.stops[stop];
        let word = b.integer_type(64);
        declare(b.module()?, stops::UNDEFINED_POINT, &[word, word, word], &[])?;
        let mut flat = b.index(0)?;
        for d in s.batch(program) {
            flat = b.arith("muli", flat, self.function.bound_args[d])?;
            flat = b.arith("addi", flat, self.nest.index_of[&d])?;
        }
        let args = [b.i64(stop as i64)?, b.index_cast(self.nest.index_of[&s.dim], word)?, b.index_cast(flat, word)?];
        b.call(stops::UNDEFINED_POINT, &args, &[])?;
        b.store(b.constant(1, b.integer_type(1))?, slot, &[])
    }

    /// How many iterations late tensor `i` is computed ([`crate::schedule::Nest::lags`]).
    fn lag(&self, i: usize) -> i64 {
        self.schedule.lag(i)
    }

    /// Builds the computation of tensor `i` at the current point of its
    /// nest (through [`Emitter::tensor`], which handles ragged stops).
    fn tensor_at(&mut self, i: usize, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let tensor = &program.tensors[i];
        self.enter(tensor.location, &format!("the store of '{}'", tensor.name));
        let b = b.at(tensor.location);
        let dims: Vec<Value<'c, 'a>> = tensor.domain.iter().map(|d| self.nest.index_of[d]).collect();
        let slot = self.point_view(i, &dims, true, &b)?;
        // A stop's tensor is needed at every point the stop looks at, which
        // only the run knows: a point no branch defines is reported then.
        let stop = program.stops.iter().position(|s| s.done == i);
        let mut inner = b;
        for (k, branch) in tensor.branches.iter().enumerate() {
            let last = k + 1 == tensor.branches.len();
            if branch.when.is_universe() {
                self.branch(i, k, slot, &inner)?;
                break;
            }
            let (then, otherwise) = self.when(&branch.when, &dims, !last || stop.is_some(), &inner)?;
            self.branch(i, k, slot, &then)?;
            match (otherwise, stop) {
                (Some(otherwise), Some(stop)) if last => self.undefined_stop_point(stop, slot, &otherwise)?,
                (Some(otherwise), _) => inner = otherwise,
                (None, _) => break,
            }
        }
        if self.in_store(i) && !tensor.domain.is_empty() {
            self.enter(tensor.location, &format!("the store of '{}'", tensor.name));
            self.seal(i, &dims, &b)?;
        }
        Ok(())
    }

    /// Builds one branch body computing into `slot`.
    fn branch(&mut self, i: usize, k: usize, slot: Value<'c, 'a>, b: &Builder<'c, 'a>) -> Built<()> {
        let program = self.program;
        let reader = &program.tensors[i];
        let reader_dims: Vec<Value<'c, 'a>> = reader.domain.iter().map(|d| self.nest.index_of[d]).collect();
        let branch = &reader.branches[k];
        self.enter(branch.location, &format!("a definition of '{}'", reader.name));
        let b = b.at(branch.location);
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
        if guarded.is_empty() {
            return self.branch_body(i, k, slot, &b);
        }
        let condition = IntegerSet {
            num_dims: reader_dims.len(),
            num_symbols: program.dims.len(),
            constraints: guarded.iter().map(|&d| Constraint::at_least_zero(AffineExpr::Symbol(d) + -1)).collect(),
        };
        let (then, _) = self.when(&condition, &reader_dims, false, &b)?;
        self.branch_body(i, k, slot, &then)
    }

    /// `if condition` over the reader's variables `dims` and the bounds
    /// (`affine.if`, or `scf.if` of `arith` ops where the variables are
    /// not affine): builders in the then block and, `with_else`, the else
    /// block.
    fn when(
        &mut self,
        condition: &IntegerSet,
        dims: &[Value<'c, 'a>],
        with_else: bool,
        b: &Builder<'c, 'a>,
    ) -> Built<(Builder<'c, 'a>, Option<Builder<'c, 'a>>)> {
        if self.nest.arith_indices {
            let holds = b.arith_set(condition, dims, &self.function.bound_args)?;
            return b.scf_if_else(holds, with_else);
        }
        b.affine_if(condition, &self.with_symbols(dims), with_else)
    }
}

/// The MLIR affine map of `results` over `dims` dims and `symbols` symbols.
fn affine_map_of<'c>(
    context: &'c Context,
    dims: usize,
    symbols: usize,
    results: &[AffineExpr],
) -> melior::ir::AffineMap<'c> {
    crate::ir_builder::affine_map(context, dims, symbols, results)
}
