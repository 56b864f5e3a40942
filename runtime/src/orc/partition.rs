//! Splitting a lowered module (LLVM dialect) into partitions that are
//! translated, optimized and compiled apart, on several threads, then
//! linked together by the JIT.
//!
//! Every partition is a clone of the whole module in which the functions
//! of the other partitions are declarations: partition 0 holds the entry
//! (`tempo_main`, its C interface); every function not of external
//! linkage is in all (private copies); the loop nests `outline-loop-nests` made (external linkage,
//! called only from the entry) are spread over the partitions by size,
//! largest first into the lightest. Globals: a constant of private or
//! internal linkage is copied into every partition (each reads its own
//! copy of the same value); any other global (the memory counters, a
//! stop's lengths) is defined in partition 0 with external linkage and
//! declared in the others, so that all code updates one copy.
//!
//! Assumes the module after the lowering pipeline: `llvm.func` and
//! `llvm.mlir.global` ops (and nothing else with a body) at the top level.

use melior::ir::{BlockLike, Module, OperationRef, RegionLike, attribute::StringAttribute, operation::OperationLike};
use mlir_sys::{
    MlirOperation, MlirWalkResult, mlirOperationClone, mlirOperationGetRegion, mlirOperationRemoveAttributeByName,
    mlirOperationSetAttributeByName, mlirOperationWalk, mlirRegionCreate, mlirRegionDestroy, mlirRegionTakeBody,
};

/// A partition: a clone of the module (owned; destroyed on drop).
pub struct Partition {
    pub op: MlirOperation,
}

impl Drop for Partition {
    fn drop(&mut self) {
        // SAFETY: the clone is owned by this value and not referenced
        // after (the translation copies what it needs into LLVM IR).
        unsafe { mlir_sys::mlirOperationDestroy(self.op) }
    }
}

/// Partitions at most (threads of code generation).
pub const MAX_PARTITIONS: usize = 8;

/// What the partitioning needs to know of a top-level op.
struct Top {
    name: String,
    kind: Kind,
    weight: usize,
}

#[derive(PartialEq)]
enum Kind {
    /// A function definition of external linkage other than the entry's.
    Movable,
    /// A global to define once (partition 0) and declare elsewhere.
    Shared,
    /// The entry or its C interface: defined in partition 0 only.
    Entry,
    /// Kept as it is in every partition.
    Kept,
}

/// Operations below `op`, itself included.
fn weight(op: MlirOperation) -> usize {
    unsafe extern "C" fn count(_: MlirOperation, data: *mut std::ffi::c_void) -> MlirWalkResult {
        // SAFETY: `data` is the counter passed below.
        unsafe { *(data as *mut usize) += 1 };
        mlir_sys::MlirWalkResult_MlirWalkResultAdvance
    }
    let mut n = 0usize;
    // SAFETY: a live operation; the callback only counts.
    unsafe {
        mlirOperationWalk(op, Some(count), &mut n as *mut usize as *mut _, mlir_sys::MlirWalkOrder_MlirWalkPreOrder)
    };
    n
}

fn string_attribute(op: &OperationRef, name: &str) -> Option<String> {
    let a = op.attribute(name).ok()?;
    StringAttribute::try_from(a).ok().map(|s| s.value().to_string())
}

/// Whether `op` (an `llvm.func` or `llvm.mlir.global`) has external
/// linkage (the default when the attribute is absent).
fn external(op: &OperationRef) -> bool {
    op.attribute("linkage").map(|a| a.to_string().contains("external")).unwrap_or(true)
}

fn has_body(op: &OperationRef) -> bool {
    op.region(0).ok().and_then(|r| r.first_block()).is_some()
}

fn classify(op: &OperationRef, entry: &str) -> Option<Top> {
    let name = string_attribute(op, "sym_name")?;
    let kind = match op.name().as_string_ref().as_str().ok()? {
        "llvm.func" if has_body(op) && (name == entry || name == format!("_mlir_ciface_{entry}")) => Kind::Entry,
        "llvm.func" if has_body(op) && external(op) => Kind::Movable,
        "llvm.mlir.global" if op.attribute("constant").is_err() || external(op) => Kind::Shared,
        _ => Kind::Kept,
    };
    let weight = if kind == Kind::Movable { weight(op.to_raw()) } else { 0 };
    Some(Top { name, kind, weight })
}

/// Removes the body (or initializer region) of `op`.
///
/// # Safety
/// `op` is a live operation with at least one region.
unsafe fn erase_body(op: MlirOperation) {
    unsafe {
        let region = mlirOperationGetRegion(op, 0);
        let taken = mlirRegionCreate();
        mlirRegionTakeBody(taken, region);
        // Destroying a region drops the references among its ops first.
        mlirRegionDestroy(taken);
    }
}

