//! Register-tiled vector code for contractions (`matmul`, batched `matmul`
//! and vector-matrix products), emitted by `lower-temporal-to-loops` in
//! place of the `linalg` named op where it applies.
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
//! Assumes: floating-point elements, `B` and `C` with unit stride in their
//! last dimension (row-major points and slices of them; a permuted view
//! falls back to `linalg`), shapes as the verifier checked them.

use crate::generated_text::{broadcast_index, memref_layout, rename_values};
use std::fmt::Write;
use tempo_passes::program::ElementType;

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

/// How many panels ahead the same rows of B are prefetched by tiles of
/// several rows (measured: it helps batch 8, and hurts one-row tiles,
/// which the hardware prefetchers keep fed).
const PREFETCH_PANELS: usize = 2;

/// One operand: its SSA name, memref type and sizes (literals or SSA
/// `index` values).
pub struct Operand<'a> {
    pub name: &'a str,
    pub ty: &'a str,
    pub sizes: &'a [String],
}

/// Elementwise work fused after a contraction (its *epilogue*): the
/// scalar code of an elementwise chain one of whose leaves is the
/// contraction's result, applied to each element of `C` once its sum is
/// complete, before it is stored for the last time. `C` is then the
/// chain's result: partial sums live in it until then.
pub struct Epilogue {
    /// The chain's other leaves: SSA name, memref type and sizes, read at
    /// the element's index broadcast under NumPy rules.
    pub leaves: Vec<(String, String, Vec<String>)>,
    /// Which block argument (`%a{i}` in `lines`) is the sum; the others
    /// are `leaves` in order.
    pub sum_argument: usize,
    /// The chain's scalar code over `%a{i}`, ending with `value`.
    pub lines: Vec<String>,
    pub value: String,
}

impl Epilogue {
    /// The code computing the epilogue of the element of `C` (sizes
    /// `c_sizes`) at `index` whose sum is `sum`, with names suffixed by
    /// `site`; returns the code and the value to store.
    pub(crate) fn emit(
        &self,
        sum: &str,
        c_sizes: &[String],
        index: &[String],
        zero: &str,
        site: &str,
        indent: &str,
    ) -> (String, String) {
        let mut code = String::new();
        let mut arguments: Vec<String> = Vec::new();
        let mut leaves = self.leaves.iter().enumerate();
        for a in 0..=self.leaves.len() {
            if a == self.sum_argument {
                arguments.push(sum.to_string());
                continue;
            }
            let (k, (name, ty, sizes)) = leaves.next().expect("one leaf per other argument");
            let at = broadcast_index(sizes, c_sizes, index, zero);
            let loaded = format!("%ep{site}_l{k}");
            let _ = writeln!(code, "{indent}{loaded} = memref.load {name}[{}] : {ty}", at.join(", "));
            arguments.push(loaded);
        }
        // `%a{i}` to the arguments; every other name gets the site's suffix.
        let rename = |text: &str| {
            rename_values(text, |name| match name.strip_prefix('a').and_then(|i| i.parse::<usize>().ok()) {
                Some(i) if i < arguments.len() => arguments[i].clone(),
                _ => format!("%{name}{site}"),
            })
        };
        for line in &self.lines {
            let _ = writeln!(code, "{indent}{}", rename(line));
        }
        (code, rename(&self.value))
    }
}

/// Whether the innermost dimension of a memref type has unit stride
/// (identity layout, or a `strided<[..., 1]>` layout).
fn unit_inner_stride(ty: &str) -> bool {
    memref_layout(ty).is_some_and(|(_, _, strides, _)| strides.last().is_none_or(|s| s == "1"))
}

