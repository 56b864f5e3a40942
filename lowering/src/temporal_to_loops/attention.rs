//! Softmax attention in `lower-temporal-to-loops` (`temporal.attention`,
//! made by `temporal-tile-ranges`): the attended label `n` is taken
//! `block` positions at a time, so the only buffers are static (one block
//! of scores, one accumulator row) however long `n` grows.
//!
//! For every row of the scores (their labels other than `n`), with a
//! running maximum `m` and a running sum `l` of exponentials:
//!
//! ```text
//! m = -inf; l = 0; acc = 0
//! for each block [start, start + len), len = min(block, N - start):
//!   s[j] = scale * sum_d q * k[start + j]       (the block's scores)
//!   m' = max(m, max_j s[j]); alpha = exp(m - m')
//!   l = l * alpha; acc = acc * alpha            (rescaled to the new maximum)
//!   for j: p = exp(s[j] - m'); l += p; acc += p * v[start + j]
//!   m = m'
//! result = acc / l
//! ```
//!
//! The last block is masked by its length, so no position past `N` is
//! read; an empty range gives 0 (the sum of no weighted values), as the
//! definition does. This equals the softmax of the definition in real arithmetic; the
//! rounding differs (the rescaling), which is why the pass making the op
//! runs only where inexact rewrites are allowed.
//!
//! For the GPU (`gpu=true`), the rows are one `scf.parallel` loop (a
//! thread per row once `lower-loops-to-gpu` maps it, a loop of one for a
//! single row) with the buffers `memref.alloca`s of its body, and the dot
//! products and accumulations scalar loops; over a range that grows with a
//! dimension, the loop also runs over chunks of the range, combined per
//! row afterwards (`gpu_attention`). With `parallel` (CPU threads),
//! several rows are one `scf.parallel` loop the same way (OpenMP spreads
//! them over the threads), keeping the vector code.
//!
//! Assumes the shapes the verifier checked (`Attention::new`,
//! `label_sizes`) and every label but `n` of static size (the pass
//! guarantees it).

use super::kernels::{element_type, index_of, loop_nest, row_position};
use super::views::{View, static_size, unit_inner_stride};
use super::{Emitter, gpu_attention};
use crate::ir_builder::{Builder, Compare, Extent};
use melior::ir::attribute::{DenseI32ArrayAttribute, StridedLayoutAttribute};
use melior::ir::r#type::MemRefType;
use melior::ir::{Attribute, Type, Value};
use tempo_passes::program::Attention;
use tempo_passes::program::ElementType;

type Built<T> = Result<T, String>;

