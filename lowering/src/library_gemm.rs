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
//! keep the register-tiled kernel of [`crate::contraction`], whose order is
//! the interpreter's. Products too small to pay for the call (fewer than
//! [`LIBRARY_GRAIN`] multiply-adds with static sizes, or one row of `A`:
//! the vector-matrix products of a decode step) keep the kernel too.
//!
//! The call passes every operand as integers (element kind, sizes, then
//! the address of element (0, 0) and the row and column strides in
//! elements of C, A and B), so the generated code needs no descriptor
//! layout, only `tempo_gemm` at run time: a tool that lowers with this
//! option must provide that symbol (the plug-in's pipelines do not set it).

use crate::contraction::{Epilogue, Operand};
use std::fmt::Write;
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
/// column blocks computed by separate calls in an `scf.parallel` loop
/// (OpenMP threads, the runtime of the generated code's other parallel
/// loops; splitting inside the library with its own thread pool next to
/// them was slower).
pub const PARALLEL_GRAIN: i64 = 1 << 21;

/// Column blocks of a parallel product, at most (each at least
/// [`MIN_BLOCK_COLUMNS`] wide).
const PARALLEL_BLOCKS: i64 = 4;
const MIN_BLOCK_COLUMNS: i64 = 64;

/// The name of the runtime function.
pub const SYMBOL: &str = "tempo_gemm";

/// The declaration the module needs once.
pub fn declaration() -> String {
    format!("  func.func private @{SYMBOL}({})\n", vec!["i64"; 13].join(", "))
}

/// Whether the call applies: float elements, 2-D or batched 3-D operands,
/// more than one row of `A` and, with static sizes, at least
/// [`LIBRARY_GRAIN`] multiply-adds.
pub fn applies(a: &Operand, b: &Operand, c: &Operand, element: ElementType) -> bool {
    if !matches!(element, ElementType::F32 | ElementType::F64) {
        return false;
    }
    let rank = c.sizes.len();
    if !matches!((a.sizes.len(), b.sizes.len(), rank), (2, 2, 2) | (3, 3, 3)) {
        return false;
    }
    let number = |s: &String| s.parse::<i64>().ok();
    if number(&c.sizes[rank - 2]).is_some_and(|m| m < 2) {
        return false;
    }
    let dims = [&c.sizes[rank - 2], &c.sizes[rank - 1], &a.sizes[rank - 1]];
    match dims.iter().map(|s| number(s)).collect::<Option<Vec<i64>>>() {
        Some(v) => v.iter().product::<i64>() >= LIBRARY_GRAIN,
        None => true,
    }
}

