//! The GPU's reductions over growing ranges in
//! `lower-temporal-to-loops{gpu=true}`: a sum, maximum or mean along a range
//! that grows with a dimension (a softmax over a cache's prefix, its
//! normalizer), or an einsum summing such a range (the softmax's weights
//! times the cache's values), has few results and a long axis, so the
//! mapping of a `linalg` reduction (a thread per result, looping over the
//! axis) leaves the GPU idle. Two stages of parallel loops instead (kernels
//! once mapped):
//!
//! ```text
//! partial[r..., c] = reduce(x[r..., c*CHUNK : min((c+1)*CHUNK, n)])   a thread per result and chunk
//! y[r...]          = reduce(partial[r..., 0 : ceil(n / CHUNK)])        a thread per result
//! ```
//!
//! Each chunk, then the chunks, are combined in order from the reduction's
//! starting value (0, or the lowest value for maxima): maxima and integer
//! sums are exact; float sums are associated by chunks (the GPU's results
//! are compared with the interpreter's within a tolerance). A fused
//! elementwise chain (the `exp(s - m)` of a softmax) is computed per
//! element from its leaves, broadcast as NumPy does; an einsum's element is
//! the product of its operands, left to right. An empty range gives the
//! starting value (and a mean 0 / 0), as the `linalg` form does.
//!
//! Used where the reduced axis (the einsum's only summed label) is such a
//! range's length and the results are static and few (at most
//! [`MAX_RESULTS`]).

use super::kernels::{Kernel, KernelOperands, Size, TypedView, ViewArg, broadcast_at, element_type};
use super::scalar::Chain;
use super::{Emitter, View, reductions};
use crate::ir_builder::{Builder, Extent, element_of};
use melior::ir::Value;
use std::fmt::Write;
use tempo_passes::program::Einsum;
use tempo_passes::program::{ElementType, PointType, ReduceKind};

/// Elements of the axis per chunk (one thread's serial part).
pub(super) const CHUNK: i64 = 128;

/// Results above which a thread per result already fills the GPU.
pub(super) const MAX_RESULTS: i64 = 1024;

impl Emitter<'_, '_> {
    /// Whether a reduction of `input` along `axis` (not a cumulative sum or
    /// argmax) takes the two stages: the cap of the axis's length and the
    /// static sizes of the other dimensions.
    pub(super) fn gpu_split_applies(&self, input: &View, axis: usize) -> Option<(String, Vec<i64>)> {
        let cap = self.growing_cap(&input.sizes[axis])?;
        let kept_sizes: Vec<i64> = (0..input.sizes.len())
            .filter(|&k| k != axis)
            .map(|k| input.sizes[k].parse::<i64>().ok())
            .collect::<Option<_>>()?;
        (kept_sizes.iter().product::<i64>() <= MAX_RESULTS).then_some((cap, kept_sizes))
    }

    /// For the GPU, the cap of a range's length that grows with a dimension.
    pub(super) fn growing_cap(&self, length: &str) -> Option<String> {
        if !self.gpu || !self.growing_lengths.contains(length) {
            return None;
        }
        self.size_caps.get(length).cloned()
    }

