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

use super::*;
use tempo_passes::program::Attention;

impl Emitter<'_, '_> {
    /// `target = attention(q, k, v, scale)`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn attention(
        &mut self,
        spec: &Attention,
        [q, k, v, scale]: [&View; 4],
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
        let e = element.mlir();
        let n = spec.label();
        let scores = &spec.score.result;
        let rows: Vec<char> = scores.iter().copied().filter(|&c| c != n).collect();
        let summed = spec.score.summed();
        let extra: Vec<char> = spec.combine.result.iter().copied().filter(|c| !scores.contains(c)).collect();
        let size_of = |c: char| label_size(spec, [q, k, v], c);
        let static_size = |c: char| size_of(c).parse::<i64>().expect("labels other than the attended one are static");

        // Buffers allocated once: a block of scores and an accumulator row.
        let block = spec.block;
        let mut scores_buffer = self.fresh("scores");
        let mut scores_ty = format!("memref<{block}x{e}>");
        let extra_dims: Vec<i64> = extra.iter().map(|&c| static_size(c)).collect();
        let extra_shape: String = extra_dims.iter().map(|d| format!("{d}x")).collect();
        let mut acc = self.fresh("acc");
        let mut acc_ty = format!("memref<{extra_shape}{e}>");
        // Buffers: one pair serves every row, except where rows run in
        // parallel: on the GPU each thread has its own (allocas), on CPU
        // threads (`parallel`) each row has its slice of buffers with a
        // leading row dimension (an alloca in an OpenMP loop body would need
        // an alloca scope around multi-block code).
        let row_count: i64 = rows.iter().map(|&c| static_size(c)).product();
        let cpu_parallel = !self.gpu && self.parallel && !rows.is_empty();
        let parallel_rows = self.gpu || cpu_parallel;
        if !self.gpu {
            let lead = if cpu_parallel { format!("{row_count}x") } else { String::new() };
            for (name, ty) in [
                (&scores_buffer, &format!("memref<{lead}{block}x{e}>")),
                (&acc, &format!("memref<{lead}{extra_shape}{e}>")),
            ] {
                let _ = writeln!(self.entry, "    {name} = memref.alloc() : {ty}");
                let _ = writeln!(self.exit, "    memref.dealloc {name} : {ty}");
            }
        }

        let c = |this: &mut Self, value: &str, ty: &str, out: &mut String| {
            let name = this.fresh("c");
            let _ = writeln!(out, "{indent}{name} = arith.constant {value} : {ty}");
            name
        };
        let lowest = c(self, &lowest_literal(element), e, out);
        let zero = c(self, zero_literal(element), e, out);
        let block_size = c(self, &block.to_string(), "index", out);
        let length = self.index_value(&size_of(n), indent, out);
        let scale_index = vec!["%zero_index".to_string(); scale.sizes.len()];
        let factor = self.fresh("scale");
        // (Read by each row: on the GPU, in the kernel, not by host code.)
        let read_scale = format!("{factor} = memref.load {}[{}] : {}", scale.name, scale_index.join(", "), scale.ty);
        if !self.gpu {
            let _ = writeln!(out, "{indent}{read_scale}");
        }
        let empty = self.fresh("empty");
        let _ = writeln!(out, "{indent}{empty} = arith.cmpi eq, {length}, %zero_index : index");
        let blocks = self.fresh("blocks");
        let _ = writeln!(out, "{indent}{blocks} = arith.ceildivui {length}, {block_size} : index");
        // For the GPU, over a range that grows with a dimension: the range
        // split into chunks of blocks, a thread per row and chunk, combined
        // per row afterwards (see `combine_chunks`).
        let chunking = match self.growing_cap(&size_of(n)) {
            Some(cap) if self.gpu => {
                Some(self.attention_chunks(cap, block, row_count, &extra_shape, e, &blocks, indent, out))
            }
            _ => None,
        };

