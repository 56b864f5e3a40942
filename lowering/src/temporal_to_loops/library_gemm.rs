//! Contractions as calls of the runtime's GEMM (`lower-temporal-to-loops`
//! with `fast-math` and `library-gemm`).
//!
//! `C = A B` for 2-D operands (and batched 3-D ones, one call per batch
//! index) becomes a call of `tempo_gemm`, which `tempo-run` and the Rust
//! API register with the JIT: a cache-blocked, packed, multithreaded
//! matrix product (the `gemm` crate, with AVX-512 kernels where the CPU has
//! them). Any strides are passed as they are, so a weight read transposed
//! (the backward pass's `dY W^T`) is neither copied nor gathered. An
//! [`Epilogue`] (elementwise ops fused after the product) then runs as one
//! loop over `C`.
//!
//! The library sums each element of `C` in its own order (blocks of `k`,
//! several accumulators), which only fast math allows; exact contractions
//! keep the register-tiled kernel of [`super::matmul_kernel`], whose order is
//! the interpreter's. Products too small to pay for the call (fewer than
//! [`LIBRARY_GRAIN`] multiply-adds with static sizes, or one row of `A`:
//! the vector-matrix products of a decode step) keep the kernel too.
//!
//! The call passes every operand as integers (element kind, sizes, then
//! the address of element (0, 0) and the row and column strides in
//! elements of C, A and B), so the generated code needs no descriptor
//! layout, only `tempo_gemm` at run time: a tool that lowers with this
//! option must provide that symbol (the plug-in's pipelines do not set it).

