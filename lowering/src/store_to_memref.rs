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
//! Each op is built as typed IR right before it ([`crate::ir_builder`]),
//! one file per op kind (`alloc`, `write`, `seal`, `reads`, `free`,
//! `swap`, `spill`; `blocks` holds what the `blocks` ops share), and then
//! erased: no text is generated and parsed back.
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
mod swap;
mod write;

use melior::ir::{
    BlockLike, OperationRef, RegionLike, Type, TypeLike, Value, ValueLike,
    attribute::IntegerAttribute,
    operation::{OperationLike, OperationResult},
    r#type::{MemRefType, ShapedTypeLike},
};
use std::collections::HashMap;
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
        // Each op is built as typed IR before it (one file per op kind),
        // then erased.
        match name.as_str() {
            "store.alloc" => {
                let made = alloc::lower(module, op, info, &operands).map_err(&fail)?;
                if !made.is_empty() {
                    extras.insert(k, made);
                }
            }
            "store.write" => write::lower(module, op, info, &inputs).map_err(&fail)?,
            "store.seal" => seal::lower(op, info, operands[0], &operands[1..], gpu).map_err(&fail)?,
            "store.read" | "store.read_range" => {
                let ranged = if name == "store.read_range" { Some(ranged_flags(&op).map_err(&fail)?) } else { None };
                reads::lower(op, info, ranged.as_deref(), operands[0], &operands[1..]).map_err(&fail)?;
            }
            "store.free" => free::lower(module, op, info, &inputs).map_err(&fail)?,
            "store.swap_out" | "store.swap_in" => {
                swap::lower(module, op, info, &inputs, name == "store.swap_out", gpu).map_err(&fail)?
            }
            "store.spill" | "store.reload" | "store.discard" => {
                spill::lower(module, op, info, &name, &inputs).map_err(&fail)?
            }
            other => return Err(fail(format!("unknown store op '{other}'"))),
        }
        unsafe {
            mlir_sys::mlirOperationRemoveFromParent(op.to_raw());
            mlir_sys::mlirOperationDestroy(op.to_raw());
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

/// The block table of a `blocks` store: per outer slice, the committed
/// blocks `[lo, hi)`.
const TABLE: &str = "memref<?x2xindex>";

/// Where coordinate `coord` of store dimension `d` lives: a ring's or
/// window's along coordinate is its slot, `p mod k` (`arith.remui`:
/// coordinates are within the domain, never negative); others as given.
fn slot<'c, 'a>(
    b: &crate::ir_builder::Builder<'c, 'a>,
    info: &StoreInfo,
    d: usize,
    coord: Value<'c, 'a>,
) -> Result<Value<'c, 'a>, String> {
    if d == info.along && matches!(info.kind.as_str(), "ring" | "window") {
        let slots = b.index(info.extent)?;
        b.arith("remui", coord, slots)
    } else {
        Ok(coord)
    }
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
