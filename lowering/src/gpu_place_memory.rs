//! `gpu-place-memory`: puts each buffer of host code where the code using
//! it can reach it, and in device memory wherever only kernels use it.
//! After the spatial loops of a step became kernels
//! (`convert-parallel-loops-to-gpu`, `gpu-kernel-outlining`), the host runs
//! the temporal loops, the bookkeeping of the stores (block tables, byte
//! counters) and external calls; with `lower-temporal-to-loops{gpu=true}`
//! and `lower-store-to-memref{gpu=true}` every access to store data is in a
//! kernel. So, outside `gpu.module`s, per buffer:
//!
//! - **device memory** where no host code reads or writes it: a
//!   `memref.alloc` becomes `gpu.alloc async` (`cuMemAlloc` in the
//!   runtime, waited for at once); the reservation of a growing block store
//!   (`@mmap` of `lower-store-to-memref`) calls
//!   `@tempo_gpu_reserve_device`, which reserves device address space for
//!   the bound; committing blocks (`@mprotect` read/write) maps physical
//!   device memory under them and releasing them (`PROT_NONE`) unmaps it
//!   (CUDA virtual memory management, in the runtime);
//! - **host memory** for the buffer a swap moves store points to (a
//!   `memref.alloc` marked `tempo.swap`): managed memory whose preferred
//!   place is the host (`@tempo_gpu_place_on_host`), which kernels write
//!   and read over the bus without moving it to the device;
//! - **managed memory** (one address valid on the host and the device,
//!   pages moved on touch) for what host code and kernels both touch:
//!   `gpu.alloc host_shared`, and reservations through `@tempo_gpu_mmap`.
//!   Kernel launches are asynchronous, so a call of `@tempo_gpu_wait` (wait
//!   for the kernels launched so far) goes before each host op touching
//!   such a buffer, and before every call of a function other than the
//!   runtime's memory functions (an external call may read any buffer
//!   whose address it was given);
//! - **host memory** for what only host code touches (the block tables of
//!   the stores, an external call's own buffers): the `memref.alloc` stays.
//!
//! `memref.dealloc` becomes a call of `@tempo_gpu_free` on the buffer's
//! pointer (the upstream lowering drops a synchronous `gpu.dealloc`), and
//! `@mprotect`, `@madvise` and `@munmap` their `@tempo_gpu_*` versions,
//! which the runtime applies to the reservation holding the address.
//!
//! A buffer counts as touched by the host when a value derived from it
//! (through views, casts, descriptor and pointer arithmetic) reaches an op
//! other than a kernel launch, a deallocation, a view or the reservation
//! functions: a load, a store, a copy, a `linalg` op left on the host, an
//! external call, a return, a loop's iteration argument. The analysis errs
//! toward managed memory, which is always correct.
//!
//! `memref.alloca` and globals stay host memory: only host code may use
//! them (`lower-temporal-to-loops{gpu=true}` copies constants into
//! allocated buffers).
//!
//! Assumes the output of `lower-store-to-memref` (possibly with kernels
//! outlined); the runtime provides the `@tempo_gpu_*` functions.

use melior::ir::attribute::FlatSymbolRefAttribute;
use melior::ir::{
    BlockLike, OperationRef, RegionLike, ValueLike, operation::OperationLike, operation::OperationMutLike,
};
use std::collections::HashSet;
use tempo_passes::diagnostics::{PassDiagnostic, PassResult};
use tempo_passes::pass::{PassOptions, TempoPass};

use crate::ir_builder::{Builder, declare};
use melior::ir::{Type, r#type::IntegerType};

/// The `gpu-place-memory` pass.
pub struct GpuPlaceMemory;

/// The memory functions of block stores and their versions in the runtime
/// of the CUDA target (the reservation's is chosen per call).
const RENAMED: &[(&str, &str)] =
    &[("mprotect", "tempo_gpu_mprotect"), ("madvise", "tempo_gpu_madvise"), ("munmap", "tempo_gpu_munmap")];

/// Reserving a block store in managed memory, and in device memory.
const RESERVE_MANAGED: &str = "tempo_gpu_mmap";
const RESERVE_DEVICE: &str = "tempo_gpu_reserve_device";

/// Where a buffer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Only kernels use it.
    Device,
    /// Host code and kernels use it.
    Managed,
    /// Only host code uses it: it stays a host allocation.
    HostOnly,
    /// A swap buffer: managed memory placed on the host.
    Swap,
}

