//! Spatial ops built as typed IR (issue 29) while the loop nests around
//! them are still written as text. Where an op's code goes, the emitter
//! writes a call of `@__tempo_kernel_N` whose operands are the op's views
//! and the index values it needs, and records the op as kernel `N`
//! ([`Kernel`]: the op kind, where its views and indices sit among the
//! operands, and its attributes). Once the module is parsed, [`build`]
//! builds each kernel's ops before its call, through the lowering of its
//! kind (in the file named after the kind), and erases the call and the
//! declaration. The new ops take the call's location, which is the user's
//! op (the origin markers placed it there), and so do faults.
//!
//! This seam goes away with the last text: the loop nests will then call
//! the kinds' lowerings directly with the values they hold.

use super::scalar::Chain;
use super::{Emitter, View};
use crate::ir_builder::{Builder, Extent};
use melior::ir::{
    BlockLike, OperationRef, RegionLike, Value,
    attribute::{FlatSymbolRefAttribute, StringAttribute},
    operation::OperationLike,
};
use std::fmt::Write;
use tempo_dialects::block_operations;
use tempo_passes::diagnostics::PassDiagnostic;
use tempo_passes::program::{ElementType, Movement, PointType, ReduceKind};

/// The prefix of the kernels' placeholder functions.
const PREFIX: &str = "__tempo_kernel_";

/// A size of a kernel's view: static, or the kernel's index operand `k`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Size {
    Static(i64),
    Operand(usize),
}

/// A view among a kernel's operands: operand `operand`, of `sizes`.
#[derive(Clone, Debug)]
pub(super) struct ViewArg {
    operand: usize,
    sizes: Vec<Size>,
}

/// A view built from a kernel's operands: the memref and its sizes.
pub(super) struct TypedView<'c, 'a> {
    pub value: Value<'c, 'a>,
    pub sizes: Vec<Extent<'c, 'a>>,
}

impl ViewArg {
    fn typed<'c, 'a>(&self, operands: &[Value<'c, 'a>]) -> TypedView<'c, 'a> {
        TypedView { value: operands[self.operand], sizes: self.sizes.iter().map(|s| s.typed(operands)).collect() }
    }
}

impl Size {
    fn typed<'c, 'a>(&self, operands: &[Value<'c, 'a>]) -> Extent<'c, 'a> {
        match *self {
            Size::Static(n) => Extent::Static(n),
            Size::Operand(k) => Extent::Value(operands[k]),
        }
    }
}

/// The operands of a kernel call being written: SSA names and types.
#[derive(Default)]
pub(super) struct KernelOperands {
    names: Vec<String>,
    types: Vec<String>,
}

impl KernelOperands {
    /// Adds `view` (its memref and its dynamic sizes).
    pub(super) fn view(&mut self, view: &View) -> ViewArg {
        let operand = self.push(&view.name, &view.ty);
        let sizes = view.sizes.iter().map(|s| self.size(s)).collect();
        ViewArg { operand, sizes }
    }

    /// Adds the index value `name` (once).
    pub(super) fn index(&mut self, name: &str) -> usize {
        match self.names.iter().position(|n| n == name) {
            Some(k) => k,
            None => self.push(name, "index"),
        }
    }

    /// Adds the sizes `sizes` (literals or index values).
    pub(super) fn sizes(&mut self, sizes: &[String]) -> Vec<Size> {
        sizes.iter().map(|s| self.size(s)).collect()
    }

    /// A size: a literal, or an index value.
    fn size(&mut self, size: &str) -> Size {
        match size.parse::<i64>() {
            Ok(n) => Size::Static(n),
            Err(_) => Size::Operand(self.index(size)),
        }
    }

    fn push(&mut self, name: &str, ty: &str) -> usize {
        self.names.push(name.to_string());
        self.types.push(ty.to_string());
        self.names.len() - 1
    }
}

