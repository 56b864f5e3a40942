//! Reads in `lower-temporal-to-loops`: affine coordinates of the reader's
//! variables and the bounds, clamped into a source's extent, and views of
//! the ranges of points a range read covers.

use super::{Emitter, View};
use std::fmt::Write;
use tempo_passes::affine::AffineExpr;
use tempo_passes::affine::AffineMap;
use tempo_passes::print::{exprs as mlir_exprs, header as map_header};
use tempo_passes::program::{DYNAMIC, PointType};

impl Emitter<'_, '_> {
    /// `op` (`affine.apply`, `affine.max`, `affine.min`) of `exprs` on the
    /// reader's variables and the bounds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply(
        &mut self,
        op: &str,
        exprs: &[AffineExpr],
        num_dims: usize,
        num_symbols: usize,
        reader_dims: &[String],
        indent: &str,
        out: &mut String,
    ) -> String {
        let c = self.fresh("i");
        let results = mlir_exprs(exprs, num_dims, num_symbols);
        let _ = writeln!(
            out,
            "{indent}{c} = {op} affine_map<{} -> ({})>({})[{}]",
            map_header(num_dims, num_symbols),
            results,
            reader_dims.join(", "),
            self.symbols()
        );
        c
    }

    /// `min(max(value, low), high)` on indices.
    pub(super) fn clamp(&mut self, value: &str, low: &str, high: &str, indent: &str, out: &mut String) -> String {
        let raised = self.fresh("i");
        let _ = writeln!(out, "{indent}{raised} = arith.maxsi {value}, {low} : index");
        let clamped = self.fresh("i");
        let _ = writeln!(out, "{indent}{clamped} = arith.minsi {raised}, {high} : index");
        clamped
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
        reader_dims: &[String],
        ty: &PointType,
        indent: &str,
        out: &mut String,
    ) -> View {
        let program = self.program;
        let src = &program.tensors[source];
        let mut offsets = Vec::new();
        let mut sizes = Vec::new();
        let mut kept_sizes = Vec::new();
        for (((lo_map, hi_map), cap), &d) in lower.iter().zip(upper).zip(caps).zip(&src.domain) {
            let op = if lo_map.results.len() > 1 { "affine.max" } else { "affine.apply" };
            let mut lo = self.apply(op, &lo_map.results, lo_map.num_dims, lo_map.num_symbols, reader_dims, indent, out);
            if hi_map.results.is_empty() {
                if !cap.results.is_empty() {
                    let op = if cap.results.len() > 1 { "affine.min" } else { "affine.apply" };
                    let capped = self.apply(op, &cap.results, cap.num_dims, cap.num_symbols, reader_dims, indent, out);
                    let lowered = self.fresh("i");
                    let _ = writeln!(out, "{indent}{lowered} = arith.minsi {lo}, {capped} : index");
                    lo = lowered;
                }
                let at = self.clamp(&lo, "%zero_index", &format!("%last{d}"), indent, out);
                offsets.push(at);
                sizes.push("1".to_string());
                continue;
            }
            let bound = self.bound_args[d].clone();
            let lo = self.clamp(&lo, "%zero_index", &bound, indent, out);
            let op = if hi_map.results.len() > 1 { "affine.min" } else { "affine.apply" };
            let hi = self.apply(op, &hi_map.results, hi_map.num_dims, hi_map.num_symbols, reader_dims, indent, out);
            let hi = self.clamp(&hi, &lo, &bound, indent, out);
            let len = self.fresh("i");
            let _ = writeln!(out, "{indent}{len} = arith.subi {hi}, {lo} : index");
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
                    let (c, m) = (self.fresh("cap"), self.fresh("cap"));
                    let _ = writeln!(self.entry, "    {c} = arith.constant {} : index", w.max(0));
                    let _ = writeln!(self.entry, "    {m} = arith.minsi {c}, {bound} : index");
                    m
                }
                None => {
                    self.growing_lengths.insert(len.clone());
                    bound.clone()
                }
            };
            self.size_caps.insert(len.clone(), cap);
            offsets.push(lo);
            // A length the type states statically (checked before running)
            // is used as the literal.
            let len = match ty.shape.get(kept_sizes.len()) {
                Some(&n) if n != DYNAMIC => n.to_string(),
                _ => len,
            };
            sizes.push(len.clone());
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
            kept_strides.push(stride.map_or("?".to_string(), |s| s.to_string()));
        }
        let mut point_strides = vec![1i64; src.point.shape.len()];
        for k in (0..src.point.shape.len().saturating_sub(1)).rev() {
            point_strides[k] = point_strides[k + 1] * src.point.shape[k + 1];
        }
        kept_strides.extend(point_strides.iter().map(i64::to_string));
        let shape_text: String =
            ty.shape.iter().map(|&d| if d == DYNAMIC { "?x".to_string() } else { format!("{d}x") }).collect();
        let view_ty =
            format!("memref<{shape_text}{}, strided<[{}], offset: ?>>", ty.element.mlir(), kept_strides.join(", "));
        let store = self.store[source].clone();
        let name = self.fresh("v");
        if self.in_store(source) {
            let mut ranged: Vec<&str> =
                upper.iter().map(|m| if m.results.is_empty() { "false" } else { "true" }).collect();
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
                bounds.push(offset.clone());
                if *ranged == "true" {
                    bounds.push(size.clone());
                }
            }
            let types: Vec<&str> = bounds.iter().map(|_| "index").collect();
            let _ = writeln!(
                out,
                "{indent}{name} = \"store.read_range\"({store}, {}) {{ranged = [{}]}} : ({}, {}) -> {view_ty}",
                bounds.join(", "),
                ranged.join(", "),
                self.store_type(source),
                types.join(", ")
            );
            kept_sizes.extend(src.point.shape.iter().map(i64::to_string));
            return View { name, ty: view_ty, sizes: kept_sizes };
        }
        let all_offsets: Vec<String> =
            offsets.iter().cloned().chain(src.point.shape.iter().map(|_| "0".to_string())).collect();
        let all_sizes: Vec<String> = sizes.iter().cloned().chain(src.point.shape.iter().map(i64::to_string)).collect();
        let strides: Vec<&str> = all_sizes.iter().map(|_| "1").collect();
        let _ = writeln!(
            out,
            "{indent}{name} = memref.subview {store}[{}] [{}] [{}] : {} to {view_ty}",
            all_offsets.join(", "),
            all_sizes.join(", "),
            strides.join(", "),
            self.store_type(source)
        );
        kept_sizes.extend(src.point.shape.iter().map(i64::to_string));
        View { name, ty: view_ty, sizes: kept_sizes }
    }
}