impl Place {
    fn of(uses: &Uses) -> Place {
        match (uses.host.is_empty(), uses.kernels) {
            (true, _) => Place::Device,
            (false, true) => Place::Managed,
            (false, false) => Place::HostOnly,
        }
    }
}

impl TempoPass for GpuPlaceMemory {
    fn name(&self) -> &'static str {
        "gpu-place-memory"
    }
    fn summary(&self) -> &'static str {
        "Buffers and block stores of host code in device memory where only kernels use them (block stores grown by mapping device memory), in managed memory with waits for the kernels where the host touches them too, in host memory where only the host does; swap buffers on the host"
    }
    fn run<'c>(&self, op: OperationRef<'c, '_>, _options: &PassOptions) -> PassResult<'c> {
        let here = |message: String| vec![PassDiagnostic::new(op.location(), message)];
        let mut found = Found::default();
        collect(op, &mut found);
        let context = op.context();
        let context = unsafe { context.to_ref() };
        // Decide every place before rewriting anything.
        let mut waits: Vec<mlir_sys::MlirOperation> = Vec::new();
        let alloc_places: Vec<Place> = found
            .allocs
            .iter()
            .map(|&alloc| {
                let alloc = unsafe { OperationRef::from_raw(alloc) };
                if alloc.attribute("tempo.swap").is_ok() {
                    return Place::Swap;
                }
                let uses = uses_of(alloc);
                let place = Place::of(&uses);
                if place == Place::Managed {
                    waits.extend(uses.host);
                }
                place
            })
            .collect();
        let reservation_places: Vec<Place> = found
            .reservations
            .iter()
            .map(|&call| {
                let uses = uses_of(unsafe { OperationRef::from_raw(call) });
                if uses.host.is_empty() {
                    Place::Device
                } else {
                    waits.extend(uses.host);
                    Place::Managed
                }
            })
            .collect();
        let host_only: HashSet<usize> = found
            .allocs
            .iter()
            .zip(&alloc_places)
            .filter(|(_, place)| **place == Place::HostOnly)
            .filter_map(|(&alloc, _)| unsafe { OperationRef::from_raw(alloc) }.result(0).ok())
            .map(|value| value.to_raw().ptr as usize)
            .collect();

        for found_op in &found.renamed {
            let Some((key, new)) = renamed_symbol(unsafe { OperationRef::from_raw(*found_op) }) else { continue };
            let mut found_op = unsafe { melior::ir::operation::OperationRefMut::from_raw(*found_op) };
            if key == "callee" {
                found_op.set_attribute("callee", FlatSymbolRefAttribute::new(context, new).into());
            } else {
                found_op.set_attribute("sym_name", melior::ir::attribute::StringAttribute::new(context, new).into());
            }
        }
        for (&call, place) in found.reservations.iter().zip(reservation_places) {
            let name = if place == Place::Device { RESERVE_DEVICE } else { RESERVE_MANAGED };
            let mut call = unsafe { melior::ir::operation::OperationRefMut::from_raw(call) };
            call.set_attribute("callee", FlatSymbolRefAttribute::new(context, name).into());
        }
        if !found.reservations.is_empty() {
            // Both reservation functions are declared (the `@mmap`
            // declaration itself is removed below).
            let pointer = melior::dialect::llvm::r#type::pointer(context, 0);
            let (i64, i32) = (IntegerType::new(context, 64).into(), IntegerType::new(context, 32).into());
            let inputs = [pointer, i64, i32, i32, i32, i64];
            for name in [RESERVE_MANAGED, RESERVE_DEVICE] {
                declare(op, name, &inputs, &[pointer]).map_err(here)?;
            }
        }
        for &declaration in &found.mmap_declarations {
            unsafe {
                mlir_sys::mlirOperationRemoveFromParent(declaration);
                mlir_sys::mlirOperationDestroy(declaration);
            }
        }
        // Host code waits for the kernels before it touches memory they
        // share (launches are asynchronous), and before external calls.
        waits.extend(found.foreign_calls.iter().copied());
        waits.sort_by_key(|op| op.ptr as usize);
        waits.dedup_by_key(|op| op.ptr as usize);
        if !waits.is_empty() {
            declare(op, "tempo_gpu_wait", &[], &[]).map_err(here)?;
        }
        for &user in &waits {
            let user = unsafe { OperationRef::from_raw(user) };
            let block = user.block().ok_or_else(|| here("internal error: a host use outside a block".into()))?;
            let call = wait_call(context, user.location());
            unsafe { mlir_sys::mlirBlockInsertOwnedOperationBefore(block.to_raw(), user.to_raw(), call) };
        }
        // Typed ops replace the allocations and deallocations (no text is
        // parsed per buffer: a training step has thousands of buffers, in
        // a module of hundreds of kernels).
        if alloc_places.contains(&Place::Swap) {
            declare(op, "tempo_gpu_place_on_host", &[Type::index(context)], &[]).map_err(here)?;
        }
        for (&alloc, place) in found.allocs.iter().zip(alloc_places) {
            if place == Place::HostOnly {
                continue;
            }
            let alloc = unsafe { OperationRef::from_raw(alloc) };
            place_alloc(context, alloc, place).map_err(here)?;
        }
        let freed: Vec<OperationRef> = found
            .deallocs
            .iter()
            .map(|&dealloc| unsafe { OperationRef::from_raw(dealloc) })
            .filter(|dealloc| dealloc.operand(0).is_ok_and(|b| !host_only.contains(&(b.to_raw().ptr as usize))))
            .collect();
        if !freed.is_empty() {
            declare(op, "tempo_gpu_free", &[Type::index(context)], &[]).map_err(here)?;
        }
        for dealloc in freed {
            let buffer = dealloc.operand(0).map_err(|e| here(e.to_string()))?;
            call_with_pointer(&Builder::before(dealloc).map_err(here)?, "tempo_gpu_free", buffer).map_err(here)?;
            unsafe {
                mlir_sys::mlirOperationRemoveFromParent(dealloc.to_raw());
                mlir_sys::mlirOperationDestroy(dealloc.to_raw());
            }
        }
        Ok(())
    }
}

