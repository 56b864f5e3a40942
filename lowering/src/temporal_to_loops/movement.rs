//! Movement ops, slices at point-dependent offsets and gathers in
//! `lower-temporal-to-loops`: loops copying each element from where
//! `Movement::source` says, or views where no copy is needed.

use super::*;

impl Emitter<'_, '_> {
    /// A size (SSA index or literal) as an SSA index.
    pub(super) fn index_value(&mut self, size: &str, indent: &str, out: &mut String) -> String {
        if size.starts_with('%') {
            return size.to_string();
        }
        let c = self.fresh("c");
        let _ = writeln!(out, "{indent}{c} = arith.constant {size} : index");
        c
    }

    /// Row-major strides (in elements) of `sizes` as index values.
    pub(super) fn row_major_strides(&mut self, sizes: &[String], indent: &str, out: &mut String) -> Vec<String> {
        let mut strides = vec![String::new(); sizes.len()];
        let mut stride = self.index_value("1", indent, out);
        for k in (0..sizes.len()).rev() {
            strides[k] = stride.clone();
            if k > 0 {
                let n = self.index_value(&sizes[k], indent, out);
                let next = self.fresh("i");
                let _ = writeln!(out, "{indent}{next} = arith.muli {stride}, {n} : index");
                stride = next;
            }
        }
        strides
    }

    /// The box of `operand` at the offsets `offsets` gives at the reader's
    /// point (`reader_dims`), of the static shape of `ty`: a subview.
    pub(super) fn dynamic_slice(
        &mut self,
        operand: &View,
        offsets: &AffineMap,
        reader_dims: &[String],
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) -> View {
        let at: Vec<String> = offsets
            .results
            .iter()
            .map(|e| {
                self.apply(
                    "affine.apply",
                    std::slice::from_ref(e),
                    offsets.num_dims,
                    offsets.num_symbols,
                    reader_dims,
                    indent,
                    out,
                )
            })
            .collect();
        let (_, element, strides, _) = memref_layout(&operand.ty).expect("views are strided memrefs");
        let sizes: Vec<String> = ty.shape.iter().map(i64::to_string).collect();
        let view_ty = format!("memref<{}x{element}, strided<[{}], offset: ?>>", sizes.join("x"), strides.join(", "));
        let view_ty = if sizes.is_empty() { format!("memref<{element}, strided<[], offset: ?>>") } else { view_ty };
        let ones: Vec<&str> = sizes.iter().map(|_| "1").collect();
        let name = self.fresh("slice");
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {}[{}] [{}] [{}] : {} to {view_ty}",
            operand.name,
            at.join(", "),
            sizes.join(", "),
            ones.join(", "),
            operand.ty
        );
        View { name, ty: view_ty, sizes }
    }

    /// Copies elements for a movement op: a loop nest over the result, each
    /// element loaded from where [`Movement::source`] says.
    pub(super) fn move_elements(
        &mut self,
        movement: &Movement,
        inputs: &[&View],
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        if let Movement::Concat(axis) = movement {
            self.concat(*axis, inputs, &[false, false], target, indent, out);
            return;
        }
        let e = ty.element.mlir();
        let nest = self.open_elementwise_loops(&target.sizes, indent, out);
        let (ivs, inner, c0, c1) = (nest.ivs.clone(), nest.inner.clone(), nest.zero.clone(), nest.one.clone());
        let load = |this: &mut Self, k: usize, at: &[String], inner: &str, out: &mut String| -> String {
            let v = this.fresh("x");
            let _ = writeln!(out, "{inner}{v} = memref.load {}[{}] : {}", inputs[k].name, at.join(", "), inputs[k].ty);
            v
        };
        let value = match movement {
            Movement::Permute(p) => {
                let mut at = vec![String::new(); ivs.len()];
                for (i, &k) in p.iter().enumerate() {
                    at[k] = ivs[i].clone();
                }
                load(self, 0, &at, &inner, out)
            }
            Movement::Flip(axis) => {
                let size = self.index_value(&target.sizes[*axis], &inner, out);
                let last = self.fresh("i");
                let _ = writeln!(out, "{inner}{last} = arith.subi {size}, {c1} : index");
                let flipped = self.fresh("i");
                let _ = writeln!(out, "{inner}{flipped} = arith.subi {last}, {} : index", ivs[*axis]);
                let mut at = ivs.clone();
                at[*axis] = flipped;
                load(self, 0, &at, &inner, out)
            }
            Movement::Slice(offsets) => {
                let mut at = Vec::new();
                for (iv, o) in ivs.iter().zip(offsets) {
                    let c = self.index_value(&o.to_string(), &inner, out);
                    let sum = self.fresh("i");
                    let _ = writeln!(out, "{inner}{sum} = arith.addi {iv}, {c} : index");
                    at.push(sum);
                }
                load(self, 0, &at, &inner, out)
            }
            Movement::Reshape => {
                // The row-major position in the result, then the operand
                // index at that position (sizes may be dynamic).
                let out_strides = self.row_major_strides(&target.sizes, &inner, out);
                let mut linear = c0.clone();
                for (iv, stride) in ivs.iter().zip(&out_strides) {
                    let term = self.fresh("i");
                    let _ = writeln!(out, "{inner}{term} = arith.muli {iv}, {stride} : index");
                    let next = self.fresh("i");
                    let _ = writeln!(out, "{inner}{next} = arith.addi {linear}, {term} : index");
                    linear = next;
                }
                let in_sizes = inputs[0].sizes.clone();
                let in_strides = self.row_major_strides(&in_sizes, &inner, out);
                let mut at = Vec::new();
                for (size, stride) in in_sizes.iter().zip(&in_strides) {
                    let n = self.index_value(size, &inner, out);
                    let q = self.fresh("i");
                    let _ = writeln!(out, "{inner}{q} = arith.divui {linear}, {stride} : index");
                    let r = self.fresh("i");
                    let _ = writeln!(out, "{inner}{r} = arith.remui {q}, {n} : index");
                    at.push(r);
                }
                load(self, 0, &at, &inner, out)
            }
            Movement::Expand => {
                let skip = ivs.len() - inputs[0].sizes.len();
                let at: Vec<String> = inputs[0]
                    .sizes
                    .iter()
                    .enumerate()
                    .map(|(k, n)| if n == "1" { c0.clone() } else { ivs[skip + k].clone() })
                    .collect();
                load(self, 0, &at, &inner, out)
            }
            Movement::Concat(_) => unreachable!("concat is copied operand by operand"),
            Movement::Arange => {
                let position = self.fresh("i");
                let _ = writeln!(out, "{inner}{position} = arith.index_cast {} : index to i64", ivs[0]);
                match ty.element {
                    ElementType::I64 => position,
                    ElementType::I32 => {
                        let v = self.fresh("x");
                        let _ = writeln!(out, "{inner}{v} = arith.trunci {position} : i64 to i32");
                        v
                    }
                    _ => {
                        let v = self.fresh("x");
                        let _ = writeln!(out, "{inner}{v} = arith.sitofp {position} : i64 to {e}");
                        v
                    }
                }
            }
        };
        let _ = writeln!(out, "{inner}memref.store {value}, {}[{}] : {}", target.name, ivs.join(", "), target.ty);
        nest.close(out);
    }
}

