//! The register-tiled vector kernel for contractions (`matmul`, batched
//! `matmul` and vector-matrix products) on the CPU, built as typed IR in
//! place of the `linalg` named op where it applies ([`plan`]).
//!
//! `C[b, i, j] = sum_k A[b, i, k] * B[b, k, j]` becomes, per batch index:
//!
//! - a loop over panels of `NR = NV * VW` columns of `C` and `B`
//!   (`VW` elements per vector: 512 bits), and inside it over blocks of
//!   `MR` rows of `A` and `C`;
//! - for each block, a loop over `k` that carries `MR * NV` vector
//!   accumulators in registers (`scf.for` iteration arguments, so no store
//!   of `C` sits in the loop and nothing needs alias analysis): it loads
//!   the `NV` vectors of row `k` of `B`, broadcasts `A[i + r, k]` and
//!   accumulates with `vector.fma`;
//! - the rows left over (`M mod MR`) with one-row blocks; the columns
//!   left over (`N mod NR`) in panels of one vector (tiles of up to eight
//!   rows), and those left after that (`N mod VW`) with a scalar loop.
//!   The tile is chosen from static sizes so that little is left over
//!   (four rows by four vectors where that divides `N` and three vectors
//!   do not, as for `N` = 64 or 256): the scalar loop reads a column of
//!   `B` element by element, a tenth of the vector code's speed or less.
//!
//! Without `fused`, `C` is first filled with zero and every block adds to
//! it; `fused`, the first block of `k` starts its accumulators at zero
//! (no fill, no loop over `C` of its own).
//!
//! An [`Epilogue`] (elementwise ops fused after the product, such as a
//! residual addition or an activation) is applied to each element of a
//! tile after its last block of `k`, and to each column left over, before
//! the final store: no loop over `C` of its own.
//!
//! Each element of `C` is still summed over `k` in increasing order from
//! zero, as the interpreter does; the only difference is that multiply and
//! add are fused (one rounding instead of two), unless the pass runs with
//! `exact` contractions, which use `mulf` and `addf`.
//!
//! Assumes: floating-point elements, `C` with unit stride in its last
//! dimension (row-major points and slices of them; a permuted view falls
//! back to `linalg`), shapes as the verifier checked them.

use super::kernels::{broadcast_at, element_type};
use super::scalar::Chain;
use super::views::View;
use crate::ir_builder::{Builder, Compare, Extent};
use melior::ir::{
    Attribute, Type, Value,
    attribute::{BoolAttribute, DenseElementsAttribute, FloatAttribute, IntegerAttribute, StridedLayoutAttribute},
    r#type::MemRefType,
};
use tempo_passes::program::ElementType;

type Built<T> = Result<T, String>;

/// Multiply-adds below which a contraction stays on one thread (the
/// fork and join of a parallel region cost a few microseconds, about
/// 10 here: an LSTM's training step at batch 16 and width 64, eight
/// products of 2^18 multiply-adds per step, ran no faster on 2 threads
/// than on 1 with a grain of 2^17, and was 12% slower).
pub const PARALLEL_GRAIN: i64 = 1 << 19;

/// Panels per chunk, the unit of parallel work.
const CHUNK_PANELS: usize = 8;

/// Chunks a parallel contraction is cut into at least, where its columns
/// allow (N = 256 in panels of 64 columns: four chunks of one panel, not
/// one chunk of eight panels that would leave every thread but one idle).
const PARALLEL_CHUNKS: usize = 4;

/// Rows of `A` (static) from which a strided `B` is copied into a
/// row-major buffer before the product rather than gathered.
const PACK_ROWS: i64 = 4;

/// Rows of B per block: C's tiles go through memory once per block
/// (measured: 64 instead of 16 made the LSTM training step at batch 64,
/// width 256, 10% faster, and batch 16, width 64, 6%).
const K_BLOCK: usize = 64;

/// Vector multiply-adds per iteration of the loop over `k` that it is
/// unrolled to (at most 4 times): a one-row tile of four vectors, the
/// vector-matrix product of a decode step, is unrolled 4 times. LLVM's own
/// unroller, which did this and more, is off (`runtime/src/orc/codegen.rs`):
/// without it that product ran about a fifth slower (GPT-2 small decode:
/// samples in its two hottest kernels over ten runs).
const UNROLLED_FMAS: usize = 16;