/// Splits `module` into at most `count` partitions (fewer when it has
/// fewer functions to spread than that, or too little work to pay for
/// another translation): partition 0 first.
pub fn split(module: &Module, count: usize, entry: &str) -> Vec<Partition> {
    let body = module.body();
    let mut tops: Vec<(OperationRef, Top)> = Vec::new();
    let mut op = body.first_operation();
    while let Some(o) = op {
        if let Some(top) = classify(&o, entry) {
            tops.push((o, top));
        }
        op = o.next_in_block();
    }
    let movable: usize = tops.iter().filter(|(_, t)| t.kind == Kind::Movable).map(|(_, t)| t.weight).sum();
    // Below this many operations in nests, one partition (the cost of
    // another translation and object is not repaid; the LSTM training
    // step's 3,900, compiled on one thread, took 1.1 s of LLVM's time
    // against 0.6 s on two).
    const MIN_WORK: usize = 1_500;
    let count = count.clamp(1, MAX_PARTITIONS).min(1 + movable / MIN_WORK);
    // Partition 0 carries the entry: straight-line calls, which LLVM
    // compiles about 2.5 times faster per operation than the nests' loops
    // (the weight that balanced the two partitions' times of the LSTM and
    // GPT training steps, their memref descriptors' insert/extract chains
    // folded by the lowering's last `canonicalize`; 9 before that).
    let entry_weight: usize =
        tops.iter().filter(|(_, t)| t.kind == Kind::Entry).map(|(o, _)| weight(o.to_raw())).sum::<usize>() * 2 / 5;
    let mut load = vec![0usize; count];
    load[0] = entry_weight;
    let mut order: Vec<usize> = (0..tops.len()).filter(|&k| tops[k].1.kind == Kind::Movable).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(tops[k].1.weight));
    let mut home = std::collections::HashMap::new();
    for k in order {
        let p = (0..count).min_by_key(|&p| load[p]).unwrap_or(0);
        load[p] += tops[k].1.weight;
        home.insert(tops[k].1.name.clone(), p);
    }

    // SAFETY: parsing an attribute in the module's live context.
    let external_linkage = unsafe {
        let text = melior::StringRef::new("#llvm.linkage<external>");
        let a = mlir_sys::mlirAttributeParseGet(
            mlir_sys::mlirOperationGetContext(module.as_operation().to_raw()),
            text.to_raw(),
        );
        (!a.ptr.is_null()).then_some(a)
    };
    (0..count)
        .map(|p| {
            // SAFETY: cloning a live module; the clone is owned by the
            // partition.
            let clone = unsafe { mlirOperationClone(module.as_operation().to_raw()) };
            let partition = Partition { op: clone };
            // The clone's top-level ops, in the same order as the original's.
            let region = unsafe { mlirOperationGetRegion(clone, 0) };
            let block = unsafe { mlir_sys::mlirRegionGetFirstBlock(region) };
            let mut raw = unsafe { mlir_sys::mlirBlockGetFirstOperation(block) };
            let mut k = 0usize;
            while !raw.ptr.is_null() {
                let next = unsafe { mlir_sys::mlirOperationGetNextInBlock(raw) };
                // Ops that `classify` skipped (no symbol name) stay as they are.
                let name = unsafe { OperationRef::from_raw(raw) };
                let top = string_attribute(&name, "sym_name")
                    .and_then(|n| tops[k..].iter().position(|(_, t)| t.name == n).map(|i| k + i));
                if let Some(i) = top {
                    k = i + 1;
                    let t = &tops[i].1;
                    match t.kind {
                        Kind::Movable if home.get(&t.name) != Some(&p) => unsafe { erase_body(raw) },
                        Kind::Entry if p > 0 => unsafe { erase_body(raw) },
                        Kind::Shared => unsafe {
                            if let Some(linkage) = external_linkage {
                                let key = melior::StringRef::new("linkage");
                                mlirOperationSetAttributeByName(raw, key.to_raw(), linkage);
                            }
                            if p > 0 {
                                mlirOperationRemoveAttributeByName(raw, melior::StringRef::new("value").to_raw());
                                mlirOperationRemoveAttributeByName(raw, melior::StringRef::new("dso_local").to_raw());
                                erase_body(raw);
                            }
                        },
                        _ => {}
                    }
                }
                raw = next;
            }
            partition
        })
        .collect()
}