/// Emits `C = A B` (C is overwritten) for the operand ranks
/// `(A, B) = (2, 2)`, `(3, 3)` (batched) or `(1, 2)` (vector-matrix);
/// `None` when the fast path does not apply.
#[allow(clippy::too_many_arguments)]
pub fn emit(
    id: usize,
    a: &Operand,
    b: &Operand,
    c: &Operand,
    element: ElementType,
    exact: bool,
    parallel: bool,
    fused: bool,
    epilogue: Option<&Epilogue>,
    indent: &str,
) -> Option<String> {
    let (vw, e) = match element {
        ElementType::F32 => (16, "f32"),
        ElementType::F64 => (8, "f64"),
        _ => return None,
    };
    let batched = match (a.sizes.len(), b.sizes.len(), c.sizes.len()) {
        (2, 2, 2) | (1, 2, 1) => false,
        (3, 3, 3) => true,
        _ => return None,
    };
    if !unit_inner_stride(c.ty) {
        return None;
    }
    // An epilogue runs after the last block of k: there must be one.
    let static_k = a.sizes[a.sizes.len() - 1].parse::<i64>().is_ok_and(|k| k > 0);
    if epilogue.is_some() && (batched || !static_k) {
        return None;
    }
    let p = format!("%mm{id}_");
    let mut out = String::new();
    let o = &mut out;
    // B with unit stride along its columns is read with vector loads;
    // otherwise (a permuted view, such as a weight read transposed in a
    // backward pass, or keys read as [heads, hd, n]) it is first copied
    // into a row-major buffer when each row of B then serves at least
    // PACK_ROWS rows of A, and read with gathers from a flat view of its
    // buffer when fewer (a vector-matrix product: the copy would cost as
    // much as the product).
    let static_rows = if a.sizes.len() == 1 { Some(1) } else { c.sizes[c.sizes.len() - 2].parse::<i64>().ok() };
    let pack = !unit_inner_stride(b.ty) && static_rows.is_some_and(|m| m >= PACK_ROWS);
    let packed_name = format!("{p}packed");
    let packed_ty = {
        let dims: Vec<&str> = b.sizes.iter().map(|s| if s.parse::<i64>().is_ok() { s.as_str() } else { "?" }).collect();
        format!("memref<{}x{e}>", dims.join("x"))
    };
    let packed = Operand { name: &packed_name, ty: &packed_ty, sizes: b.sizes };
    let b = if pack {
        let dynamic: Vec<&str> = b.sizes.iter().filter(|s| s.parse::<i64>().is_err()).map(String::as_str).collect();
        let _ = writeln!(o, "{indent}{packed_name} = memref.alloc({}) : {packed_ty}", dynamic.join(", "));
        let _ = writeln!(o, "{indent}linalg.copy ins({} : {}) outs({packed_name} : {packed_ty})", b.name, b.ty);
        &packed
    } else {
        b
    };
    let contiguous = unit_inner_stride(b.ty);
    let constant = |o: &mut String, name: &str, value: &str| {
        if value.starts_with('%') {
            value.to_string()
        } else {
            let _ = writeln!(o, "{indent}{p}{name} = arith.constant {value} : index");
            format!("{p}{name}")
        }
    };
    let rank_c = c.sizes.len();
    let n = constant(o, "n", &c.sizes[rank_c - 1]);
    let m = if a.sizes.len() == 1 { constant(o, "m", "1") } else { constant(o, "m", &c.sizes[rank_c - 2]) };
    let k = constant(o, "k", &a.sizes[a.sizes.len() - 1]);
    let batch = batched.then(|| constant(o, "b", &c.sizes[0]));
    let static_m = if a.sizes.len() == 1 { Some(1) } else { c.sizes[rank_c - 2].parse::<i64>().ok() };
    let static_n = c.sizes[rank_c - 1].parse::<i64>().ok();
    let (mr, nv) = register_tile(static_m, static_n, vw);
    let nr = nv * vw;
    let _ = writeln!(o, "{indent}{p}c0 = arith.constant 0 : index");
    let _ = writeln!(o, "{indent}{p}c1 = arith.constant 1 : index");
    let _ = writeln!(o, "{indent}{p}nr = arith.constant {nr} : index");
    let _ = writeln!(o, "{indent}{p}vw = arith.constant {vw} : index");
    let _ = writeln!(o, "{indent}{p}zero = arith.constant 0.0 : {e}");
    let _ = writeln!(o, "{indent}{p}vzero = arith.constant dense<0.0> : vector<{vw}x{e}>");
    // Columns [0, nfull) in panels of NR, [nfull, nvec) in panels of one
    // vector, [nvec, n) one scalar sum per element.
    let _ = writeln!(o, "{indent}{p}nrem = arith.remui {n}, {p}nr : index");
    let _ = writeln!(o, "{indent}{p}nfull = arith.subi {n}, {p}nrem : index");
    let _ = writeln!(o, "{indent}{p}vrem = arith.remui {n}, {p}vw : index");
    let _ = writeln!(o, "{indent}{p}nvec = arith.subi {n}, {p}vrem : index");
    let rank_b = b.sizes.len();
    if !contiguous {
        let sizes: Vec<String> = (0..rank_b).map(|d| format!("{p}bsz{d}")).collect();
        let strides: Vec<String> = (0..rank_b).map(|d| format!("{p}bst{d}")).collect();
        let _ = writeln!(
            o,
            "{indent}{p}bbase, {p}boff, {}, {} = memref.extract_strided_metadata {} : {} -> memref<{e}>, index, {}",
            sizes.join(", "),
            strides.join(", "),
            b.name,
            b.ty,
            vec!["index"; 2 * rank_b].join(", ")
        );
        // Extent of the flat view: the sum of size * stride bounds every
        // element's position.
        let mut extent = format!("{p}c0x");
        let _ = writeln!(o, "{indent}{extent} = arith.constant 0 : index");
        for d in 0..rank_b {
            let _ = writeln!(o, "{indent}{p}bx{d} = arith.muli {}, {} : index", sizes[d], strides[d]);
            let _ = writeln!(o, "{indent}{p}be{d} = arith.addi {extent}, {p}bx{d} : index");
            extent = format!("{p}be{d}");
        }
        let _ = writeln!(
            o,
            "{indent}{p}bflat = memref.reinterpret_cast {p}bbase to offset: [{p}boff], sizes: [{extent}], strides: [1] : memref<{e}> to memref<?x{e}, strided<[1], offset: ?>>"
        );
        let lanes: Vec<String> = (0..vw).map(|l| l.to_string()).collect();
        let _ = writeln!(o, "{indent}{p}lanes = arith.constant dense<[{}]> : vector<{vw}xindex>", lanes.join(", "));
        let _ = writeln!(o, "{indent}{p}snv = vector.broadcast {} : index to vector<{vw}xindex>", strides[rank_b - 1]);
        let _ = writeln!(o, "{indent}{p}offs = arith.muli {p}lanes, {p}snv : vector<{vw}xindex>");
        let _ = writeln!(o, "{indent}{p}mask = arith.constant dense<true> : vector<{vw}xi1>");
    }
    // C starts at zero; each block of KB rows of B adds to it. Fused, the
    // first block starts its accumulators at zero instead of loading C
    // (a product summing nothing still fills C).
    if !fused {
        let _ = writeln!(o, "{indent}linalg.fill ins({p}zero : {e}) outs({} : {})", c.name, c.ty);
    } else if static_k {
        // K is static and positive: the first block writes all of C.
    } else {
        let _ = writeln!(o, "{indent}{p}kempty = arith.cmpi eq, {k}, {p}c0 : index");
        let _ = writeln!(o, "{indent}scf.if {p}kempty {{");
        let _ = writeln!(o, "{indent}  linalg.fill ins({p}zero : {e}) outs({} : {})", c.name, c.ty);
        let _ = writeln!(o, "{indent}}}");
    }
    let mut ind = indent.to_string();
    // Index prefixes of each operand (the batch index first, if any).
    let lead = if batched {
        let _ = writeln!(o, "{ind}scf.for {p}bi = {p}c0 to {} step {p}c1 {{", batch.as_deref().unwrap_or_default());
        ind.push_str("  ");
        if !contiguous {
            let _ = writeln!(o, "{ind}{p}bterm = arith.muli {p}bi, {p}bst0 : index");
        }
        format!("{p}bi, ")
    } else {
        String::new()
    };
    // The panels of NR columns: independent, so they are spread over the
    // threads when the contraction is large enough (`scf.parallel`, lowered
    // to OpenMP), each element still summed by one thread in order.
    let static_work: Option<i64> = [c.sizes[rank_c - 1].as_str(), a.sizes[a.sizes.len() - 1].as_str()]
        .iter()
        .chain(batched.then_some(c.sizes[0].as_str()).iter())
        .map(|s| s.parse::<i64>().ok())
        .fold(static_m, |acc, s| acc.zip(s).map(|(acc, s)| acc.saturating_mul(s)));
    let parallel = parallel && static_work.is_some_and(|w| w >= PARALLEL_GRAIN);
    let panels = Panels {
        p: &p,
        e,
        vw,
        a,
        b,
        c,
        lead: &lead,
        k: &k,
        m: &m,
        contiguous,
        rank_b,
        fused,
        exact,
        epilogue,
        static_n,
    };
    // With N static, a part that would run no iteration is not emitted.
    if static_n.is_none_or(|n| n >= nr as i64) {
        panels.emit(o, &ind, "", (mr, nv, &format!("{p}nr")), (&format!("{p}c0"), &format!("{p}nfull")), parallel);
    }
    if nv > 1 && static_n.is_none_or(|n| n % nr as i64 >= vw as i64) {
        // The vectors left over (N = 64 with panels of 48 columns: one
        // panel of 16), with tiles of up to eight rows of one vector.
        let rows = if static_m.is_none_or(|m| m >= 8) { 8 } else { mr };
        panels.emit(o, &ind, "v", (rows, 1, &format!("{p}vw")), (&format!("{p}nfull"), &format!("{p}nvec")), false);
    }
    // The columns left over: one scalar sum per element.
    if static_n.is_none_or(|n| n % vw as i64 != 0) {
        panels.scalar_columns(o, &ind, &format!("{p}nvec"), &n);
    }
    if batched {
        let _ = writeln!(o, "{indent}}}");
    }
    if pack {
        let _ = writeln!(o, "{indent}memref.dealloc {packed_name} : {packed_ty}");
    }
    Some(out)
}

