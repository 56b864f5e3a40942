//! `lower-store-to-memref`: lowers the `store` dialect (the memory level) to
//! `memref`, `arith`, `scf`, `linalg` and a few libc calls, and counts the
//! bytes of live stores in the global `tempo_memory_stats` (`[live, peak]`,
//! `memref<2xi64>`, created when missing).
//!
//! Per kind (ring, window and blocks run along the store dimension `along`;
//! the others are slices, each with its own ring, window or blocks):
//! - `point`, `ring<k>`, `window<w>`, `full`: one `memref.alloc` of the
//!   store type; point `p` of a ring lives at slot `p mod k`, of a window at
//!   `p mod w` and, after `store.seal` copies it, `p mod w + w` (a range read
//!   starting at `lo` is the contiguous view from slot `lo mod w`);
//! - `blocks` of `B` points: `mmap` reserves (`PROT_NONE`, no swap space)
//!   room for the bound rounded up to whole blocks, per slice of the
//!   dimensions before `along` (the *outer* slices; the dimensions after it
//!   are inside each block). The block table holds, per outer slice, the
//!   range `[lo, hi)` of its committed blocks (a `memref<?x2xindex>`).
//!   `store.write` of point `p` grows its slice's range to hold block
//!   `p / B`, committing (`mprotect` read/write) the blocks it adds below or
//!   above (prefixes grow up in forward loops, suffixes down in backward
//!   ones), so live bytes grow a block at a time and the points stay one
//!   strided memref (no copy when the store grows). `store.free` unmaps the
//!   reservation. The descriptor of the reserved memory is built with `llvm`
//!   ops and cast to the store's memref type
//!   (`builtin.unrealized_conversion_cast`, folded away by
//!   `reconcile-unrealized-casts`).
//! - `store.swap_out` copies a range of a `full` or `blocks` store to a new
//!   host buffer; a `blocks` store also gives back the memory of the blocks
//!   wholly inside the range (`madvise(MADV_DONTNEED)` and `PROT_NONE`), which
//!   `store.swap_in` commits again before copying the points back.
//! - a `blocks` store with `swap_space = "file"` also gets a temporary file:
//!   `store.spill`, `store.reload` and `store.discard` move its points to
//!   and from it (see `spill.rs`).
//!
//! Assumes each store operand is defined by a `store.alloc` in the same
//! function and the coordinates are within the tensor's domain (the
//! temporal lowering clamps them). Runs before `convert-linalg-to-loops`.
//! Linux only (the `mmap` flag values).

mod alloc;
mod blocks;
mod free;
mod reads;
mod seal;
mod spill;
mod write;

use crate::splice::replace_op_with_text;
use melior::ir::{
    BlockLike, OperationRef, RegionLike, Type, TypeLike, Value, ValueLike,
    attribute::IntegerAttribute,
    operation::{OperationLike, OperationResult},
    r#type::{MemRefType, ShapedTypeLike},
};
use std::collections::HashMap;
use std::fmt::Write;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{OptionKind, PassOption, PassOptions, TempoPass};

/// The global counting `[live, peak]` store bytes.
pub const MEMORY_STATS: &str = "tempo_memory_stats";

/// The `lower-store-to-memref` pass.
pub struct LowerStoreToMemref;

impl TempoPass for LowerStoreToMemref {
    fn name(&self) -> &'static str {
        "lower-store-to-memref"
    }
    fn summary(&self) -> &'static str {
        "Lower the store dialect to memref (ring and window indexing, block tables over reserved memory) with live/peak byte counting"
    }
    fn options(&self) -> &'static [PassOption] {
        &[PassOption {
            name: "gpu",
            kind: OptionKind::Flag(false),
            summary: "for the CUDA target: the copy sealing a single value is a loop of one point (a kernel once mapped), so that no host code touches store data, and the host buffer of store.swap_out is marked tempo.swap (gpu-place-memory puts it in host memory)",
        }]
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, options: &PassOptions) -> PassResult<'c> {
        let gpu = options.flag("gpu");
        lower(op, gpu)
    }
}