/// How an attention kernel is built, decided at the emitter.
pub(super) struct AttentionPlan {
    pub spec: Attention,
    pub element: ElementType,
    pub gpu: bool,
    /// Rows spread over CPU threads (`parallel`).
    pub cpu_parallel: bool,
    /// The blocks per chunk (GPU, a growing range: `gpu_attention`).
    pub per_chunk: Option<i64>,
    /// The vector width of the dot product over the one summed label,
    /// where it is last in both operands with unit stride (CPU).
    pub dot_width: Option<i64>,
    /// The vector width of the accumulation over the one extra label,
    /// where it is last in the values with unit stride (CPU).
    pub acc_width: Option<i64>,
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `target = attention(q, k, v, scale)` (see [`build_attention`]): the
    /// buffers allocated at entry here, the rest built by the kernel.
    pub(super) fn attention(
        &mut self,
        spec: &Attention,
        [q, k, v, scale]: [&View<'c, 'a>; 4],
        target: &View<'c, 'a>,
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let e = element_type(b, element);
        let n = spec.label();
        let rows: Vec<char> = spec.score.result.iter().copied().filter(|&c| c != n).collect();
        let summed = spec.score.summed();
        let extra: Vec<char> = spec.combine.result.iter().copied().filter(|c| !spec.score.result.contains(c)).collect();
        let size_of = |c: char| label_size(spec, [&q.sizes, &k.sizes, &v.sizes], c);
        let static_size = |c: char| match size_of(c) {
            Extent::Static(n) => Ok(n),
            Extent::Value(_) => Err(format!("compiler fault: attention label '{c}' is not static")),
        };
        let block = spec.block;
        let extra_dims: Vec<i64> = extra.iter().map(|&c| static_size(c)).collect::<Built<_>>()?;
        let row_count: i64 = rows.iter().map(|&c| static_size(c)).collect::<Built<Vec<_>>>()?.iter().product();
        // Rows over CPU threads where a block's work across the rows pays
        // for a parallel region (a fork and join per block of every step).
        let summed_size: i64 = summed.iter().map(|&c| static_size(c).unwrap_or(1)).product();
        let block_work = row_count * block * (summed_size + extra_dims.iter().product::<i64>());
        let cpu_parallel = !self.options.gpu && self.options.parallel && row_count > 1 && block_work >= PARALLEL_WORK;
        let dot_width = match summed[..] {
            [d] if !self.options.gpu => vector_width(&size_of(d)).filter(|_| {
                contiguous_last(q, &spec.score.operands[0], d) && contiguous_last(k, &spec.score.operands[1], d)
            }),
            _ => None,
        };
        let acc_width = match extra[..] {
            [c] if !self.options.gpu => {
                vector_width(&size_of(c)).filter(|_| contiguous_last(v, &spec.combine.operands[1], c))
            }
            _ => None,
        };
        // Buffers: one pair serves every row, except where rows run in
        // parallel: on the GPU each thread has its own (allocas, made by
        // the kernel), on CPU threads (`parallel`) each row has its slice of
        // buffers with a leading row dimension (an alloca in an OpenMP loop
        // body would need an alloca scope around multi-block code).
        let buffers = if self.options.gpu {
            None
        } else {
            let lead: Vec<i64> = if cpu_parallel { vec![row_count] } else { Vec::new() };
            let scores: Vec<i64> = lead.iter().copied().chain([block]).collect();
            let acc: Vec<i64> = lead.iter().copied().chain(extra_dims.iter().copied()).collect();
            let entry = self.function.entry.at(b.location);
            let mut made = Vec::new();
            for dims in [scores, acc] {
                let buffer = entry.alloc(MemRefType::new(e, &dims, None, None).into(), &[])?;
                self.function.exit.op("memref.dealloc", &[buffer], &[], &[])?;
                made.push(buffer);
            }
            Some([made[0], made[1]])
        };
        let (chunks, per_chunk) = match self.growing_cap(&size_of(n)) {
            Some(cap) if self.options.gpu => {
                let (chunks, per_chunk) = self.attention_chunks(cap, block, row_count, &extra_dims, e, b)?;
                (Some(chunks), Some(per_chunk))
            }
            _ => (None, None),
        };
        let plan = AttentionPlan {
            spec: spec.clone(),
            element,
            gpu: self.options.gpu,
            cpu_parallel,
            per_chunk,
            dot_width,
            acc_width,
        };
        build_attention(b, &plan, [q, k, v, scale, target], buffers, chunks)
    }
}

/// The labels of an attention: its rows (the scores' labels but the
/// attended one), its summed labels, its extra labels (the values' in the
/// result), with their sizes.
struct Labels<'r, 'c, 'a> {
    spec: &'r Attention,
    views: [&'r View<'c, 'a>; 3],
    rows: Vec<char>,
    summed: Vec<char>,
    extra: Vec<char>,
}

impl<'c, 'a> Labels<'_, 'c, 'a> {
    fn size(&self, c: char) -> Extent<'c, 'a> {
        let [q, k, v] = self.views;
        label_size(self.spec, [&q.sizes, &k.sizes, &v.sizes], c)
    }

    fn static_size(&self, c: char) -> Built<i64> {
        match self.size(c) {
            Extent::Static(n) => Ok(n),
            Extent::Value(_) => Err(format!("compiler fault: attention label '{c}' is not static")),
        }
    }
}

