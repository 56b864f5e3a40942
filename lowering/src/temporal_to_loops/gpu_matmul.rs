//! The GPU's matrix product in `lower-temporal-to-loops{gpu=true}`: a
//! `gpu.launch` of `TILE x TILE` threads per block, each block computing a
//! `TILE x TILE` tile of `C = A B` through shared memory:
//!
//! ```text
//! for each tile of K:
//!   As[ty][tx] = A[row][k0 + tx]   (0 outside A)
//!   Bs[ty][tx] = B[k0 + ty][col]   (0 outside B)
//!   barrier
//!   acc += As[ty][k] * Bs[k][tx]   for k < min(TILE, K - k0)
//!   barrier
//! C[row][col] = acc                (inside C)
//! ```
//!
//! Each element of `A` and `B` is read from global memory once per tile
//! instead of once per product, and reads are coalesced (consecutive
//! threads read consecutive elements of a row). Every element of `C` is
//! summed over `k` in increasing order from zero, as the interpreter does;
//! the padding of the last tile is never added (its loop stops at `K`).
//!
//! Used for matrices of two dimensions with `M` not statically below
//! `TILE` (one-row products, a decode step's, are better served by the
//! flattened mapping of `linalg.matmul`, a thread per column).
//! `gpu-kernel-outlining` outlines the launch like the mapped loops.

use super::*;

/// Rows and columns of a tile (and threads per block dimension).
pub(super) const TILE: i64 = 16;

impl Emitter<'_, '_> {
    /// Whether `a @ b` of these views takes the shared-memory kernel.
    pub(super) fn uses_gpu_matmul(&self, a: &View, b: &View, element: ElementType) -> bool {
        self.gpu
            && element.is_float()
            && a.sizes.len() == 2
            && b.sizes.len() == 2
            && a.sizes[0].parse::<i64>().ok().is_none_or(|m| m >= TILE)
    }