    /// `target = kind(input along axis)` in two stages, where it applies
    /// (see [`build_two_stages`]); whether it did. With `fused`, `input` is
    /// an elementwise chain over those leaves.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gpu_split_reduce(
        &mut self,
        kind: ReduceKind,
        input: &View,
        axis: usize,
        target: &View,
        ty: &PointType,
        fused: Option<(&Chain, &[&View])>,
        indent: &str,
        out: &mut String,
    ) -> bool {
        let Some((cap, results)) = self.gpu_split_applies(input, axis) else { return false };
        let mut operands = KernelOperands::default();
        let (leaves, chain) = match fused {
            Some((chain, leaves)) => (leaves.iter().map(|v| operands.view(v)).collect(), Some(chain.clone())),
            None => (vec![operands.view(input)], None),
        };
        let shape = operands.sizes(&input.sizes);
        let stages = Stages::Reduce { kind, leaves, chain, shape, axis };
        self.two_stages(stages, &input.sizes[axis], &cap, results, ty.element, target, operands, indent, out);
        true
    }

    /// `target = einsum(inputs)` in two stages where its only summed label
    /// is a growing range's length; whether it did.
    pub(super) fn gpu_split_einsum(
        &mut self,
        spec: &tempo_passes::program::Einsum,
        inputs: &[&View],
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) -> bool {
        let [summed] = spec.summed()[..] else { return false };
        let found = spec
            .operands
            .iter()
            .zip(inputs)
            .find_map(|(labels, v)| labels.iter().position(|&c| c == summed).map(|p| v.sizes[p].clone()));
        let Some(length) = found else { return false };
        let Some(cap) = self.growing_cap(&length) else { return false };
        let Some(results) = target.sizes.iter().map(|s| s.parse::<i64>().ok()).collect::<Option<Vec<i64>>>() else {
            return false;
        };
        if results.iter().product::<i64>() > MAX_RESULTS {
            return false;
        }
        let mut operands = KernelOperands::default();
        let inputs = inputs.iter().map(|v| operands.view(v)).collect();
        let stages = Stages::Einsum { spec: spec.clone(), inputs };
        self.two_stages(stages, &length, &cap, results, element, target, operands, indent, out);
        true
    }

    /// The kernel of the two stages, its partial results allocated once at
    /// entry for the longest range (`cap`).
    #[allow(clippy::too_many_arguments)]
    fn two_stages(
        &mut self,
        stages: Stages,
        length: &str,
        cap: &str,
        results: Vec<i64>,
        element: ElementType,
        target: &View,
        mut operands: KernelOperands,
        indent: &str,
        out: &mut String,
    ) {
        let (partial, chunk_cap, chunk_size) = (self.fresh("partial"), self.fresh("chunks"), self.fresh("chunk"));
        let shape: String = results.iter().map(|d| format!("{d}x")).collect();
        let partial_ty = format!("memref<{shape}?x{}>", element.mlir());
        let _ = writeln!(self.entry, "    {chunk_size} = arith.constant {CHUNK} : index");
        let _ = writeln!(self.entry, "    {chunk_cap} = arith.ceildivui {cap}, {chunk_size} : index");
        let _ = writeln!(self.entry, "    {partial} = memref.alloc({chunk_cap}) : {partial_ty}");
        let _ = writeln!(self.exit, "    memref.dealloc {partial} : {partial_ty}");
        let partial = operands.view(&View { name: partial, ty: partial_ty, sizes: Vec::new() });
        let length = operands.sizes(std::slice::from_ref(&length.to_string()))[0];
        let target = operands.view(target);
        let kernel = Kernel::TwoStages { stages, length, results, element, partial, target };
        self.call_kernel(operands, kernel, indent, out);
    }
}

/// What a two-stage reduction sums: a reduction of an input (or of a
/// chain over its leaves) along `axis`, or an einsum's products.
pub(super) enum Stages {
    Reduce { kind: ReduceKind, leaves: Vec<ViewArg>, chain: Option<Chain>, shape: Vec<Size>, axis: usize },
    Einsum { spec: Einsum, inputs: Vec<ViewArg> },
}

type Built<T> = Result<T, String>;