/// Softmax attention into `target`, as the module's notes say: a loop
/// over the rows, in it the blocks of the attended range carrying the
/// running maximum and sum, the block's scores into the scores buffer,
/// the accumulator rescaled and accumulated, the result the accumulator
/// over the sum (0 for an empty range).
pub(super) fn build_attention<'c, 'a>(
    b: &Builder<'c, 'a>,
    plan: &AttentionPlan,
    [q, k, v, scale, target]: [&View<'c, 'a>; 5],
    buffers: Option<[Value<'c, 'a>; 2]>,
    chunks: Option<[Value<'c, 'a>; 3]>,
) -> Built<()> {
    let spec = &plan.spec;
    let e = element_type(b, plan.element);
    let n = spec.label();
    let labels = Labels {
        spec,
        views: [q, k, v],
        rows: spec.score.result.iter().copied().filter(|&c| c != n).collect(),
        summed: spec.score.summed(),
        extra: spec.combine.result.iter().copied().filter(|c| !spec.score.result.contains(c)).collect(),
    };
    let (rows, extra) = (&labels.rows, &labels.extra);
    let block = spec.block;
    let extra_dims: Vec<i64> = extra.iter().map(|&c| labels.static_size(c)).collect::<Built<_>>()?;
    let row_dims: Vec<i64> = rows.iter().map(|&c| labels.static_size(c)).collect::<Built<_>>()?;
    let lowest = super::reduction_parts::lowest(b, plan.element)?;
    let zero = super::movement::zero(b, plan.element)?;
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let block_size = b.index(block)?;
    let length = b.extent(labels.size(n))?;
    let read_scale = |at: &Builder<'c, 'a>| at.load(scale.value, &vec![c0; scale.sizes.len()], e);
    // (Read by each row on the GPU: in the kernel, not by host code.)
    let outer_factor = if plan.gpu { None } else { Some(read_scale(b)?) };
    let empty = b.compare(Compare::Eq, length, c0)?;
    let blocks = b.arith("ceildivui", length, block_size)?;
    let chunking = match (chunks, plan.per_chunk) {
        (Some(partials), Some(per_chunk)) => {
            let per_chunk = b.index(per_chunk)?;
            Some((partials, per_chunk, b.arith("ceildivui", blocks, per_chunk)?))
        }
        _ => None,
    };
    // Loops over the rows: in parallel, one parallel loop (on the GPU a
    // thread per row once mapped, a single row a loop of one; on the CPU
    // the rows spread over the threads) whose body holds its own buffers.
    let row_sizes: Vec<Extent> = row_dims.iter().map(|&d| Extent::Static(d)).collect();
    let (inner, nest) = if plan.gpu || plan.cpu_parallel {
        let mut sizes: Vec<Value> = match row_sizes.is_empty() {
            true => vec![c1],
            false => row_sizes.iter().map(|&s| b.extent(s)).collect::<Built<_>>()?,
        };
        if let Some((_, _, count)) = chunking {
            sizes.push(count);
        }
        b.scf_parallel(&sizes)?
    } else {
        loop_nest(b, &row_sizes, &(0..rows.len()).collect::<Vec<_>>())?
    };
    let ivs: Vec<(char, Value)> = rows.iter().copied().zip(nest.iter().copied()).collect();
    let (factor, scores, acc) = if plan.gpu {
        let alloca = |ty: Type<'c>| {
            let segments = DenseI32ArrayAttribute::new(inner.context(), &[0, 0]).into();
            inner.value("memref.alloca", &[], ty, &[("operandSegmentSizes", segments)])
        };
        let factor = read_scale(&inner)?;
        let scores = alloca(MemRefType::new(e, &[block], None, None).into())?;
        (factor, scores, alloca(MemRefType::new(e, &extra_dims, None, None).into())?)
    } else {
        let [scores, acc] = buffers.ok_or("compiler fault: attention without its buffers")?;
        let factor = outer_factor.ok_or("compiler fault: attention without its scale")?;
        if plan.cpu_parallel {
            // This row's slices: at the row's row-major position.
            let position = row_position(&inner, &nest, &row_dims)?;
            let strided = |dims: &[i64], strides: &[i64]| -> Type<'c> {
                let layout = StridedLayoutAttribute::new(inner.context(), i64::MIN, strides).into();
                MemRefType::new(e, dims, Some(layout), None).into()
            };
            let scores_slice = inner.subview(
                scores,
                &[Extent::Value(position), Extent::Static(0)],
                &[Extent::Static(1), Extent::Static(block)],
                strided(&[block], &[1]),
            )?;
            let offsets: Vec<Extent> =
                std::iter::once(Extent::Value(position)).chain(extra_dims.iter().map(|_| Extent::Static(0))).collect();
            let sizes: Vec<Extent> =
                std::iter::once(Extent::Static(1)).chain(extra_dims.iter().map(|&d| Extent::Static(d))).collect();
            let strides = tempo_passes::program::row_major_strides(&extra_dims);
            let acc_slice = inner.subview(acc, &offsets, &sizes, strided(&extra_dims, &strides))?;
            (factor, scores_slice, acc_slice)
        } else {
            (factor, scores, acc)
        }
    };
    // acc = 0.
    let extra_sizes: Vec<Extent> = extra_dims.iter().map(|&d| Extent::Static(d)).collect();
    let extra_order: Vec<usize> = (0..extra.len()).collect();
    let (fill, at) = loop_nest(&inner, &extra_sizes, &extra_order)?;
    fill.store(zero, acc, &at)?;
    // The loop over blocks, carrying the maximum and the sum (a chunk's
    // blocks only, where the range is chunked).
    let (first_block, end_block) = match chunking {
        None => (c0, blocks),
        Some((_, per_chunk, _)) => {
            let chunk = *nest.last().ok_or("compiler fault: a chunked attention without its chunk loop")?;
            let lo = inner.arith("muli", chunk, per_chunk)?;
            (lo, inner.arith("minui", inner.arith("addi", lo, per_chunk)?, blocks)?)
        }
    };
    let (body, bi, carried, done) = inner.scf_for_carrying(first_block, end_block, c1, &[lowest, zero])?;
    let block = Block {
        plan,
        labels: &labels,
        scores,
        acc,
        factor,
        length,
        block_size,
        constants: (c0, c1, lowest, zero),
        extra_sizes: &extra_sizes,
        e,
    };
    block.build(&body, bi, (carried[0], carried[1]), &ivs)?;

    if let Some((partials, _, count)) = chunking {
        // The chunk's maximum, sum and accumulator, for the combination.
        let chunk = *nest.last().ok_or("compiler fault: a chunked attention without its chunk loop")?;
        let position = row_position(&inner, &nest, &row_dims)?;
        let [maxima, sums, accumulators] = partials;
        inner.store(done[0], maxima, &[position, chunk])?;
        inner.store(done[1], sums, &[position, chunk])?;
        let (copy, at) = loop_nest(&inner, &extra_sizes, &extra_order)?;
        let a = copy.load(acc, &at, e)?;
        let to: Vec<Value> = [position, chunk].into_iter().chain(at.iter().copied()).collect();
        copy.store(a, accumulators, &to)?;
        let combination = gpu_attention::Combination { partials, count, lowest, zero, empty };
        return gpu_attention::combine_chunks(b, spec, &combination, rows, &row_dims, extra, &extra_dims, target, e);
    }

    // result = acc / l, in the result's label order.
    let (storing, at) = loop_nest(&inner, &extra_sizes, &extra_order)?;
    let mut all = ivs.clone();
    all.extend(extra.iter().copied().zip(at.iter().copied()));
    let a = storing.load(acc, &at, e)?;
    let quotient = storing.arith("divf", a, done[1])?;
    // An empty range sums no weighted values: 0, not 0 / 0.
    let result = storing.select(empty, zero, quotient)?;
    storing.store(result, target.value, &index_of(&spec.combine.result, &all)?)
}