/// How many panels ahead the same rows of B are prefetched by tiles of
/// several rows (measured: it helps batch 8, and hurts one-row tiles,
/// which the hardware prefetchers keep fed).
const PREFETCH_PANELS: usize = 2;

/// What the kernel needs to know of an operand before building: its
/// static sizes (`None`: dynamic) and whether its last dimension has unit
/// stride.
pub(super) struct Shape {
    pub sizes: Vec<Option<i64>>,
    pub unit_inner_stride: bool,
}

/// How a contraction is built by the kernel, decided from its operands'
/// shapes ([`plan`]).
#[derive(Clone, Debug)]
pub(super) struct Plan {
    element: ElementType,
    /// Elements per vector.
    vw: usize,
    batched: bool,
    rank_a: usize,
    rank_c: usize,
    /// `B` copied into a row-major buffer first.
    pack: bool,
    /// `B` (once packed) read with vector loads, not gathers.
    contiguous: bool,
    static_k: bool,
    static_m: Option<i64>,
    static_n: Option<i64>,
    /// The register tile: rows of `A` by vectors of `B`.
    mr: usize,
    nv: usize,
    parallel: bool,
    fused: bool,
    exact: bool,
}

/// The kernel's plan for `C = A B` of these shapes, or `None` where it
/// does not apply (other ranks or elements, `C` strided along its rows, an
/// epilogue with a batch or a `k` not statically positive).
#[allow(clippy::too_many_arguments)]
pub(super) fn plan(
    a: &Shape,
    b: &Shape,
    c: &Shape,
    element: ElementType,
    exact: bool,
    parallel: bool,
    fused: bool,
    epilogue: bool,
    registers: RegisterFile,
) -> Option<Plan> {
    let vw = match element {
        ElementType::F32 => 16,
        ElementType::F64 => 8,
        _ => return None,
    };
    let (rank_a, rank_c) = (a.sizes.len(), c.sizes.len());
    let batched = match (rank_a, b.sizes.len(), rank_c) {
        (2, 2, 2) | (1, 2, 1) => false,
        (3, 3, 3) => true,
        _ => return None,
    };
    if !c.unit_inner_stride {
        return None;
    }
    // An epilogue runs after the last block of k: there must be one.
    let static_k = a.sizes[rank_a - 1].is_some_and(|k| k > 0);
    if epilogue && (batched || !static_k) {
        return None;
    }
    // B with unit stride along its columns is read with vector loads;
    // otherwise (a permuted view, such as a weight read transposed in a
    // backward pass, or keys read as [heads, hd, n]) it is first copied
    // into a row-major buffer when each row of B then serves at least
    // PACK_ROWS rows of A, and read with gathers from a flat view of its
    // buffer when fewer (a vector-matrix product: the copy would cost as
    // much as the product).
    let static_m = if rank_a == 1 { Some(1) } else { c.sizes[rank_c - 2] };
    let pack = !b.unit_inner_stride && static_m.is_some_and(|m| m >= PACK_ROWS);
    let static_n = c.sizes[rank_c - 1];
    let (mr, nv) = register_tile(static_m, static_n, vw, registers);
    // The panels of NR columns: independent, so they are spread over the
    // threads when the contraction is large enough (`scf.parallel`, lowered
    // to OpenMP), each element still summed by one thread in order.
    let static_work = [c.sizes[rank_c - 1], a.sizes[rank_a - 1]]
        .iter()
        .chain(batched.then_some(c.sizes[0]).iter())
        .fold(static_m, |acc, s| acc.zip(*s).map(|(acc, s)| acc.saturating_mul(s)));
    let parallel = parallel && static_work.is_some_and(|w| w >= PARALLEL_GRAIN);
    let contiguous = pack || b.unit_inner_stride;
    Some(Plan {
        element,
        vw,
        batched,
        rank_a,
        rank_c,
        pack,
        contiguous,
        static_k,
        static_m,
        static_n,
        mr,
        nv,
        parallel,
        fused,
        exact,
    })
}