    /// `target = a @ b` (2-D, floats) as one tiled `gpu.launch`.
    // (Every line is a `format!`, constant or not, so the kernel reads as one
    // listing.)
    #[allow(clippy::useless_format)]
    pub(super) fn gpu_matmul(
        &mut self,
        a: &View,
        b: &View,
        target: &View,
        element: ElementType,
        indent: &str,
        out: &mut String,
    ) {
        let e = element.mlir();
        let id = self.fresh("mm");
        let p = id.trim_start_matches('%').to_string();
        let m = self.index_value(&a.sizes[0], indent, out);
        let k = self.index_value(&a.sizes[1], indent, out);
        let n = self.index_value(&b.sizes[1], indent, out);
        let shared = format!("memref<{TILE}x{TILE}x{e}, #gpu.address_space<workgroup>>");
        let lines = [
            format!("%{p}c0 = arith.constant 0 : index"),
            format!("%{p}c1 = arith.constant 1 : index"),
            format!("%{p}tile = arith.constant {TILE} : index"),
            format!("%{p}gm = arith.ceildivui {m}, %{p}tile : index"),
            format!("%{p}gn = arith.ceildivui {n}, %{p}tile : index"),
            format!("%{p}kt = arith.ceildivui {k}, %{p}tile : index"),
            format!(
                "gpu.launch blocks(%{p}bx, %{p}by, %{p}bz) in (%{p}gx = %{p}gn, %{p}gy = %{p}gm, %{p}gz = %{p}c1) \
                 threads(%{p}tx, %{p}ty, %{p}tz) in (%{p}sx = %{p}tile, %{p}sy = %{p}tile, %{p}sz = %{p}c1) \
                 workgroup(%{p}as : {shared}, %{p}bs : {shared}) {{"
            ),
        ];
        for line in lines {
            let _ = writeln!(out, "{indent}{line}");
        }
        let ind = format!("{indent}  ");
        let zero = zero_literal(element);
        let body = [
            format!("%{p}z = arith.constant {zero} : {e}"),
            format!("%{p}r0 = arith.muli %{p}by, %{p}tile : index"),
            format!("%{p}row = arith.addi %{p}r0, %{p}ty : index"),
            format!("%{p}q0 = arith.muli %{p}bx, %{p}tile : index"),
            format!("%{p}col = arith.addi %{p}q0, %{p}tx : index"),
            format!("%{p}rin = arith.cmpi ult, %{p}row, {m} : index"),
            format!("%{p}cin = arith.cmpi ult, %{p}col, {n} : index"),
            format!("%{p}acc = scf.for %{p}t = %{p}c0 to %{p}kt step %{p}c1 iter_args(%{p}s = %{p}z) -> ({e}) {{"),
            format!("  %{p}k0 = arith.muli %{p}t, %{p}tile : index"),
            // A's element for this thread (0 outside A).
            format!("  %{p}ka = arith.addi %{p}k0, %{p}tx : index"),
            format!("  %{p}kain = arith.cmpi ult, %{p}ka, {k} : index"),
            format!("  %{p}ain = arith.andi %{p}rin, %{p}kain : i1"),
            format!("  %{p}va = scf.if %{p}ain -> ({e}) {{"),
            format!("    %{p}x = memref.load {}[%{p}row, %{p}ka] : {}", a.name, a.ty),
            format!("    scf.yield %{p}x : {e}"),
            format!("  }} else {{"),
            format!("    scf.yield %{p}z : {e}"),
            format!("  }}"),
            format!("  memref.store %{p}va, %{p}as[%{p}ty, %{p}tx] : {shared}"),
            // B's element for this thread (0 outside B).
            format!("  %{p}kb = arith.addi %{p}k0, %{p}ty : index"),
            format!("  %{p}kbin = arith.cmpi ult, %{p}kb, {k} : index"),
            format!("  %{p}bin = arith.andi %{p}kbin, %{p}cin : i1"),
            format!("  %{p}vb = scf.if %{p}bin -> ({e}) {{"),
            format!("    %{p}y = memref.load {}[%{p}kb, %{p}col] : {}", b.name, b.ty),
            format!("    scf.yield %{p}y : {e}"),
            format!("  }} else {{"),
            format!("    scf.yield %{p}z : {e}"),
            format!("  }}"),
            format!("  memref.store %{p}vb, %{p}bs[%{p}ty, %{p}tx] : {shared}"),
            format!("  gpu.barrier"),
            // The tile's products, in order, up to K.
            format!("  %{p}left = arith.subi {k}, %{p}k0 : index"),
            format!("  %{p}len = arith.minui %{p}left, %{p}tile : index"),
            format!("  %{p}u = scf.for %{p}kk = %{p}c0 to %{p}len step %{p}c1 iter_args(%{p}w = %{p}s) -> ({e}) {{"),
            format!("    %{p}ea = memref.load %{p}as[%{p}ty, %{p}kk] : {shared}"),
            format!("    %{p}eb = memref.load %{p}bs[%{p}kk, %{p}tx] : {shared}"),
            format!("    %{p}pr = arith.mulf %{p}ea, %{p}eb : {e}"),
            format!("    %{p}sum = arith.addf %{p}w, %{p}pr : {e}"),
            format!("    scf.yield %{p}sum : {e}"),
            format!("  }}"),
            format!("  gpu.barrier"),
            format!("  scf.yield %{p}u : {e}"),
            format!("}}"),
            format!("%{p}cin2 = arith.andi %{p}rin, %{p}cin : i1"),
            format!("scf.if %{p}cin2 {{"),
            format!("  memref.store %{p}acc, {}[%{p}row, %{p}col] : {}", target.name, target.ty),
            format!("}}"),
            format!("gpu.terminator"),
        ];
        for line in body {
            let _ = writeln!(out, "{ind}{line}");
        }
        let _ = writeln!(out, "{indent}}}");
    }
}