/// Replaces `alloc` (a `memref.alloc`) by the allocation of `place`: a
/// device allocation (`gpu.alloc async`, waited for at once), a managed
/// one (`gpu.alloc host_shared`), or a managed one placed on the host
/// (`@tempo_gpu_place_on_host`, for a swap buffer).
fn place_alloc<'c, 'a>(context: &'c melior::Context, alloc: OperationRef<'c, 'a>, place: Place) -> Result<(), String> {
    use melior::ir::attribute::DenseI32ArrayAttribute;
    let memref = alloc.result(0).map_err(|e| e.to_string())?;
    let ty = memref.r#type();
    let sizes: Vec<melior::ir::Value> = (0..alloc.operand_count()).filter_map(|i| alloc.operand(i).ok()).collect();
    let n = sizes.len() as i32;
    let token = unsafe { melior::ir::Type::from_raw(mlir_sys::mlirGPUAsyncTokenTypeGet(context.to_raw())) };
    let b = Builder::before(alloc)?;
    let replacement = match place {
        Place::Device => {
            let ready = b.value("gpu.wait", &[], token, &[])?;
            let operands: Vec<melior::ir::Value> = std::iter::once(ready).chain(sizes.iter().copied()).collect();
            let segments = DenseI32ArrayAttribute::new(context, &[1, n, 0]).into();
            let made = b.op("gpu.alloc", &operands, &[ty, token], &[("operandSegmentSizes", segments)])?;
            let done = made.result(1).map_err(|e| e.to_string())?.into();
            b.op("gpu.wait", &[done], &[], &[])?;
            made.result(0).map_err(|e| e.to_string())?.into()
        }
        Place::Managed | Place::Swap => {
            let segments = DenseI32ArrayAttribute::new(context, &[0, n, 0]).into();
            let shared = melior::ir::Attribute::unit(context);
            let made =
                b.value("gpu.alloc", &sizes, ty, &[("operandSegmentSizes", segments), ("hostShared", shared)])?;
            if place == Place::Swap {
                call_with_pointer(&b, "tempo_gpu_place_on_host", made)?;
            }
            made
        }
        Place::HostOnly => return Ok(()),
    };
    unsafe {
        mlir_sys::mlirValueReplaceAllUsesOfWith(memref.to_raw(), replacement.to_raw());
        mlir_sys::mlirOperationRemoveFromParent(alloc.to_raw());
        mlir_sys::mlirOperationDestroy(alloc.to_raw());
    }
    Ok(())
}