impl Emitter<'_, '_> {
    /// Concatenation along `axis`: one copy nest per operand, each over the
    /// operand's own sizes and storing at its offset along `axis`. Both
    /// sides of every copy run in row-major order, so the innermost loop is
    /// a contiguous copy the vectorizer turns into plain vector loads and
    /// stores (a single nest over the result with a per-element choice of
    /// operand became masked gathers). Operands already `placed` in their
    /// parts of `target` (see `destinations`) are not copied.
    pub(super) fn concat(
        &mut self,
        axis: usize,
        inputs: &[&View],
        placed: &[bool],
        target: &View,
        indent: &str,
        out: &mut String,
    ) {
        let first = self.index_value(&inputs[0].sizes[axis].clone(), indent, out);
        for (k, input) in inputs.iter().enumerate() {
            if placed.get(k).copied().unwrap_or(false) {
                continue;
            }
            let nest = self.open_elementwise_loops(&input.sizes, indent, out);
            let inner = nest.inner.clone();
            let v = self.fresh("x");
            let _ = writeln!(out, "{inner}{v} = memref.load {}[{}] : {}", input.name, nest.ivs.join(", "), input.ty);
            let mut at = nest.ivs.clone();
            if k > 0 {
                let shifted = self.fresh("i");
                let _ = writeln!(out, "{inner}{shifted} = arith.addi {}, {first} : index", nest.ivs[axis]);
                at[axis] = shifted;
            }
            let _ = writeln!(out, "{inner}memref.store {v}, {}[{}] : {}", target.name, at.join(", "), target.ty);
            nest.close(out);
        }
    }

