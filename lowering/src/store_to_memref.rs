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

/// The kinds of store (`kind` of `store.alloc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StoreKind {
    Point,
    Ring,
    Window,
    Blocks,
    Full,
}

impl StoreKind {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "point" => StoreKind::Point,
            "ring" => StoreKind::Ring,
            "window" => StoreKind::Window,
            "blocks" => StoreKind::Blocks,
            "full" => StoreKind::Full,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            StoreKind::Point => "point",
            StoreKind::Ring => "ring",
            StoreKind::Window => "window",
            StoreKind::Blocks => "blocks",
            StoreKind::Full => "full",
        }
    }

    /// Whether the store keeps a few slots along one dimension.
    fn is_slotted(self) -> bool {
        matches!(self, StoreKind::Ring | StoreKind::Window)
    }
}

impl std::fmt::Display for StoreKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// What a store op needs to know about its store.
#[derive(Clone, Debug)]
struct StoreInfo<'c> {
    kind: StoreKind,
    extent: i64,
    /// The store dimension a ring, window or blocks runs along.
    along: usize,
    /// The store's memref type.
    ty: Type<'c>,
    /// Leading dimensions indexing points (0 for `point` and rank-0 `full`).
    slot_rank: usize,
    /// The point shape (trailing dimensions).
    point: Vec<i64>,
    element: Type<'c>,
    element_bytes: i64,
    /// A `blocks` store with a swap space (`swap_space = "file"`).
    swap_space: bool,
}

impl<'c> StoreInfo<'c> {
    fn point_elements(&self) -> i64 {
        self.point.iter().product()
    }
    fn point_bytes(&self) -> i64 {
        self.point_elements() * self.element_bytes
    }
    /// `memref<lead x point shape x element>` with a row-major layout of
    /// dynamic offset, the stride of a leading dimension (if any) one point.
    fn points_view(&self, context: &'c melior::Context, lead: Option<i64>) -> Type<'c> {
        let dims: Vec<i64> = lead.into_iter().chain(self.point.iter().copied()).collect();
        let strides: Vec<i64> = lead
            .map(|_| self.point_elements())
            .into_iter()
            .chain(tempo_passes::program::row_major_strides(&self.point))
            .collect();
        crate::ir_builder::strided_memref(context, self.element, &dims, &strides, i64::MIN)
    }
}

/// The bytes of an element of type `element`.
fn element_bytes(element: Type) -> Option<i64> {
    if element.is_index() {
        return Some(8);
    }
    if element.is_f16() || element.is_bf16() {
        return Some(2);
    }
    if element.is_f32() {
        return Some(4);
    }
    if element.is_f64() {
        return Some(8);
    }
    let width = melior::ir::r#type::IntegerType::try_from(element).ok()?.width();
    Some(match width {
        1 | 8 => 1,
        16 => 2,
        32 => 4,
        64 => 8,
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
    let mut infos: Vec<StoreInfo<'c>> = Vec::new();
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
        if info.kind == StoreKind::Blocks && name != "store.alloc" {
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

fn alloc_info<'c>(op: &OperationRef<'c, '_>) -> Result<StoreInfo<'c>, Vec<PassDiagnostic<'c>>> {
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
    let element = memref.element();
    let element_bytes = element_bytes(element).ok_or_else(|| fail("unsupported store element type"))?;
    let sizes = op.operand_count();
    let kind = StoreKind::parse(&kind)
        .ok_or_else(|| fail(&format!("unknown store kind '{kind}' (point, ring, window, blocks, full)")))?;
    let slot_rank = match kind {
        StoreKind::Point => 0,
        StoreKind::Ring | StoreKind::Window => 1 + sizes,
        StoreKind::Blocks | StoreKind::Full => sizes,
    };
    if slot_rank > rank {
        return Err(fail(&format!(
            "a '{kind}' store with {sizes} size operand(s) has at least {slot_rank} dimensions"
        )));
    }
    if kind == StoreKind::Point && sizes != 0 {
        return Err(fail("a 'point' store takes no size operands"));
    }
    if kind == StoreKind::Blocks && sizes == 0 {
        return Err(fail("a 'blocks' store takes one size operand per dimension, the along one's bound included"));
    }
    let along = match op.attribute("along") {
        Ok(a) => IntegerAttribute::try_from(a).map(|i| i.value()).map_err(|_| fail("'along' is an integer"))?,
        Err(_) => 0,
    };
    let slotted = kind.is_slotted() || kind == StoreKind::Blocks;
    if along < 0 || (slotted && along as usize >= slot_rank) || (!slotted && along != 0) {
        return Err(fail(&format!("'along' = {along} is not a store dimension a '{kind}' store runs along")));
    }
    let along = along as usize;
    let slots = match kind {
        StoreKind::Ring => Some(extent),
        StoreKind::Window => Some(2 * extent),
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
    if kind == StoreKind::Blocks && extent < 1 {
        return Err(fail("a 'blocks' store has at least one point per block"));
    }
    let point = dims[slot_rank..].to_vec();
    if point.iter().any(|&d| d < 0) {
        return Err(fail("a store's point shape is static"));
    }
    let swap_space = match op.attribute("swap_space") {
        Err(_) => false,
        Ok(a) => match tempo_passes::program::string_attr(a).as_deref() {
            Some("file") if kind == StoreKind::Blocks && slot_rank == 1 => true,
            Some("file") => return Err(fail("only one-dimensional 'blocks' stores have a swap space")),
            _ => return Err(fail("'swap_space' is \"file\" (a temporary file), the one kind of swap space")),
        },
    };
    Ok(StoreInfo { kind, extent, along, ty: result, slot_rank, point, element, element_bytes, swap_space })
}

/// The type of the block table of a `blocks` store, `memref<?x2xindex>`:
/// per outer slice, the committed blocks `[lo, hi)`.
fn table_type(context: &melior::Context) -> Type<'_> {
    MemRefType::new(Type::index(context), &[i64::MIN, 2], None, None).into()
}

/// Where coordinate `coord` of store dimension `d` lives: a ring's or
/// window's along coordinate is its slot, `p mod k` (`arith.remui`:
/// coordinates are within the domain, never negative); others as given.
fn slot<'c, 'a>(
    b: &crate::ir_builder::Builder<'c, 'a>,
    info: &StoreInfo<'c>,
    d: usize,
    coord: Value<'c, 'a>,
) -> Result<Value<'c, 'a>, String> {
    if d == info.along && info.kind.is_slotted() {
        let slots = b.index(info.extent)?;
        b.arith("remui", coord, slots)
    } else {
        Ok(coord)
    }
}

/// The `ranged` flags of a `store.read_range`.
fn ranged_flags(op: &OperationRef) -> Result<Vec<bool>, String> {
    let refused = || "store.read_range needs 'ranged', an array of booleans".to_string();
    let flags = op
        .attribute("ranged")
        .ok()
        .and_then(|a| melior::ir::attribute::ArrayAttribute::try_from(a).ok())
        .ok_or_else(refused)?;
    (0..flags.len())
        .map(|k| {
            let flag = flags.element(k).map_err(|_| refused())?;
            if unsafe { mlir_sys::mlirAttributeIsABool(melior::ir::attribute::AttributeLike::to_raw(&flag)) } {
                Ok(unsafe { mlir_sys::mlirBoolAttrGetValue(melior::ir::attribute::AttributeLike::to_raw(&flag)) })
            } else {
                Err(refused())
            }
        })
        .collect()
}
