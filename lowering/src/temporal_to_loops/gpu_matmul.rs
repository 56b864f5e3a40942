//! The GPU's matrix product in `lower-temporal-to-loops{gpu=true}`: a
//! `gpu.launch` of `TILE x TILE` threads per block, each block computing a
//! `(TILE * TM) x (TILE * TN)` tile of `C = A B` through shared memory,
//! each thread `TM x TN` elements of it held in registers:
//!
//! ```text
//! for each tile of K (TILE elements) in the block's range of K:
//!   As[ty + TILE*i][tx] = A[row_i][k0 + tx]   for i < TM   (0 outside A or the range)
//!   Bs[ty][tx + TILE*j] = B[k0 + ty][col_j]   for j < TN   (0 outside B or the range)
//!   barrier
//!   for k < min(TILE, end - k0):
//!     a_i = As[ty + TILE*i][k], b_j = Bs[k][tx + TILE*j]
//!     acc[i][j] += a_i * b_j
//!   barrier
//! C[row_i][col_j] = acc[i][j]                (inside C)
//! ```
//!
//! with `row_i = block_row + ty + TILE*i` and `col_j = block_col + tx +
//! TILE*j`: a warp's loads from global memory are coalesced (consecutive
//! threads, consecutive elements of a row), its reads of `As` are
//! broadcasts and of `Bs` consecutive words (no bank conflicts), and each
//! thread's `TM + TN` shared-memory reads per step feed `TM * TN`
//! multiply-adds (`TM = TN = 4`: 8 reads for 16, where one element per
//! thread takes 2 for 1). Every element of `C` is summed over `k` in
//! increasing order from zero, as the interpreter does; the padding of the
//! last tile is never added (its loop stops at the range's end).
//!
//! A product of few tiles (a decode's batch of 64 rows times a `768 x 768`
//! weight: 12 blocks of 64 x 64, on a GPU of 132 multiprocessors) splits
//! `K` in ranges too, the grid's third dimension: each block writes its
//! range's partial tile, and a second kernel sums an element's partial
//! results in order (associated by ranges: compared with the interpreter
//! within a tolerance, as the split reductions are). Only with static
//! sizes; each range at least [`MIN_SPLIT_TILES`] tiles of `K`.
//!
//! Used for matrices of two dimensions with `M` not statically below
//! `TILE`; `TM` follows `M` (4 from 64 rows or a dynamic number, 2 from
//! 32, else 1) and `TN` `N` likewise. Products of fewer rows (a decode
//! step's) split `K` in slices summed in two stages (`gpu_split_k`), or,
//! with a short `K`, take the flattened mapping of `linalg.matmul` (a
//! thread per element). `gpu-kernel-outlining` outlines the launch like
//! the mapped loops. `TEMPO_GPU_MATMUL=simple` in the compiler's
//! environment takes one element per thread and no split (the kernel
//! before register tiles, for comparisons on a GPU). With `fast-math` the
//! products and sums are fused multiply-adds.

use super::Emitter;
use super::kernels::element_type;
use super::views::{View, static_size};
use crate::ir_builder::{Builder, Compare};
use melior::ir::attribute::{DenseI32ArrayAttribute, IntegerAttribute};
use melior::ir::operation::OperationBuilder;
use melior::ir::r#type::MemRefType;
use melior::ir::{Attribute, Identifier, Type, Value};
use tempo_passes::program::ElementType;

/// Threads per block dimension, and elements of `K` per step.
pub(super) const TILE: i64 = 16;

/// Blocks a product's grid should have (two per multiprocessor of a
/// 132-multiprocessor GPU) before `K` is no longer split.
const TARGET_BLOCKS: i64 = 264;

/// Tiles of `K` each range of a split product has at least.
const MIN_SPLIT_TILES: i64 = 8;

/// The shape of one product's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    /// Elements per thread along `M` and `N`.
    pub tm: i64,
    pub tn: i64,
    /// Ranges of `K` (1: no split) and the elements of each (a multiple
    /// of `TILE`; the last range may be shorter).
    pub splits: i64,
    pub range: i64,
    /// Products and sums contracted into fused multiply-adds (with
    /// `fast-math`; otherwise each rounds, as the interpreter's).
    pub fused: bool,
}

