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
//! partial[c, r...] = reduce(x[r..., c*CHUNK : min((c+1)*CHUNK, n)])   a thread per chunk and result
//! y[r...]          = reduce(partial[0 : ceil(n / CHUNK), r...])        a thread per result
//! ```
//!
//! The chunk is the outer index of stage 1's threads: consecutive threads
//! take consecutive results, so an einsum summing a cache's positions
//! (`hqn,nhd->hqd`, the values at each position contiguous along `d`)
//! reads contiguous memory across a warp (coalesced), and stage 2 reads
//! the partial results the same way.
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
//! range's length and the results are static (at most [`MAX_RESULTS`]):
//! also many results (a batch of 64 sequences' heads) gain from the
//! split, since a thread per result runs a chain of as many dependent
//! steps as the range is long, with few loads in flight. Likewise a long
//! static axis or a wide window (at least [`MIN_STATIC_LENGTH`]) with few
//! results (at most [`MAX_STATIC_RESULTS`]): a norm over a batch's rows, a
//! bias gradient's sum over a batch, a softmax over a window of 512.

use super::Emitter;
use super::kernels::{broadcast_at, element_type};
use super::reduction_parts::{ReduceInput, combine_op, lowest};
use super::scalar::Chain;
use super::views::{UNKNOWN, View, key, static_size};
use crate::ir_builder::{Builder, Extent, element_of};
use melior::ir::Value;
use melior::ir::r#type::MemRefType;
use tempo_passes::program::Einsum;
use tempo_passes::program::{ElementType, PointType, ReduceKind};

/// Elements of the axis per chunk (one thread's serial part).
pub(super) const CHUNK: i64 = 128;

/// A static axis, or a window of a static width, at least this long is
/// split too when the results are at most [`MAX_STATIC_RESULTS`] (a norm's
/// mean of squares over a batch's rows of 768, a bias gradient summing 512
/// environments' rows, a batch's heads' softmax over a window of 512): a
/// thread per result would run a long chain with few threads in flight.
pub(super) const MIN_STATIC_LENGTH: i64 = 4 * CHUNK;

/// Results above which a static axis is not split: a thread per result
/// fills the GPU, and the partial results would only add traffic.
pub(super) const MAX_STATIC_RESULTS: i64 = 1 << 14;