/// The vector registers of the machine the code runs on: their width in
/// bits and how many there are. The kernel's vectors are 512 bits wide
/// (`VW` elements); on a machine with narrower registers each takes
/// several, and a tile of more accumulators than registers spills them to
/// the stack at every multiply-add (measured on an AVX2 machine: the
/// eight-by-three tile of AVX-512 made every product of an LSTM's training
/// step a third as fast as a tile that fits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RegisterFile {
    pub bits: u32,
    pub count: u32,
}

impl RegisterFile {
    /// AVX-512: 32 registers of 512 bits.
    pub const AVX512: Self = Self { bits: 512, count: 32 };

    /// The host's (the JIT compiles for it): AVX-512, AVX (16 of 256 bits)
    /// or SSE (16 of 128) on x86-64, NEON (32 of 128) on AArch64.
    pub fn host() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                Self::AVX512
            } else if std::arch::is_x86_feature_detected!("avx") {
                Self { bits: 256, count: 16 }
            } else {
                Self { bits: 128, count: 16 }
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            Self { bits: 128, count: 32 }
        }
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        {
            Self { bits: 128, count: 16 }
        }
    }

    /// `bits` and `count` from options, 0 meaning the host's.
    pub fn from_options(bits: u64, count: u64) -> Self {
        let host = Self::host();
        Self {
            bits: if bits == 0 { host.bits } else { bits.clamp(64, 2048) as u32 },
            count: if count == 0 { host.count } else { count.clamp(4, 256) as u32 },
        }
    }
}

/// The register tile (rows of `A` by vectors of `B`) for static sizes
/// where known. With 32 registers of 512 bits: eight rows by three vectors
/// (24 accumulators), four by four where that divides `N` and three
/// vectors do not (`N` = 64 or 256: no panel left over), fewer vectors
/// for a narrow `N` (a head of 16 or 32), one row for vector-matrix
/// products. With fewer or narrower registers: the tile whose
/// accumulators, the vectors of `B` and a broadcast fit the registers
/// (on AVX2, six rows by one vector, or four where that divides `M`; one
/// row by three vectors for vector-matrix products).
fn register_tile(static_m: Option<i64>, static_n: Option<i64>, vw: usize, file: RegisterFile) -> (usize, usize) {
    let per_vector = (512 / file.bits.max(1)).max(1) as usize;
    let (mr, nv) = if per_vector == 1 && file.count >= 32 {
        match static_m {
            Some(m) if m >= 8 => (8, 3),
            Some(m) if m >= 4 => (4, 4),
            _ => (1, 4),
        }
    } else {
        let fits = |mr: usize, nv: usize| (mr * nv + nv) * per_vector < file.count as usize;
        match static_m {
            Some(m) if m >= 2 => {
                let m = m as usize;
                let rows: Vec<usize> = [8, 6, 4, 3, 2].into_iter().filter(|&r| r <= m && fits(r, 1)).collect();
                // A tile that divides M; else the largest where the rows
                // left over are few against M.
                let mr = rows
                    .iter()
                    .copied()
                    .find(|&r| m % r == 0)
                    .or_else(|| rows.iter().copied().find(|&r| m >= 8 * r))
                    .or_else(|| rows.last().copied())
                    .unwrap_or(1);
                (mr, 1)
            }
            _ => (1, (1..=4).rev().find(|&nv| fits(1, nv)).unwrap_or(1)),
        }
    };
    let vw = vw as i64;
    match static_n {
        Some(n) if n >= vw && n < nv as i64 * vw => (mr, (n / vw) as usize),
        Some(n) if mr == 8 && nv == 3 && n % (3 * vw) != 0 && n % (4 * vw) == 0 => (4, 4),
        _ => (mr, nv),
    }
}

/// Elementwise work fused after a contraction (its *epilogue*): an
/// elementwise chain one of whose leaves is the contraction's result,
/// applied to each element of `C` once its sum is complete, before it is
/// stored for the last time. `C` is then the chain's result: partial sums
/// live in it until then.
pub(super) struct Epilogue<'r, 'c, 'a> {
    /// The chain's other leaves, in order, read at the element's index
    /// broadcast under NumPy rules.
    pub leaves: &'r [View<'c, 'a>],
    /// Which leaf of the chain is the sum.
    pub sum_argument: usize,
    pub chain: &'r Chain,
    pub approximate: bool,
}