/// Elements per thread along a dimension of `size` (`None`: dynamic).
fn per_thread(size: Option<i64>) -> i64 {
    match size {
        None => 4,
        Some(s) if s >= 4 * TILE => 4,
        Some(s) if s >= 2 * TILE => 2,
        Some(_) => 1,
    }
}

fn ceil_div(a: i64, b: i64) -> i64 {
    (a + b - 1) / b
}

/// The kernel's shape for an `m x k` times `k x n` product (sizes `None`
/// where dynamic); `simple`: one element per thread, no split.
pub(super) fn shape(m: Option<i64>, k: Option<i64>, n: Option<i64>, simple: bool) -> Shape {
    if simple {
        return Shape { tm: 1, tn: 1, splits: 1, range: 0, fused: false };
    }
    let (tm, tn) = (per_thread(m), per_thread(n));
    let unsplit = Shape { tm, tn, splits: 1, range: 0, fused: false };
    let (Some(m), Some(k), Some(n)) = (m, k, n) else { return unsplit };
    let blocks = ceil_div(m, TILE * tm) * ceil_div(n, TILE * tn);
    let most = k / (TILE * MIN_SPLIT_TILES);
    let wanted = ceil_div(TARGET_BLOCKS, blocks).min(most);
    if wanted < 2 {
        return unsplit;
    }
    let range = ceil_div(ceil_div(k, wanted), TILE) * TILE;
    let splits = ceil_div(k, range);
    match splits >= 2 {
        true => Shape { tm, tn, splits, range, fused: false },
        false => unsplit,
    }
}

impl<'c, 'a> Emitter<'_, 'c, 'a> {
    /// Whether `a @ b` of these views takes the shared-memory kernel.
    pub(super) fn uses_gpu_matmul(&self, a: &View, b: &View, element: ElementType) -> bool {
        self.options.gpu
            && element.is_float()
            && a.sizes.len() == 2
            && b.sizes.len() == 2
            && static_size(&a.sizes[0]).is_none_or(|m| m >= TILE)
    }

    /// `target = a @ b` by the shared-memory kernel (see the module's
    /// notes), its partial results (a split product) allocated at entry.
    pub(super) fn gpu_matmul(
        &mut self,
        a: &View<'c, 'a>,
        bm: &View<'c, 'a>,
        target: &View<'c, 'a>,
        element: ElementType,
        b: &Builder<'c, 'a>,
    ) -> Built<()> {
        let simple = std::env::var("TEMPO_GPU_MATMUL").is_ok_and(|v| v == "simple");
        let (m, k, n) = (static_size(&a.sizes[0]), static_size(&a.sizes[1]), static_size(&bm.sizes[1]));
        let shape = Shape { fused: self.options.fast_math, ..shape(m, k, n, simple) };
        let partial = match (shape.splits > 1, m, n) {
            (true, Some(m), Some(n)) => {
                let ty = MemRefType::new(element_type(b, element), &[shape.splits, m, n], None, None).into();
                let partial = self.function.entry.at(b.location).alloc(ty, &[])?;
                self.function.exit.op("memref.dealloc", &[partial], &[], &[])?;
                Some(partial)
            }
            _ => None,
        };
        build_gpu_matmul(b, a, bm, target, element, shape, partial)
    }
}

type Built<T> = Result<T, String>;

