//! The swap space of `blocks` stores (`store.alloc` with
//! `swap_space = "file"`) and the ops that use it: `store.spill`,
//! `store.reload` and `store.discard`.
//!
//! On the CPU the swap space is a temporary file (`tmpfile()`: created
//! unlinked in the system's temporary directory, gone when the store is
//! freed or the process ends), one per store. Point `p` lives at byte
//! `p * point bytes` of the file, so a spill in one loop and its reload in
//! another need no handle between them. A spill writes the points
//! (`pwrite`), then releases the blocks wholly inside the range that sit at
//! either end of the committed blocks (`madvise(MADV_DONTNEED)`,
//! `PROT_NONE`, the block table shrunk, the bytes counted as freed); a
//! reload commits the range's blocks again (as a write does) and reads the
//! points back (`pread`); a discard releases without writing. A failed
//! file operation prints the system's reason and aborts.
//!
//! Assumes one-dimensional `blocks` stores (one slice; the along dimension
//! is the only store dimension before the point shape).

use super::{
    LIBC, PRELUDE, StoreInfo, TABLE, account, base_pointer, block_geometry, block_span, grow_committed, stats_global,
};
use std::fmt::Write;

/// The value kind of a store's swap space (the `FILE *` of its file).
pub(super) const SPACE: &str = "!llvm.ptr";

/// Declarations of the libc calls the swap space makes, and the message of
/// a failure.
const FILE_CALLS: &str = "  func.func private @tmpfile() -> !llvm.ptr\n  \
     func.func private @fileno(!llvm.ptr) -> i32\n  \
     func.func private @fclose(!llvm.ptr) -> i32\n  \
     func.func private @pwrite(i32, !llvm.ptr, i64, i64) -> i64\n  \
     func.func private @pread(i32, !llvm.ptr, i64, i64) -> i64\n  \
     func.func private @perror(!llvm.ptr)\n  \
     func.func private @abort()\n  \
     llvm.mlir.global internal constant @tempo_swap_failure(\"tempo: the swap file of a store\\00\") {addr_space = 0 : i32}\n";

/// Text checking that the `i1` value `ok` holds, else printing the reason
/// and aborting.
fn or_abort(ok: &str) -> String {
    format!(
        "    scf.if {ok} {{\n    }} else {{\n      %message = llvm.mlir.addressof @tempo_swap_failure : !llvm.ptr\n      \
         func.call @perror(%message) : (!llvm.ptr) -> ()\n      func.call @abort() : () -> ()\n    }}\n"
    )
}

/// The declarations an allocation with a swap space needs.
pub(super) fn alloc_declarations() -> &'static str {
    FILE_CALLS
}

/// Text creating the swap space as `%space` (the store's last result).
pub(super) fn create_space() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "    %space = func.call @tmpfile() : () -> !llvm.ptr");
    let _ = writeln!(out, "    %no_space = llvm.mlir.zero : !llvm.ptr");
    let _ = writeln!(out, "    %space_made = llvm.icmp \"ne\" %space, %no_space : !llvm.ptr");
    out += &or_abort("%space_made");
    out
}

/// Text closing the swap space `space` (when the store is freed).
pub(super) fn close_space(space: &str) -> String {
    format!("    %closed = func.call @fclose({space}) : (!llvm.ptr) -> i32\n")
}

/// Checks that `info` is a store these ops work on.
fn check(info: &StoreInfo, op: &str, operands: usize) -> Result<(), String> {
    if info.kind != "blocks" || info.slot_rank != 1 {
        return Err(format!(
            "'{op}' works on one-dimensional 'blocks' stores; this is a '{}' store with {} point dimensions",
            info.kind, info.slot_rank
        ));
    }
    if operands != 3 {
        return Err(format!("'{op}' takes the store and the range [first, last) of points"));
    }
    Ok(())
}