impl<'c, 'a> Epilogue<'_, 'c, 'a> {
    /// The epilogue's value for the element of `C` (sizes `c_sizes`) at
    /// `index` whose sum is `sum`.
    pub(super) fn apply(
        &self,
        b: &Builder<'c, 'a>,
        sum: Value<'c, 'a>,
        c_sizes: &[Extent<'c, 'a>],
        index: &[Value<'c, 'a>],
        zero: Value<'c, 'a>,
    ) -> Built<Value<'c, 'a>> {
        let mut arguments = Vec::new();
        let mut leaves = self.leaves.iter();
        for a in 0..=self.leaves.len() {
            if a == self.sum_argument {
                arguments.push(sum);
                continue;
            }
            let leaf = leaves.next().ok_or("compiler fault: an epilogue without its leaves")?;
            let at = broadcast_at(&leaf.sizes, c_sizes, index, zero);
            arguments.push(b.load(leaf.value, &at, crate::ir_builder::element_of(leaf.value)?)?);
        }
        self.chain.apply(b, &arguments, self.approximate)
    }
}

/// The values every pass over panels of columns shares.
struct Panels<'r, 'c, 'a> {
    plan: &'r Plan,
    e: Type<'c>,
    vector: Type<'c>,
    a: &'r View<'c, 'a>,
    b: &'r View<'c, 'a>,
    c: &'r View<'c, 'a>,
    /// The batch index, if any.
    lead: Option<Value<'c, 'a>>,
    k: Value<'c, 'a>,
    m: Value<'c, 'a>,
    c0: Value<'c, 'a>,
    c1: Value<'c, 'a>,
    zero: Value<'c, 'a>,
    vzero: Value<'c, 'a>,
    /// For a `B` read with gathers: its flat view, its strides, the lanes'
    /// offsets and the all-true mask, and the batch's term.
    gather: Option<Gather<'c, 'a>>,
    epilogue: Option<&'r Epilogue<'r, 'c, 'a>>,
}

struct Gather<'c, 'a> {
    flat: Value<'c, 'a>,
    strides: Vec<Value<'c, 'a>>,
    offsets: Value<'c, 'a>,
    mask: Value<'c, 'a>,
    batch_term: Option<Value<'c, 'a>>,
}

