//! Tiled attention over growing ranges on the GPU, split into chunks (as
//! flash-decoding does): `temporal.attention` runs a thread per row over
//! the whole range (`attention`), which leaves the GPU idle when the rows
//! are few (the heads of one query) and the range long (a cache's prefix).
//! Where the attended length grows with a dimension, the range is split
//! into chunks of [`CHUNK`] positions (whole blocks): a thread per row and
//! chunk runs the blocks of its chunk with its own running maximum `m_c`,
//! sum `l_c` and accumulator `acc_c`, stored as partial results; then a
//! thread per row combines them, rescaled to the row's maximum `M`:
//!
//! ```text
//! M = max_c m_c;  L = sum_c l_c * exp(m_c - M);  result = (sum_c acc_c * exp(m_c - M)) / L
//! ```
//!
//! (an empty range gives 0, as the definition does). Equal to the softmax of
//! the definition in real arithmetic, as the unsplit form is; the rounding
//! differs.

use super::Emitter;
use super::gpu_reduction::CHUNK;
use super::kernels::{index_of, loop_nest, row_position};
use super::views::{UNKNOWN, View};
use crate::ir_builder::{Builder, Extent};
use melior::ir::r#type::MemRefType;
use melior::ir::{Type, Value};
use tempo_passes::program::Attention;

type Built<T> = Result<T, String>;

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// The partial buffers of `rows` rows over a range of at most `cap`
    /// positions (maxima, sums, accumulators of `extra` dims), allocated
    /// once at entry, and the blocks per chunk.
    pub(super) fn attention_chunks(
        &mut self,
        cap: Value<'c, 'a>,
        block: i64,
        rows: i64,
        extra: &[i64],
        e: Type<'c>,
        b: &Builder<'c, 'a>,
    ) -> Built<([Value<'c, 'a>; 3], i64)> {
        let per_chunk = (CHUNK / block).max(1);
        let entry = self.function.entry.at(b.location);
        let size = entry.index(per_chunk * block)?;
        let most = entry.arith("ceildivui", cap, size)?;
        let row: Vec<i64> = vec![rows, UNKNOWN];
        let acc: Vec<i64> = row.iter().chain(extra).copied().collect();
        let mut partials = Vec::new();
        for dims in [&row, &row, &acc] {
            let partial = entry.alloc(MemRefType::new(e, dims, None, None).into(), &[most])?;
            self.function.exit.op("memref.dealloc", &[partial], &[], &[])?;
            partials.push(partial);
        }
        Ok(([partials[0], partials[1], partials[2]], per_chunk))
    }
}

/// The chunks' partial results and what the combination starts from.
pub(super) struct Combination<'c, 'a> {
    /// The maxima, sums and accumulators of each row and chunk.
    pub partials: [Value<'c, 'a>; 3],
    /// The number of chunks.
    pub count: Value<'c, 'a>,
    pub lowest: Value<'c, 'a>,
    pub zero: Value<'c, 'a>,
    /// Whether the range is empty.
    pub empty: Value<'c, 'a>,
}

/// A thread per row combines its chunks' partial results into `target`.
#[allow(clippy::too_many_arguments)]
pub(super) fn combine_chunks<'c, 'a>(
    b: &Builder<'c, 'a>,
    spec: &Attention,
    combination: &Combination<'c, 'a>,
    rows: &[char],
    row_dims: &[i64],
    extra: &[char],
    extra_dims: &[i64],
    target: &View<'c, 'a>,
    e: Type<'c>,
) -> Built<()> {
    let Combination { partials: [maxima, sums, accumulators], count, lowest, zero, empty } = *combination;
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let sizes: Vec<Value> = match row_dims.is_empty() {
        true => vec![c1],
        false => row_dims.iter().map(|&d| b.index(d)).collect::<Built<_>>()?,
    };
    let (inner, nest) = b.scf_parallel(&sizes)?;
    let position = row_position(&inner, &nest, row_dims)?;
    // `fold = start; for c in chunks: fold = combine(fold, value(c))`.
    let fold = |at: &Builder<'c, 'a>,
                start: Value<'c, 'a>,
                combine: &str,
                value: &dyn Fn(&Builder<'c, 'a>, Value<'c, 'a>) -> Built<Value<'c, 'a>>|
     -> Built<Value<'c, 'a>> {
        let (body, c, acc, result) = at.scf_for_carrying(c0, count, c1, &[start])?;
        let element = value(&body, c)?;
        body.yield_values("scf.yield", &[body.arith(combine, acc[0], element)?])?;
        Ok(result[0])
    };
    // M, the row's maximum.
    let most = fold(&inner, lowest, "maximumf", &|body, c| body.load(maxima, &[position, c], e))?;
    // exp(m_c - M) for chunk c.
    let rescale = |body: &Builder<'c, 'a>, c: Value<'c, 'a>| -> Built<Value<'c, 'a>> {
        let m = body.load(maxima, &[position, c], e)?;
        body.unary("math.exp", body.arith("subf", m, most)?)
    };
    // L, the sum rescaled to M.
    let total = fold(&inner, zero, "addf", &|body, c| {
        let scale = rescale(body, c)?;
        body.arith("mulf", body.load(sums, &[position, c], e)?, scale)
    })?;
    // Each result element: the accumulators rescaled to M, over L.
    let extra_sizes: Vec<Extent> = extra_dims.iter().map(|&d| Extent::Static(d)).collect();
    let (storing, at) = loop_nest(&inner, &extra_sizes, &(0..extra.len()).collect::<Vec<_>>())?;
    let weighted = fold(&storing, zero, "addf", &|body, c| {
        let scale = rescale(body, c)?;
        let index: Vec<Value> = [position, c].into_iter().chain(at.iter().copied()).collect();
        body.arith("mulf", body.load(accumulators, &index, e)?, scale)
    })?;
    let quotient = storing.arith("divf", weighted, total)?;
    // An empty range sums no weighted values: 0, not 0 / 0.
    let result = storing.select(empty, zero, quotient)?;
    let mut all: Vec<(char, Value)> = rows.iter().copied().zip(nest.iter().copied()).collect();
    all.extend(extra.iter().copied().zip(at.iter().copied()));
    storing.store(result, target.value, &index_of(&spec.combine.result, &all)?)
}