/// `func.call @callee(p)` of `buffer`'s aligned pointer `p` (`memref.
/// extract_aligned_pointer_as_index`), at `b`.
fn call_with_pointer<'c, 'a>(
    b: &Builder<'c, 'a>,
    callee: &str,
    buffer: melior::ir::Value<'c, '_>,
) -> Result<(), String> {
    let pointer = b.value("memref.extract_aligned_pointer_as_index", &[buffer], b.index_type(), &[])?;
    let symbol = FlatSymbolRefAttribute::new(b.context(), callee).into();
    b.op("func.call", &[pointer], &[], &[("callee", symbol)]).map(|_| ())
}

/// For a call of (or the declaration of) a block-store memory function
/// other than the reservation, the attribute naming it and the runtime
/// function's name.
fn renamed_symbol(op: OperationRef) -> Option<(&'static str, &'static str)> {
    let key = match op.name().as_string_ref().as_str() {
        Ok("func.call") => "callee",
        Ok("func.func") => "sym_name",
        _ => return None,
    };
    let symbol = symbol_of(op, key)?;
    RENAMED.iter().find(|(from, _)| *from == symbol).map(|&(_, new)| (key, new))
}

/// The symbol an op's attribute `key` names, without `@` or quotes.
fn symbol_of(op: OperationRef, key: &str) -> Option<String> {
    let symbol = op.attribute(key).ok()?.to_string();
    Some(symbol.trim_start_matches('@').trim_matches('"').to_string())
}

/// What the pass rewrites, found before any rewriting.
#[derive(Default)]
struct Found {
    allocs: Vec<mlir_sys::MlirOperation>,
    deallocs: Vec<mlir_sys::MlirOperation>,
    renamed: Vec<mlir_sys::MlirOperation>,
    /// Calls of `@mmap`.
    reservations: Vec<mlir_sys::MlirOperation>,
    /// Declarations of `@mmap`.
    mmap_declarations: Vec<mlir_sys::MlirOperation>,
    /// Calls of functions outside the runtime's memory functions (external
    /// calls), which may read any buffer whose address escaped.
    foreign_calls: Vec<mlir_sys::MlirOperation>,
}

/// The ops of host code under `op` (not inside `gpu.module`s) the pass
/// rewrites.
fn collect(op: OperationRef, found: &mut Found) {
    for region in 0..op.region_count() {
        let Ok(region) = op.region(region) else { continue };
        let mut block = region.first_block();
        while let Some(b) = block {
            for inner in tempo_dialects::block_operations(b) {
                let name = inner.name().as_string_ref().as_str().unwrap_or("").to_string();
                match name.as_str() {
                    "gpu.module" => continue,
                    "memref.alloc" => found.allocs.push(inner.to_raw()),
                    "memref.dealloc" => found.deallocs.push(inner.to_raw()),
                    "func.call" if symbol_of(inner, "callee").as_deref() == Some("mmap") => {
                        found.reservations.push(inner.to_raw())
                    }
                    "func.func" if symbol_of(inner, "sym_name").as_deref() == Some("mmap") => {
                        found.mmap_declarations.push(inner.to_raw())
                    }
                    "func.call" | "func.func" if renamed_symbol(inner).is_some() => found.renamed.push(inner.to_raw()),
                    "func.call" if !harmless_use(inner) => found.foreign_calls.push(inner.to_raw()),
                    _ => {}
                }
                collect(inner, found);
            }
            block = b.next_in_region();
        }
    }
}