        // Loops over the rows: in parallel, one parallel loop (on the GPU a
        // thread per row once mapped, a single row a loop of one; on the CPU
        // the rows spread over the threads) whose body holds its own buffers.
        let row_sizes: Vec<String> = rows.iter().map(|&c| size_of(c)).collect();
        let order: Vec<usize> = (0..rows.len()).collect();
        let nest = if parallel_rows {
            let mut sizes = if row_sizes.is_empty() { vec!["1".to_string()] } else { row_sizes.clone() };
            if let Some(chunks) = &chunking {
                sizes.push(chunks.count.clone());
            }
            self.open_parallel_loop(&sizes, indent, out)
        } else {
            self.open_loops(&row_sizes, &order, indent, out)
        };
        let mut ivs: Vec<(char, String)> = rows.iter().copied().zip(nest.ivs.iter().cloned()).collect();
        let inner = nest.inner.clone();
        let (zero_index, one) = (nest.zero.clone(), nest.one.clone());
        if self.gpu {
            let _ = writeln!(out, "{inner}{read_scale}");
            for (name, ty) in [(&scores_buffer, &scores_ty), (&acc, &acc_ty)] {
                let _ = writeln!(out, "{inner}{name} = memref.alloca() : {ty}");
            }
        } else if cpu_parallel {
            // This row's slices: at the row's row-major position.
            let position = self.row_position(&rows, &nest.ivs, &static_size, &inner, out);
            let (scores_slice, acc_slice) = (self.fresh("scores"), self.fresh("acc"));
            let slice_ty = format!("memref<{block}x{e}, strided<[1], offset: ?>>");
            let _ = writeln!(
                out,
                "{inner}{scores_slice} = memref.subview {scores_buffer}[{position}, 0] [1, {block}] [1, 1] : memref<{row_count}x{block}x{e}> to {slice_ty}"
            );
            let strides = tempo_passes::program::row_major_strides(&extra_dims);
            let strides: Vec<String> = strides.iter().map(i64::to_string).collect();
            let acc_slice_ty = format!("memref<{extra_shape}{e}, strided<[{}], offset: ?>>", strides.join(", "));
            let zeros: String = extra_dims.iter().map(|_| ", 0").collect();
            let sizes: String = extra_dims.iter().map(|d| format!(", {d}")).collect();
            let ones: String = extra_dims.iter().map(|_| ", 1").collect();
            let _ = writeln!(
                out,
                "{inner}{acc_slice} = memref.subview {acc}[{position}{zeros}] [1{sizes}] [1{ones}] : memref<{row_count}x{extra_shape}{e}> to {acc_slice_ty}"
            );
            (scores_buffer, scores_ty, acc, acc_ty) = (scores_slice, slice_ty, acc_slice, acc_slice_ty);
        }

        // acc = 0.
        let extra_sizes: Vec<String> = extra.iter().map(|&c| size_of(c)).collect();
        let extra_order: Vec<usize> = (0..extra.len()).collect();
        let fill = self.open_loops(&extra_sizes, &extra_order, &inner, out);
        let _ = writeln!(out, "{}memref.store {zero}, {acc}[{}] : {acc_ty}", fill.inner, fill.ivs.join(", "));
        fill.close(out);

        // The loop over blocks, carrying the maximum and the sum.
        let (b, m, l, done) = (self.fresh("b"), self.fresh("m"), self.fresh("l"), self.fresh("run"));
        // (A chunk's blocks only, where the range is chunked.)
        let (first_block, end_block) = match &chunking {
            None => (zero_index.clone(), blocks.clone()),
            Some(chunks) => {
                let chunk = nest.ivs.last().expect("the chunk's loop").clone();
                let (lo, up, hi) = (self.fresh("b"), self.fresh("b"), self.fresh("b"));
                let _ = writeln!(out, "{inner}{lo} = arith.muli {chunk}, {} : index", chunks.blocks_per_chunk);
                let _ = writeln!(out, "{inner}{up} = arith.addi {lo}, {} : index", chunks.blocks_per_chunk);
                let _ = writeln!(out, "{inner}{hi} = arith.minui {up}, {blocks} : index");
                (lo, hi)
            }
        };
        let _ = writeln!(
            out,
            "{inner}{done}:2 = scf.for {b} = {first_block} to {end_block} step {one} iter_args({m} = {lowest}, {l} = {zero}) -> ({e}, {e}) {{"
        );
        let body = format!("{inner}  ");
        let (start, rest, len) = (self.fresh("start"), self.fresh("rest"), self.fresh("len"));
        let _ = writeln!(out, "{body}{start} = arith.muli {b}, {block_size} : index");
        let _ = writeln!(out, "{body}{rest} = arith.subi {length}, {start} : index");
        let _ = writeln!(out, "{body}{len} = arith.minui {rest}, {block_size} : index");

