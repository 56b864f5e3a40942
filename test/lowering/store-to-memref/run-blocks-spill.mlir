// Executes lowered store code with mlir-runner, in the pattern the swap
// planning emits (lower-temporal-to-loops{memory-budget=...}): a forward
// loop writes 200 points (8 x i64, 64 bytes each) into a store of blocks of
// 64 points (4 KiB) with a swap space (a temporary file), spilling each
// block once the loop is past it; a backward loop reloads each spilled
// block before its first read and discards each block after its last.
// RUN: tempo-opt %s --lower-store-to-memref --lower-loops-to-llvm | %mlir_runner -e main -entry-point-result=void | FileCheck %s
// After the forward loop three blocks were spilled: only block 3 (points
// 192..199) is committed.
// CHECK: 4096
// The sum of t*t for t < 200 survives the file, read backward:
// CHECK-NEXT: 2646700
// One block committed at a time (each is discarded before the next is
// reloaded), and nothing left at the end.
// CHECK-NEXT: 4096
// CHECK-NEXT: 0
// A discard or spill of a block inside the committed range (not at an
// end) keeps it: 3 blocks stay committed.
// CHECK-NEXT: 12288
// CHECK-NEXT: 0
memref.global @tempo_memory_stats : memref<2xi64> = dense<0>
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %T = arith.constant 200 : index
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64, swap_space = "file"} : (index) -> memref<?x8xi64>
  scf.for %t = %c0 to %T step %c1 {
    %w = "store.write"(%s, %t) : (memref<?x8xi64>, index) -> memref<8xi64, strided<[1], offset: ?>>
    %ti = arith.index_cast %t : index to i64
    %sq = arith.muli %ti, %ti : i64
    linalg.fill ins(%sq : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
    "store.seal"(%s, %t) : (memref<?x8xi64>, index) -> ()
    // Block [t + 1 - 64, t + 1) is complete: spill it.
    %end = arith.addi %t, %c1 : index
    %r = arith.remui %end, %c64 : index
    %full = arith.cmpi eq, %r, %c0 : index
    scf.if %full {
      %lo = arith.subi %end, %c64 : index
      "store.spill"(%s, %lo, %end) : (memref<?x8xi64>, index, index) -> ()
    }
  }
  %stats = memref.get_global @tempo_memory_stats : memref<2xi64>
  %after_forward = memref.load %stats[%c0] : memref<2xi64>
  vector.print %after_forward : i64
  // Reset the peak to see the backward loop's own.
  %zero = arith.constant 0 : i64
  memref.store %after_forward, %stats[%c1] : memref<2xi64>
  %c7 = arith.constant 7 : index
  %c199 = arith.constant 199 : index
  %c192 = arith.constant 192 : index
  %sum = scf.for %i = %c0 to %T step %c1 iter_args(%acc = %zero) -> i64 {
    %t = arith.subi %c199, %i : index
    %end = arith.addi %t, %c1 : index
    %r = arith.remui %end, %c64 : index
    %top = arith.cmpi eq, %r, %c0 : index
    %spilled = arith.cmpi ule, %end, %c192 : index
    %reload = arith.andi %top, %spilled : i1
    scf.if %reload {
      %lo = arith.subi %end, %c64 : index
      "store.reload"(%s, %lo, %end) : (memref<?x8xi64>, index, index) -> ()
    }
    %p = "store.read"(%s, %t) : (memref<?x8xi64>, index) -> memref<8xi64, strided<[1], offset: ?>>
    %v = memref.load %p[%c7] : memref<8xi64, strided<[1], offset: ?>>
    %next = arith.addi %acc, %v : i64
    %q = arith.remui %t, %c64 : index
    %bottom = arith.cmpi eq, %q, %c0 : index
    scf.if %bottom {
      %hi = arith.addi %t, %c64 : index
      "store.discard"(%s, %t, %hi) : (memref<?x8xi64>, index, index) -> ()
    }
    scf.yield %next : i64
  }
  vector.print %sum : i64
  %peak = memref.load %stats[%c1] : memref<2xi64>
  vector.print %peak : i64
  %live = memref.load %stats[%c0] : memref<2xi64>
  vector.print %live : i64
  // Write all again (4 blocks), then try to release block 1 (inside).
  scf.for %t = %c0 to %T step %c1 {
    %w = "store.write"(%s, %t) : (memref<?x8xi64>, index) -> memref<8xi64, strided<[1], offset: ?>>
    "store.seal"(%s, %t) : (memref<?x8xi64>, index) -> ()
  }
  %c128 = arith.constant 128 : index
  "store.discard"(%s, %c64, %c128) : (memref<?x8xi64>, index, index) -> ()
  "store.spill"(%s, %c0, %c64) : (memref<?x8xi64>, index, index) -> ()
  %kept = memref.load %stats[%c0] : memref<2xi64>
  vector.print %kept : i64
  "store.free"(%s) : (memref<?x8xi64>) -> ()
  %freed = memref.load %stats[%c0] : memref<2xi64>
  vector.print %freed : i64
  return
}
