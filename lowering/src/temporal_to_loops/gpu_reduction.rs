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
        chain: Option<&elementwise::TextChain>,
        indent: &str,
        out: &mut String,
    ) -> bool {
        let Some((cap, kept_sizes)) = self.gpu_split_applies(input, axis) else { return false };
        let rank = input.sizes.len();
        let kept: Vec<usize> = (0..rank).filter(|&k| k != axis).collect();
        let (init, combine) = reductions::start_and_combine(kind, ty.element);
        // The element at the results' indices and `j` along the axis.
        let mut element = |this: &mut Self, results: &[String], j: &str, body: &str, out: &mut String| -> String {
            let mut index = vec![String::new(); rank];
            for (p, &k) in kept.iter().enumerate() {
                index[k] = results[p].clone();
            }
            index[axis] = j.to_string();
            match chain {
                None => {
                    let v = this.fresh("x");
                    let _ =
                        writeln!(out, "{body}{v} = memref.load {}[{}] : {}", input.name, index.join(", "), input.ty);
                    v
                }
                Some(chain) => {
                    // Each leaf at the element, broadcast (a stretched
                    // dimension reads index 0), then the chain's scalar code.
                    let zero = this.index_value("0", body, out);
                    for (i, leaf) in chain.leaf_views().into_iter().enumerate() {
                        let skip = rank - leaf.sizes.len();
                        let at: Vec<String> = (0..leaf.sizes.len())
                            .map(|d| {
                                if leaf.sizes[d] == "1" && input.sizes[skip + d] != "1" {
                                    zero.clone()
                                } else {
                                    index[skip + d].clone()
                                }
                            })
                            .collect();
                        let _ =
                            writeln!(out, "{body}%a{i} = memref.load {}[{}] : {}", leaf.name, at.join(", "), leaf.ty);
                    }
                    for line in chain.body_lines() {
                        let _ = writeln!(out, "{body}{line}");
                    }
                    chain.value()
                }
            }
        };
        let split = Split { length: &input.sizes[axis], cap: &cap, results: &kept_sizes, init: &init, combine };
        self.two_stages(&split, ty.element, kind == ReduceKind::Mean, &mut element, target, indent, out);
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
        let e = element.mlir();
        let mul = if element.is_float() { "arith.mulf" } else { "arith.muli" };
        let (init, add) = reductions::start_and_combine(ReduceKind::Sum, element);
        // The product of the operands at the results' indices and `j` for
        // the summed label, left to right.
        let mut product = |this: &mut Self, ivs: &[String], j: &str, body: &str, out: &mut String| -> String {
            let mut value: Option<String> = None;
            for (labels, v) in spec.operands.iter().zip(inputs) {
                let at: Vec<String> = labels
                    .iter()
                    .map(|&c| match spec.result.iter().position(|&r| r == c) {
                        Some(p) => ivs[p].clone(),
                        None => j.to_string(),
                    })
                    .collect();
                let x = this.fresh("x");
                let _ = writeln!(out, "{body}{x} = memref.load {}[{}] : {}", v.name, at.join(", "), v.ty);
                value = Some(match value {
                    None => x,
                    Some(p) => {
                        let q = this.fresh("x");
                        let _ = writeln!(out, "{body}{q} = {mul} {p}, {x} : {e}");
                        q
                    }
                });
            }
            value.expect("an einsum has operands")
        };
        let split = Split { length: &length, cap: &cap, results: &results, init: &init, combine: add };
        self.two_stages(&split, element, false, &mut product, target, indent, out);
        true
    }

    /// The two stages: `element` emits the value at the results' indices
    /// and an index along the axis.
    #[allow(clippy::too_many_arguments)]
    fn two_stages(
        &mut self,
        split: &Split,
        element: ElementType,
        mean: bool,
        value_at: &mut impl FnMut(&mut Self, &[String], &str, &str, &mut String) -> String,
        target: &View,
        indent: &str,
        out: &mut String,
    ) {
        let e = element.mlir();
        let Split { length, cap, results, init, combine } = *split;
        // The partial results, allocated once for the longest range.
        let partial = self.fresh("partial");
        let chunk_cap = self.fresh("chunks");
        let chunk_size = self.fresh("chunk");
        let shape: String = results.iter().map(|d| format!("{d}x")).collect();
        let partial_ty = format!("memref<{shape}?x{e}>");
        let _ = writeln!(self.entry, "    {chunk_size} = arith.constant {CHUNK} : index");
        let _ = writeln!(self.entry, "    {chunk_cap} = arith.ceildivui {cap}, {chunk_size} : index");
        let _ = writeln!(self.entry, "    {partial} = memref.alloc({chunk_cap}) : {partial_ty}");
        let _ = writeln!(self.exit, "    memref.dealloc {partial} : {partial_ty}");

        let start = self.fresh("z");
        let _ = writeln!(out, "{indent}{start} = arith.constant {init} : {e}");
        let n = self.index_value(length, indent, out);
        let chunk = self.index_value(&CHUNK.to_string(), indent, out);
        let chunks = self.fresh("chunks");
        let _ = writeln!(out, "{indent}{chunks} = arith.ceildivui {n}, {chunk} : index");

        // Stage 1: a thread per result and chunk, the chunk in order.
        let mut sizes: Vec<String> = results.iter().map(i64::to_string).collect();
        sizes.push(chunks.clone());
        let nest = self.open_parallel_loop(&sizes, indent, out);
        let inner = nest.inner.clone();
        let ivs = nest.ivs[..results.len()].to_vec();
        let c = nest.ivs[results.len()].clone();
        let (lo, end, hi) = (self.fresh("lo"), self.fresh("end"), self.fresh("hi"));
        let _ = writeln!(out, "{inner}{lo} = arith.muli {c}, {chunk} : index");
        let _ = writeln!(out, "{inner}{end} = arith.addi {lo}, {chunk} : index");
        let _ = writeln!(out, "{inner}{hi} = arith.minui {end}, {n} : index");
        let sum = self.fold_loop((&lo, &hi, &nest.one), &start, combine, e, &inner, out, |this, j, body, out| {
            value_at(this, &ivs, j, body, out)
        });
        let mut at = ivs;
        at.push(c);
        let _ = writeln!(out, "{inner}memref.store {sum}, {partial}[{}] : {partial_ty}", at.join(", "));
        nest.close(out);

        // Stage 2: a thread per result combines its chunks in order.
        let sizes: Vec<String> =
            if results.is_empty() { vec!["1".to_string()] } else { results.iter().map(i64::to_string).collect() };
        let nest = self.open_parallel_loop(&sizes, indent, out);
        let inner = nest.inner.clone();
        let result: Vec<String> = if results.is_empty() { Vec::new() } else { nest.ivs.clone() };
        let bounds = (nest.zero.as_str(), chunks.as_str(), nest.one.as_str());
        let total = self.fold_loop(bounds, &start, combine, e, &inner, out, |this, k, body, out| {
            let at: Vec<&str> = result.iter().map(String::as_str).chain([k]).collect();
            let p = this.fresh("x");
            let _ = writeln!(out, "{body}{p} = memref.load {partial}[{}] : {partial_ty}", at.join(", "));
            p
        });
        let value = if mean {
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
    }
}