        // The block's scores and their maximum.
        let (j, mx, block_max) = (self.fresh("j"), self.fresh("mx"), self.fresh("bmax"));
        let _ = writeln!(
            out,
            "{body}{block_max} = scf.for {j} = {zero_index} to {len} step {one} iter_args({mx} = {lowest}) -> ({e}) {{"
        );
        let jbody = format!("{body}  ");
        let position = self.fresh("pos");
        let _ = writeln!(out, "{jbody}{position} = arith.addi {start}, {j} : index");
        ivs.push((n, position));
        let dot = self.dot_product(
            &summed,
            &size_of,
            [q, k],
            [&spec.score.operands[0], &spec.score.operands[1]],
            &ivs,
            (&zero, &one),
            element,
            &jbody,
            out,
        );
        let (scaled, next_max) = (self.fresh("s"), self.fresh("mx"));
        let _ = writeln!(out, "{jbody}{scaled} = arith.mulf {dot}, {factor} : {e}");
        let _ = writeln!(out, "{jbody}memref.store {scaled}, {scores_buffer}[{j}] : {scores_ty}");
        let _ = writeln!(out, "{jbody}{next_max} = arith.maximumf {mx}, {scaled} : {e}");
        let _ = writeln!(out, "{jbody}scf.yield {next_max} : {e}");
        let _ = writeln!(out, "{body}}}");

        // Rescale to the new maximum.
        let (new_max, gap, alpha, rescaled) =
            (self.fresh("m"), self.fresh("gap"), self.fresh("alpha"), self.fresh("l"));
        let _ = writeln!(out, "{body}{new_max} = arith.maximumf {m}, {block_max} : {e}");
        let _ = writeln!(out, "{body}{gap} = arith.subf {m}, {new_max} : {e}");
        let _ = writeln!(out, "{body}{alpha} = math.exp {gap} : {e}");
        let _ = writeln!(out, "{body}{rescaled} = arith.mulf {l}, {alpha} : {e}");
        let scale_acc = self.open_loops(&extra_sizes, &extra_order, &body, out);
        let (old, new) = (self.fresh("a"), self.fresh("a"));
        let at = scale_acc.ivs.join(", ");
        let _ = writeln!(out, "{}{old} = memref.load {acc}[{at}] : {acc_ty}", scale_acc.inner);
        let _ = writeln!(out, "{}{new} = arith.mulf {old}, {alpha} : {e}", scale_acc.inner);
        let _ = writeln!(out, "{}memref.store {new}, {acc}[{at}] : {acc_ty}", scale_acc.inner);
        scale_acc.close(out);