/// What a store op needs to know about its store.
#[derive(Clone, Debug)]
struct StoreInfo {
    kind: String,
    extent: i64,
    /// The store dimension a ring, window or blocks runs along.
    along: usize,
    /// The store's memref type, printed.
    ty: String,
    /// Leading dimensions indexing points (0 for `point` and rank-0 `full`).
    slot_rank: usize,
    /// The point shape (trailing dimensions).
    point: Vec<i64>,
    element: String,
    element_bytes: i64,
    /// A `blocks` store with a swap space (`swap_space = "file"`).
    swap_space: bool,
}

impl StoreInfo {
    fn point_elements(&self) -> i64 {
        self.point.iter().product()
    }
    fn point_bytes(&self) -> i64 {
        self.point_elements() * self.element_bytes
    }
    /// The point type (`16xf32`) without the `memref<>`.
    fn point_text(&self) -> String {
        self.point.iter().map(|d| format!("{d}x")).collect::<String>() + &self.element
    }
    /// Strided layout of a view of one point.
    fn point_view(&self) -> String {
        format!("memref<{}, strided<[{}], offset: ?>>", self.point_text(), row_major(&self.point).join(", "))
    }
}

use tempo_passes::program::row_major_strides as strides_of;

fn row_major(shape: &[i64]) -> Vec<String> {
    strides_of(shape).iter().map(i64::to_string).collect()
}

fn element_bytes(element: &str) -> Option<i64> {
    Some(match element {
        "i1" | "i8" => 1,
        "i16" | "f16" | "bf16" => 2,
        "i32" | "f32" => 4,
        "i64" | "f64" | "index" => 8,
        _ => return None,
    })
}

fn name_of(op: &OperationRef) -> String {
    op.name().as_string_ref().as_str().unwrap_or("").to_string()
}

/// Collects every `store.*` op under `op`, in walk order.
fn collect_store_ops<'c, 'a>(op: OperationRef<'c, 'a>, out: &mut Vec<OperationRef<'c, 'a>>) {
    for r in 0..op.region_count() {
        let Ok(region) = op.region(r) else { continue };
        let mut block = region.first_block();
        while let Some(b) = block {
            for inner in tempo_dialects::block_operations(b) {
                if name_of(&inner).starts_with("store.") {
                    out.push(inner);
                }
                collect_store_ops(inner, out);
            }
            block = b.next_in_region();
        }
    }
}

