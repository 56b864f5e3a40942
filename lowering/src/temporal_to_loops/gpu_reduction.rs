//! The GPU's reductions over growing ranges in
//! `lower-temporal-to-loops{gpu=true}`: a sum, maximum or mean along a range
//! that grows with a dimension (a softmax over a cache's prefix, its
//! normalizer) has few results and a long axis, so the mapping of a
//! `linalg` reduction (a thread per result, looping over the axis) leaves
//! the GPU idle. Two stages of parallel loops instead (kernels once
//! mapped):
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
//! element from its leaves, broadcast as NumPy does. An empty range gives
//! the starting value (and a mean 0 / 0), as the `linalg` form does.
//!
//! Used where the reduced axis is such a range's length and the other
//! dimensions are static and few (at most [`MAX_RESULTS`] results).

use super::*;

/// Elements of the axis per chunk (one thread's serial part).
pub(super) const CHUNK: i64 = 128;

/// Results above which a thread per result already fills the GPU.
pub(super) const MAX_RESULTS: i64 = 1024;

impl Emitter<'_, '_> {
    /// Whether a reduction of `input` along `axis` (not a cumulative sum or
    /// argmax) takes the two stages: the cap of the axis's length and the
    /// static sizes of the other dimensions.
    pub(super) fn gpu_split_applies(&self, input: &View, axis: usize) -> Option<(String, Vec<i64>)> {
        let length = &input.sizes[axis];
        if !self.gpu || !self.growing_lengths.contains(length) {
            return None;
        }
        let cap = self.size_caps.get(length).cloned()?;
        let kept_sizes: Vec<i64> = (0..input.sizes.len())
            .filter(|&k| k != axis)
            .map(|k| input.sizes[k].parse::<i64>().ok())
            .collect::<Option<_>>()?;
        (kept_sizes.iter().product::<i64>() <= MAX_RESULTS).then_some((cap, kept_sizes))
    }