        // Accumulate the block's weighted values.
        let (j2, sum, block_sum) = (self.fresh("j"), self.fresh("sum"), self.fresh("bsum"));
        let _ = writeln!(
            out,
            "{body}{block_sum} = scf.for {j2} = {zero_index} to {len} step {one} iter_args({sum} = {rescaled}) -> ({e}) {{"
        );
        let position = self.fresh("pos");
        let _ = writeln!(out, "{jbody}{position} = arith.addi {start}, {j2} : index");
        ivs.last_mut().expect("the attended label").1 = position;
        let (score, shifted, weight, next_sum) = (self.fresh("s"), self.fresh("d"), self.fresh("p"), self.fresh("sum"));
        let _ = writeln!(out, "{jbody}{score} = memref.load {scores_buffer}[{j2}] : {scores_ty}");
        let _ = writeln!(out, "{jbody}{shifted} = arith.subf {score}, {new_max} : {e}");
        let _ = writeln!(out, "{jbody}{weight} = math.exp {shifted} : {e}");
        let vectorized = match extra.as_slice() {
            [c] if !self.gpu => {
                vector_width(&size_of(*c)).filter(|_| contiguous_last(v, &spec.combine.operands[1], *c))
            }
            _ => None,
        };
        if let Some(width) = vectorized {
            // acc += p * v[position, ...] as one vector multiply-add.
            let vector = format!("vector<{width}x{e}>");
            let mut all = ivs.clone();
            all.push((extra[0], "%zero_index".to_string()));
            let value = self.vector_at(v, &spec.combine.operands[1], &all, &vector, &jbody, out);
            let (old, splat, new) = (self.fresh("va"), self.fresh("vp"), self.fresh("va"));
            let _ = writeln!(out, "{jbody}{old} = vector.load {acc}[%zero_index] : {acc_ty}, {vector}");
            let _ = writeln!(out, "{jbody}{splat} = vector.broadcast {weight} : {e} to {vector}");
            let _ = writeln!(out, "{jbody}{new} = vector.fma {splat}, {value}, {old} : {vector}");
            let _ = writeln!(out, "{jbody}vector.store {new}, {acc}[%zero_index] : {acc_ty}, {vector}");
        } else {
            let accumulate = self.open_loops(&extra_sizes, &extra_order, &jbody, out);
            let mut all = ivs.clone();
            all.extend(extra.iter().copied().zip(accumulate.ivs.iter().cloned()));
            let value = self.load_at(v, &spec.combine.operands[1], &all, &accumulate.inner, out);
            let (old, product, new) = (self.fresh("a"), self.fresh("pv"), self.fresh("a"));
            let at = accumulate.ivs.join(", ");
            let _ = writeln!(out, "{}{old} = memref.load {acc}[{at}] : {acc_ty}", accumulate.inner);
            let _ = writeln!(out, "{}{product} = arith.mulf {weight}, {value} : {e}", accumulate.inner);
            let _ = writeln!(out, "{}{new} = arith.addf {old}, {product} : {e}", accumulate.inner);
            let _ = writeln!(out, "{}memref.store {new}, {acc}[{at}] : {acc_ty}", accumulate.inner);
            accumulate.close(out);
        }
        let _ = writeln!(out, "{jbody}{next_sum} = arith.addf {sum}, {weight} : {e}");
        let _ = writeln!(out, "{jbody}scf.yield {next_sum} : {e}");
        let _ = writeln!(out, "{body}}}");
        let _ = writeln!(out, "{body}scf.yield {new_max}, {block_sum} : {e}, {e}");
        let _ = writeln!(out, "{inner}}}");
        ivs.pop();