/// The register tile (rows of `A` by vectors of `B`) for static sizes
/// where known: eight rows by three vectors (24 accumulators of the 32
/// vector registers), four by four where that divides `N` and three
/// vectors do not (`N` = 64 or 256: no panel left over), fewer vectors
/// for a narrow `N` (a head of 16 or 32), one row for vector-matrix
/// products.
fn register_tile(static_m: Option<i64>, static_n: Option<i64>, vw: usize) -> (usize, usize) {
    let (mr, nv) = match static_m {
        Some(m) if m >= 8 => (8, 3),
        Some(m) if m >= 4 => (4, 4),
        _ => (1, 4),
    };
    let vw = vw as i64;
    match static_n {
        Some(n) if n >= vw && n < nv as i64 * vw => (mr, (n / vw) as usize),
        Some(n) if mr == 8 && n % (3 * vw) != 0 && n % (4 * vw) == 0 => (4, 4),
        _ => (mr, nv),
    }
}

/// What every pass over panels of columns shares.
struct Panels<'a> {
    /// The contraction's name prefix.
    p: &'a str,
    e: &'a str,
    vw: usize,
    a: &'a Operand<'a>,
    b: &'a Operand<'a>,
    c: &'a Operand<'a>,
    /// The batch index and a comma, or nothing.
    lead: &'a str,
    k: &'a str,
    m: &'a str,
    contiguous: bool,
    rank_b: usize,
    fused: bool,
    exact: bool,
    epilogue: Option<&'a Epilogue>,
    static_n: Option<i64>,
}

