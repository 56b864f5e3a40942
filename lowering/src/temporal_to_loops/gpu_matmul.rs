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
//! `TILE`; products of fewer rows (a decode step's) split `K` in slices
//! summed in two stages (`gpu_split_k`), or, with a short `K`, take the
//! flattened mapping of `linalg.matmul` (a thread per element).
//! `gpu-kernel-outlining` outlines the launch like the mapped loops.

use super::Emitter;
use super::kernels::element_type;
use super::views::{View, static_size};
use crate::ir_builder::{Builder, Compare};
use melior::ir::attribute::{DenseI32ArrayAttribute, IntegerAttribute};
use melior::ir::operation::OperationBuilder;
use melior::ir::r#type::MemRefType;
use melior::ir::{Attribute, Identifier, Type, Value};
use tempo_passes::program::ElementType;

/// Rows and columns of a tile (and threads per block dimension).
pub(super) const TILE: i64 = 16;

impl Emitter<'_, '_, '_> {
    /// Whether `a @ b` of these views takes the shared-memory kernel.
    pub(super) fn uses_gpu_matmul(&self, a: &View, b: &View, element: ElementType) -> bool {
        self.gpu
            && element.is_float()
            && a.sizes.len() == 2
            && b.sizes.len() == 2
            && static_size(&a.sizes[0]).is_none_or(|m| m >= TILE)
    }
}

type Built<T> = Result<T, String>;