/// A spatial op to build before its placeholder call.
pub(super) enum Kernel {
    /// Seeded random values (`random`): `coordinates` are the index
    /// operands of the point's coordinates.
    Random { seed: i64, normal: bool, coordinates: Vec<usize>, target: ViewArg, ty: PointType },
    /// A movement other than a concatenation (`movement`).
    Move { movement: Movement, input: ViewArg, target: ViewArg, ty: PointType },
    /// A concatenation along `axis` of the inputs not yet `placed`.
    Concat { axis: usize, inputs: Vec<ViewArg>, placed: Vec<bool>, target: ViewArg },
    /// The index of the first maximum along an axis (`reductions`).
    ArgMax { input: ViewArg, axis: usize, best: ViewArg, target: ViewArg, element: ElementType },
    /// A running sum along an axis (`reductions`).
    CumSum { input: ViewArg, axis: usize, target: ViewArg, element: ElementType },
    /// An elementwise op or a fused chain of them over its leaves
    /// (`elementwise`, `scalar`).
    Elementwise { leaves: Vec<ViewArg>, target: ViewArg, chain: Chain },
    /// A sum, maximum or mean along `axis` of an input of sizes `shape`:
    /// the input itself (the one leaf), or a chain over its leaves
    /// (`reductions`).
    Reduce {
        kind: ReduceKind,
        leaves: Vec<ViewArg>,
        chain: Option<Chain>,
        shape: Vec<Size>,
        axis: usize,
        target: ViewArg,
        element: ElementType,
    },
    /// A row group: the ops of a branch working row by row on one wide
    /// value, in one loop nest over the rows (`row_fusion`); the views of
    /// the nodes it reads or stores, by node.
    RowGroup {
        group: super::row_fusion::RowGroup,
        nodes: Vec<(tempo_passes::program::NodeKind, PointType)>,
        views: Vec<(usize, ViewArg)>,
        anchor: Vec<Size>,
    },
    /// `c = a b` by the register-tiled kernel or the library's GEMM
    /// (`matmul_kernel`, `library_gemm`), with an epilogue.
    Matmul {
        a: ViewArg,
        b: ViewArg,
        c: ViewArg,
        element: ElementType,
        strategy: Strategy,
        epilogue: Option<EpilogueArg>,
    },
    /// A reduction over a growing range on the GPU, in two stages of
    /// parallel loops (`gpu_reduction`): its partial results' buffer.
    TwoStages {
        stages: super::gpu_reduction::Stages,
        length: Size,
        results: Vec<i64>,
        element: ElementType,
        partial: ViewArg,
        target: ViewArg,
    },
    /// Softmax attention over blocks of its range (`attention`): the
    /// query, key, value, scale and target.
    Attention { views: [ViewArg; 5], plan: super::attention::AttentionPlan },
    /// `c = a b` as a `linalg` named op (`contractions`).
    NamedMatmul { a: ViewArg, b: ViewArg, c: ViewArg, element: ElementType },
    /// `c = a b` as the GPU's tiled launch (`gpu_matmul`).
    GpuMatmul { a: ViewArg, b: ViewArg, c: ViewArg, element: ElementType },
    /// An einsum as one `linalg.generic` (`contractions`).
    Einsum { spec: tempo_passes::program::Einsum, inputs: Vec<ViewArg>, target: ViewArg, element: ElementType },
    /// A kernel that fails to build with this message (the `build` test
    /// fault of `test-fault`).
    Fault(String),
    /// Rows of a table at indices (`movement`).
    Gather { table: ViewArg, indices: ViewArg, index_element: ElementType, target: ViewArg, ty: PointType },
}

/// How a matrix product is built.
pub(super) enum Strategy {
    /// The register-tiled kernel, as planned.
    Tiled(super::matmul_kernel::Plan),
    /// A call of the runtime's GEMM.
    Library { parallel: bool },
}

/// An epilogue among a kernel's operands: the chain's other leaves, which
/// leaf is the product, and the chain.
pub(super) struct EpilogueArg {
    pub leaves: Vec<ViewArg>,
    pub sum_argument: usize,
    pub chain: Chain,
}

/// What the kinds' lowerings need of the pass's options.
#[derive(Clone, Copy)]
pub(super) struct Config {
    /// Elementwise loops as one `scf.parallel` (for the GPU mapping).
    pub gpu: bool,
    /// Row groups of enough work spread their rows over threads.
    pub parallel: bool,
    /// Float reductions may be reassociated, and (on the CPU) `exp`,
    /// `tanh` and `sigmoid` on `f32` are polynomials.
    pub fast_math: bool,
}

