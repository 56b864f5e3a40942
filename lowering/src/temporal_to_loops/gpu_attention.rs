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

use super::gpu_reduction::CHUNK;
use super::*;
use tempo_passes::program::Attention;

/// The chunks of a split attention: their count (an SSA index), the blocks
/// in each, and the partial results with their types.
pub(super) struct AttentionChunks {
    pub(super) count: String,
    pub(super) blocks_per_chunk: String,
    pub(super) maxima: String,
    pub(super) sums: String,
    pub(super) accumulators: String,
    /// `memref<ROWSx?xE>` (maxima and sums), `memref<ROWSx?xEXTRA...xE>`.
    pub(super) row_ty: String,
    pub(super) acc_ty: String,
}

impl Emitter<'_, '_> {
    /// The chunks of a range of `blocks` blocks (at most `cap` positions)
    /// and the partial buffers of `rows` rows, allocated once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention_chunks(
        &mut self,
        cap: String,
        block: i64,
        rows: i64,
        extra_shape: &str,
        e: &str,
        blocks: &str,
        indent: &str,
        out: &mut String,
    ) -> AttentionChunks {
        let per_chunk = (CHUNK / block).max(1);
        let positions = per_chunk * block;
        let (most, size) = (self.fresh("chunks"), self.fresh("chunk"));
        let _ = writeln!(self.entry, "    {size} = arith.constant {positions} : index");
        let _ = writeln!(self.entry, "    {most} = arith.ceildivui {cap}, {size} : index");
        let row_ty = format!("memref<{rows}x?x{e}>");
        let acc_ty = format!("memref<{rows}x?x{extra_shape}{e}>");
        let (maxima, sums, accumulators) = (self.fresh("pmax"), self.fresh("psum"), self.fresh("pacc"));
        for (name, ty) in [(&maxima, &row_ty), (&sums, &row_ty), (&accumulators, &acc_ty)] {
            let _ = writeln!(self.entry, "    {name} = memref.alloc({most}) : {ty}");
            let _ = writeln!(self.exit, "    memref.dealloc {name} : {ty}");
        }
        let blocks_per_chunk = self.index_value(&per_chunk.to_string(), indent, out);
        let count = self.fresh("chunks");
        let _ = writeln!(out, "{indent}{count} = arith.ceildivui {blocks}, {blocks_per_chunk} : index");
        AttentionChunks { count, blocks_per_chunk, maxima, sums, accumulators, row_ty, acc_ty }
    }

    /// A thread per row combines its chunks' partial results into
    /// `target`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn combine_chunks(
        &mut self,
        spec: &Attention,
        chunks: &AttentionChunks,
        rows: &[char],
        row_sizes: &[String],
        extra: &[char],
        extra_sizes: &[String],
        static_size: &dyn Fn(char) -> i64,
        (lowest, zero, empty): (&str, &str, &str),
        target: &View,
        e: &str,
        indent: &str,
        out: &mut String,
    ) {
        let sizes = if row_sizes.is_empty() { vec!["1".to_string()] } else { row_sizes.to_vec() };
        let nest = self.open_parallel_loop(&sizes, indent, out);
        let inner = nest.inner.clone();
        let position = self.row_position(rows, &nest.ivs, static_size, &inner, out);
        let (count, pm, pl, pacc) = (&chunks.count, &chunks.maxima, &chunks.sums, &chunks.accumulators);
        let (row_ty, acc_ty) = (&chunks.row_ty, &chunks.acc_ty);
        let (zero_index, one) = (nest.zero.clone(), nest.one.clone());
        let bounds = (zero_index.as_str(), count.as_str(), one.as_str());
        // M, the row's maximum.
        let most = self.fold_loop(bounds, lowest, "arith.maximumf", e, &inner, out, |this, c, body, out| {
            let m = this.fresh("x");
            let _ = writeln!(out, "{body}{m} = memref.load {pm}[{position}, {c}] : {row_ty}");
            m
        });
        // L, the sum rescaled to M.
        let total = self.fold_loop(bounds, zero, "arith.addf", e, &inner, out, |this, c, body, out| {
            let scale = this.rescale(pm, row_ty, &position, c, &most, e, body, out);
            let (l, scaled) = (this.fresh("x"), this.fresh("x"));
            let _ = writeln!(out, "{body}{l} = memref.load {pl}[{position}, {c}] : {row_ty}");
            let _ = writeln!(out, "{body}{scaled} = arith.mulf {l}, {scale} : {e}");
            scaled
        });
        // Each result element: the accumulators rescaled to M, over L.
        let order: Vec<usize> = (0..extra.len()).collect();
        let store = self.open_loops(extra_sizes, &order, &inner, out);
        let body = store.inner.clone();
        let weighted = self.fold_loop(bounds, zero, "arith.addf", e, &body, out, |this, c, body, out| {
            let scale = this.rescale(pm, row_ty, &position, c, &most, e, body, out);
            let at: Vec<&str> =
                [position.as_str(), c].into_iter().chain(store.ivs.iter().map(String::as_str)).collect();
            let (a, scaled) = (this.fresh("x"), this.fresh("x"));
            let _ = writeln!(out, "{body}{a} = memref.load {pacc}[{}] : {acc_ty}", at.join(", "));
            let _ = writeln!(out, "{body}{scaled} = arith.mulf {a}, {scale} : {e}");
            scaled
        });
        let (quotient, result) = (self.fresh("o"), self.fresh("o"));
        let _ = writeln!(out, "{body}{quotient} = arith.divf {weighted}, {total} : {e}");
        // An empty range sums no weighted values: 0, not 0 / 0.
        let _ = writeln!(out, "{body}{result} = arith.select {empty}, {zero}, {quotient} : {e}");
        let mut all: Vec<(char, String)> = rows.iter().copied().zip(nest.ivs.iter().cloned()).collect();
        all.extend(extra.iter().copied().zip(store.ivs.iter().cloned()));
        let index: Vec<String> = spec
            .combine
            .result
            .iter()
            .map(|c| all.iter().find(|(x, _)| x == c).map(|(_, iv)| iv.clone()).expect("a row or extra label"))
            .collect();
        let _ = writeln!(out, "{body}memref.store {result}, {}[{}] : {}", target.name, index.join(", "), target.ty);
        store.close(out);
        nest.close(out);
    }

    /// `exp(m_c - M)` for chunk `c` of the row at `position`.
    #[allow(clippy::too_many_arguments)]
    fn rescale(
        &mut self,
        maxima: &str,
        ty: &str,
        position: &str,
        c: &str,
        most: &str,
        e: &str,
        indent: &str,
        out: &mut String,
    ) -> String {
        let (m, gap, scale) = (self.fresh("x"), self.fresh("gap"), self.fresh("alpha"));
        let _ = writeln!(out, "{indent}{m} = memref.load {maxima}[{position}, {c}] : {ty}");
        let _ = writeln!(out, "{indent}{gap} = arith.subf {m}, {most} : {e}");
        let _ = writeln!(out, "{indent}{scale} = math.exp {gap} : {e}");
        scale
    }
}