/// `store.spill` (`write` and release), `store.discard` (release only) or
/// `store.reload` (commit and read back) of the points `[%a1, %a2)` of
/// store `%a0` (block table `%a3`, swap space `%a4`).
pub(super) fn text(info: &StoreInfo, op: &str, operands: usize, has_space: bool) -> Result<String, String> {
    check(info, op, operands)?;
    let uses_file = op != "store.discard";
    if uses_file && !has_space {
        return Err(format!("'{op}' needs a store allocated with swap_space = \"file\""));
    }
    let ty = &info.ty;
    let space = if has_space { format!(", %a4: {SPACE}") } else { String::new() };
    let mut out = format!("module {{\n{}{LIBC}{FILE_CALLS}", stats_global());
    let _ =
        writeln!(out, "  func.func @replacement(%a0: {ty}, %a1: index, %a2: index, %a3: {TABLE}{space}) {{\n{PRELUDE}");
    out += &block_geometry(info, "%a0");
    if op == "store.reload" {
        // Commit blocks [first / B, ceil(end / B)) before reading back.
        let _ = writeln!(out, "    %from_block = arith.divui %a1, %block_points : index");
        let _ = writeln!(out, "    %to_block = arith.ceildivui %a2, %block_points : index");
        let _ = writeln!(out, "    %wanted = arith.cmpi ult, %from_block, %to_block : index");
        let _ = writeln!(out, "    scf.if %wanted {{");
        out += &grow_committed(info, "%a3", "%c0", "%from_block", "%to_block");
        let _ = writeln!(out, "    }}");
    }
    out += &base_pointer(info, "%a0");
    // The points' bytes and where they are (in the store and in the file).
    let _ = writeln!(out, "    %point_bytes = arith.constant {} : i64", info.point_bytes());
    let _ = writeln!(out, "    %first_i = arith.index_cast %a1 : index to i64");
    let _ = writeln!(out, "    %end_i = arith.index_cast %a2 : index to i64");
    let _ = writeln!(out, "    %points = arith.subi %end_i, %first_i : i64");
    let _ = writeln!(out, "    %bytes = arith.muli %points, %point_bytes : i64");
    let _ = writeln!(out, "    %offset = arith.muli %first_i, %point_bytes : i64");
    let _ = writeln!(out, "    %at = llvm.getelementptr %base[%offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8");
    let _ = writeln!(out, "    %no_points = arith.constant 0 : i64");
    let _ = writeln!(out, "    %some = arith.cmpi sgt, %points, %no_points : i64");
    let transfer = |out: &mut String, call: &str| {
        let _ = writeln!(out, "    scf.if %some {{");
        let _ = writeln!(out, "    %fd = func.call @fileno(%a4) : (!llvm.ptr) -> i32");
        let _ = writeln!(
            out,
            "    %moved = func.call @{call}(%fd, %at, %bytes, %offset) : (i32, !llvm.ptr, i64, i64) -> i64"
        );
        let _ = writeln!(out, "    %all_moved = arith.cmpi eq, %moved, %bytes : i64");
        *out += &or_abort("%all_moved");
        let _ = writeln!(out, "    }}");
    };
    match op {
        "store.reload" => transfer(&mut out, "pread"),
        _ => {
            if op == "store.spill" {
                transfer(&mut out, "pwrite");
            }
            out += &release();
        }
    }
    out += "    return\n  }\n}\n";
    Ok(out)
}

/// Text releasing the blocks wholly inside `[%a1, %a2)` that are at either
/// end of the committed blocks `[lo, hi)` of the store's one slice (block
/// table `%a3`): their memory is given back and the range shrinks.
fn release() -> String {
    let mut out = String::new();
    let _ = writeln!(out, "    %inside_from = arith.ceildivui %a1, %block_points : index");
    let _ = writeln!(out, "    %inside_to = arith.divui %a2, %block_points : index");
    let _ = writeln!(out, "    %lo_now = memref.load %a3[%c0, %c0] : {TABLE}");
    let _ = writeln!(out, "    %hi_now = memref.load %a3[%c0, %c1] : {TABLE}");
    let _ = writeln!(out, "    %cut_from = arith.maxui %inside_from, %lo_now : index");
    let _ = writeln!(out, "    %cut_to = arith.minui %inside_to, %hi_now : index");
    let _ = writeln!(out, "    %nonempty = arith.cmpi ult, %cut_from, %cut_to : index");
    let _ = writeln!(out, "    %at_low = arith.cmpi eq, %cut_from, %lo_now : index");
    let _ = writeln!(out, "    %at_high = arith.cmpi eq, %cut_to, %hi_now : index");
    let _ = writeln!(out, "    %at_end = arith.ori %at_low, %at_high : i1");
    let _ = writeln!(out, "    %cut = arith.andi %nonempty, %at_end : i1");
    let _ = writeln!(out, "    scf.if %cut {{");
    out += &block_span("cut", "%base", "%cut_from", "%cut_to");
    let _ = writeln!(out, "    %dont_need = arith.constant 4 : i32");
    let _ = writeln!(
        out,
        "    %advised = func.call @madvise(%cut_at, %cut_bytes, %dont_need) : (!llvm.ptr, i64, i32) -> i32"
    );
    let _ = writeln!(out, "    %no_access = arith.constant 0 : i32");
    let _ = writeln!(
        out,
        "    %protected = func.call @mprotect(%cut_at, %cut_bytes, %no_access) : (!llvm.ptr, i64, i32) -> i32"
    );
    out += &account("%cut_bytes", true);
    // Cut at the low end: lo moves up (to hi when all is cut); else hi down.
    let _ = writeln!(out, "    %lo_next = arith.select %at_low, %cut_to, %lo_now : index");
    let _ = writeln!(out, "    %hi_next = arith.select %at_low, %hi_now, %cut_from : index");
    let _ = writeln!(out, "    memref.store %lo_next, %a3[%c0, %c0] : {TABLE}");
    let _ = writeln!(out, "    memref.store %hi_next, %a3[%c0, %c1] : {TABLE}");
    let _ = writeln!(out, "    }}");
    out
}