impl Config {
    /// Whether `exp`, `tanh` and `sigmoid` on `f32` are approximated by
    /// polynomials (`fast-math` on the CPU; the GPU keeps libdevice's).
    pub(super) fn approximate(&self) -> bool {
        self.fast_math && !self.gpu
    }
}

impl Kernel {
    fn build<'c, 'a>(&self, b: &Builder<'c, 'a>, operands: &[Value<'c, 'a>], config: Config) -> Result<(), String> {
        match self {
            Kernel::Random { seed, normal, coordinates, target, ty } => {
                let coordinates: Vec<Value> = coordinates.iter().map(|&k| operands[k]).collect();
                super::random::build(b, *seed, *normal, &coordinates, &target.typed(operands), ty)
            }
            Kernel::Move { movement, input, target, ty } => {
                super::movement::build_move(b, movement, &input.typed(operands), &target.typed(operands), ty, config)
            }
            Kernel::Concat { axis, inputs, placed, target } => {
                let inputs: Vec<TypedView> = inputs.iter().map(|v| v.typed(operands)).collect();
                super::movement::build_concat(b, *axis, &inputs, placed, &target.typed(operands), config)
            }
            Kernel::ArgMax { input, axis, best, target, element } => super::reductions::build_argmax(
                b,
                &input.typed(operands),
                *axis,
                &best.typed(operands),
                &target.typed(operands),
                *element,
            ),
            Kernel::CumSum { input, axis, target, element } => super::reductions::build_cumsum(
                b,
                &input.typed(operands),
                *axis,
                &target.typed(operands),
                *element,
                config,
            ),
            Kernel::Elementwise { leaves, target, chain } => {
                let leaves: Vec<TypedView> = leaves.iter().map(|v| v.typed(operands)).collect();
                super::elementwise::build_elementwise(b, &leaves, &target.typed(operands), chain, config)
            }
            Kernel::Reduce { kind, leaves, chain, shape, axis, target, element } => {
                let leaves: Vec<TypedView> = leaves.iter().map(|v| v.typed(operands)).collect();
                let shape: Vec<Extent> = shape.iter().map(|s| s.typed(operands)).collect();
                let input = super::reductions::ReduceInput { leaves: &leaves, chain: chain.as_ref(), shape: &shape };
                super::reductions::build_reduce(b, *kind, &input, *axis, &target.typed(operands), *element, config)
            }
            Kernel::RowGroup { group, nodes, views, anchor } => {
                let views = views.iter().map(|(k, v)| (*k, v.typed(operands))).collect();
                let anchor: Vec<Extent> = anchor.iter().map(|s| s.typed(operands)).collect();
                super::row_fusion::build_row_group(b, group, nodes, &views, &anchor, config)
            }
            Kernel::Matmul { a, b: bm, c, element, strategy, epilogue } => {
                let (a, bm, c) = (a.typed(operands), bm.typed(operands), c.typed(operands));
                let leaves: Vec<TypedView> = match epilogue {
                    Some(e) => e.leaves.iter().map(|v| v.typed(operands)).collect(),
                    None => Vec::new(),
                };
                let epilogue = epilogue.as_ref().map(|e| super::matmul_kernel::Epilogue {
                    leaves: &leaves,
                    sum_argument: e.sum_argument,
                    chain: &e.chain,
                    approximate: config.approximate(),
                });
                match strategy {
                    Strategy::Tiled(plan) => super::matmul_kernel::build(b, plan, &a, &bm, &c, epilogue.as_ref()),
                    Strategy::Library { parallel } => {
                        super::library_gemm::build(b, &a, &bm, &c, *element, epilogue.as_ref(), *parallel)
                    }
                }
            }
            Kernel::TwoStages { stages, length, results, element, partial, target } => {
                use super::gpu_reduction::Stages;
                let (leaves, shape) = match stages {
                    Stages::Reduce { leaves, shape, .. } => (leaves, shape.as_slice()),
                    Stages::Einsum { inputs, .. } => (inputs, &[][..]),
                };
                let leaves: Vec<TypedView> = leaves.iter().map(|v| v.typed(operands)).collect();
                let shape: Vec<Extent> = shape.iter().map(|s| s.typed(operands)).collect();
                let n = b.extent(length.typed(operands))?;
                let (partial, target) = (partial.typed(operands).value, target.typed(operands));
                super::gpu_reduction::build_two_stages(
                    b, stages, &leaves, &shape, n, results, *element, partial, &target,
                )
            }
            Kernel::Attention { views, plan } => {
                let [q, k, v, scale, target] = views.each_ref().map(|x| x.typed(operands));
                let buffers = plan.buffers.as_ref().map(|b| b.each_ref().map(|x| x.typed(operands).value));
                let chunks = plan.chunks.as_ref().map(|(c, _)| c.each_ref().map(|x| x.typed(operands).value));
                super::attention::build_attention(b, plan, [&q, &k, &v, &scale, &target], buffers, chunks)
            }
            Kernel::NamedMatmul { a, b: bm, c, element } => super::contractions::build_named_matmul(
                b,
                &a.typed(operands),
                &bm.typed(operands),
                &c.typed(operands),
                *element,
            ),
            Kernel::GpuMatmul { a, b: bm, c, element } => super::gpu_matmul::build_gpu_matmul(
                b,
                &a.typed(operands),
                &bm.typed(operands),
                &c.typed(operands),
                *element,
            ),
            Kernel::Einsum { spec, inputs, target, element } => {
                let inputs: Vec<TypedView> = inputs.iter().map(|v| v.typed(operands)).collect();
                super::contractions::build_einsum(b, spec, &inputs, &target.typed(operands), *element)
            }
            Kernel::Fault(message) => Err(message.clone()),
            Kernel::Gather { table, indices, index_element, target, ty } => super::movement::build_gather(
                b,
                &table.typed(operands),
                &indices.typed(operands),
                *index_element,
                &target.typed(operands),
                ty,
                config,
            ),
        }
    }
}