    /// Rows of `table` at `indices` (clamped into the table; zeros from an
    /// empty table): a loop nest over the result.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn gather(
        &mut self,
        table: &View,
        indices: &View,
        index_element: ElementType,
        target: &View,
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) {
        let e = ty.element.mlir();
        let rows = self.index_value(&table.sizes[0], indent, out);
        let c0 = self.fresh("c");
        let c1 = self.fresh("c");
        let _ = writeln!(out, "{indent}{c0} = arith.constant 0 : index");
        let _ = writeln!(out, "{indent}{c1} = arith.constant 1 : index");
        let last = self.fresh("i");
        let _ = writeln!(out, "{indent}{last} = arith.subi {rows}, {c1} : index");
        let empty = self.fresh("b");
        let _ = writeln!(out, "{indent}{empty} = arith.cmpi eq, {rows}, {c0} : index");
        let nest = self.open_elementwise_loops(&target.sizes, indent, out);
        let (ivs, inner) = (nest.ivs.clone(), nest.inner.clone());
        let rank = indices.sizes.len();
        let raw = self.fresh("x");
        let _ =
            writeln!(out, "{inner}{raw} = memref.load {}[{}] : {}", indices.name, ivs[..rank].join(", "), indices.ty);
        let position = self.fresh("i");
        let _ = writeln!(out, "{inner}{position} = arith.index_cast {raw} : {} to index", index_element.mlir());
        let low = self.fresh("i");
        let _ = writeln!(out, "{inner}{low} = arith.maxsi {position}, {c0} : index");
        let clamped = self.fresh("i");
        let _ = writeln!(out, "{inner}{clamped} = arith.minsi {low}, {last} : index");
        let value = self.fresh("x");
        let _ = writeln!(out, "{inner}{value} = scf.if {empty} -> ({e}) {{");
        let zero = self.fresh("z");
        let _ = writeln!(out, "{inner}  {zero} = arith.constant {} : {e}", zero_literal(ty.element));
        let _ = writeln!(out, "{inner}  scf.yield {zero} : {e}");
        let _ = writeln!(out, "{inner}}} else {{");
        let mut at = vec![clamped];
        at.extend(ivs[rank..].iter().cloned());
        let loaded = self.fresh("x");
        let _ = writeln!(out, "{inner}  {loaded} = memref.load {}[{}] : {}", table.name, at.join(", "), table.ty);
        let _ = writeln!(out, "{inner}  scf.yield {loaded} : {e}");
        let _ = writeln!(out, "{inner}}}");
        let _ = writeln!(out, "{inner}memref.store {value}, {}[{}] : {}", target.name, ivs.join(", "), target.ty);
        nest.close(out);
    }
}

impl Emitter<'_, '_> {
    /// `source` (a point of type `from`) seen with the shape of `to`, no
    /// copy: a `memref.collapse_shape` to one dimension, then a
    /// `memref.expand_shape`. `None` unless `source` is a contiguous
    /// row-major view of static, non-empty sizes (what the views of points
    /// and buffers are; ranges of block stores and permuted views are not).
    pub(super) fn reshape_view(
        &mut self,
        source: &View,
        from: &PointType,
        to: &PointType,
        indent: &str,
        out: &mut String,
    ) -> Option<View> {
        let static_sizes = |p: &PointType| p.shape.iter().all(|&d| d > 0);
        if source.ty != view_type(from) || !static_sizes(from) || !static_sizes(to) {
            return None;
        }
        let count: i64 = from.shape.iter().product();
        if count != to.shape.iter().product::<i64>() {
            return None;
        }
        let flat_ty = PointType { shape: vec![count], element: from.element };
        let flat = match from.shape.len() {
            1 => source.name.clone(),
            0 => {
                let name = self.fresh("flat");
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.expand_shape {} [] output_shape [1] : {} into {}",
                    source.name,
                    source.ty,
                    view_type(&flat_ty)
                );
                name
            }
            rank => {
                let name = self.fresh("flat");
                let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.collapse_shape {} [[{}]] : {} into {}",
                    source.name,
                    all.join(", "),
                    source.ty,
                    view_type(&flat_ty)
                );
                name
            }
        };
        let name = match to.shape.len() {
            1 => flat,
            0 => {
                let name = self.fresh("reshaped");
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.collapse_shape {flat} [] : {} into {}",
                    view_type(&flat_ty),
                    view_type(to)
                );
                name
            }
            rank => {
                let name = self.fresh("reshaped");
                let all: Vec<String> = (0..rank).map(|d| d.to_string()).collect();
                let sizes: Vec<String> = to.shape.iter().map(i64::to_string).collect();
                let _ = writeln!(
                    out,
                    "{indent}{name} = memref.expand_shape {flat} [[{}]] output_shape [{}] : {} into {}",
                    all.join(", "),
                    sizes.join(", "),
                    view_type(&flat_ty),
                    view_type(to)
                );
                name
            }
        };
        Some(View::fixed(name, to))
    }
}