/// `target = a @ b` (2-D, floats) as one tiled `gpu.launch` of `shape`
/// (see the module's notes); with `partial` (`splits x M x N`), the
/// ranges' partial products there, then their sums in order into
/// `target`.
pub(super) fn build_gpu_matmul<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &View<'c, 'a>,
    bm: &View<'c, 'a>,
    target: &View<'c, 'a>,
    element: ElementType,
    shape: Shape,
    partial: Option<Value<'c, 'a>>,
) -> Built<()> {
    let context = b.context();
    let e = element_type(b, element);
    let (tm, tn) = (shape.tm as usize, shape.tn as usize);
    let (m, k, n) = (b.extent(a.sizes[0])?, b.extent(a.sizes[1])?, b.extent(bm.sizes[1])?);
    let (c0, c1, tile) = (b.index(0)?, b.index(1)?, b.index(TILE)?);
    let (block_m, block_n) = (b.index(TILE * shape.tm)?, b.index(TILE * shape.tn)?);
    let grid_n = b.arith("ceildivui", n, block_n)?;
    let grid_m = b.arith("ceildivui", m, block_m)?;
    let splits = b.index(shape.splits)?;
    let workgroup =
        Attribute::parse(context, "#gpu.address_space<workgroup>").ok_or("compiler fault: the workgroup space")?;
    let a_shared: Type = MemRefType::new(e, &[TILE * shape.tm, TILE], None, Some(workgroup)).into();
    let b_shared: Type = MemRefType::new(e, &[TILE, TILE * shape.tn], None, Some(workgroup)).into();
    let index = b.index_type();
    let mut arguments = vec![index; 12];
    arguments.extend([a_shared, b_shared]);
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
        .add_operands(&[grid_n, grid_m, splits, tile, tile, c1])
        .add_attributes(&[
            (Identifier::new(context, "operandSegmentSizes"), segments),
            (Identifier::new(context, "workgroup_attributions"), attributions),
        ])
        .add_regions([region])
        .build()
        .map_err(|e| format!("compiler fault: cannot build 'gpu.launch': {e}"))?;
    let (body, arguments) = b.inside_terminated(launch)?;
    // Block and thread indices, then the tiles of A and B in shared memory.
    let (bx, by, bz, tx, ty) = (arguments[0], arguments[1], arguments[2], arguments[3], arguments[4]);
    let (a_tile, b_tile) = (arguments[12], arguments[13]);
    let zero = super::movement::zero(&body, element)?;
    // This block's range of K: [lo, hi).
    let (lo, hi) = match shape.splits {
        1 => (c0, k),
        _ => {
            let range = body.index(shape.range)?;
            let lo = body.arith("muli", bz, range)?;
            (lo, body.arith("minui", body.arith("addi", lo, range)?, k)?)
        }
    };
    let row0 = body.arith("addi", body.arith("muli", by, block_m)?, ty)?;
    let col0 = body.arith("addi", body.arith("muli", bx, block_n)?, tx)?;
    let offsets =
        |count: usize| -> Built<Vec<Value<'c, 'a>>> { (0..count).map(|i| body.index(TILE * i as i64)).collect() };
    let (row_offsets, col_offsets) = (offsets(tm)?, offsets(tn)?);
    let rows: Vec<Value> = row_offsets.iter().map(|&o| body.arith("addi", row0, o)).collect::<Built<_>>()?;
    let cols: Vec<Value> = col_offsets.iter().map(|&o| body.arith("addi", col0, o)).collect::<Built<_>>()?;
    let rows_in: Vec<Value> = rows.iter().map(|&r| body.compare(Compare::Ult, r, m)).collect::<Built<_>>()?;
    let cols_in: Vec<Value> = cols.iter().map(|&c| body.compare(Compare::Ult, c, n)).collect::<Built<_>>()?;
    let length = body.arith("subi", hi, lo)?;
    let k_tiles = body.arith("ceildivui", length, tile)?;
    let (tiles, t, sums, accs) = body.scf_for_carrying(c0, k_tiles, c1, &vec![zero; tm * tn])?;
    let k0 = tiles.arith("addi", lo, tiles.arith("muli", t, tile)?)?;
    // An element of A or B for this thread (0 outside it or the range).
    let element_or_zero =
        |inside: Value<'c, 'a>, from: Value<'c, 'a>, at: [Value<'c, 'a>; 2]| -> Built<Value<'c, 'a>> {
            let (then, otherwise, values) = tiles.scf_if(inside, &[e])?;
            then.yield_values("scf.yield", &[then.load(from, &at, e)?])?;
            otherwise.yield_values("scf.yield", &[zero])?;
            Ok(values[0])
        };
    let ka = tiles.arith("addi", k0, tx)?;
    let ka_in = tiles.compare(Compare::Ult, ka, hi)?;
    for i in 0..tm {
        let a_in = tiles.arith("andi", rows_in[i], ka_in)?;
        let at = tiles.arith("addi", ty, row_offsets[i])?;
        tiles.store(element_or_zero(a_in, a.value, [rows[i], ka])?, a_tile, &[at, tx])?;
    }
    let kb = tiles.arith("addi", k0, ty)?;
    let kb_in = tiles.compare(Compare::Ult, kb, hi)?;
    for j in 0..tn {
        let b_in = tiles.arith("andi", kb_in, cols_in[j])?;
        let at = tiles.arith("addi", tx, col_offsets[j])?;
        tiles.store(element_or_zero(b_in, bm.value, [kb, cols[j]])?, b_tile, &[ty, at])?;
    }
    tiles.op("gpu.barrier", &[], &[], &[])?;
    // The tile's products, in order, up to the range's end.
    let len = tiles.arith("minui", tiles.arith("subi", hi, k0)?, tile)?;
    let (products, kk, partials, totals) = tiles.scf_for_carrying(c0, len, c1, &sums)?;
    let xs: Vec<Value> = (0..tm)
        .map(|i| products.load(a_tile, &[products.arith("addi", ty, row_offsets[i])?, kk], e))
        .collect::<Built<_>>()?;
    let ys: Vec<Value> = (0..tn)
        .map(|j| products.load(b_tile, &[kk, products.arith("addi", tx, col_offsets[j])?], e))
        .collect::<Built<_>>()?;
    let mut next = Vec::with_capacity(tm * tn);
    for i in 0..tm {
        for j in 0..tn {
            let sum = partials[i * tn + j];
            next.push(match shape.fused {
                true => products.value("math.fma", &[xs[i], ys[j], sum], e, &[])?,
                false => products.arith("addf", sum, products.arith("mulf", xs[i], ys[j])?)?,
            });
        }
    }
    products.yield_values("scf.yield", &next)?;
    tiles.op("gpu.barrier", &[], &[], &[])?;
    tiles.yield_values("scf.yield", &totals)?;
    for i in 0..tm {
        for j in 0..tn {
            let inside = body.arith("andi", rows_in[i], cols_in[j])?;
            let (then, otherwise, _) = body.scf_if(inside, &[])?;
            match partial {
                Some(p) => then.store(accs[i * tn + j], p, &[bz, rows[i], cols[j]])?,
                None => then.store(accs[i * tn + j], target.value, &[rows[i], cols[j]])?,
            }
            then.yield_values("scf.yield", &[])?;
            otherwise.yield_values("scf.yield", &[])?;
        }
    }
    // A split product: a thread per element sums its ranges in order.
    if let Some(p) = partial {
        let start = super::movement::zero(b, element)?;
        let (inner, ivs) = b.scf_parallel(&[m, n])?;
        let (sum, s, acc, total) = inner.scf_for_carrying(c0, splits, c1, &[start])?;
        let part = sum.load(p, &[s, ivs[0], ivs[1]], e)?;
        sum.yield_values("scf.yield", &[sum.arith("addf", acc[0], part)?])?;
        inner.store(total[0], target.value, &ivs)?;
    }
    Ok(())
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
        if !self.options.gpu || !element.is_float() || bm.sizes.len() != 2 {
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
        let entry = self.function.entry.at(b.location);
        let ty = MemRefType::new(e, &[slices, m, n], None, None).into();
        let partial = entry.alloc(ty, &[])?;
        self.function.exit.op("memref.dealloc", &[partial], &[], &[])?;
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

#[cfg(test)]
mod tests {
    use super::{Shape, shape};

    #[test]
    fn few_tiles_split_k_and_many_do_not() {
        // A decode's 64 rows times 768 x 768: 12 blocks of 64 x 64, K in 6
        // ranges of 128 (each at least 8 tiles of 16).
        assert_eq!(
            shape(Some(64), Some(768), Some(768), false),
            Shape { tm: 4, tn: 4, splits: 6, range: 128, fused: false }
        );
        // K = 3072: 22 ranges of 144 (the last 48).
        assert_eq!(
            shape(Some(64), Some(3072), Some(768), false),
            Shape { tm: 4, tn: 4, splits: 22, range: 144, fused: false }
        );
        // Enough blocks, a short K, or a dynamic size: no split.
        assert_eq!(shape(Some(4096), Some(768), Some(768), false).splits, 1);
        assert_eq!(shape(Some(64), Some(200), Some(64), false).splits, 1);
        assert_eq!(shape(None, Some(768), Some(768), false), Shape { tm: 4, tn: 4, splits: 1, range: 0, fused: false });
        // Fewer rows or columns: fewer elements per thread.
        assert_eq!(
            (shape(Some(37), Some(50), Some(29), false).tm, shape(Some(37), Some(50), Some(29), false).tn),
            (2, 1)
        );
        // TEMPO_GPU_MATMUL=simple: one element per thread.
        assert_eq!(
            shape(Some(64), Some(768), Some(768), true),
            Shape { tm: 1, tn: 1, splits: 1, range: 0, fused: false }
        );
    }
}