use super::kernels::element_type;
use super::matmul_kernel::{Epilogue, Shape};
use super::views::View;
use crate::ir_builder::{Builder, Extent, declare};
use melior::ir::{Type, Value, r#type::MemRefType};
use tempo_passes::program::ElementType;

/// Multiply-adds (static sizes) from which a contraction calls the
/// library. The call costs about a microsecond of fixed work (dispatch,
/// packing set-up), while the library's kernels run at 120 to 165
/// GFLOP/s on one core here against 30 to 60 for the register-tiled
/// kernel on large products; below 2^19 the kernel, which fuses the
/// epilogue and needs no call, was as fast or faster (the LSTM training
/// step at batch 16, width 64, products of 2^18: 7.9 ms per iteration with
/// the kernel, 8.6 ms calling the library).
pub const LIBRARY_GRAIN: i64 = 1 << 19;

/// Multiply-adds from which, with `parallel`, a product is split into
/// column blocks (or, with too few columns, row blocks) computed by
/// separate calls in an `scf.parallel` loop
/// (OpenMP threads, the runtime of the generated code's other parallel
/// loops; splitting inside the library with its own thread pool next to
/// them was slower).
pub const PARALLEL_GRAIN: i64 = 1 << 21;

/// Column blocks of a parallel product, at most (each at least
/// [`MIN_BLOCK_COLUMNS`] wide).
const PARALLEL_BLOCKS: i64 = 4;
const MIN_BLOCK_COLUMNS: i64 = 64;
/// Rows of a block of a product split by rows, at least.
const MIN_BLOCK_ROWS: i64 = 32;

/// The name of the runtime function.
pub const SYMBOL: &str = "tempo_gemm";

/// Whether the call applies: float elements, 2-D or batched 3-D operands,
/// more than one row of `A` and, with static sizes, at least
/// [`LIBRARY_GRAIN`] multiply-adds.
pub(super) fn applies(a: &Shape, b: &Shape, c: &Shape, element: ElementType) -> bool {
    if !matches!(element, ElementType::F32 | ElementType::F64) {
        return false;
    }
    let rank = c.sizes.len();
    if !matches!((a.sizes.len(), b.sizes.len(), rank), (2, 2, 2) | (3, 3, 3)) {
        return false;
    }
    if c.sizes[rank - 2].is_some_and(|m| m < 2) {
        return false;
    }
    let dims = [c.sizes[rank - 2], c.sizes[rank - 1], a.sizes[rank - 1]];
    match dims.iter().copied().collect::<Option<Vec<i64>>>() {
        Some(v) => v.iter().product::<i64>() >= LIBRARY_GRAIN,
        None => true,
    }
}

/// Builds the call computing `C = A B` (C overwritten), then the epilogue
/// over C. `@tempo_gemm` is declared in the module if it is not yet.
pub(super) fn build<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &View<'c, 'a>,
    bm: &View<'c, 'a>,
    c: &View<'c, 'a>,
    element: ElementType,
    epilogue: Option<&Epilogue<'_, 'c, 'a>>,
    parallel: bool,
) -> Result<(), String> {
    let i64_type = b.integer_type(64);
    let module = b.module()?;
    declare(module, SYMBOL, &[i64_type; 13], &[])?;
    // The element kind the runtime's GEMM takes: 0 for f32, 1 for f64.
    let kind = i64::from(element == ElementType::F64);
    let e = element_type(b, element);
    let rank = c.sizes.len();
    let batched = rank == 3;
    let bytes = b.index(element.byte_size() as i64)?;
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let kind = b.i64(kind)?;
    // Base address (of element 0, in bytes), sizes and strides of each
    // operand.
    let operand = |x: &View<'c, 'a>| metadata(b, x, e, bytes);
    let (c_ptr, c_sizes, c_strides) = operand(c)?;
    let (a_ptr, a_sizes, a_strides) = operand(a)?;
    let (b_ptr, _, b_strides) = operand(bm)?;
    // The multiply-adds of one product (static sizes), and of the batch.
    let number = |s: &Extent| if let Extent::Static(n) = s { Some(*n) } else { None };
    let work = [&c.sizes[rank - 2], &c.sizes[rank - 1], &a.sizes[rank - 1]]
        .iter()
        .map(|s| number(s))
        .try_fold(1i64, |acc, v| v.map(|v| acc.saturating_mul(v)));
    let batch_work = work.zip(number(&c.sizes[0])).map(|(w, n)| w.saturating_mul(n));
    // With `parallel`, the batch's products (the heads of an attention
    // over a whole sequence) spread over threads, one call each.
    let spread_batch = batched
        && parallel
        && !b.inside_parallel()
        && batch_work.is_some_and(|w| w >= PARALLEL_GRAIN)
        && matches!(c.sizes[0], Extent::Static(n) if n > 1);
    let (ind, c_ptr, a_ptr, b_ptr) = if batched {
        let (inner, bi) = if spread_batch {
            let (inner, ivs) = b.scf_parallel(&[c_sizes[0]])?;
            (inner, ivs[0])
        } else {
            b.scf_for(c0, c_sizes[0], c1)?
        };
        let at = |pointer: Value<'c, 'a>, strides: &[Value<'c, 'a>]| -> Result<Value<'c, 'a>, String> {
            inner.arith("addi", pointer, inner.arith("muli", inner.arith("muli", bi, strides[0])?, bytes)?)
        };
        let (c_ptr, a_ptr, b_ptr) = (at(c_ptr, &c_strides)?, at(a_ptr, &a_strides)?, at(b_ptr, &b_strides)?);
        (inner, c_ptr, a_ptr, b_ptr)
    } else {
        (*b, c_ptr, a_ptr, b_ptr)
    };
    // With enough static work, column blocks in parallel: block j covers
    // columns [j w, min((j + 1) w, n)) of B and C.
    let static_n = number(&c.sizes[rank - 1]);
    let static_m = number(&c.sizes[rank - 2]);
    let parallel = parallel && !batched && !b.inside_parallel() && work.is_some_and(|w| w >= PARALLEL_GRAIN);
    let blocks = match (parallel, static_n) {
        (true, Some(n)) => (n / MIN_BLOCK_COLUMNS).clamp(1, PARALLEL_BLOCKS),
        _ => 1,
    };
    // Too few columns to split (a product of many rows by a narrow
    // matrix: a layer's input projection over all steps' rows): blocks of
    // rows of A and C instead.
    let row_blocks = match (parallel && blocks == 1, static_m) {
        (true, Some(m)) => (m / MIN_BLOCK_ROWS).clamp(1, PARALLEL_BLOCKS),
        _ => 1,
    };
    let (ind, m_value, c_ptr, a_ptr) = if row_blocks > 1 {
        let m = static_m.unwrap_or(0);
        let height = (m + row_blocks - 1) / row_blocks;
        let operands = [(c_ptr, &c_strides[..]), (a_ptr, &a_strides[..])];
        let (block, rows, [c_shifted, a_shifted]) = in_blocks(&ind, row_blocks, height, m, operands, rank - 2, bytes)?;
        (block, rows, c_shifted, a_shifted)
    } else {
        (ind, c_sizes[rank - 2], c_ptr, a_ptr)
    };
    let (ind, n_value, c_ptr, b_ptr) = if blocks > 1 {
        let n = static_n.unwrap_or(0);
        // Whole vectors of 16 per block where possible.
        let width = ((n + blocks - 1) / blocks + 15) / 16 * 16;
        let operands = [(c_ptr, &c_strides[..]), (b_ptr, &b_strides[..])];
        let (block, columns, [c_shifted, b_shifted]) = in_blocks(&ind, blocks, width, n, operands, rank - 1, bytes)?;
        (block, columns, c_shifted, b_shifted)
    } else {
        (ind, c_sizes[rank - 1], c_ptr, b_ptr)
    };
    let arguments = [
        m_value,
        n_value,
        a_sizes[rank - 1],
        c_ptr,
        c_strides[rank - 2],
        c_strides[rank - 1],
        a_ptr,
        a_strides[rank - 2],
        a_strides[rank - 1],
        b_ptr,
        b_strides[rank - 2],
        b_strides[rank - 1],
    ];
    let mut words = vec![kind];
    for value in arguments {
        words.push(ind.index_cast(value, i64_type)?);
    }
    ind.call(SYMBOL, &words, &[])?;
    if let Some(epilogue) = epilogue {
        // One pass over C: each element's sum through the epilogue.
        let (rows, i) = b.scf_for(c0, c_sizes[rank - 2], c1)?;
        let (element_loop, j) = rows.scf_for(c0, c_sizes[rank - 1], c1)?;
        let sum = element_loop.load(c.value, &[i, j], e)?;
        let value = epilogue.apply(&element_loop, sum, &c.sizes, &[i, j], c0)?;
        element_loop.store(value, c.value, &[i, j])?;
    }
    Ok(())
}