fn lower<'c>(module: OperationRef<'c, '_>, gpu: bool) -> PassResult<'c> {
    let mut ops = Vec::new();
    collect_store_ops(module, &mut ops);
    // The store of every op, read before anything changes.
    let mut infos: Vec<StoreInfo> = Vec::new();
    let mut store_of: Vec<usize> = Vec::new();
    let mut alloc_positions: Vec<(OperationRef, usize)> = Vec::new();
    for op in &ops {
        if name_of(op) == "store.alloc" {
            let info = alloc_info(op)?;
            alloc_positions.push((*op, infos.len()));
            store_of.push(infos.len());
            infos.push(info);
            continue;
        }
        let store = op.operand(0).map_err(|_| vec![PassDiagnostic::new(op.location(), "expected a store operand")])?;
        let owner = OperationResult::try_from(store).ok().map(|r| r.owner());
        let found = owner.and_then(|o| alloc_positions.iter().find(|(a, _)| *a == o).map(|(_, k)| *k));
        match found {
            Some(k) => store_of.push(k),
            None => {
                return Err(vec![PassDiagnostic::new(
                    op.location(),
                    format!("'{}' expects a store made by a store.alloc earlier in the function", name_of(op)),
                )]);
            }
        }
    }
    // Per store, the values its allocation made besides the store: a
    // `blocks` store's block table, then its swap space if it has one.
    let mut extras: HashMap<usize, Vec<mlir_sys::MlirValue>> = HashMap::new();
    for (op, k) in ops.into_iter().zip(store_of) {
        let info = &infos[k];
        let location = op.location();
        let fail = |message: String| vec![PassDiagnostic::new(location, message)];
        let operands: Vec<Value> = op.operands().collect();
        let mut inputs: Vec<Value> = operands.clone();
        let name = name_of(&op);
        if info.swap_space && gpu {
            return Err(fail("a store with a swap space (swap_space = \"file\") is for the CPU target".into()));
        }
        if info.kind == "blocks" && name != "store.alloc" {
            let made = &extras[&k];
            inputs.push(unsafe { Value::from_raw(made[0]) });
            if info.swap_space && matches!(name.as_str(), "store.spill" | "store.reload" | "store.free") {
                inputs.push(unsafe { Value::from_raw(made[1]) });
            }
        }
        let text = match name.as_str() {
            "store.swap_out" => swap_text(info, &op, &operands, true, gpu).map_err(&fail)?,
            "store.swap_in" => swap_text(info, &op, &operands, false, gpu).map_err(&fail)?,
            "store.alloc" => {
                // Built as typed IR.
                let made = alloc::lower(module, op, info, &operands).map_err(&fail)?;
                if !made.is_empty() {
                    extras.insert(k, made);
                }
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            "store.write" => {
                // Built as typed IR.
                write::lower(module, op, info, &inputs).map_err(&fail)?;
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            "store.seal" => {
                // Built as typed IR.
                seal::lower(op, info, operands[0], &operands[1..], gpu).map_err(&fail)?;
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            "store.free" => {
                // Built as typed IR.
                free::lower(module, op, info, &inputs).map_err(&fail)?;
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            "store.read" | "store.read_range" => {
                // Built as typed IR.
                let ranged = if name == "store.read_range" { Some(ranged_flags(&op).map_err(&fail)?) } else { None };
                reads::lower(op, info, ranged.as_deref(), operands[0], &operands[1..]).map_err(&fail)?;
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            "store.spill" | "store.reload" | "store.discard" => {
                // Built as typed IR (the first lowering written that way).
                spill::lower(module, op, info, &name, &inputs).map_err(&fail)?;
                unsafe {
                    mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
                    mlir_sys::mlirOperationDestroy(op.to_raw());
                }
                continue;
            }
            other => return Err(fail(format!("unknown store op '{other}'"))),
        };
        let extra = replace_op_with_text(module, op, &inputs, &text).map_err(fail)?;
        if name == "store.alloc" && !extra.is_empty() {
            extras.insert(k, extra);
        }
    }
    Ok(())
}

fn alloc_info<'c>(op: &OperationRef<'c, '_>) -> Result<StoreInfo, Vec<PassDiagnostic<'c>>> {
    let fail = |m: &str| vec![PassDiagnostic::new(op.location(), m.to_string())];
    let kind = op
        .attribute("kind")
        .ok()
        .and_then(tempo_passes::program::string_attr)
        .ok_or_else(|| fail("store.alloc needs a string 'kind'"))?;
    let extent = op
        .attribute("extent")
        .ok()
        .and_then(|a| IntegerAttribute::try_from(a).ok())
        .map(|i| i.value())
        .ok_or_else(|| fail("store.alloc needs an integer 'extent'"))?;
    let result: Type = op.result(0).map_err(|_| fail("store.alloc has one result"))?.r#type();
    let memref = MemRefType::try_from(result).map_err(|_| fail("a store is a memref"))?;
    let rank = memref.rank();
    let dims: Vec<i64> = (0..rank)
        .map(|i| unsafe {
            if mlir_sys::mlirShapedTypeIsDynamicDim(result.to_raw(), i as isize) {
                -1
            } else {
                mlir_sys::mlirShapedTypeGetDimSize(result.to_raw(), i as isize)
            }
        })
        .collect();
    let element = memref.element().to_string();
    let element_bytes = element_bytes(&element).ok_or_else(|| fail("unsupported store element type"))?;
    let sizes = op.operand_count();
    let slot_rank = match kind.as_str() {
        "point" => 0,
        "ring" | "window" => 1 + sizes,
        "blocks" | "full" => sizes,
        _ => return Err(fail(&format!("unknown store kind '{kind}' (point, ring, window, blocks, full)"))),
    };
    if slot_rank > rank {
        return Err(fail(&format!(
            "a '{kind}' store with {sizes} size operand(s) has at least {slot_rank} dimensions"
        )));
    }
    if kind == "point" && sizes != 0 {
        return Err(fail("a 'point' store takes no size operands"));
    }
    if kind == "blocks" && sizes == 0 {
        return Err(fail("a 'blocks' store takes one size operand per dimension, the along one's bound included"));
    }
    let along = match op.attribute("along") {
        Ok(a) => IntegerAttribute::try_from(a).map(|i| i.value()).map_err(|_| fail("'along' is an integer"))?,
        Err(_) => 0,
    };
    let slotted = matches!(kind.as_str(), "ring" | "window" | "blocks");
    if along < 0 || (slotted && along as usize >= slot_rank) || (!slotted && along != 0) {
        return Err(fail(&format!("'along' = {along} is not a store dimension a '{kind}' store runs along")));
    }
    let along = along as usize;
    let slots = match kind.as_str() {
        "ring" => Some(extent),
        "window" => Some(2 * extent),
        _ => None,
    };
    if let Some(slots) = slots
        && (extent < 1 || dims[along] != slots)
    {
        return Err(fail(&format!("a '{kind}' store of extent {extent} has {slots} slots as dimension {along}")));
    }
    if (0..slot_rank).any(|d| dims[d] != -1 && (slots.is_none() || d != along)) {
        return Err(fail(&format!(
            "a '{kind}' store's dimensions before the point shape are dynamic (one size operand each){}",
            if slots.is_some() { ", except the slots" } else { "" }
        )));
    }
    if kind == "blocks" && extent < 1 {
        return Err(fail("a 'blocks' store has at least one point per block"));
    }
    let point = dims[slot_rank..].to_vec();
    if point.iter().any(|&d| d < 0) {
        return Err(fail("a store's point shape is static"));
    }
    let swap_space = match op.attribute("swap_space") {
        Err(_) => false,
        Ok(a) => match tempo_passes::program::string_attr(a).as_deref() {
            Some("file") if kind == "blocks" && slot_rank == 1 => true,
            Some("file") => return Err(fail("only one-dimensional 'blocks' stores have a swap space")),
            _ => return Err(fail("'swap_space' is \"file\" (a temporary file), the one kind of swap space")),
        },
    };
    Ok(StoreInfo { kind, extent, along, ty: result.to_string(), slot_rank, point, element, element_bytes, swap_space })
}

/// Text adding (or subtracting) the `i64` value `bytes` to the live bytes
/// and raising the peak.
fn account(bytes: &str, freeing: bool) -> String {
    let op = if freeing { "arith.subi" } else { "arith.addi" };
    let mut out = String::new();
    let _ = writeln!(out, "    %stats = memref.get_global @{MEMORY_STATS} : memref<2xi64>");
    let _ = writeln!(out, "    %live = memref.load %stats[%c0] : memref<2xi64>");
    let _ = writeln!(out, "    %updated = {op} %live, {bytes} : i64");
    let _ = writeln!(out, "    memref.store %updated, %stats[%c0] : memref<2xi64>");
    if !freeing {
        let _ = writeln!(out, "    %peak = memref.load %stats[%c1] : memref<2xi64>");
        let _ = writeln!(out, "    %raised = arith.maxsi %peak, %updated : i64");
        let _ = writeln!(out, "    memref.store %raised, %stats[%c1] : memref<2xi64>");
    }
    out
}

const PRELUDE: &str = "    %c0 = arith.constant 0 : index\n    %c1 = arith.constant 1 : index\n";

fn stats_global() -> String {
    format!("  memref.global @{MEMORY_STATS} : memref<2xi64> = dense<0>\n")
}

const LIBC: &str = "  func.func private @mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr\n  \
     func.func private @mprotect(!llvm.ptr, i64, i32) -> i32\n  \
     func.func private @madvise(!llvm.ptr, i64, i32) -> i32\n  \
     func.func private @munmap(!llvm.ptr, i64) -> i32\n";

/// `%a0: T0, %a1: T1, ...` for the given values.
fn arguments(values: &[Value]) -> String {
    values.iter().enumerate().map(|(i, v)| format!("%a{i}: {}", v.r#type())).collect::<Vec<_>>().join(", ")
}

/// The arguments of a replacement for an op on `info`'s store: its
/// operands, then the block table of a `blocks` store (`lower` passes it
/// as the last input).
fn store_arguments(info: &StoreInfo, operands: &[Value]) -> String {
    let mut args = arguments(operands);
    if info.kind == "blocks" {
        args += &format!(", %a{}: {TABLE}", operands.len());
    }
    args
}

/// The blocks `[from, to)` (index values) of one slice of a `blocks` store
/// (its memory starts at `base`) as `%{name}_at` (their address) and
/// `%{name}_bytes` (`i64`); needs `%block_bytes` (`i64`) in scope.
fn block_span(name: &str, base: &str, from: &str, to: &str) -> String {
    format!(
        "    %{name}_first_i = arith.index_cast {from} : index to i64\n    \
         %{name}_first = arith.muli %{name}_first_i, %block_bytes : i64\n    \
         %{name}_count_index = arith.subi {to}, {from} : index\n    \
         %{name}_count_i = arith.index_cast %{name}_count_index : index to i64\n    \
         %{name}_bytes = arith.muli %{name}_count_i, %block_bytes : i64\n    \
         %{name}_at = llvm.getelementptr {base}[%{name}_first] : (!llvm.ptr, i64) -> !llvm.ptr, i8\n"
    )
}

/// The base address of a store as `%base` (`!llvm.ptr`).
fn base_pointer(info: &StoreInfo, store: &str) -> String {
    format!(
        "    %base_index = memref.extract_aligned_pointer_as_index {store} : {} -> index\n    \
         %base_int = arith.index_cast %base_index : index to i64\n    \
         %base = llvm.inttoptr %base_int : i64 to !llvm.ptr\n",
        info.ty
    )
}

/// The block table of a `blocks` store: per outer slice, the committed
/// blocks `[lo, hi)`.
const TABLE: &str = "memref<?x2xindex>";

/// `%view = memref.subview %a0[offsets..., 0...] [sizes..., point...]` where
/// `sizes` are given for ranged dimensions (1 elsewhere).
fn subview(info: &StoreInfo, offsets: &[String], sizes: &[String], view_ty: &str) -> String {
    let all_offsets: Vec<String> = offsets.iter().cloned().chain(info.point.iter().map(|_| "0".into())).collect();
    let mut all_sizes: Vec<String> = (0..offsets.len()).map(|i| sizes.get(i).cloned().unwrap_or("1".into())).collect();
    all_sizes.extend(info.point.iter().map(i64::to_string));
    let strides: Vec<&str> = all_sizes.iter().map(|_| "1").collect();
    format!(
        "    %view = memref.subview %a0[{}] [{}] [{}] : {} to {view_ty}\n",
        all_offsets.join(", "),
        all_sizes.join(", "),
        strides.join(", "),
        info.ty
    )
}

/// The `ranged` flags of a `store.read_range`.
fn ranged_flags(op: &OperationRef) -> Result<Vec<bool>, String> {
    op.attribute("ranged")
        .ok()
        .map(|a| {
            let text = a.to_string();
            text.trim_matches(|c| c == '[' || c == ']')
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| s == "true")
                .collect()
        })
        .ok_or_else(|| "store.read_range needs 'ranged'".to_string())
}

/// `store.swap_out` (`out`) and `store.swap_in`.
fn swap_text(
    info: &StoreInfo,
    op: &OperationRef,
    operands: &[Value],
    out_of_store: bool,
    gpu: bool,
) -> Result<String, String> {
    if info.kind != "full" && info.kind != "blocks" || info.slot_rank != 1 {
        return Err(format!(
            "only one-dimensional 'full' and 'blocks' stores are swapped; a '{}' store holds a few points",
            info.kind
        ));
    }
    let ranges = if out_of_store { 1 } else { 2 };
    if operands.len() != ranges + 2 {
        return Err("a swap takes the range [first, last) of points".into());
    }
    let host_ty = format!("memref<?x{}>", info.point_text());
    if out_of_store && op.result(0).map(|r| r.r#type().to_string()).ok().as_deref() != Some(host_ty.as_str()) {
        return Err(format!("store.swap_out returns a {host_ty}"));
    }
    let blocks = info.kind == "blocks";
    let args = store_arguments(info, operands);
    let (lo, hi) = if out_of_store { ("%a1", "%a2") } else { ("%a2", "%a3") };
    let result = if out_of_store { format!(" -> {host_ty}") } else { String::new() };
    let mut out = format!("module {{\n{}{}", stats_global(), if blocks { LIBC } else { "" });
    let _ = writeln!(out, "  func.func @replacement({args}){result} {{\n{PRELUDE}");
    let strided = format!(
        "memref<?x{}, strided<[{}], offset: ?>>",
        info.point_text(),
        std::iter::once(info.point_elements().to_string()).chain(row_major(&info.point)).collect::<Vec<_>>().join(", ")
    );
    let _ = writeln!(out, "    %count = arith.subi {hi}, {lo} : index");
    out += &subview(info, &[lo.to_string()], &["%count".into()], &strided).replace("%view", "%points");
    // The blocks wholly inside the range: [ceil(lo / B), floor(hi / B)).
    let release = |out: &mut String, protection: i32, advise: bool, freeing: bool| {
        let block_bytes = info.extent * info.point_bytes();
        let _ = writeln!(out, "    %block = arith.constant {} : index", info.extent);
        let _ = writeln!(out, "    %first_block = arith.ceildivui {lo}, %block : index");
        let _ = writeln!(out, "    %end_block = arith.divui {hi}, %block : index");
        let _ = writeln!(out, "    %any = arith.cmpi ult, %first_block, %end_block : index");
        let _ = writeln!(out, "    scf.if %any {{");
        *out += &base_pointer(info, "%a0");
        let _ = writeln!(out, "    %block_bytes = arith.constant {block_bytes} : i64");
        *out += &block_span("span", "%base", "%first_block", "%end_block");
        if advise {
            let _ = writeln!(out, "    %dont_need = arith.constant 4 : i32");
            let _ = writeln!(
                out,
                "    %advised = func.call @madvise(%span_at, %span_bytes, %dont_need) : (!llvm.ptr, i64, i32) -> i32"
            );
        }
        let _ = writeln!(out, "    %protection = arith.constant {protection} : i32");
        let _ = writeln!(
            out,
            "    %status = func.call @mprotect(%span_at, %span_bytes, %protection) : (!llvm.ptr, i64, i32) -> i32"
        );
        *out += &account("%span_bytes", freeing);
        let _ = writeln!(out, "    }}");
    };
    if out_of_store {
        let mark = if gpu { " {tempo.swap}" } else { "" };
        let _ = writeln!(out, "    %host = memref.alloc(%count){mark} : {host_ty}");
        let _ = writeln!(out, "    linalg.copy ins(%points : {strided}) outs(%host : {host_ty})");
        if blocks {
            release(&mut out, 0, true, true);
        }
        let _ = writeln!(out, "    return %host : {host_ty}\n  }}\n}}");
    } else {
        if blocks {
            release(&mut out, 3, false, false);
        }
        let _ = writeln!(out, "    linalg.copy ins(%a1 : {host_ty}) outs(%points : {strided})");
        let _ = writeln!(out, "    memref.dealloc %a1 : {host_ty}");
        out += "    return\n  }\n}\n";
    }
    Ok(out)
}