/// One block of the attended range, inside the loop over blocks: what it
/// reads and the values the row's code made.
struct Block<'r, 'c, 'a> {
    plan: &'r AttentionPlan,
    labels: &'r Labels<'r, 'c, 'a>,
    scores: Value<'c, 'a>,
    acc: Value<'c, 'a>,
    factor: Value<'c, 'a>,
    length: Value<'c, 'a>,
    block_size: Value<'c, 'a>,
    /// 0 and 1 (indices), the lowest value and zero (elements).
    constants: (Value<'c, 'a>, Value<'c, 'a>, Value<'c, 'a>, Value<'c, 'a>),
    extra_sizes: &'r [Extent<'c, 'a>],
    e: Type<'c>,
}

impl<'c, 'a> Block<'_, 'c, 'a> {
    /// Block `bi` in `body`, with the running maximum and sum `(m, l)` at
    /// the row's indices `ivs`: the block's scores and their maximum, the
    /// accumulator rescaled to the new maximum, the block's weighted values
    /// accumulated; `body` yields the new maximum and sum.
    fn build(
        &self,
        body: &Builder<'c, 'a>,
        bi: Value<'c, 'a>,
        (m, l): (Value<'c, 'a>, Value<'c, 'a>),
        ivs: &[(char, Value<'c, 'a>)],
    ) -> Built<()> {
        let Block { plan, labels, scores, acc, factor, length, block_size, extra_sizes, e, .. } = *self;
        let (c0, c1, lowest, zero) = self.constants;
        let spec = &plan.spec;
        let [q, k, v] = labels.views;
        let extra = &labels.extra;
        let extra_order: Vec<usize> = (0..extra.len()).collect();
        let mut ivs = ivs.to_vec();
        let start = body.arith("muli", bi, block_size)?;
        let len = body.arith("minui", body.arith("subi", length, start)?, block_size)?;
        // The block's scores and their maximum.
        let (scoring, j, running, block_max) = body.scf_for_carrying(c0, len, c1, &[lowest])?;
        ivs.push((self.plan.spec.label(), scoring.arith("addi", start, j)?));
        let operands = ([q, k], [spec.score.operands[0].as_slice(), spec.score.operands[1].as_slice()]);
        let dot = dot_product(&scoring, plan.dot_width, labels, operands, &ivs, (c0, c1, zero), e)?;
        let scaled = scoring.arith("mulf", dot, factor)?;
        scoring.store(scaled, scores, &[j])?;
        scoring.yield_values("scf.yield", &[scoring.arith("maximumf", running[0], scaled)?])?;
        // Rescale to the new maximum.
        let new_max = body.arith("maximumf", m, block_max[0])?;
        let alpha = body.unary("math.exp", body.arith("subf", m, new_max)?)?;
        let rescaled = body.arith("mulf", l, alpha)?;
        let (scaling, at) = loop_nest(&body, extra_sizes, &extra_order)?;
        let old = scaling.load(acc, &at, e)?;
        scaling.store(scaling.arith("mulf", old, alpha)?, acc, &at)?;
        // Accumulate the block's weighted values.
        let (weighing, j2, sum, block_sum) = body.scf_for_carrying(c0, len, c1, &[rescaled])?;
        let last = ivs.len() - 1;
        ivs[last].1 = weighing.arith("addi", start, j2)?;
        let score = weighing.load(scores, &[j2], e)?;
        let weight = weighing.unary("math.exp", weighing.arith("subf", score, new_max)?)?;
        let value_labels = spec.combine.operands[1].as_slice();
        match plan.acc_width {
            Some(width) => {
                // acc += p * v[position, ...] as one vector multiply-add.
                let vector = Type::vector(&[width as u64], e);
                let mut all = ivs.clone();
                all.push((extra[0], c0));
                let value = weighing.vector_load(v.value, &index_of(value_labels, &all)?, vector)?;
                let old = weighing.vector_load(acc, &[c0], vector)?;
                let splat = weighing.value("vector.broadcast", &[weight], vector, &[])?;
                let new = weighing.value("vector.fma", &[splat, value, old], vector, &[])?;
                weighing.op("vector.store", &[new, acc, c0], &[], &[])?;
            }
            None => {
                let (accumulating, at) = loop_nest(&weighing, extra_sizes, &extra_order)?;
                let mut all = ivs.clone();
                all.extend(extra.iter().copied().zip(at.iter().copied()));
                let value = accumulating.load(v.value, &index_of(value_labels, &all)?, e)?;
                let old = accumulating.load(acc, &at, e)?;
                let new = accumulating.arith("addf", old, accumulating.arith("mulf", weight, value)?)?;
                accumulating.store(new, acc, &at)?;
            }
        }
        weighing.yield_values("scf.yield", &[weighing.arith("addf", sum[0], weight)?])?;
        body.yield_values("scf.yield", &[new_max, block_sum[0]])
    }
}