/// The two stages into `target` over an axis of length `n`, the results
/// of the static sizes `results`: stage 1 a thread per result and chunk
/// of `CHUNK` elements folding its chunk in order into `partial`, stage 2
/// a thread per result folding its chunks in order.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_two_stages<'c, 'a>(
    b: &Builder<'c, 'a>,
    stages: &Stages,
    leaves: &[TypedView<'c, 'a>],
    shape: &[Extent<'c, 'a>],
    n: Value<'c, 'a>,
    results: &[i64],
    element: ElementType,
    partial: Value<'c, 'a>,
    target: &TypedView<'c, 'a>,
) -> Built<()> {
    let e = element_type(b, element);
    let kind = match stages {
        Stages::Reduce { kind, .. } => *kind,
        Stages::Einsum { .. } => ReduceKind::Sum,
    };
    let (_, combine) = reductions::start_and_combine(kind, element);
    let start = || match kind {
        ReduceKind::Max => reductions::lowest(b, element),
        _ => super::movement::zero(b, element),
    };
    let start = start()?;
    let (zero, one, chunk) = (b.index(0)?, b.index(1)?, b.index(CHUNK)?);
    let chunks = b.arith("ceildivui", n, chunk)?;
    // The element at the results' indices `ivs` and `j` along the axis.
    let value_at = |body: &Builder<'c, 'a>, ivs: &[Value<'c, 'a>], j: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
        match stages {
            Stages::Reduce { chain, axis, .. } => {
                let mut index = ivs.to_vec();
                index.insert(*axis, j);
                match chain {
                    None => body.load(leaves[0].value, &index, e),
                    Some(chain) => {
                        // Each leaf at the element, broadcast (a stretched
                        // dimension reads index 0), then the chain.
                        let zero = body.index(0)?;
                        let values: Vec<Value> = leaves
                            .iter()
                            .map(|leaf| {
                                let at = broadcast_at(&leaf.sizes, shape, &index, zero);
                                body.load(leaf.value, &at, element_of(leaf.value)?)
                            })
                            .collect::<Built<_>>()?;
                        chain.apply(body, &values, false)
                    }
                }
            }
            Stages::Einsum { spec, .. } => {
                // The product of the operands, left to right.
                let mul = if element.is_float() { "mulf" } else { "muli" };
                let mut value: Option<Value> = None;
                for (labels, v) in spec.operands.iter().zip(leaves) {
                    let at: Vec<Value> = labels
                        .iter()
                        .map(|&c| match spec.result.iter().position(|&r| r == c) {
                            Some(p) => ivs[p],
                            None => j,
                        })
                        .collect();
                    let x = body.load(v.value, &at, e)?;
                    value = Some(match value {
                        None => x,
                        Some(p) => body.arith(mul, p, x)?,
                    });
                }
                value.ok_or_else(|| "compiler fault: an einsum without operands".to_string())
            }
        }
    };
    // Stage 1: a thread per result and chunk, the chunk in order.
    let mut sizes: Vec<Value> = results.iter().map(|&d| b.index(d)).collect::<Built<_>>()?;
    sizes.push(chunks);
    let (inner, ivs) = b.scf_parallel(&sizes)?;
    let (result_ivs, c) = ivs.split_at(results.len());
    let lo = inner.arith("muli", c[0], chunk)?;
    let hi = inner.arith("minui", inner.arith("addi", lo, chunk)?, n)?;
    let (body, j, acc, sums) = inner.scf_for_carrying(lo, hi, one, &[start])?;
    let value = value_at(&body, result_ivs, j)?;
    body.yield_values("scf.yield", &[body.value(combine, &[acc[0], value], e, &[])?])?;
    inner.store(sums[0], partial, &ivs)?;
    // Stage 2: a thread per result combines its chunks in order.
    let sizes: Vec<Value> = match results.is_empty() {
        true => vec![one],
        false => results.iter().map(|&d| b.index(d)).collect::<Built<_>>()?,
    };
    let (inner, ivs) = b.scf_parallel(&sizes)?;
    let result: Vec<Value> = if results.is_empty() { Vec::new() } else { ivs };
    let (body, k, acc, totals) = inner.scf_for_carrying(zero, chunks, one, &[start])?;
    let at: Vec<Value> = result.iter().copied().chain([k]).collect();
    let part = body.load(partial, &at, e)?;
    body.yield_values("scf.yield", &[body.value(combine, &[acc[0], part], e, &[])?])?;
    let value = match kind {
        // Divided by the length of the axis (0 / 0 is NaN).
        ReduceKind::Mean => {
            let length = inner.convert("arith.sitofp", inner.index_cast(n, inner.integer_type(64))?, e)?;
            inner.arith("divf", totals[0], length)?
        }
        _ => totals[0],
    };
    inner.store(value, target.value, &result)
}