/// Builds `C = A B` (C is overwritten) as `plan` says.
pub(super) fn build<'c, 'a>(
    b: &Builder<'c, 'a>,
    plan: &Plan,
    a: &View<'c, 'a>,
    bm: &View<'c, 'a>,
    c: &View<'c, 'a>,
    epilogue: Option<&Epilogue<'_, 'c, 'a>>,
) -> Built<()> {
    let context = b.context();
    let e = element_type(b, plan.element);
    let vw = plan.vw;
    let vector = Type::vector(&[vw as u64], e);
    let packed = if plan.pack {
        let dims: Vec<i64> = bm.sizes.iter().map(|s| if let Extent::Static(n) = s { *n } else { i64::MIN }).collect();
        let dynamic: Vec<Value> =
            bm.sizes.iter().filter_map(|s| if let Extent::Value(v) = s { Some(*v) } else { None }).collect();
        let buffer = b.alloc(MemRefType::new(e, &dims, None, None).into(), &dynamic)?;
        super::kernels::copy_view(b, bm, buffer, plan.parallel)?;
        Some(View { value: buffer, sizes: bm.sizes.clone() })
    } else {
        None
    };
    let bm = packed.as_ref().unwrap_or(bm);
    let rank_c = plan.rank_c;
    let n = b.extent(c.sizes[rank_c - 1])?;
    let m = if plan.rank_a == 1 { b.index(1)? } else { b.extent(c.sizes[rank_c - 2])? };
    let k = b.extent(a.sizes[plan.rank_a - 1])?;
    let batch = if plan.batched { Some(b.extent(c.sizes[0])?) } else { None };
    let (mr, nv) = (plan.mr, plan.nv);
    let nr = nv * vw;
    let (c0, c1) = (b.index(0)?, b.index(1)?);
    let (nr_value, vw_value) = (b.index(nr as i64)?, b.index(vw as i64)?);
    let zero = b.float(0.0, e)?;
    let splat = |value: Attribute<'c>, ty: Type<'c>| -> Built<Value<'c, 'a>> {
        let dense = DenseElementsAttribute::new(ty, &[value]).map_err(|e| format!("compiler fault: {e}"))?;
        b.value("arith.constant", &[], ty, &[("value", dense.into())])
    };
    let vzero = splat(FloatAttribute::new(context, e, 0.0).into(), vector)?;
    // Columns [0, nfull) in panels of NR, [nfull, nvec) in panels of one
    // vector, [nvec, n) one scalar sum per element.
    let nfull = b.arith("subi", n, b.arith("remui", n, nr_value)?)?;
    let nvec = b.arith("subi", n, b.arith("remui", n, vw_value)?)?;
    let rank_b = bm.sizes.len();
    let mut gather = None;
    if !plan.contiguous {
        let index = b.index_type();
        let base = MemRefType::new(e, &[], None, None).into();
        let results: Vec<Type> = std::iter::once(base).chain(std::iter::repeat_n(index, 1 + 2 * rank_b)).collect();
        let metadata = b.op("memref.extract_strided_metadata", &[bm.value], &results, &[])?;
        let result =
            |k: usize| -> Built<Value<'c, 'a>> { metadata.result(k).map(Value::from).map_err(|e| e.to_string()) };
        let sizes: Vec<Value> = (0..rank_b).map(|d| result(2 + d)).collect::<Built<_>>()?;
        let strides: Vec<Value> = (0..rank_b).map(|d| result(2 + rank_b + d)).collect::<Built<_>>()?;
        // Extent of the flat view: the sum of size * stride bounds every
        // element's position.
        let mut extent = b.index(0)?;
        for d in 0..rank_b {
            extent = b.arith("addi", extent, b.arith("muli", sizes[d], strides[d])?)?;
        }
        let layout = StridedLayoutAttribute::new(context, i64::MIN, &[1]).into();
        let flat_type = MemRefType::new(e, &[i64::MIN], Some(layout), None).into();
        let segments = melior::ir::attribute::DenseI32ArrayAttribute::new(context, &[1, 1, 1, 0]).into();
        let dense = |values: &[i64]| melior::ir::attribute::DenseI64ArrayAttribute::new(context, values).into();
        let flat = b.value(
            "memref.reinterpret_cast",
            &[result(0)?, result(1)?, extent],
            flat_type,
            &[
                ("static_offsets", dense(&[i64::MIN])),
                ("static_sizes", dense(&[i64::MIN])),
                ("static_strides", dense(&[1])),
                ("operandSegmentSizes", segments),
            ],
        )?;
        let index_vector = Type::vector(&[vw as u64], index);
        let lanes: Vec<Attribute> = (0..vw).map(|l| IntegerAttribute::new(index, l as i64).into()).collect();
        let lanes = DenseElementsAttribute::new(index_vector, &lanes).map_err(|e| format!("compiler fault: {e}"))?;
        let lanes = b.value("arith.constant", &[], index_vector, &[("value", lanes.into())])?;
        let stride = b.value("vector.broadcast", &[strides[rank_b - 1]], index_vector, &[])?;
        let offsets = b.arith("muli", lanes, stride)?;
        let i1 = b.integer_type(1);
        let mask = splat(IntegerAttribute::new(i1, 1).into(), Type::vector(&[vw as u64], i1))?;
        gather = Some(Gather { flat, strides, offsets, mask, batch_term: None });
    }
    // C starts at zero; each block of KB rows of B adds to it. Fused, the
    // first block starts its accumulators at zero instead of loading C (a
    // product summing nothing still fills C).
    if !plan.fused {
        b.fill(zero, c.value)?;
    } else if !plan.static_k {
        let (then, otherwise, _) = b.scf_if(b.compare(Compare::Eq, k, c0)?, &[])?;
        then.fill(zero, c.value)?;
        then.yield_values("scf.yield", &[])?;
        otherwise.yield_values("scf.yield", &[])?;
    }
    // Index prefixes of each operand (the batch index first, if any).
    // In parallel, a batch of at least PARALLEL_CHUNKS products is spread
    // over the threads by its batch index (one fork for the whole batch,
    // not one per product: attention's scores and weighted sums over
    // batch x heads products of a few thousand multiply-adds each), the
    // columns of each product then on its thread.
    let batch_parallel =
        plan.parallel && plan.batched && !matches!(c.sizes[0], Extent::Static(z) if z < PARALLEL_CHUNKS as i64);
    let (ind, lead) = match batch {
        Some(batch) => {
            let (inner, bi) = if batch_parallel {
                let (body, ivs) = b.scf_parallel_range(&[c0], &[batch], &[c1])?;
                (body, ivs[0])
            } else {
                b.scf_for(c0, batch, c1)?
            };
            if let Some(g) = gather.as_mut() {
                g.batch_term = Some(inner.arith("muli", bi, g.strides[0])?);
            }
            (inner, Some(bi))
        }
        None => (*b, None),
    };
    let panels = Panels { plan, e, vector, a, b: bm, c, lead, k, m, c0, c1, zero, vzero, gather, epilogue };
    let static_n = plan.static_n;
    // With N static, a part that would run no iteration is not built.
    if static_n.is_none_or(|n| n >= nr as i64) {
        panels.columns(&ind, (mr, nv, nr_value), (c0, nfull), plan.parallel && !batch_parallel)?;
    }
    if nv > 1 && static_n.is_none_or(|n| n % nr as i64 >= vw as i64) {
        // The vectors left over (N = 64 with panels of 48 columns: one
        // panel of 16), with tiles of up to eight rows of one vector.
        let rows = if plan.static_m.is_none_or(|m| m >= 8) { 8 } else { mr };
        panels.columns(&ind, (rows, 1, vw_value), (nfull, nvec), false)?;
    }
    // The columns left over: one scalar sum per element.
    if static_n.is_none_or(|n| n % vw as i64 != 0) {
        panels.scalar_columns(&ind, nvec, n)?;
    }
    if let Some(packed) = packed {
        b.op("memref.dealloc", &[packed.value], &[], &[])?;
    }
    Ok(())
}