/// The name of the runtime's product by a packed matrix
/// (`tempo_gemm_packed`, `runtime/src/gemm.rs`).
pub const PACKED_SYMBOL: &str = "tempo_gemm_packed";

// Columns per panel of a packed matrix (`temporal-pack-products`' and
// the runtime's).
use tempo_passes::temporal_pack_products::PANEL;

/// Whether `einsum(spec)` of an `[m, k]` operand by a packed `[panels, k,
/// r]` one (`"mk,jkr->mjr"`, what `temporal-pack-products` makes) calls
/// [`PACKED_SYMBOL`]: f32, panels of [`PANEL`] with unit stride along `r`
/// in the packed operand and the result.
pub(super) fn packed_applies(
    spec: &tempo_passes::program::Einsum,
    inputs: &[&View],
    target: &View,
    element: ElementType,
) -> bool {
    let [a, p] = spec.operands.as_slice() else { return false };
    let ([m, k], [j, k2, r]) = (a.as_slice(), p.as_slice()) else { return false };
    element == ElementType::F32
        && k == k2
        && spec.result == [*m, *j, *r]
        && m != k
        && matches!(inputs[1].sizes[2], Extent::Static(PANEL))
        && super::views::unit_inner_stride(inputs[1].ty())
        && super::views::unit_inner_stride(target.ty())
}

/// `C[i, j, r] = sum_k A[i, k] P[j, k, r]` (see [`packed_applies`]) as a
/// call of [`PACKED_SYMBOL`]; with `parallel` and enough static work, the
/// panels in blocks over the threads.
pub(super) fn build_packed<'c, 'a>(
    b: &Builder<'c, 'a>,
    a: &View<'c, 'a>,
    p: &View<'c, 'a>,
    c: &View<'c, 'a>,
    parallel: bool,
) -> Result<(), String> {
    let i64_type = b.integer_type(64);
    let module = b.module()?;
    declare(module, PACKED_SYMBOL, &[i64_type; 14], &[])?;
    let e = element_type(b, ElementType::F32);
    let bytes = b.index(4)?;
    let operand = |x: &View<'c, 'a>| metadata(b, x, e, bytes);
    let (c_ptr, _, c_strides) = operand(c)?;
    let (a_ptr, a_sizes, a_strides) = operand(a)?;
    let (p_ptr, p_sizes, p_strides) = operand(p)?;
    let number = |s: &Extent| if let Extent::Static(n) = s { Some(*n) } else { None };
    let panels = number(&p.sizes[0]);
    let work = [&c.sizes[0], &p.sizes[0], &a.sizes[1]]
        .iter()
        .map(|s| number(s))
        .try_fold(PANEL, |acc, v| v.map(|v| acc.saturating_mul(v)));
    let blocks = match (parallel && !b.inside_parallel() && work.is_some_and(|w| w >= PARALLEL_GRAIN), panels) {
        (true, Some(n)) => n.clamp(1, PARALLEL_BLOCKS),
        _ => 1,
    };
    let (at, count, c_ptr, p_ptr) = if blocks > 1 {
        // Block q covers panels [q w, min((q + 1) w, panels)).
        let total = panels.unwrap_or(0);
        let (c0, c1) = (b.index(0)?, b.index(1)?);
        let (count, width, all) = (b.index(blocks)?, b.index((total + blocks - 1) / blocks)?, b.index(total)?);
        let (block, ivs) = b.scf_parallel_range(&[c0], &[count], &[c1])?;
        let start = block.arith("muli", ivs[0], width)?;
        let end = block.arith("minui", block.arith("addi", start, width)?, all)?;
        let extent = block.arith("subi", end, start)?;
        let shift = |pointer: Value<'c, 'a>, stride: Value<'c, 'a>| -> Result<Value<'c, 'a>, String> {
            block.arith("addi", pointer, block.arith("muli", block.arith("muli", start, stride)?, bytes)?)
        };
        let (c_shifted, p_shifted) = (shift(c_ptr, c_strides[1])?, shift(p_ptr, p_strides[0])?);
        (block, extent, c_shifted, p_shifted)
    } else {
        (*b, p_sizes[0], c_ptr, p_ptr)
    };
    let arguments = [
        a_sizes[0],
        a_sizes[1],
        count,
        p_sizes[2],
        c_ptr,
        c_strides[0],
        c_strides[1],
        a_ptr,
        a_strides[0],
        a_strides[1],
        p_ptr,
        p_strides[0],
        p_strides[1],
    ];
    let mut words = vec![at.i64(0)?];
    for value in arguments {
        words.push(at.index_cast(value, i64_type)?);
    }
    at.call(PACKED_SYMBOL, &words, &[])?;
    Ok(())
}