impl Emitter<'_, '_> {
    /// Writes the placeholder call of `kernel` with `operands`.
    pub(super) fn call_kernel(&mut self, operands: KernelOperands, kernel: Kernel, indent: &str, out: &mut String) {
        let n = self.kernels.len();
        let kernel = match self.kernel_fault.take() {
            Some(op) => Kernel::Fault(format!("test fault injected while building the code of '{op}'")),
            None => kernel,
        };
        self.kernels.push((kernel, self.origins.current().to_string()));
        let types = operands.types.join(", ");
        let _ = writeln!(self.globals, "  func.func private @{PREFIX}{n}({types})");
        let _ = writeln!(out, "{indent}func.call @{PREFIX}{n}({}) : ({types}) -> ()", operands.names.join(", "));
    }
}

/// Builds every kernel of `kernels` (each with what it lowers) before its
/// call in `module`, then erases the calls and their declarations. A
/// kernel that fails to build is a compiler fault at the call's location
/// (the user's op).
pub(super) fn build<'c>(
    module: OperationRef<'c, '_>,
    kernels: &[(Kernel, String)],
    config: Config,
) -> Result<(), PassDiagnostic<'c>> {
    if kernels.is_empty() {
        return Ok(());
    }
    let body = module
        .region(0)
        .ok()
        .and_then(|r| r.first_block())
        .ok_or_else(|| PassDiagnostic::new(module.location(), "compiler fault: a module without a body"))?;
    let mut calls = Vec::new();
    let mut declarations = Vec::new();
    for op in block_operations(body) {
        if op.name().as_string_ref().as_str() != Ok("func.func") {
            continue;
        }
        let name = op.attribute("sym_name").ok().and_then(|a| StringAttribute::try_from(a).ok());
        if name.is_some_and(|n| n.value().starts_with(PREFIX)) {
            declarations.push(op);
        } else {
            collect_calls(op, &mut calls);
        }
    }
    for call in calls {
        let fault = |message: String| PassDiagnostic::new(call.location(), message);
        let callee = call
            .attribute("callee")
            .ok()
            .and_then(|a| FlatSymbolRefAttribute::try_from(a).ok())
            .map(|a| a.value().to_string())
            .unwrap_or_default();
        let kernel = callee
            .strip_prefix(PREFIX)
            .and_then(|n| n.parse::<usize>().ok())
            .and_then(|n| kernels.get(n))
            .ok_or_else(|| fault(format!("compiler fault: no kernel '{callee}'")))?;
        let (kernel, what) = kernel;
        let operands: Vec<Value> = call.operands().collect();
        let b = Builder::before(call).map_err(fault)?;
        kernel.build(&b, &operands, config).map_err(|message| {
            let message = message.strip_prefix("compiler fault: ").unwrap_or(&message);
            fault(format!("compiler fault while lowering '{what}': {message}; please report it with the input program"))
        })?;
        erase(call);
    }
    for declaration in declarations {
        erase(declaration);
    }
    Ok(())
}