/// Ops through which a buffer's values flow on: views of it, casts, its
/// descriptor and its address as a pointer or an integer.
fn passes_buffer_on(name: &str) -> bool {
    matches!(
        name,
        "memref.subview"
            | "memref.cast"
            | "memref.reinterpret_cast"
            | "memref.collapse_shape"
            | "memref.expand_shape"
            | "memref.transpose"
            | "memref.view"
            | "memref.memory_space_cast"
            | "memref.extract_strided_metadata"
            | "memref.extract_aligned_pointer_as_index"
            | "builtin.unrealized_conversion_cast"
            | "llvm.insertvalue"
            | "llvm.extractvalue"
            | "llvm.getelementptr"
            | "llvm.inttoptr"
            | "llvm.ptrtoint"
            | "llvm.bitcast"
            | "llvm.addrspacecast"
    ) || name.starts_with("arith.")
}

/// Uses of a buffer that do not touch its data on the host.
fn harmless_use(op: OperationRef) -> bool {
    match op.name().as_string_ref().as_str().unwrap_or("") {
        "memref.dealloc" | "memref.dim" => true,
        "func.call" => symbol_of(op, "callee").is_some_and(|callee| {
            matches!(callee.as_str(), "mprotect" | "madvise" | "munmap") || callee.starts_with("tempo_gpu_")
        }),
        _ => false,
    }
}

/// How a buffer is used.
struct Uses {
    /// Host ops that may read or write its data.
    host: Vec<mlir_sys::MlirOperation>,
    /// Whether a kernel launch gets it.
    kernels: bool,
}

/// The uses of the buffer `root` defines (its first result): where the
/// values derived from it end up.
fn uses_of(root: OperationRef) -> Uses {
    let mut uses = Uses { host: Vec::new(), kernels: false };
    let mut pending: Vec<mlir_sys::MlirValue> = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    if let Ok(result) = root.result(0) {
        pending.push(result.to_raw());
    }
    while let Some(value) = pending.pop() {
        if !seen.insert(value.ptr as usize) {
            continue;
        }
        // SAFETY: walking the use list of a live value.
        let mut operand = unsafe { mlir_sys::mlirValueGetFirstUse(value) };
        while !unsafe { mlir_sys::mlirOpOperandIsNull(operand) } {
            let user = unsafe { OperationRef::from_raw(mlir_sys::mlirOpOperandGetOwner(operand)) };
            let name = user.name().as_string_ref().as_str().unwrap_or("").to_string();
            if name == "gpu.launch_func" {
                uses.kernels = true;
            } else if passes_buffer_on(&name) {
                for i in 0..user.result_count() {
                    if let Ok(result) = user.result(i) {
                        pending.push(result.to_raw());
                    }
                }
            } else if !harmless_use(user) {
                uses.host.push(user.to_raw());
            }
            operand = unsafe { mlir_sys::mlirOpOperandGetNextUse(operand) };
        }
    }
    uses
}

/// `func.call @tempo_gpu_wait() : () -> ()` at `location`, not yet in a
/// block.
fn wait_call(context: &melior::Context, location: melior::ir::Location) -> mlir_sys::MlirOperation {
    use melior::ir::operation::OperationBuilder;
    let call = OperationBuilder::new("func.call", location)
        .add_attributes(&[(
            melior::ir::Identifier::new(context, "callee"),
            FlatSymbolRefAttribute::new(context, "tempo_gpu_wait").into(),
        )])
        .build()
        .expect("a valid call");
    call.into_raw()
}