/// The address of `x`'s element 0 (in bytes, `bytes` per element of type
/// `e`), its sizes and its strides (in elements), as index values.
#[allow(clippy::type_complexity)]
pub(super) fn metadata<'c, 'a>(
    b: &Builder<'c, 'a>,
    x: &View<'c, 'a>,
    e: Type<'c>,
    bytes: Value<'c, 'a>,
) -> Result<(Value<'c, 'a>, Vec<Value<'c, 'a>>, Vec<Value<'c, 'a>>), String> {
    let rank = x.sizes.len();
    let index = b.index_type();
    let base = MemRefType::new(e, &[], None, None).into();
    let results: Vec<Type> = std::iter::once(base).chain(std::iter::repeat_n(index, 1 + 2 * rank)).collect();
    let metadata = b.op("memref.extract_strided_metadata", &[x.value], &results, &[])?;
    let result =
        |k: usize| -> Result<Value<'c, 'a>, String> { metadata.result(k).map(Value::from).map_err(|e| e.to_string()) };
    let sizes = (0..rank).map(|d| result(2 + d)).collect::<Result<_, _>>()?;
    let strides = (0..rank).map(|d| result(2 + rank + d)).collect::<Result<_, _>>()?;
    let raw = b.value("memref.extract_aligned_pointer_as_index", &[result(0)?], index, &[])?;
    let pointer = b.arith("addi", raw, b.arith("muli", result(1)?, bytes)?)?;
    Ok((pointer, sizes, strides))
}

/// `count` blocks of `width` (the last cut at `total`) along one dimension
/// of the product, as one `scf.parallel` loop: a builder inside, the
/// block's extent along the dimension, and each operand's address (with
/// its strides, the dimension's at `dim`) moved to the block's start.
#[allow(clippy::type_complexity)]
fn in_blocks<'c, 'a>(
    b: &Builder<'c, 'a>,
    count: i64,
    width: i64,
    total: i64,
    operands: [(Value<'c, 'a>, &[Value<'c, 'a>]); 2],
    dim: usize,
    bytes: Value<'c, 'a>,
) -> Result<(Builder<'c, 'a>, Value<'c, 'a>, [Value<'c, 'a>; 2]), String> {
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let (count, width, all) = (b.index(count)?, b.index(width)?, b.index(total)?);
    let (block, ivs) = b.scf_parallel_range(&[c0], &[count], &[c1])?;
    let start = block.arith("muli", ivs[0], width)?;
    let end = block.arith("minui", block.arith("addi", start, width)?, all)?;
    let extent = block.arith("subi", end, start)?;
    let shift = |(pointer, strides): (Value<'c, 'a>, &[Value<'c, 'a>])| -> Result<Value<'c, 'a>, String> {
        block.arith("addi", pointer, block.arith("muli", block.arith("muli", start, strides[dim])?, bytes)?)
    };
    let [x, y] = operands;
    Ok((block, extent, [shift(x)?, shift(y)?]))
}