        if let Some(chunks) = chunking {
            // The chunk's maximum, sum and accumulator, for the combination.
            let chunk = nest.ivs.last().expect("the chunk's loop").clone();
            let position = self.row_position(&rows, &nest.ivs, &static_size, &inner, out);
            let (pm, pl, pacc) = (&chunks.maxima, &chunks.sums, &chunks.accumulators);
            let _ = writeln!(out, "{inner}memref.store {done}#0, {pm}[{position}, {chunk}] : {}", chunks.row_ty);
            let _ = writeln!(out, "{inner}memref.store {done}#1, {pl}[{position}, {chunk}] : {}", chunks.row_ty);
            let copy = self.open_loops(&extra_sizes, &extra_order, &inner, out);
            let at = copy.ivs.join(", ");
            let (a, to) = (
                self.fresh("a"),
                [position.as_str(), chunk.as_str()]
                    .into_iter()
                    .chain(copy.ivs.iter().map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            let _ = writeln!(out, "{}{a} = memref.load {acc}[{at}] : {acc_ty}", copy.inner);
            let _ = writeln!(out, "{}memref.store {a}, {pacc}[{to}] : {}", copy.inner, chunks.acc_ty);
            copy.close(out);
            nest.close(out);
            self.combine_chunks(
                spec,
                &chunks,
                &rows,
                &row_sizes,
                &extra,
                &extra_sizes,
                &static_size,
                (&lowest, &zero, &empty),
                target,
                e,
                indent,
                out,
            );
            return;
        }

        // result = acc / l, in the result's label order.
        let store = self.open_loops(&extra_sizes, &extra_order, &inner, out);
        let mut all = ivs.clone();
        all.extend(extra.iter().copied().zip(store.ivs.iter().cloned()));
        let (a, quotient) = (self.fresh("a"), self.fresh("o"));
        let _ = writeln!(out, "{}{a} = memref.load {acc}[{}] : {acc_ty}", store.inner, store.ivs.join(", "));
        let _ = writeln!(out, "{}{quotient} = arith.divf {a}, {done}#1 : {e}", store.inner);
        // An empty range sums no weighted values: 0, not 0 / 0.
        let result = self.fresh("o");
        let _ = writeln!(out, "{}{result} = arith.select {empty}, {zero}, {quotient} : {e}", store.inner);
        let index: Vec<String> = spec
            .combine
            .result
            .iter()
            .map(|c| {
                all.iter()
                    .find(|(x, _)| x == c)
                    .map(|(_, iv)| iv.clone())
                    .expect("a result label is a row or extra label")
            })
            .collect();
        let _ = writeln!(
            out,
            "{}memref.store {result}, {}[{}] : {}",
            store.inner,
            target.name,
            index.join(", "),
            target.ty
        );
        store.close(out);
        nest.close(out);
    }

    /// The row-major position of a row (`ivs` of `rows`, in order): its
    /// slice of per-row buffers.
    pub(super) fn row_position(
        &mut self,
        rows: &[char],
        ivs: &[String],
        static_size: &dyn Fn(char) -> i64,
        indent: &str,
        out: &mut String,
    ) -> String {
        let mut position = "%zero_index".to_string();
        for (k, &c) in rows.iter().enumerate() {
            let (size, scaled, next) = (self.fresh("c"), self.fresh("r"), self.fresh("r"));
            let _ = writeln!(out, "{indent}{size} = arith.constant {} : index", static_size(c));
            let _ = writeln!(out, "{indent}{scaled} = arith.muli {position}, {size} : index");
            let _ = writeln!(out, "{indent}{next} = arith.addi {scaled}, {} : index", ivs[k]);
            position = next;
        }
        position
    }

    /// The element of `view` (labelled `labels`) at the induction variables
    /// `ivs` (by label).
    fn load_at(
        &mut self,
        view: &View,
        labels: &[char],
        ivs: &[(char, String)],
        indent: &str,
        out: &mut String,
    ) -> String {
        let index: Vec<String> = labels
            .iter()
            .map(|c| ivs.iter().find(|(x, _)| x == c).map(|(_, iv)| iv.clone()).expect("every label has a loop"))
            .collect();
        let name = self.fresh("x");
        let _ = writeln!(out, "{indent}{name} = memref.load {}[{}] : {}", view.name, index.join(", "), view.ty);
        name
    }

    /// `sum over summed labels of a * b`: with one summed label, last in
    /// both operands with unit stride and a static size of at most
    /// [`MAX_VECTOR`], one vector product and reduction; otherwise in
    /// row-major order of the summed labels, as nested `scf.for` loops
    /// carrying the sum.
    #[allow(clippy::too_many_arguments)]
    fn dot_product(
        &mut self,
        summed: &[char],
        size_of: &dyn Fn(char) -> String,
        [a, b]: [&View; 2],
        [la, lb]: [&[char]; 2],
        ivs: &[(char, String)],
        (zero, one): (&str, &str),
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) -> String {
        let e = element.mlir();
        if let [d] = summed
            && !self.gpu
            && let Some(width) = vector_width(&size_of(*d))
            && contiguous_last(a, la, *d)
            && contiguous_last(b, lb, *d)
        {
            let vector = format!("vector<{width}x{e}>");
            let mut ivs = ivs.to_vec();
            ivs.push((*d, "%zero_index".to_string()));
            let x = self.vector_at(a, la, &ivs, &vector, indent, out);
            let y = self.vector_at(b, lb, &ivs, &vector, indent, out);
            let (product, sum) = (self.fresh("xy"), self.fresh("dot"));
            let _ = writeln!(out, "{indent}{product} = arith.mulf {x}, {y} : {vector}");
            let _ = writeln!(out, "{indent}{sum} = vector.reduction <add>, {product} : {vector} into {e}");
            return sum;
        }
        let mut ivs = ivs.to_vec();
        let mut carried = zero.to_string();
        let mut inner = indent.to_string();
        let mut results = Vec::new();
        for &c in summed {
            let size = self.index_value(&size_of(c), &inner, out);
            let (iv, arg, result) = (self.fresh("d"), self.fresh("acc"), self.fresh("dot"));
            let _ = writeln!(
                out,
                "{inner}{result} = scf.for {iv} = %zero_index to {size} step {one} iter_args({arg} = {carried}) -> ({e}) {{"
            );
            ivs.push((c, iv));
            carried = arg;
            results.push(result);
            inner += "  ";
        }
        let x = self.load_at(a, la, &ivs, &inner, out);
        let y = self.load_at(b, lb, &ivs, &inner, out);
        let (product, sum) = (self.fresh("xy"), self.fresh("acc"));
        let _ = writeln!(out, "{inner}{product} = arith.mulf {x}, {y} : {e}");
        let _ = writeln!(out, "{inner}{sum} = arith.addf {carried}, {product} : {e}");
        let mut value = sum;
        for result in results.iter().rev() {
            let _ = writeln!(out, "{inner}scf.yield {value} : {e}");
            inner.truncate(inner.len() - 2);
            let _ = writeln!(out, "{inner}}}");
            value = result.clone();
        }
        value
    }

    /// A vector load of `view` (labelled `labels`) at `ivs` (by label).
    fn vector_at(
        &mut self,
        view: &View,
        labels: &[char],
        ivs: &[(char, String)],
        vector: &str,
        indent: &str,
        out: &mut String,
    ) -> String {
        let index: Vec<String> = labels
            .iter()
            .map(|c| ivs.iter().find(|(x, _)| x == c).map(|(_, iv)| iv.clone()).expect("every label has an index"))
            .collect();
        let name = self.fresh("vx");
        let _ =
            writeln!(out, "{indent}{name} = vector.load {}[{}] : {}, {vector}", view.name, index.join(", "), view.ty);
        name
    }
}

/// The longest vector the attention lowering uses for one label.
const MAX_VECTOR: i64 = 256;

/// The static size `size` as a vector width, if at most [`MAX_VECTOR`].
fn vector_width(size: &str) -> Option<i64> {
    size.parse::<i64>().ok().filter(|&n| (1..=MAX_VECTOR).contains(&n))
}

/// Whether `label` is the last of `labels` and `view` has unit stride there.
fn contiguous_last(view: &View, labels: &[char], label: char) -> bool {
    labels.last() == Some(&label)
        && memref_layout(&view.ty).is_some_and(|(_, _, strides, _)| strides.last().is_some_and(|s| s == "1"))
}

/// The size of label `c` of `spec`, from the first of the query, key and
/// value views (in that order) that has it.
pub(super) fn label_size(spec: &Attention, [q, k, v]: [&View; 3], c: char) -> String {
    [(&spec.score.operands[0], q), (&spec.score.operands[1], k), (&spec.combine.operands[1], v)]
        .iter()
        .find_map(|(labels, view)| labels.iter().position(|&x| x == c).map(|p| view.sizes[p].clone()))
        .expect("every label is in an operand (checked by the verifier)")
}