/// Results above which the partial results (results x chunks, for the
/// longest range) would take too much memory: 2^18 results of a range of
/// 16384 take 128 MiB.
pub(super) const MAX_RESULTS: i64 = 1 << 18;

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Whether a reduction of an input of `sizes` along `axis` (not a
    /// cumulative sum or argmax) takes the two stages: the cap of the
    /// axis's length and the static sizes of the other dimensions.
    pub(super) fn gpu_split_applies(
        &self,
        sizes: &[Extent<'c, 'a>],
        axis: usize,
    ) -> Option<(Extent<'c, 'a>, Vec<i64>)> {
        let kept_sizes: Vec<i64> =
            (0..sizes.len()).filter(|&k| k != axis).map(|k| static_size(&sizes[k])).collect::<Option<_>>()?;
        let results = kept_sizes.iter().product::<i64>();
        let cap = self.split_cap(&sizes[axis], results)?;
        (results <= MAX_RESULTS).then_some((cap, kept_sizes))
    }

    /// For the GPU, the cap of a reduced axis of `length` summed into
    /// `results` results, where the axis is split in chunks: a range that
    /// grows with a dimension; or, with at most [`MAX_STATIC_RESULTS`]
    /// results, a static axis or a window of a static width of at least
    /// [`MIN_STATIC_LENGTH`].
    fn split_cap(&self, length: &Extent<'c, 'a>, results: i64) -> Option<Extent<'c, 'a>> {
        if !self.options.gpu {
            return None;
        }
        let few = results <= MAX_STATIC_RESULTS;
        match length {
            Extent::Static(n) => (few && *n >= MIN_STATIC_LENGTH).then_some(Extent::Static(*n)),
            Extent::Value(v) => {
                if let Some(cap) = self.growing_cap(length) {
                    return Some(Extent::Value(cap));
                }
                let width = *self.function.window_widths.get(&key(*v))?;
                let cap = *self.function.size_caps.get(&key(*v))?;
                (few && width >= MIN_STATIC_LENGTH).then_some(Extent::Value(cap))
            }
        }
    }

    /// For the GPU, the cap of a range's length that grows with a dimension.
    pub(super) fn growing_cap(&self, length: &Extent<'c, 'a>) -> Option<Value<'c, 'a>> {
        let Extent::Value(length) = length else { return None };
        if !self.options.gpu || !self.function.growing_lengths.contains(&key(*length)) {
            return None;
        }
        self.function.size_caps.get(&key(*length)).copied()
    }

    /// `target = kind(input along axis)` in two stages, where it applies
    /// (see [`build_two_stages`]); whether it did.
    pub(super) fn gpu_split_reduce(
        &mut self,
        kind: ReduceKind,
        input: &ReduceInput<'_, 'c, 'a>,
        axis: usize,
        target: &View<'c, 'a>,
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<bool> {
        let Some((cap, results)) = self.gpu_split_applies(input.shape, axis) else { return Ok(false) };
        let stages = Stages::Reduce { kind, chain: input.chain, axis };
        let partial = self.partial_results(cap, &results, ty.element, b)?;
        let n = b.extent(input.shape[axis])?;
        build_two_stages(b, &stages, input.leaves, input.shape, n, &results, ty.element, partial, target)?;
        Ok(true)
    }

    /// `target = einsum(inputs)` in two stages where its only summed label
    /// is a growing range's length; whether it did.
    pub(super) fn gpu_split_einsum(
        &mut self,
        spec: &Einsum,
        inputs: &[&View<'c, 'a>],
        target: &View<'c, 'a>,
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<bool> {
        let [summed] = spec.summed()[..] else { return Ok(false) };
        let found = spec
            .operands
            .iter()
            .zip(inputs)
            .find_map(|(labels, v)| labels.iter().position(|&c| c == summed).map(|p| v.sizes[p]));
        let Some(length) = found else { return Ok(false) };
        let Some(results) = target.sizes.iter().map(static_size).collect::<Option<Vec<i64>>>() else {
            return Ok(false);
        };
        let Some(cap) = self.split_cap(&length, results.iter().product()) else { return Ok(false) };
        if results.iter().product::<i64>() > MAX_RESULTS {
            return Ok(false);
        }
        let partial = self.partial_results(cap, &results, element, b)?;
        let leaves: Vec<View<'c, 'a>> = inputs.iter().map(|v| (*v).clone()).collect();
        let n = b.extent(length)?;
        build_two_stages(b, &Stages::Einsum { spec }, &leaves, &[], n, &results, element, partial, target)?;
        Ok(true)
    }

    /// The partial results of the two stages, allocated once at entry for
    /// the longest range (`cap`): `memref<chunks x results x element>`.
    fn partial_results(
        &mut self,
        cap: Extent<'c, 'a>,
        results: &[i64],
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let entry = self.function.entry.at(b.location);
        let cap = entry.extent(cap)?;
        let chunk = entry.index(CHUNK)?;
        let chunks = entry.arith("ceildivui", cap, chunk)?;
        let dims: Vec<i64> = [UNKNOWN].into_iter().chain(results.iter().copied()).collect();
        let ty = MemRefType::new(element_type(b, element), &dims, None, None).into();
        let partial = entry.alloc(ty, &[chunks])?;
        self.function.exit.op("memref.dealloc", &[partial], &[], &[])?;
        Ok(partial)
    }
}

/// What a two-stage reduction sums: a reduction of an input (or of a
/// chain over its leaves) along `axis`, or an einsum's products.
pub(super) enum Stages<'r> {
    Reduce { kind: ReduceKind, chain: Option<&'r Chain>, axis: usize },
    Einsum { spec: &'r Einsum },
}

type Built<T> = Result<T, String>;

/// The two stages into `target` over an axis of length `n`, the results
/// of the static sizes `results`: stage 1 a thread per result and chunk
/// of `CHUNK` elements folding its chunk in order into `partial`, stage 2
/// a thread per result folding its chunks in order.
#[allow(clippy::too_many_arguments)]
pub(super) fn build_two_stages<'c, 'a>(
    b: &Builder<'c, 'a>,
    stages: &Stages<'_>,
    leaves: &[View<'c, 'a>],
    shape: &[Extent<'c, 'a>],
    n: Value<'c, 'a>,
    results: &[i64],
    element: ElementType,
    partial: Value<'c, 'a>,
    target: &View<'c, 'a>,
) -> Built<()> {
    let e = element_type(b, element);
    let (kind, combine, start) = folding(b, stages, element)?;
    let (zero, one, chunk) = (b.index(0)?, b.index(1)?, b.index(CHUNK)?);
    let chunks = b.arith("ceildivui", n, chunk)?;
    let value_at = |body: &Builder<'c, 'a>, ivs: &[Value<'c, 'a>], j: Value<'c, 'a>| {
        element_at(body, stages, leaves, shape, element, ivs, j)
    };
    // Stage 1: a thread per chunk and result (the chunk outer), the chunk
    // in order.
    let mut sizes: Vec<Value> = vec![chunks];
    sizes.extend(results.iter().map(|&d| b.index(d)).collect::<Built<Vec<_>>>()?);
    let (inner, ivs) = b.scf_parallel(&sizes)?;
    let (c, result_ivs) = ivs.split_at(1);
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
    let at: Vec<Value> = [k].into_iter().chain(result.iter().copied()).collect();
    let part = body.load(partial, &at, e)?;
    body.yield_values("scf.yield", &[body.value(combine, &[acc[0], part], e, &[])?])?;
    inner.store(finished(&inner, kind, n, totals[0], e)?, target.value, &result)
}

/// The combined element of `stages` at the results' indices `ivs` and `j`
/// along the reduced axis: the input's (or its chain's over the leaves,
/// broadcast) element, or the product of an einsum's operands, left to
/// right.
fn element_at<'c, 'a>(
    body: &Builder<'c, 'a>,
    stages: &Stages<'_>,
    leaves: &[View<'c, 'a>],
    shape: &[Extent<'c, 'a>],
    element: ElementType,
    ivs: &[Value<'c, 'a>],
    j: Value<'c, 'a>,
) -> Built<Value<'c, 'a>> {
    let e = element_type(body, element);
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
}

/// `target = kind(input along the axis)` (or an einsum's sum over its one
/// summed label), of length `n`, on the GPU: a thread per result (the
/// results' extents `results`; none: the caller's one point) folding the
/// axis in order from the starting value in a register, as the
/// interpreter does. (The `linalg` form's loops keep the running value in
/// the target's memory, a load and a store per element.)
#[allow(clippy::too_many_arguments)]
pub(super) fn build_one_stage<'c, 'a>(
    b: &Builder<'c, 'a>,
    stages: &Stages<'_>,
    leaves: &[View<'c, 'a>],
    shape: &[Extent<'c, 'a>],
    n: Value<'c, 'a>,
    results: &[Value<'c, 'a>],
    element: ElementType,
    target: &View<'c, 'a>,
) -> Built<()> {
    let e = element_type(b, element);
    let (kind, combine, start) = folding(b, stages, element)?;
    let (zero, one) = (b.index(0)?, b.index(1)?);
    let parallel = if results.is_empty() { None } else { Some(b.scf_parallel(results)?) };
    let (inner, ivs) = match &parallel {
        Some((inner, ivs)) => (inner, ivs.clone()),
        None => (b, Vec::new()),
    };
    let (body, j, acc, totals) = inner.scf_for_carrying(zero, n, one, &[start])?;
    let value = element_at(&body, stages, leaves, shape, element, &ivs, j)?;
    body.yield_values("scf.yield", &[body.value(combine, &[acc[0], value], e, &[])?])?;
    inner.store(finished(inner, kind, n, totals[0], e)?, target.value, &ivs)
}

/// What a reduction of `stages` folds: its kind, the op combining two
/// values and the starting value (0, or the lowest value for maxima).
fn folding<'c, 'a>(
    b: &Builder<'c, 'a>,
    stages: &Stages<'_>,
    element: ElementType,
) -> Built<(ReduceKind, &'static str, Value<'c, 'a>)> {
    let kind = match stages {
        Stages::Reduce { kind, .. } => *kind,
        Stages::Einsum { .. } => ReduceKind::Sum,
    };
    let start = match kind {
        ReduceKind::Max => lowest(b, element)?,
        _ => super::movement::zero(b, element)?,
    };
    Ok((kind, combine_op(kind, element), start))
}

/// A reduction's result from its folded `total`: divided by the axis's
/// length `n` for a mean (0 / 0 is NaN).
fn finished<'c, 'a>(
    b: &Builder<'c, 'a>,
    kind: ReduceKind,
    n: Value<'c, 'a>,
    total: Value<'c, 'a>,
    e: melior::ir::Type<'c>,
) -> Built<Value<'c, 'a>> {
    match kind {
        ReduceKind::Mean => {
            let length = b.convert("arith.sitofp", b.index_cast(n, b.integer_type(64))?, e)?;
            b.arith("divf", total, length)
        }
        _ => Ok(total),
    }
}