/// The kernel calls inside `op`, in order.
fn collect_calls<'c, 'a>(op: OperationRef<'c, 'a>, calls: &mut Vec<OperationRef<'c, 'a>>) {
    for region in op.regions() {
        let mut block = region.first_block();
        while let Some(b) = block {
            for inner in block_operations(b) {
                let is_kernel = inner.name().as_string_ref().as_str() == Ok("func.call")
                    && inner
                        .attribute("callee")
                        .ok()
                        .and_then(|a| FlatSymbolRefAttribute::try_from(a).ok())
                        .is_some_and(|a| a.value().starts_with(PREFIX));
                if is_kernel {
                    calls.push(inner);
                } else {
                    collect_calls(inner, calls);
                }
            }
            block = b.next_in_region();
        }
    }
}

fn erase(op: OperationRef) {
    unsafe {
        mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
        mlir_sys::mlirOperationDestroy(op.to_raw());
    }
}

/// The index at which an operand of `operand_sizes` is read for the
/// element at `index` of a result of `sizes`, under NumPy broadcasting:
/// aligned at the last dimension, a static 1 under a larger size reads
/// `zero`.
pub(super) fn broadcast_at<'c, 'a>(
    operand_sizes: &[Extent<'c, 'a>],
    sizes: &[Extent<'c, 'a>],
    index: &[Value<'c, 'a>],
    zero: Value<'c, 'a>,
) -> Vec<Value<'c, 'a>> {
    let unit = |e: &Extent| matches!(e, Extent::Static(1));
    let skip = sizes.len() - operand_sizes.len();
    (0..operand_sizes.len())
        .map(|d| if unit(&operand_sizes[d]) && !unit(&sizes[skip + d]) { zero } else { index[skip + d] })
        .collect()
}

/// The MLIR type of an element type.
pub(super) fn element_type<'c>(b: &Builder<'c, '_>, element: ElementType) -> melior::ir::Type<'c> {
    match element {
        ElementType::F32 => melior::ir::Type::float32(b.context()),
        ElementType::F64 => melior::ir::Type::float64(b.context()),
        ElementType::I32 => b.integer_type(32),
        ElementType::I64 => b.integer_type(64),
        ElementType::I1 => b.integer_type(1),
    }
}

/// Loops over every element of a result of `sizes` whose elements are
/// written independently: for the GPU one `scf.parallel` loop (a kernel
/// once mapped), otherwise `scf.for` loops in row-major order. A rank-0
/// result has no loop. Returns a builder inside and the index of each
/// dimension.
pub(super) fn elementwise_loops<'c, 'a>(
    b: &Builder<'c, 'a>,
    sizes: &[Extent<'c, 'a>],
    config: Config,
) -> Result<(Builder<'c, 'a>, Vec<Value<'c, 'a>>), String> {
    if config.gpu && !sizes.is_empty() {
        let upper: Vec<Value> = sizes.iter().map(|&s| b.extent(s)).collect::<Result<_, _>>()?;
        return b.scf_parallel(&upper);
    }
    let order: Vec<usize> = (0..sizes.len()).collect();
    loop_nest(b, sizes, &order)
}

/// `scf.for` loops over `sizes` in the order `order` (dimension numbers,
/// outer first): a builder inside and the index of each dimension (by
/// dimension number).
pub(super) fn loop_nest<'c, 'a>(
    b: &Builder<'c, 'a>,
    sizes: &[Extent<'c, 'a>],
    order: &[usize],
) -> Result<(Builder<'c, 'a>, Vec<Value<'c, 'a>>), String> {
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let mut inner = *b;
    let mut ivs = vec![zero; sizes.len()];
    for &k in order {
        let upper = inner.extent(sizes[k])?;
        let (body, iv) = inner.scf_for(zero, upper, one)?;
        inner = body;
        ivs[k] = iv;
    }
    Ok((inner, ivs))
}
