//! Reductions in `lower-temporal-to-loops`: sums, maxima and means along
//! an axis (`linalg.generic` reductions), argmax (first maximum) and
//! cumulative sums, each summing in the interpreter's order.

use super::*;

impl Emitter<'_, '_> {
    /// Sum, maximum or mean of `input` along `axis` into `target`, in order.
    /// With a `chain`, `input` is an elementwise chain fused into the
    /// reduction: its leaves are read and its value computed per element.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn reduce(
        &mut self,
        kind: ReduceKind,
        input: &View,
        axis: usize,
        target: &View,
        ty: &PointType,
        chain: Option<&elementwise::Chain>,
        indent: &str,
        out: &mut String,
    ) {
        if self.gpu_split_reduce(kind, input, axis, target, ty, chain, indent, out) {
            return;
        }
        let e = ty.element.mlir();
        let (init, combine) = start_and_combine(kind, ty.element);
        // With fast math a float reduction may be reassociated (vectorized).
        let flags = if self.fast_math && ty.element.is_float() { " fastmath<reassoc>" } else { "" };
        let z = self.fresh("z");
        let _ = writeln!(out, "{indent}{z} = arith.constant {init} : {e}");
        let _ = writeln!(out, "{indent}linalg.fill ins({z} : {e}) outs({} : {})", target.name, target.ty);
        let rank = input.sizes.len();
        let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
        let kept: Vec<String> = dims.iter().enumerate().filter(|(k, _)| *k != axis).map(|(_, d)| d.clone()).collect();
        let iterators: Vec<&str> =
            (0..rank).map(|k| if k == axis { "\"reduction\"" } else { "\"parallel\"" }).collect();
        let output_map = format!("affine_map<({d}) -> ({k})>", d = dims.join(", "), k = kept.join(", "));
        match chain {
            None => {
                let _ = writeln!(
                    out,
                    "{indent}linalg.generic {{indexing_maps = [affine_map<({d}) -> ({d})>, {output_map}], iterator_types = [{}]}} ins({} : {}) outs({} : {}) {{",
                    iterators.join(", "),
                    input.name,
                    input.ty,
                    target.name,
                    target.ty,
                    d = dims.join(", "),
                );
                let _ = writeln!(out, "{indent}^bb0(%a: {e}, %acc: {e}):");
                let _ = writeln!(out, "{indent}  %r = {combine} %acc, %a{flags} : {e}");
            }
            Some(chain) => {
                let mut maps = chain.leaf_maps(input);
                maps.push(output_map);
                generic_header(&chain.leaf_views(), target, &maps, &iterators, indent, out);
                let _ = writeln!(out, "{indent}^bb0({}, %acc: {e}):", chain.arguments().join(", "));
                for line in chain.body_lines() {
                    let _ = writeln!(out, "{indent}  {line}");
                }
                let _ = writeln!(out, "{indent}  %r = {combine} %acc, {}{flags} : {e}", chain.value());
            }
        }
        let _ = writeln!(out, "{indent}  linalg.yield %r : {e}");
        let _ = writeln!(out, "{indent}}}");
        if kind == ReduceKind::Mean {
            // Divide by the length of the axis (0 / 0 is NaN).
            let length = self.float_of_size(&input.sizes[axis], e, indent, out);
            let _ = writeln!(
                out,
                "{indent}linalg.generic {{indexing_maps = [affine_map<({k}) -> ({k})>], iterator_types = [{}]}} outs({} : {}) {{",
                kept.iter().map(|_| "\"parallel\"").collect::<Vec<_>>().join(", "),
                target.name,
                target.ty,
                k = kept.join(", ")
            );
            let _ = writeln!(out, "{indent}^bb0(%o: {e}):");
            let _ = writeln!(out, "{indent}  %r = arith.divf %o, {length} : {e}");
            let _ = writeln!(out, "{indent}  linalg.yield %r : {e}");
            let _ = writeln!(out, "{indent}}}");
        }
    }
}

/// The starting value (a literal) and the combining op of a sum, maximum
/// or mean of `element`s.
pub(super) fn start_and_combine(kind: ReduceKind, element: ElementType) -> (String, &'static str) {
    match (kind, element.is_float()) {
        (ReduceKind::Max, true) => (lowest_literal(element), "arith.maximumf"),
        (ReduceKind::Max, false) => (lowest_literal(element), "arith.maxsi"),
        (_, true) => (zero_literal(element).to_string(), "arith.addf"),
        (_, false) => (zero_literal(element).to_string(), "arith.addi"),
    }
}

impl Emitter<'_, '_> {
    /// A size (SSA index or literal) as a float of type `e`.
    pub(super) fn float_of_size(&mut self, size: &str, e: &str, indent: &str, out: &mut String) -> String {
        let name = self.fresh("f");
        if size.starts_with('%') {
            let integer = self.fresh("i");
            let _ = writeln!(out, "{indent}{integer} = arith.index_cast {size} : index to i64");
            let _ = writeln!(out, "{indent}{name} = arith.sitofp {integer} : i64 to {e}");
        } else {
            let _ = writeln!(out, "{indent}{name} = arith.constant {size}.0 : {e}");
        }
        name
    }
}