impl Panels<'_> {
    fn a_index(&self, row: &str, kk: &str) -> String {
        let lead = self.lead;
        if self.a.sizes.len() == 1 { format!("{lead}{kk}") } else { format!("{lead}{row}, {kk}") }
    }

    fn c_index(&self, row: &str, col: &str) -> String {
        let lead = self.lead;
        if self.c.sizes.len() == 1 { format!("{lead}{col}") } else { format!("{lead}{row}, {col}") }
    }

    /// Columns `from..to` (a multiple of `nv` vectors) in panels of `nv`
    /// vectors, rows in tiles of `mr` then one at a time; names of this
    /// pass carry `pass`.
    ///
    /// Chunks of CHUNK panels (the unit of parallel work), in each a loop
    /// over blocks of KB rows of B, in each the panels: every row of the
    /// block is then read in one run across the chunk's columns, which the
    /// hardware prefetchers follow, and C's tile goes through registers
    /// once a block.
    #[allow(clippy::too_many_arguments)]
    fn emit(
        &self,
        o: &mut String,
        ind: &str,
        pass: &str,
        (mr, nv, nr_constant): (usize, usize, &str),
        (from, to): (&str, &str),
        parallel: bool,
    ) {
        let Panels { p, e, vw, a, b, c, lead, k, m, contiguous, rank_b, fused, exact, epilogue, .. } = *self;
        let q = format!("{p}{pass}");
        let nr = nv * vw;
        let acc_ty = format!("vector<{vw}x{e}>");
        let _ = writeln!(o, "{ind}{q}mr = arith.constant {mr} : index");
        let _ = writeln!(o, "{ind}{q}pdist = arith.constant {} : index", PREFETCH_PANELS * nr);
        let _ = writeln!(o, "{ind}{q}mrem = arith.remui {m}, {q}mr : index");
        let _ = writeln!(o, "{ind}{q}mfull = arith.subi {m}, {q}mrem : index");
        // In parallel, chunks narrow enough that every thread gets one (at
        // least PARALLEL_CHUNKS of them where N allows).
        let chunk = match self.static_n {
            Some(n) if parallel => ((n as usize / nr).div_ceil(PARALLEL_CHUNKS)).clamp(1, CHUNK_PANELS),
            _ => CHUNK_PANELS,
        };
        let _ = writeln!(o, "{ind}{q}cw = arith.constant {} : index", nr * chunk);
        let _ = writeln!(o, "{ind}{q}kbs = arith.constant {K_BLOCK} : index");
        if parallel {
            let _ = writeln!(o, "{ind}scf.parallel ({q}jc) = ({from}) to ({to}) step ({q}cw) {{");
        } else {
            let _ = writeln!(o, "{ind}scf.for {q}jc = {from} to {to} step {q}cw {{");
        }
        let _ = writeln!(o, "{ind}{q}jce = arith.addi {q}jc, {q}cw : index");
        let _ = writeln!(o, "{ind}{q}jcend = arith.minui {q}jce, {to} : index");
        let _ = writeln!(o, "{ind}scf.for {q}kb = {p}c0 to {k} step {q}kbs {{");
        let _ = writeln!(o, "{ind}{q}kbe = arith.addi {q}kb, {q}kbs : index");
        let _ = writeln!(o, "{ind}{q}kend = arith.minui {q}kbe, {k} : index");
        let _ = writeln!(o, "{ind}scf.for {q}j = {q}jc to {q}jcend step {nr_constant} {{");
        let columns: Vec<String> = (0..nv)
            .map(|v| {
                let name = format!("{q}j{v}");
                let _ = writeln!(o, "{ind}  {q}o{v} = arith.constant {} : index", v * vw);
                let _ = writeln!(o, "{ind}  {name} = arith.addi {q}j, {q}o{v} : index");
                if !contiguous {
                    let _ = writeln!(o, "{ind}  {q}jn{v} = arith.muli {name}, {p}bst{} : index", rank_b - 1);
                }
                name
            })
            .collect();
        // Blocks of MR rows, then one-row blocks for the rows left over.
        let blocks = if mr == 1 {
            vec![(1, format!("{p}c0"), m.to_string(), format!("{p}c1"))]
        } else {
            vec![
                (mr, format!("{p}c0"), format!("{q}mfull"), format!("{q}mr")),
                (1, format!("{q}mfull"), m.to_string(), format!("{p}c1")),
            ]
        };
        for (rows, from, to, step) in blocks {
            let tag = format!("{pass}{rows}");
            let _ = writeln!(o, "{ind}  scf.for {p}i{tag} = {from} to {to} step {step} {{");
            let i = format!("{p}i{tag}");
            let row_names: Vec<String> = (0..rows)
                .map(|r| {
                    let name = format!("{p}r{tag}_{r}");
                    let _ = writeln!(o, "{ind}    {p}ro{tag}_{r} = arith.constant {r} : index");
                    let _ = writeln!(o, "{ind}    {name} = arith.addi {i}, {p}ro{tag}_{r} : index");
                    name
                })
                .collect();
            let count = rows * nv;
            let accs: Vec<String> = (0..count).map(|x| format!("{p}acc{tag}_{x}")).collect();
            // Where accumulator x = r * NV + v lives in C.
            let tile: Vec<String> =
                row_names.iter().flat_map(|row| columns.iter().map(|col| self.c_index(row, col))).collect();
            let mut inits = Vec::new();
            let types = vec![acc_ty.clone(); count].join(", ");
            if fused {
                let _ = writeln!(o, "{ind}    {p}first{tag} = arith.cmpi eq, {q}kb, {p}c0 : index");
                let _ = writeln!(o, "{ind}    {p}init{tag}:{count} = scf.if {p}first{tag} -> ({types}) {{");
                let _ = writeln!(o, "{ind}      scf.yield {} : {types}", vec![format!("{p}vzero"); count].join(", "));
                let _ = writeln!(o, "{ind}    }} else {{");
                for (x, at) in tile.iter().enumerate() {
                    let _ = writeln!(o, "{ind}      {p}l{tag}_{x} = vector.load {}[{at}] : {}, {acc_ty}", c.name, c.ty);
                }
                let loaded: Vec<String> = (0..count).map(|x| format!("{p}l{tag}_{x}")).collect();
                let _ = writeln!(o, "{ind}      scf.yield {} : {types}", loaded.join(", "));
                let _ = writeln!(o, "{ind}    }}");
                inits.extend(accs.iter().enumerate().map(|(x, acc)| format!("{acc} = {p}init{tag}#{x}")));
            } else {
                for (x, at) in tile.iter().enumerate() {
                    let _ = writeln!(o, "{ind}    {p}c{tag}_{x} = vector.load {}[{at}] : {}, {acc_ty}", c.name, c.ty);
                    inits.push(format!("{} = {p}c{tag}_{x}", accs[x]));
                }
            }
            let _ = writeln!(
                o,
                "{ind}    {p}sum{tag}:{count} = scf.for {p}kk{tag} = {q}kb to {q}kend step {p}c1 iter_args({}) -> ({types}) {{",
                inits.join(", ")
            );
            let kk = format!("{p}kk{tag}");
            if !contiguous {
                let _ = writeln!(o, "{ind}      {p}kb{tag} = arith.muli {kk}, {p}bst{} : index", rank_b - 2);
                let row_base = if !lead.is_empty() {
                    let _ = writeln!(o, "{ind}      {p}kbb{tag} = arith.addi {p}kb{tag}, {p}bterm : index");
                    format!("{p}kbb{tag}")
                } else {
                    format!("{p}kb{tag}")
                };
                for v in 0..nv {
                    let _ = writeln!(o, "{ind}      {p}gi{tag}_{v} = arith.addi {row_base}, {q}jn{v} : index");
                    let _ = writeln!(
                        o,
                        "{ind}      {p}bv{tag}_{v} = vector.gather {p}bflat[{p}gi{tag}_{v}] [{p}offs], {p}mask, {p}vzero : memref<?x{e}, strided<[1], offset: ?>>, vector<{vw}xindex>, vector<{vw}xi1>, {acc_ty} into {acc_ty}"
                    );
                }
            } else {
                // The same row PREFETCH_PANELS panels ahead.
                for (v, col) in columns.iter().enumerate().filter(|_| mr > 1) {
                    let _ = writeln!(o, "{ind}      {p}pc{tag}_{v} = arith.addi {col}, {q}pdist : index");
                    let _ = writeln!(
                        o,
                        "{ind}      memref.prefetch {}[{lead}{kk}, {p}pc{tag}_{v}], read, locality<3>, data : {}",
                        b.name, b.ty
                    );
                }
                for (v, col) in columns.iter().enumerate() {
                    let _ = writeln!(
                        o,
                        "{ind}      {p}bv{tag}_{v} = vector.load {}[{lead}{kk}, {col}] : {}, {acc_ty}",
                        b.name, b.ty
                    );
                }
            }
            let mut next = Vec::new();
            for (r, row) in row_names.iter().enumerate() {
                let _ = writeln!(
                    o,
                    "{ind}      {p}a{tag}_{r} = memref.load {}[{}] : {}",
                    a.name,
                    self.a_index(row, &kk),
                    a.ty
                );
                let _ = writeln!(o, "{ind}      {p}ab{tag}_{r} = vector.broadcast {p}a{tag}_{r} : {e} to {acc_ty}");
                for v in 0..nv {
                    let x = r * nv + v;
                    let name = format!("{p}f{tag}_{x}");
                    if exact {
                        let _ = writeln!(
                            o,
                            "{ind}      {p}pr{tag}_{x} = arith.mulf {p}ab{tag}_{r}, {p}bv{tag}_{v} : {acc_ty}"
                        );
                        let _ = writeln!(o, "{ind}      {name} = arith.addf {}, {p}pr{tag}_{x} : {acc_ty}", accs[x]);
                    } else {
                        let _ = writeln!(
                            o,
                            "{ind}      {name} = vector.fma {p}ab{tag}_{r}, {p}bv{tag}_{v}, {} : {acc_ty}",
                            accs[x]
                        );
                    }
                    next.push(name);
                }
            }
            let _ = writeln!(o, "{ind}      scf.yield {} : {types}", next.join(", "));
            let _ = writeln!(o, "{ind}    }}");
            for (x, at) in tile.iter().enumerate() {
                let _ = writeln!(o, "{ind}    vector.store {p}sum{tag}#{x}, {}[{at}] : {}, {acc_ty}", c.name, c.ty);
            }
            if let Some(epilogue) = epilogue {
                // After the last block of k, the tile's sums are complete:
                // each becomes the epilogue's value, the tile still in cache.
                let _ = writeln!(o, "{ind}    {p}last{tag} = arith.cmpi eq, {q}kend, {k} : index");
                let _ = writeln!(o, "{ind}    scf.if {p}last{tag} {{");
                let _ = writeln!(o, "{ind}      {p}erows{tag} = arith.constant {rows} : index");
                let _ = writeln!(o, "{ind}      scf.for {p}er{tag} = {p}c0 to {p}erows{tag} step {p}c1 {{");
                let _ = writeln!(o, "{ind}        {p}erow{tag} = arith.addi {i}, {p}er{tag} : index");
                let _ = writeln!(o, "{ind}        scf.for {p}ec{tag} = {p}c0 to {nr_constant} step {p}c1 {{");
                let _ = writeln!(o, "{ind}          {p}ecol{tag} = arith.addi {q}j, {p}ec{tag} : index");
                let (row, col) = (format!("{p}erow{tag}"), format!("{p}ecol{tag}"));
                let at = self.c_index(&row, &col);
                let _ = writeln!(o, "{ind}          {p}esum{tag} = memref.load {}[{at}] : {}", c.name, c.ty);
                let index: Vec<String> =
                    if c.sizes.len() == 1 { vec![col.clone()] } else { vec![row.clone(), col.clone()] };
                let site = format!("_{}t{tag}", p.trim_start_matches('%').trim_end_matches('_'));
                let (code, value) = epilogue.emit(
                    &format!("{p}esum{tag}"),
                    c.sizes,
                    &index,
                    &format!("{p}c0"),
                    &site,
                    &format!("{ind}          "),
                );
                o.push_str(&code);
                let _ = writeln!(o, "{ind}          memref.store {value}, {}[{at}] : {}", c.name, c.ty);
                let _ = writeln!(o, "{ind}        }}");
                let _ = writeln!(o, "{ind}      }}");
                let _ = writeln!(o, "{ind}    }}");
            }
            let _ = writeln!(o, "{ind}  }}");
        }
        let _ = writeln!(o, "{ind}}}");
        let _ = writeln!(o, "{ind}}}");
        let _ = writeln!(o, "{ind}}}");
    }

    /// Columns `from..n`, one scalar sum per element.
    fn scalar_columns(&self, o: &mut String, ind: &str, from: &str, n: &str) {
        let Panels { p, e, a, b, c, lead, k, m, exact, epilogue, .. } = *self;
        let _ = writeln!(o, "{ind}scf.for {p}tj = {from} to {n} step {p}c1 {{");
        let _ = writeln!(o, "{ind}  scf.for {p}ti = {p}c0 to {m} step {p}c1 {{");
        let _ = writeln!(
            o,
            "{ind}    {p}ts = scf.for {p}tk = {p}c0 to {k} step {p}c1 iter_args({p}tacc = {p}zero) -> ({e}) {{"
        );
        let _ = writeln!(
            o,
            "{ind}      {p}ta = memref.load {}[{}] : {}",
            a.name,
            self.a_index(&format!("{p}ti"), &format!("{p}tk")),
            a.ty
        );
        let _ = writeln!(o, "{ind}      {p}tb = memref.load {}[{lead}{p}tk, {p}tj] : {}", b.name, b.ty);
        if exact {
            let _ = writeln!(o, "{ind}      {p}tp = arith.mulf {p}ta, {p}tb : {e}");
            let _ = writeln!(o, "{ind}      {p}tn = arith.addf {p}tacc, {p}tp : {e}");
        } else {
            // (Not math.fma: convert-math-to-libm would make it a call.)
            let _ = writeln!(o, "{ind}      {p}tp = arith.mulf {p}ta, {p}tb fastmath<contract> : {e}");
            let _ = writeln!(o, "{ind}      {p}tn = arith.addf {p}tacc, {p}tp fastmath<contract> : {e}");
        }
        let _ = writeln!(o, "{ind}      scf.yield {p}tn : {e}");
        let _ = writeln!(o, "{ind}    }}");
        let stored = match epilogue {
            Some(epilogue) => {
                let (row, col) = (format!("{p}ti"), format!("{p}tj"));
                let index: Vec<String> = if c.sizes.len() == 1 { vec![col] } else { vec![row, col] };
                let site = format!("_{}r", p.trim_start_matches('%').trim_end_matches('_'));
                let (code, value) =
                    epilogue.emit(&format!("{p}ts"), c.sizes, &index, &format!("{p}c0"), &site, &format!("{ind}    "));
                o.push_str(&code);
                value
            }
            None => format!("{p}ts"),
        };
        let _ = writeln!(
            o,
            "{ind}    memref.store {stored}, {}[{}] : {}",
            c.name,
            self.c_index(&format!("{p}ti"), &format!("{p}tj")),
            c.ty
        );
        let _ = writeln!(o, "{ind}  }}");
        let _ = writeln!(o, "{ind}}}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_strides_are_read_from_the_type() {
        assert!(unit_inner_stride("memref<4x8xf32>"));
        assert!(unit_inner_stride("memref<4x8xf32, strided<[8, 1], offset: ?>>"));
        assert!(!unit_inner_stride("memref<4x8xf32, strided<[1, 4], offset: ?>>"));
        assert!(!unit_inner_stride("memref<4x8xf32, strided<[?, ?], offset: ?>>"));
    }
}