impl<'c, 'a> Panels<'_, 'c, 'a> {
    fn a_index(&self, row: Value<'c, 'a>, kk: Value<'c, 'a>) -> Vec<Value<'c, 'a>> {
        let mut index: Vec<Value> = self.lead.into_iter().collect();
        if self.plan.rank_a != 1 {
            index.push(row);
        }
        index.push(kk);
        index
    }

    fn c_index(&self, row: Value<'c, 'a>, col: Value<'c, 'a>) -> Vec<Value<'c, 'a>> {
        let mut index: Vec<Value> = self.lead.into_iter().collect();
        if self.plan.rank_c != 1 {
            index.push(row);
        }
        index.push(col);
        index
    }

    fn b_index(&self, kk: Value<'c, 'a>, col: Value<'c, 'a>) -> Vec<Value<'c, 'a>> {
        self.lead.into_iter().chain([kk, col]).collect()
    }

    /// Columns `from..to` (a multiple of `nv` vectors) in panels of `nv`
    /// vectors, rows in tiles of `mr` then one at a time.
    ///
    /// Chunks of CHUNK panels (the unit of parallel work), in each a loop
    /// over blocks of KB rows of B, in each the panels: every row of the
    /// block is then read in one run across the chunk's columns, which the
    /// hardware prefetchers follow, and C's tile goes through registers
    /// once a block.
    fn columns(
        &self,
        ind: &Builder<'c, 'a>,
        (mr, nv, nr_value): (usize, usize, Value<'c, 'a>),
        (from, to): (Value<'c, 'a>, Value<'c, 'a>),
        parallel: bool,
    ) -> Built<()> {
        let Panels { plan, vector, c, k, m, c0, c1, .. } = *self;
        let vw = plan.vw;
        let nr = nv * vw;
        let mr_value = ind.index(mr as i64)?;
        let distance = ind.index((PREFETCH_PANELS * nr) as i64)?;
        let mfull = ind.arith("subi", m, ind.arith("remui", m, mr_value)?)?;
        // In parallel, chunks narrow enough that every thread gets one (at
        // least PARALLEL_CHUNKS of them where N allows).
        let chunk = match plan.static_n {
            Some(n) if parallel => ((n as usize / nr).div_ceil(PARALLEL_CHUNKS)).clamp(1, CHUNK_PANELS),
            _ => CHUNK_PANELS,
        };
        let chunk_width = ind.index((nr * chunk) as i64)?;
        let k_block = ind.index(K_BLOCK as i64)?;
        let (outer, jc) = if parallel {
            let (body, ivs) = ind.scf_parallel_range(&[from], &[to], &[chunk_width])?;
            (body, ivs[0])
        } else {
            ind.scf_for(from, to, chunk_width)?
        };
        let chunk_end = outer.arith("minui", outer.arith("addi", jc, chunk_width)?, to)?;
        let (blocks, kb) = outer.scf_for(c0, k, k_block)?;
        let kend = blocks.arith("minui", blocks.arith("addi", kb, k_block)?, k)?;
        let (panel, j) = blocks.scf_for(jc, chunk_end, nr_value)?;
        let mut columns = Vec::new();
        let mut scaled = Vec::new();
        for v in 0..nv {
            let column = panel.arith("addi", j, panel.index((v * vw) as i64)?)?;
            if let Some(g) = &self.gather {
                scaled.push(panel.arith("muli", column, g.strides[g.strides.len() - 1])?);
            }
            columns.push(column);
        }
        // Blocks of MR rows, then one-row blocks for the rows left over.
        let blocks_of_rows =
            if mr == 1 { vec![(1, c0, m, c1)] } else { vec![(mr, c0, mfull, mr_value), (1, mfull, m, c1)] };
        for (rows, from, to, step) in blocks_of_rows {
            let (il, i) = panel.scf_for(from, to, step)?;
            let row_values: Vec<Value> =
                (0..rows).map(|r| il.arith("addi", i, il.index(r as i64)?)).collect::<Built<_>>()?;
            let count = rows * nv;
            // Where accumulator x = r * NV + v lives in C.
            let tile: Vec<Vec<Value>> =
                row_values.iter().flat_map(|&row| columns.iter().map(move |&col| self.c_index(row, col))).collect();
            let types = vec![vector; count];
            let inits: Vec<Value> = if plan.fused {
                let first = il.compare(Compare::Eq, kb, c0)?;
                let (then, otherwise, inits) = il.scf_if(first, &types)?;
                then.yield_values("scf.yield", &vec![self.vzero; count])?;
                let loaded: Vec<Value> =
                    tile.iter().map(|at| otherwise.vector_load(c.value, at, vector)).collect::<Built<_>>()?;
                otherwise.yield_values("scf.yield", &loaded)?;
                inits
            } else {
                tile.iter().map(|at| il.vector_load(c.value, at, vector)).collect::<Built<_>>()?
            };
            let (kl, kk, accs, sums) = il.scf_for_carrying(kb, kend, c1, &inits)?;
            // Unrolled until about UNROLLED_FMAS multiply-adds are in flight
            // per iteration (LLVM unrolls only the loops marked so).
            let unroll = (UNROLLED_FMAS / count).min(4);
            if unroll > 1 {
                il.unroll_hint(sums[0], unroll as u32)?;
            }
            let mut b_vectors = Vec::new();
            match &self.gather {
                Some(g) => {
                    let row_start = kl.arith("muli", kk, g.strides[g.strides.len() - 2])?;
                    let row_base = match g.batch_term {
                        Some(term) => kl.arith("addi", row_start, term)?,
                        None => row_start,
                    };
                    for column in &scaled {
                        let at = kl.arith("addi", row_base, *column)?;
                        b_vectors.push(kl.value(
                            "vector.gather",
                            &[g.flat, at, g.offsets, g.mask, self.vzero],
                            vector,
                            &[],
                        )?);
                    }
                }
                None => {
                    // The same row PREFETCH_PANELS panels ahead.
                    if mr > 1 {
                        for &column in &columns {
                            let ahead = kl.arith("addi", column, distance)?;
                            prefetch(&kl, self.b.value, &self.b_index(kk, ahead))?;
                        }
                    }
                    for &column in &columns {
                        b_vectors.push(kl.vector_load(self.b.value, &self.b_index(kk, column), vector)?);
                    }
                }
            }
            let mut next = Vec::new();
            for (r, &row) in row_values.iter().enumerate() {
                let element = kl.load(self.a.value, &self.a_index(row, kk), self.e)?;
                let broadcast = kl.value("vector.broadcast", &[element], vector, &[])?;
                for (v, &bv) in b_vectors.iter().enumerate() {
                    let acc = accs[r * nv + v];
                    next.push(match plan.exact {
                        true => kl.arith("addf", acc, kl.arith("mulf", broadcast, bv)?)?,
                        false => kl.value("vector.fma", &[broadcast, bv, acc], vector, &[])?,
                    });
                }
            }
            kl.yield_values("scf.yield", &next)?;
            for (sum, at) in sums.iter().zip(&tile) {
                let operands: Vec<Value> = [*sum, c.value].into_iter().chain(at.iter().copied()).collect();
                il.op("vector.store", &operands, &[], &[])?;
            }
            if let Some(epilogue) = self.epilogue {
                // After the last block of k, the tile's sums are complete:
                // each becomes the epilogue's value, the tile still in cache.
                let (last, otherwise, _) = il.scf_if(il.compare(Compare::Eq, kend, k)?, &[])?;
                otherwise.yield_values("scf.yield", &[])?;
                let (er_loop, er) = last.scf_for(c0, last.index(rows as i64)?, c1)?;
                let row = er_loop.arith("addi", i, er)?;
                let (ec_loop, ec) = er_loop.scf_for(c0, nr_value, c1)?;
                let col = ec_loop.arith("addi", j, ec)?;
                let at = self.c_index(row, col);
                let sum = ec_loop.load(c.value, &at, self.e)?;
                let index = if plan.rank_c == 1 { vec![col] } else { vec![row, col] };
                let value = epilogue.apply(&ec_loop, sum, &c.sizes, &index, c0)?;
                ec_loop.store(value, c.value, &at)?;
                last.yield_values("scf.yield", &[])?;
            }
        }
        Ok(())
    }

    /// Columns `from..n`, one scalar sum per element.
    fn scalar_columns(&self, ind: &Builder<'c, 'a>, from: Value<'c, 'a>, n: Value<'c, 'a>) -> Built<()> {
        let Panels { plan, e, a, b, c, k, m, c0, c1, zero, .. } = *self;
        let (tj_loop, tj) = ind.scf_for(from, n, c1)?;
        let (ti_loop, ti) = tj_loop.scf_for(c0, m, c1)?;
        let (tk_loop, tk, acc, sums) = ti_loop.scf_for_carrying(c0, k, c1, &[zero])?;
        let x = tk_loop.load(a.value, &self.a_index(ti, tk), e)?;
        let y = tk_loop.load(b.value, &self.b_index(tk, tj), e)?;
        let next = if plan.exact {
            tk_loop.arith("addf", acc[0], tk_loop.arith("mulf", x, y)?)?
        } else {
            // (Not math.fma: convert-math-to-libm would make it a call.)
            let contract = Attribute::parse(ind.context(), "#arith.fastmath<contract>")
                .ok_or("compiler fault: the fastmath flags")?;
            let product = tk_loop.value("arith.mulf", &[x, y], e, &[("fastmath", contract)])?;
            tk_loop.value("arith.addf", &[acc[0], product], e, &[("fastmath", contract)])?
        };
        tk_loop.yield_values("scf.yield", &[next])?;
        let stored = match self.epilogue {
            Some(epilogue) => {
                let index = if plan.rank_c == 1 { vec![tj] } else { vec![ti, tj] };
                epilogue.apply(&ti_loop, sums[0], &c.sizes, &index, c0)?
            }
            None => sums[0],
        };
        ti_loop.store(stored, c.value, &self.c_index(ti, tj))
    }
}

/// `memref.prefetch` of `memref[index]` for reading, into the data cache,
/// with the highest locality.
fn prefetch<'c>(b: &Builder<'c, '_>, memref: Value<'c, '_>, index: &[Value<'c, '_>]) -> Built<()> {
    let operands: Vec<Value> = std::iter::once(memref).chain(index.iter().copied()).collect();
    let context = b.context();
    let locality = IntegerAttribute::new(b.integer_type(32), 3).into();
    let attributes = [
        ("isWrite", BoolAttribute::new(context, false).into()),
        ("localityHint", locality),
        ("isDataCache", BoolAttribute::new(context, true).into()),
    ];
    b.op("memref.prefetch", &operands, &[], &attributes).map(|_| ())
}