impl Emitter<'_, '_> {
    /// Index of the first maximum of `input` along `axis` into `target`
    /// (i64), keeping the running maximum in `best`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn argmax(
        &mut self,
        input: &View,
        axis: usize,
        best: &View,
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
        let e = element.mlir();
        let lowest = self.fresh("z");
        let _ = writeln!(out, "{indent}{lowest} = arith.constant {} : {e}", lowest_literal(element));
        let _ = writeln!(out, "{indent}linalg.fill ins({lowest} : {e}) outs({} : {})", best.name, best.ty);
        let zero = self.fresh("z");
        let _ = writeln!(out, "{indent}{zero} = arith.constant 0 : i64");
        let _ = writeln!(out, "{indent}linalg.fill ins({zero} : i64) outs({} : {})", target.name, target.ty);
        let rank = input.sizes.len();
        let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
        let kept: Vec<String> = dims.iter().enumerate().filter(|(k, _)| *k != axis).map(|(_, d)| d.clone()).collect();
        let iterators: Vec<&str> =
            (0..rank).map(|k| if k == axis { "\"reduction\"" } else { "\"parallel\"" }).collect();
        let greater = if element.is_float() { "arith.cmpf ogt" } else { "arith.cmpi sgt" };
        let _ = writeln!(
            out,
            "{indent}linalg.generic {{indexing_maps = [affine_map<({d}) -> ({d})>, affine_map<({d}) -> ({k})>, affine_map<({d}) -> ({k})>], iterator_types = [{}]}} ins({} : {}) outs({}, {} : {}, {}) {{",
            iterators.join(", "),
            input.name,
            input.ty,
            best.name,
            target.name,
            best.ty,
            target.ty,
            d = dims.join(", "),
            k = kept.join(", ")
        );
        let _ = writeln!(out, "{indent}^bb0(%a: {e}, %best: {e}, %index: i64):");
        let _ = writeln!(out, "{indent}  %position = linalg.index {axis} : index");
        let _ = writeln!(out, "{indent}  %here = arith.index_cast %position : index to i64");
        let _ = writeln!(out, "{indent}  %larger = {greater}, %a, %best : {e}");
        let _ = writeln!(out, "{indent}  %new_best = arith.select %larger, %a, %best : {e}");
        let _ = writeln!(out, "{indent}  %new_index = arith.select %larger, %here, %index : i64");
        let _ = writeln!(out, "{indent}  linalg.yield %new_best, %new_index : {e}, i64");
        let _ = writeln!(out, "{indent}}}");
    }
}

impl Emitter<'_, '_> {
    /// Running sum of `input` along `axis` into `target`: explicit loops,
    /// the axis innermost and sequential (for the GPU, inside one parallel
    /// loop over the other dimensions).
    pub(super) fn cumsum(
        &mut self,
        input: &View,
        axis: usize,
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        let e = ty.element.mlir();
        let add = if ty.element.is_float() { "arith.addf" } else { "arith.addi" };
        let rank = input.sizes.len();
        let outer: Vec<usize> = (0..rank).filter(|&k| k != axis).collect();
        // For the GPU the other dimensions are one parallel loop (a kernel;
        // a single scan is a loop of one), the axis a sequential loop in it.
        let nests = if self.gpu {
            let sizes: Vec<String> = if outer.is_empty() {
                vec!["1".to_string()]
            } else {
                outer.iter().map(|&k| input.sizes[k].clone()).collect()
            };
            let parallel = self.open_parallel_loop(&sizes, indent, out);
            let scan = self.open_loops(std::slice::from_ref(&input.sizes[axis]), &[0], &parallel.inner, out);
            vec![scan, parallel]
        } else {
            let mut order = outer.clone();
            order.push(axis);
            vec![self.open_loops(&input.sizes, &order, indent, out)]
        };
        let ivs: Vec<String> = if self.gpu {
            let mut ivs = vec![String::new(); rank];
            for (j, &k) in outer.iter().enumerate() {
                ivs[k] = nests[1].ivs[j].clone();
            }
            ivs[axis] = nests[0].ivs[0].clone();
            ivs
        } else {
            nests[0].ivs.clone()
        };
        let (inner, c0, c1) = (nests[0].inner.clone(), nests[0].zero.clone(), nests[0].one.clone());
        let index = ivs.join(", ");
        let value = self.fresh("x");
        let _ = writeln!(out, "{inner}{value} = memref.load {}[{index}] : {}", input.name, input.ty);
        let first = self.fresh("b");
        let _ = writeln!(out, "{inner}{first} = arith.cmpi eq, {}, {c0} : index", ivs[axis]);
        let sum = self.fresh("x");
        let _ = writeln!(out, "{inner}{sum} = scf.if {first} -> ({e}) {{");
        let _ = writeln!(out, "{inner}  scf.yield {value} : {e}");
        let _ = writeln!(out, "{inner}}} else {{");
        let before = self.fresh("i");
        let _ = writeln!(out, "{inner}  {before} = arith.subi {}, {c1} : index", ivs[axis]);
        let mut previous_index = ivs.clone();
        previous_index[axis] = before;
        let previous = self.fresh("x");
        let _ = writeln!(
            out,
            "{inner}  {previous} = memref.load {}[{}] : {}",
            target.name,
            previous_index.join(", "),
            target.ty
        );
        let total = self.fresh("x");
        let _ = writeln!(out, "{inner}  {total} = {add} {previous}, {value} : {e}");
        let _ = writeln!(out, "{inner}  scf.yield {total} : {e}");
        let _ = writeln!(out, "{inner}}}");
        let _ = writeln!(out, "{inner}memref.store {sum}, {}[{index}] : {}", target.name, target.ty);
        for nest in nests {
            nest.close(out);
        }
    }
}
