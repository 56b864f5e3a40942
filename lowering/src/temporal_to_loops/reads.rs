//! Reads in `lower-temporal-to-loops`: affine coordinates of the reader's
//! variables and the bounds, clamped into a source's extent, and views of
//! the ranges of points a range read covers.

use super::views::{UNKNOWN, View, key, strided};
use super::{Built, Emitter};
use crate::ir_builder::{Builder, Extent, affine_map};
use melior::ir::{
    Attribute, Value,
    attribute::{ArrayAttribute, BoolAttribute},
};
use tempo_dialects::store;
use tempo_passes::affine::AffineExpr;
use tempo_passes::affine::AffineMap;
use tempo_passes::program::{DYNAMIC, PointType};

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `op` (`affine.apply`, `affine.max`, `affine.min`) of `exprs` on the
    /// reader's variables and the bounds.
    pub(super) fn apply(
        &mut self,
        op: &str,
        exprs: &[AffineExpr],
        (num_dims, num_symbols): (usize, usize),
        reader_dims: &[Value<'c, 'a>],
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        if self.nest.arith_indices {
            let values: Vec<Value<'c, 'a>> =
                exprs.iter().map(|e| b.arith_expr(e, reader_dims, &self.function.bound_args)).collect::<Built<_>>()?;
            let fold = match op {
                "affine.max" => "maxsi",
                "affine.min" => "minsi",
                _ => "",
            };
            let mut values = values.into_iter();
            let first = values.next().ok_or("compiler fault: an affine map without results")?;
            return values.try_fold(first, |acc, v| b.arith(fold, acc, v));
        }
        let map = affine_map(self.context, num_dims, num_symbols, exprs);
        b.affine_value(op, map, &self.with_symbols(reader_dims))
    }

    /// `op` of `map`'s results: `affine.apply` of one result, else `many`
    /// (`affine.max` or `affine.min`).
    fn apply_map(
        &mut self,
        map: &AffineMap,
        many: &str,
        reader_dims: &[Value<'c, 'a>],
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let op = if map.results.len() > 1 { many } else { "affine.apply" };
        self.apply(op, &map.results, (map.num_dims, map.num_symbols), reader_dims, b)
    }

    /// `min(max(value, low), high)` on indices.
    pub(super) fn clamp(
        &mut self,
        value: Value<'c, 'a>,
        low: Value<'c, 'a>,
        high: Value<'c, 'a>,
        b: &Builder<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        b.arith("minsi", b.arith("maxsi", value, low)?, high)
    }

    /// A view of the box of points a range read selects, clamped into the
    /// source's extent (an empty interval gives a view of size 0).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn range_view(
        &mut self,
        source: usize,
        lower: &[AffineMap],
        upper: &[AffineMap],
        caps: &[AffineMap],
        reader_dims: &[Value<'c, 'a>],
        ty: &PointType,
        b: &Builder<'c, 'a>,
    ) -> Built<View<'c, 'a>> {
        let program = self.program;
        let src = &program.tensors[source];
        let mut offsets: Vec<Value<'c, 'a>> = Vec::new();
        let mut sizes: Vec<Extent<'c, 'a>> = Vec::new();
        let mut kept_sizes: Vec<Extent<'c, 'a>> = Vec::new();
        for (((lo_map, hi_map), cap), &d) in lower.iter().zip(upper).zip(caps).zip(&src.domain) {
            let mut lo = self.apply_map(lo_map, "affine.max", reader_dims, b)?;
            if hi_map.results.is_empty() {
                if !cap.results.is_empty() {
                    let capped = self.apply_map(cap, "affine.min", reader_dims, b)?;
                    lo = b.arith("minsi", lo, capped)?;
                }
                offsets.push(self.clamp(lo, self.function.zero_index, self.function.last_index[d], b)?);
                sizes.push(Extent::Static(1));
                continue;
            }
            let bound = self.function.bound_args[d];
            let lo = self.clamp(lo, self.function.zero_index, bound, b)?;
            let hi = self.apply_map(hi_map, "affine.min", reader_dims, b)?;
            let hi = self.clamp(hi, lo, bound, b)?;
            let len = b.arith("subi", hi, lo)?;
            // The largest this length can be, as a value of the entry block:
            // the bound, or the smallest constant `upper - lower` (a window).
            let width = hi_map
                .results
                .iter()
                .flat_map(|h| lo_map.results.iter().map(move |l| (h.linear(), l.linear())))
                .filter_map(|pair| match pair {
                    (Some((hd, hs, hc)), Some((ld, ls, lc))) if hd == ld && hs == ls => Some(hc.saturating_sub(lc)),
                    _ => None,
                })
                .min();
            let cap = match width {
                Some(w) => {
                    self.function.window_widths.insert(key(len), w.max(0));
                    let c = self.function.entry.index(w.max(0))?;
                    self.function.entry.arith("minsi", c, bound)?
                }
                None => {
                    self.function.growing_lengths.insert(key(len));
                    bound
                }
            };
            self.function.size_caps.insert(key(len), cap);
            offsets.push(lo);
            // A length the type states statically (checked before running)
            // is used as the number.
            let len = match ty.shape.get(kept_sizes.len()) {
                Some(&n) if n != DYNAMIC => Extent::Static(n),
                _ => Extent::Value(len),
            };
            sizes.push(len);
            kept_sizes.push(len);
        }
        // Strides of the store (row-major over [store dimensions..., point]):
        // static where every store dimension after it is.
        let point_elements: i64 = src.point.shape.iter().product();
        let store_dims = self.store_dims(source);
        let mut kept_strides = Vec::new();
        for (k, hi_map) in upper.iter().enumerate() {
            if hi_map.results.is_empty() {
                continue;
            }
            let mut later = store_dims.iter().filter(|&&(j, _)| j > k);
            let stride = later.try_fold(point_elements, |acc, &(_, n)| n.map(|n| acc * n as i64));
            kept_strides.push(stride.unwrap_or(UNKNOWN));
        }
        let mut point_strides = vec![1i64; src.point.shape.len()];
        for k in (0..src.point.shape.len().saturating_sub(1)).rev() {
            point_strides[k] = point_strides[k + 1] * src.point.shape[k + 1];
        }
        kept_strides.extend(point_strides.iter().copied());
        let dims: Vec<i64> = ty.shape.iter().map(|&d| if d == DYNAMIC { UNKNOWN } else { d }).collect();
        let element = super::views::element_type(self.context, ty.element);
        let view_ty = strided(self.context, element, &dims, &kept_strides, UNKNOWN);
        let store = self.store_of(source)?;
        kept_sizes.extend(src.point.shape.iter().map(|&d| Extent::Static(d)));
        if self.in_store(source) {
            let mut ranged: Vec<bool> = upper.iter().map(|m| !m.results.is_empty()).collect();
            let (mut offsets, mut sizes) = (offsets.clone(), sizes.clone());
            if let Some(slicing) = self.schedule.storage[source].slicing() {
                // A sliced store has no dimension for the dropped positions
                // (read at their present coordinates).
                for k in (0..ranged.len()).rev().filter(|&k| slicing.drops(k)) {
                    ranged.remove(k);
                    offsets.remove(k);
                    sizes.remove(k);
                }
            }
            let mut bounds = Vec::new();
            for ((offset, size), ranged) in offsets.iter().zip(&sizes).zip(&ranged) {
                bounds.push(*offset);
                if *ranged {
                    bounds.push(b.extent(*size)?);
                }
            }
            let flags: Vec<Attribute> = ranged.iter().map(|&r| BoolAttribute::new(self.context, r).into()).collect();
            let flags = ArrayAttribute::new(self.context, &flags).into();
            let op = b.insert_op(store::ReadRangeOp::build(self.context, b.location, store, &bounds, flags, view_ty));
            let value = op.result(0).map_err(|e| format!("compiler fault: store.read_range: {e}"))?.into();
            return Ok(View { value, sizes: kept_sizes });
        }
        let all_offsets: Vec<Extent> = offsets
            .iter()
            .map(|&o| Extent::Value(o))
            .chain(src.point.shape.iter().map(|_| Extent::Static(0)))
            .collect();
        let all_sizes: Vec<Extent> =
            sizes.iter().copied().chain(src.point.shape.iter().map(|&d| Extent::Static(d))).collect();
        let value = b.subview(store, &all_offsets, &all_sizes, view_ty)?;
        Ok(View { value, sizes: kept_sizes })
    }
}