/// `sum over summed labels of a * b`: with one summed label, last in both
/// operands with unit stride and a static size of at most [`MAX_VECTOR`]
/// (`width`), one vector product and reduction; otherwise in row-major
/// order of the summed labels, as nested `scf.for` loops carrying the sum.
fn dot_product<'c, 'a>(
    b: &Builder<'c, 'a>,
    width: Option<i64>,
    labels: &Labels<'_, 'c, 'a>,
    ([x, y], [lx, ly]): ([&View<'c, 'a>; 2], [&[char]; 2]),
    ivs: &[(char, Value<'c, 'a>)],
    (c0, c1, zero): (Value<'c, 'a>, Value<'c, 'a>, Value<'c, 'a>),
    e: Type<'c>,
) -> Built<Value<'c, 'a>> {
    let mut ivs = ivs.to_vec();
    if let (Some(width), [d]) = (width, labels.summed.as_slice()) {
        let vector = Type::vector(&[width as u64], e);
        ivs.push((*d, c0));
        let a = b.vector_load(x.value, &index_of(lx, &ivs)?, vector)?;
        let c = b.vector_load(y.value, &index_of(ly, &ivs)?, vector)?;
        let product = b.arith("mulf", a, c)?;
        let add = Attribute::parse(b.context(), "#vector.kind<add>").ok_or("compiler fault: the reduction kind")?;
        return b.value("vector.reduction", &[product], e, &[("kind", add)]);
    }
    let mut levels: Vec<(Builder<'c, 'a>, Value<'c, 'a>)> = Vec::new();
    let mut current = *b;
    let mut carried = zero;
    for &c in &labels.summed {
        let size = current.extent(labels.size(c))?;
        let (inner, iv, acc, result) = current.scf_for_carrying(c0, size, c1, &[carried])?;
        ivs.push((c, iv));
        carried = acc[0];
        levels.push((inner, result[0]));
        current = inner;
    }
    let a = current.load(x.value, &index_of(lx, &ivs)?, e)?;
    let c = current.load(y.value, &index_of(ly, &ivs)?, e)?;
    let mut value = current.arith("addf", carried, current.arith("mulf", a, c)?)?;
    for (level, result) in levels.iter().rev() {
        level.yield_values("scf.yield", &[value])?;
        value = *result;
    }
    Ok(value)
}