impl Emitter<'_, '_> {
    /// `fold = start; for i in [lo, hi) step: fold = combine(fold, value(i))`
    /// as an `scf.for` carrying the fold, which it returns; `value` emits
    /// the element at `i` (at the indentation it is given) and returns it.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fold_loop(
        &mut self,
        (lo, hi, step): (&str, &str, &str),
        start: &str,
        combine: &str,
        e: &str,
        indent: &str,
        out: &mut String,
        value: impl FnOnce(&mut Self, &str, &str, &mut String) -> String,
    ) -> String {
        let (i, acc, fold) = (self.fresh("i"), self.fresh("acc"), self.fresh("fold"));
        let _ = writeln!(
            out,
            "{indent}{fold} = scf.for {i} = {lo} to {hi} step {step} iter_args({acc} = {start}) -> ({e}) {{"
        );
        let body = format!("{indent}  ");
        let element = value(self, &i, &body, out);
        let next = self.fresh("acc");
        let _ = writeln!(out, "{body}{next} = {combine} {acc}, {element} : {e}");
        let _ = writeln!(out, "{body}scf.yield {next} : {e}");
        let _ = writeln!(out, "{indent}}}");
        fold
    }
}

/// A reduction in two stages: the axis's length and its cap, the static
/// sizes of the results, the starting value and the combining op.
struct Split<'s> {
    length: &'s str,
    cap: &'s str,
    results: &'s [i64],
    init: &'s str,
    combine: &'s str,
}