/// `target = a @ b` (2-D, floats) as one tiled `gpu.launch` (see the
/// module's notes).
pub(super) fn build_gpu_matmul<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &View<'c, 'a>,
    bm: &View<'c, 'a>,
    target: &View<'c, 'a>,
    element: ElementType,
) -> Built<()> {
    let context = b.context();
    let e = element_type(b, element);
    let (m, k, n) = (b.extent(a.sizes[0])?, b.extent(a.sizes[1])?, b.extent(bm.sizes[1])?);
    let (c0, c1, tile) = (b.index(0)?, b.index(1)?, b.index(TILE)?);
    let grid_n = b.arith("ceildivui", n, tile)?;
    let grid_m = b.arith("ceildivui", m, tile)?;
    let k_tiles = b.arith("ceildivui", k, tile)?;
    let workgroup =
        Attribute::parse(context, "#gpu.address_space<workgroup>").ok_or("compiler fault: the workgroup space")?;
    let shared: Type = MemRefType::new(e, &[TILE, TILE], None, Some(workgroup)).into();
    let index = b.index_type();
    let mut arguments = vec![index; 12];
    arguments.extend([shared, shared]);
    let region = melior::ir::Region::new();
    let block_arguments: Vec<(Type, melior::ir::Location)> = arguments.iter().map(|&t| (t, b.location)).collect();
    {
        use melior::ir::{BlockLike, RegionLike};
        let block = region.append_block(melior::ir::Block::new(&block_arguments));
        let terminator = OperationBuilder::new("gpu.terminator", b.location)
            .build()
            .map_err(|e| format!("compiler fault: cannot build 'gpu.terminator': {e}"))?;
        block.append_operation(terminator);
    }
    let segments = DenseI32ArrayAttribute::new(context, &[0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]).into();
    let attributions = IntegerAttribute::new(b.integer_type(64), 2).into();
    let launch = OperationBuilder::new("gpu.launch", b.location)
        .add_operands(&[grid_n, grid_m, c1, tile, tile, c1])
        .add_attributes(&[
            (Identifier::new(context, "operandSegmentSizes"), segments),
            (Identifier::new(context, "workgroup_attributions"), attributions),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| format!("compiler fault: cannot build 'gpu.launch': {e}"))?;
    let (body, arguments) = b.inside_terminated(launch)?;
    // Block and thread indices, then the tiles of A and B in shared memory.
    let (bx, by, tx, ty) = (arguments[0], arguments[1], arguments[3], arguments[4]);
    let (a_tile, b_tile) = (arguments[12], arguments[13]);
    let zero = super::movement::zero(&body, element)?;
    let row = body.arith("addi", body.arith("muli", by, tile)?, ty)?;
    let col = body.arith("addi", body.arith("muli", bx, tile)?, tx)?;
    let row_in = body.compare(Compare::Ult, row, m)?;
    let col_in = body.compare(Compare::Ult, col, n)?;
    let (tiles, t, sum, acc) = body.scf_for_carrying(c0, k_tiles, c1, &[zero])?;
    let k0 = tiles.arith("muli", t, tile)?;
    // A's element for this thread (0 outside A), and B's.
    let element_or_zero =
        |inside: Value<'c, 'a>, from: Value<'c, 'a>, at: [Value<'c, 'a>; 2]| -> Built<Value<'c, 'a>> {
            let (then, otherwise, values) = tiles.scf_if(inside, &[e])?;
            then.yield_values("scf.yield", &[then.load(from, &at, e)?])?;
            otherwise.yield_values("scf.yield", &[zero])?;
            Ok(values[0])
        };
    let ka = tiles.arith("addi", k0, tx)?;
    let a_in = tiles.arith("andi", row_in, tiles.compare(Compare::Ult, ka, k)?)?;
    tiles.store(element_or_zero(a_in, a.value, [row, ka])?, a_tile, &[ty, tx])?;
    let kb = tiles.arith("addi", k0, ty)?;
    let b_in = tiles.arith("andi", tiles.compare(Compare::Ult, kb, k)?, col_in)?;
    tiles.store(element_or_zero(b_in, bm.value, [kb, col])?, b_tile, &[ty, tx])?;
    tiles.op("gpu.barrier", &[], &[], &[])?;
    // The tile's products, in order, up to K.
    let len = tiles.arith("minui", tiles.arith("subi", k, k0)?, tile)?;
    let (products, kk, partial, total) = tiles.scf_for_carrying(c0, len, c1, &[sum[0]])?;
    let x = products.load(a_tile, &[ty, kk], e)?;
    let y = products.load(b_tile, &[kk, tx], e)?;
    let next = products.arith("addf", partial[0], products.arith("mulf", x, y)?)?;
    products.yield_values("scf.yield", &[next])?;
    tiles.op("gpu.barrier", &[], &[], &[])?;
    tiles.yield_values("scf.yield", &[total[0]])?;
    let inside = body.arith("andi", row_in, col_in)?;
    let (then, otherwise, _) = body.scf_if(inside, &[])?;
    then.store(acc[0], target.value, &[row, col])?;
    then.yield_values("scf.yield", &[])?;
    otherwise.yield_values("scf.yield", &[])
}

/// Elements of `K` one thread of a split product sums (see
/// [`Emitter::gpu_split_k`]).
pub(super) const K_SLICE: i64 = 32;

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// `target = a @ b` for the GPU where `a` has few rows (a decode
    /// step's `1 x K` or `batch x K` activations times a `K x N` weight):
    /// a thread per output element would leave the GPU idle and run a
    /// chain of `K` dependent loads, so `K` is split in slices of
    /// [`K_SLICE`], in two stages of parallel loops (kernels once mapped):
    ///
    /// ```text
    /// partial[s, m, n] = sum(a[m, k] * b[k, n] for k in slice s)   a thread per slice and element
    /// target[m, n]     = sum(partial[s, m, n] for s in order)       a thread per element
    /// ```
    ///
    /// Consecutive threads of stage 1 read consecutive columns of `b`
    /// (the loop is flattened with `n` innermost). The sums are associated
    /// by slices (compared with the interpreter within a tolerance, as the
    /// two-stage reductions are). Applies to 2-D times 2-D products with a
    /// static number of rows below [`TILE`] and vector-matrix products, of
    /// floats, with static `K` (at least two slices) and `N`; whether it
    /// did.
    pub(super) fn gpu_split_k(
        &mut self,
        a: &View<'c, 'a>,
        bm: &View<'c, 'a>,
        target: &View<'c, 'a>,
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<bool> {
        if !self.gpu || !element.is_float() || bm.sizes.len() != 2 {
            return Ok(false);
        }
        let rows = match a.sizes.len() {
            1 => None,
            2 => match static_size(&a.sizes[0]) {
                Some(m) if m < TILE => Some(m),
                _ => return Ok(false),
            },
            _ => return Ok(false),
        };
        let (Some(k), Some(n)) = (static_size(&bm.sizes[0]), static_size(&bm.sizes[1])) else { return Ok(false) };
        if k < 2 * K_SLICE {
            return Ok(false);
        }
        let slices = (k + K_SLICE - 1) / K_SLICE;
        let m = rows.unwrap_or(1);
        let e = element_type(b, element);
        // The partial sums, allocated once at entry.
        let entry = self.entry.at(b.location);
        let ty = MemRefType::new(e, &[slices, m, n], None, None).into();
        let partial = entry.alloc(ty, &[])?;
        self.exit.op("memref.dealloc", &[partial], &[], &[])?;
        let zero = super::movement::zero(b, element)?;
        let (c0, one, slice, kv) = (b.index(0)?, b.index(1)?, b.index(K_SLICE)?, b.index(k)?);
        let (sv, mv, nv) = (b.index(slices)?, b.index(m)?, b.index(n)?);
        // Stage 1: a thread per slice, row and column.
        let (inner, ivs) = b.scf_parallel(&[sv, mv, nv])?;
        let (s, row, col) = (ivs[0], ivs[1], ivs[2]);
        let lo = inner.arith("muli", s, slice)?;
        let hi = inner.arith("minui", inner.arith("addi", lo, slice)?, kv)?;
        let (body, kk, acc, sums) = inner.scf_for_carrying(lo, hi, one, &[zero])?;
        let x = match rows {
            Some(_) => body.load(a.value, &[row, kk], e)?,
            None => body.load(a.value, &[kk], e)?,
        };
        let y = body.load(bm.value, &[kk, col], e)?;
        body.yield_values("scf.yield", &[body.arith("addf", acc[0], body.arith("mulf", x, y)?)?])?;
        inner.store(sums[0], partial, &ivs)?;
        // Stage 2: a thread per element sums its slices in order.
        let (inner, ivs) = b.scf_parallel(&[mv, nv])?;
        let (body, s, acc, totals) = inner.scf_for_carrying(c0, sv, one, &[zero])?;
        let part = body.load(partial, &[s, ivs[0], ivs[1]], e)?;
        body.yield_values("scf.yield", &[body.arith("addf", acc[0], part)?])?;
        match rows {
            Some(_) => inner.store(totals[0], target.value, &ivs)?,
            None => inner.store(totals[0], target.value, &[ivs[1]])?,
        }
        Ok(true)
    }
}