/// The longest vector the attention lowering uses for one label.
const MAX_VECTOR: i64 = 256;

/// Multiply-adds of one block across all rows below which the rows run on
/// one thread: a parallel region's fork and join (a few microseconds) would
/// cost more than it saves (a small model's decode was slower with its
/// rows spread; GPT-2 small, 12 heads of 64, has 98,304 per block).
const PARALLEL_WORK: i64 = 32 * 1024;

/// The static size `size` as a vector width, if at most [`MAX_VECTOR`].
fn vector_width(size: &Extent) -> Option<i64> {
    static_size(size).filter(|&n| (1..=MAX_VECTOR).contains(&n))
}

/// Whether `label` is the last of `labels` and `view` has unit stride there.
fn contiguous_last(view: &View, labels: &[char], label: char) -> bool {
    labels.last() == Some(&label) && unit_inner_stride(view.ty())
}

/// The size of label `c` of `spec`, from the first of the query's, key's
/// and value's sizes (in that order) that has it (every label is in an
/// operand: the verifier checked it).
pub(super) fn label_size<'c, 'a>(spec: &Attention, [q, k, v]: [&[Extent<'c, 'a>]; 3], c: char) -> Extent<'c, 'a> {
    [(&spec.score.operands[0], q), (&spec.score.operands[1], k), (&spec.combine.operands[1], v)]
        .iter()
        .find_map(|(labels, sizes)| labels.iter().position(|&x| x == c).map(|p| sizes[p]))
        .unwrap_or(Extent::Static(0))
}