    /// `target = kind(input along axis)` in two stages, where it applies;
    /// whether it did.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gpu_split_reduce(
        &mut self,
        kind: ReduceKind,
        input: &View,
        axis: usize,
        target: &View,
        ty: &PointType,
        chain: Option<&elementwise::Chain>,
        indent: &str,
        out: &mut String,
    ) -> bool {
        let Some((cap, kept_sizes)) = self.gpu_split_applies(input, axis) else { return false };
        let length = input.sizes[axis].clone();
        let rank = input.sizes.len();
        let kept: Vec<usize> = (0..rank).filter(|&k| k != axis).collect();
        let e = ty.element.mlir();
        let float = ty.element.is_float();
        let init = match kind {
            ReduceKind::Max => lowest_literal(ty.element),
            _ => zero_literal(ty.element).to_string(),
        };
        let combine = match (kind, float) {
            (ReduceKind::Max, true) => "arith.maximumf",
            (ReduceKind::Max, false) => "arith.maxsi",
            (_, true) => "arith.addf",
            (_, false) => "arith.addi",
        };

        // The partial results, allocated once for the longest range.
        let partial = self.fresh("partial");
        let chunk_cap = self.fresh("chunks");
        let chunk_size = self.fresh("chunk");
        let shape: String = kept_sizes.iter().map(|d| format!("{d}x")).collect();
        let partial_ty = format!("memref<{shape}?x{e}>");
        let _ = writeln!(self.entry, "    {chunk_size} = arith.constant {CHUNK} : index");
        let _ = writeln!(self.entry, "    {chunk_cap} = arith.ceildivui {cap}, {chunk_size} : index");
        let _ = writeln!(self.entry, "    {partial} = memref.alloc({chunk_cap}) : {partial_ty}");
        let _ = writeln!(self.exit, "    memref.dealloc {partial} : {partial_ty}");

        let start = self.fresh("z");
        let _ = writeln!(out, "{indent}{start} = arith.constant {init} : {e}");
        let n = self.index_value(&length, indent, out);
        let chunk = self.index_value(&CHUNK.to_string(), indent, out);
        let chunks = self.fresh("chunks");
        let _ = writeln!(out, "{indent}{chunks} = arith.ceildivui {n}, {chunk} : index");

        // Stage 1: a thread per result and chunk.
        let mut sizes: Vec<String> = kept_sizes.iter().map(i64::to_string).collect();
        sizes.push(chunks.clone());
        let nest = self.open_parallel_loop(&sizes, indent, out);
        let inner = nest.inner.clone();
        let c = nest.ivs[kept.len()].clone();
        let (lo, end, hi) = (self.fresh("lo"), self.fresh("end"), self.fresh("hi"));
        let _ = writeln!(out, "{inner}{lo} = arith.muli {c}, {chunk} : index");
        let _ = writeln!(out, "{inner}{end} = arith.addi {lo}, {chunk} : index");
        let _ = writeln!(out, "{inner}{hi} = arith.minui {end}, {n} : index");
        let (j, acc, sum) = (self.fresh("j"), self.fresh("acc"), self.fresh("acc"));
        let _ = writeln!(
            out,
            "{inner}{sum} = scf.for {j} = {lo} to {hi} step {} iter_args({acc} = {start}) -> ({e}) {{",
            nest.one
        );
        let body = format!("{inner}  ");
        // The element's indices: the results' and `j` along the axis.
        let mut index = vec![String::new(); rank];
        for (p, &k) in kept.iter().enumerate() {
            index[k] = nest.ivs[p].clone();
        }
        index[axis] = j.clone();
        let value = match chain {
            None => {
                let v = self.fresh("x");
                let _ = writeln!(out, "{body}{v} = memref.load {}[{}] : {}", input.name, index.join(", "), input.ty);
                v
            }
            Some(chain) => {
                // Each leaf at the element, broadcast (a stretched
                // dimension reads index 0), then the chain's scalar code.
                for (i, leaf) in chain.leaf_views().into_iter().enumerate() {
                    let skip = rank - leaf.sizes.len();
                    let at: Vec<String> = (0..leaf.sizes.len())
                        .map(|d| {
                            if leaf.sizes[d] == "1" && input.sizes[skip + d] != "1" {
                                nest.zero.clone()
                            } else {
                                index[skip + d].clone()
                            }
                        })
                        .collect();
                    let _ = writeln!(out, "{body}%a{i} = memref.load {}[{}] : {}", leaf.name, at.join(", "), leaf.ty);
                }
                for line in chain.body_lines() {
                    let _ = writeln!(out, "{body}{line}");
                }
                chain.value()
            }
        };
        let next = self.fresh("acc");
        let _ = writeln!(out, "{body}{next} = {combine} {acc}, {value} : {e}");
        let _ = writeln!(out, "{body}scf.yield {next} : {e}");
        let _ = writeln!(out, "{inner}}}");
        let mut at: Vec<String> = nest.ivs[..kept.len()].to_vec();
        at.push(c);
        let _ = writeln!(out, "{inner}memref.store {sum}, {partial}[{}] : {partial_ty}", at.join(", "));
        nest.close(out);

        // Stage 2: a thread per result combines its chunks in order.
        let sizes: Vec<String> =
            if kept.is_empty() { vec!["1".to_string()] } else { kept_sizes.iter().map(i64::to_string).collect() };
        let nest = self.open_parallel_loop(&sizes, indent, out);
        let inner = nest.inner.clone();
        let result: Vec<String> = if kept.is_empty() { Vec::new() } else { nest.ivs.clone() };
        let (k, acc, total) = (self.fresh("c"), self.fresh("acc"), self.fresh("acc"));
        let _ = writeln!(
            out,
            "{inner}{total} = scf.for {k} = {} to {chunks} step {} iter_args({acc} = {start}) -> ({e}) {{",
            nest.zero, nest.one
        );
        let mut at = result.clone();
        at.push(k);
        let (p, next) = (self.fresh("x"), self.fresh("acc"));
        let _ = writeln!(out, "{inner}  {p} = memref.load {partial}[{}] : {partial_ty}", at.join(", "));
        let _ = writeln!(out, "{inner}  {next} = {combine} {acc}, {p} : {e}");
        let _ = writeln!(out, "{inner}  scf.yield {next} : {e}");
        let _ = writeln!(out, "{inner}}}");
        let value = if kind == ReduceKind::Mean {
            // Divided by the length of the axis (0 / 0 is NaN).
            let length = self.float_of_size(&n, e, &inner, out);
            let mean = self.fresh("x");
            let _ = writeln!(out, "{inner}{mean} = arith.divf {total}, {length} : {e}");
            mean
        } else {
            total
        };
        let _ = writeln!(out, "{inner}memref.store {value}, {}[{}] : {}", target.name, result.join(", "), target.ty);
        nest.close(out);
        true
    }
}