/// The call computing `C = A B` (C overwritten), then the epilogue over C.
pub fn emit(
    id: usize,
    a: &Operand,
    b: &Operand,
    c: &Operand,
    element: ElementType,
    epilogue: Option<&Epilogue>,
    parallel: bool,
    indent: &str,
) -> String {
    let (e, bytes, kind) = match element {
        ElementType::F64 => ("f64", 8, 1),
        _ => ("f32", 4, 0),
    };
    let p = format!("%gemm{id}_");
    let mut out = String::new();
    let o = &mut out;
    let rank = c.sizes.len();
    let batched = rank == 3;
    let _ = writeln!(o, "{indent}{p}bytes = arith.constant {bytes} : index");
    let _ = writeln!(o, "{indent}{p}c0 = arith.constant 0 : index");
    let _ = writeln!(o, "{indent}{p}c1 = arith.constant 1 : index");
    let _ = writeln!(o, "{indent}{p}kind = arith.constant {kind} : i64");
    // Base address (of element 0, in bytes) and strides of each operand.
    let mut operand = |tag: &str, x: &Operand| -> (String, Vec<String>, Vec<String>) {
        let sizes: Vec<String> = (0..rank).map(|d| format!("{p}{tag}sz{d}")).collect();
        let strides: Vec<String> = (0..rank).map(|d| format!("{p}{tag}st{d}")).collect();
        let _ = writeln!(
            o,
            "{indent}{p}{tag}base, {p}{tag}off, {}, {} = memref.extract_strided_metadata {} : {} -> memref<{e}>, index, {}",
            sizes.join(", "),
            strides.join(", "),
            x.name,
            x.ty,
            vec!["index"; 2 * rank].join(", ")
        );
        let _ = writeln!(
            o,
            "{indent}{p}{tag}raw = memref.extract_aligned_pointer_as_index {p}{tag}base : memref<{e}> -> index"
        );
        let _ = writeln!(o, "{indent}{p}{tag}offb = arith.muli {p}{tag}off, {p}bytes : index");
        let _ = writeln!(o, "{indent}{p}{tag}ptr = arith.addi {p}{tag}raw, {p}{tag}offb : index");
        (format!("{p}{tag}ptr"), sizes, strides)
    };
    let (c_ptr, c_sizes, c_strides) = operand("c", c);
    let (a_ptr, a_sizes, a_strides) = operand("a", a);
    let (b_ptr, _, b_strides) = operand("b", b);
    let mut ind = indent.to_string();
    let (c_ptr, a_ptr, b_ptr) = if batched {
        let _ = writeln!(o, "{ind}scf.for {p}bi = {p}c0 to {} step {p}c1 {{", c_sizes[0]);
        ind.push_str("  ");
        let mut at = |tag: &str, ptr: &str, strides: &[String]| {
            let _ = writeln!(o, "{ind}{p}{tag}bs = arith.muli {p}bi, {} : index", strides[0]);
            let _ = writeln!(o, "{ind}{p}{tag}bb = arith.muli {p}{tag}bs, {p}bytes : index");
            let _ = writeln!(o, "{ind}{p}{tag}bp = arith.addi {ptr}, {p}{tag}bb : index");
            format!("{p}{tag}bp")
        };
        (at("c", &c_ptr, &c_strides), at("a", &a_ptr, &a_strides), at("b", &b_ptr, &b_strides))
    } else {
        (c_ptr, a_ptr, b_ptr)
    };
    // With enough static work, column blocks in parallel: block j covers
    // columns [j w, min((j + 1) w, n)) of B and C.
    let number = |s: &String| s.parse::<i64>().ok();
    let work = [&c.sizes[rank - 2], &c.sizes[rank - 1], &a.sizes[rank - 1]]
        .iter()
        .map(|s| number(s))
        .try_fold(1i64, |acc, v| v.map(|v| acc.saturating_mul(v)));
    let static_n = number(&c.sizes[rank - 1]);
    let blocks = match (parallel && !batched, work, static_n) {
        (true, Some(w), Some(n)) if w >= PARALLEL_GRAIN => (n / MIN_BLOCK_COLUMNS).clamp(1, PARALLEL_BLOCKS),
        _ => 1,
    };
    let (n_value, c_ptr, b_ptr) = if blocks > 1 {
        let n = static_n.unwrap_or(0);
        // Whole vectors of 16 per block where possible.
        let width = ((n + blocks - 1) / blocks + 15) / 16 * 16;
        let _ = writeln!(o, "{ind}{p}nb = arith.constant {blocks} : index");
        let _ = writeln!(o, "{ind}{p}bw = arith.constant {width} : index");
        let _ = writeln!(o, "{ind}{p}nall = arith.constant {n} : index");
        let _ = writeln!(o, "{ind}scf.parallel ({p}jb) = ({p}c0) to ({p}nb) step ({p}c1) {{");
        ind.push_str("  ");
        let _ = writeln!(o, "{ind}{p}j0 = arith.muli {p}jb, {p}bw : index");
        let _ = writeln!(o, "{ind}{p}j1u = arith.addi {p}j0, {p}bw : index");
        let _ = writeln!(o, "{ind}{p}j1 = arith.minui {p}j1u, {p}nall : index");
        let _ = writeln!(o, "{ind}{p}jn = arith.subi {p}j1, {p}j0 : index");
        let mut shift = |tag: &str, ptr: &str, strides: &[String]| {
            let _ = writeln!(o, "{ind}{p}{tag}js = arith.muli {p}j0, {} : index", strides[rank - 1]);
            let _ = writeln!(o, "{ind}{p}{tag}jb = arith.muli {p}{tag}js, {p}bytes : index");
            let _ = writeln!(o, "{ind}{p}{tag}jp = arith.addi {ptr}, {p}{tag}jb : index");
            format!("{p}{tag}jp")
        };
        let (c_shifted, b_shifted) = (shift("c", &c_ptr, &c_strides), shift("b", &b_ptr, &b_strides));
        (format!("{p}jn"), c_shifted, b_shifted)
    } else {
        (c_sizes[rank - 1].clone(), c_ptr, b_ptr)
    };
    let arguments = [
        c_sizes[rank - 2].clone(),
        n_value,
        a_sizes[rank - 1].clone(),
        c_ptr,
        c_strides[rank - 2].clone(),
        c_strides[rank - 1].clone(),
        a_ptr,
        a_strides[rank - 2].clone(),
        a_strides[rank - 1].clone(),
        b_ptr,
        b_strides[rank - 2].clone(),
        b_strides[rank - 1].clone(),
    ];
    let mut words = vec![format!("{p}kind")];
    for (x, value) in arguments.iter().enumerate() {
        let word = format!("{p}w{x}");
        let _ = writeln!(o, "{ind}{word} = arith.index_cast {value} : index to i64");
        words.push(word);
    }
    let _ = writeln!(o, "{ind}func.call @{SYMBOL}({}) : ({}) -> ()", words.join(", "), vec!["i64"; 13].join(", "));
    if blocks > 1 {
        ind.truncate(ind.len() - 2);
        let _ = writeln!(o, "{ind}}}");
    }
    if batched {
        let _ = writeln!(o, "{indent}}}");
    }
    if let Some(epilogue) = epilogue {
        // One pass over C: each element's sum through the epilogue.
        let (m, n) = (&c_sizes[rank - 2], &c_sizes[rank - 1]);
        let _ = writeln!(o, "{indent}scf.for {p}i = {p}c0 to {m} step {p}c1 {{");
        let _ = writeln!(o, "{indent}  scf.for {p}j = {p}c0 to {n} step {p}c1 {{");
        let inner = format!("{indent}    ");
        let index = [format!("{p}i"), format!("{p}j")];
        let _ = writeln!(o, "{inner}{p}sum = memref.load {}[{}] : {}", c.name, index.join(", "), c.ty);
        let (code, value) =
            epilogue.emit(&format!("{p}sum"), c.sizes, &index, &format!("{p}c0"), &format!("_g{id}"), &inner);
        o.push_str(&code);
        let _ = writeln!(o, "{inner}memref.store {value}, {}[{}] : {}", c.name, index.join(", "), c.ty);
        let _ = writeln!(o, "{indent}  }}");
        let _ = writeln!(o, "{indent}}}");
    }
    out
}
