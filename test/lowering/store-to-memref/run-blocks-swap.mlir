// Executes lowered store code with mlir-runner: 200 points (8 x i64 each,
// 64 bytes) go into a store of blocks of 64 points (4 KiB); points 64..191
// are swapped out and back in; every point is read back. A second store is
// written backward, growing its committed blocks from the top.
// RUN: tempo-opt %s --lower-store-to-memref --lower-loops-to-llvm | %mlir_runner -e main -entry-point-result=void | FileCheck %s
// The sum of t*t for t < 200 survives the swap:
// CHECK: 2646700
// Swapping out gives back the two blocks wholly inside [64, 192): 4 blocks
// committed (16384 bytes) minus 2.
// CHECK-NEXT: 8192
// Swapped back in: 4 blocks live, the peak, and nothing once freed.
// CHECK-NEXT: 16384
// CHECK-NEXT: 16384
// CHECK-NEXT: 0
// Written backward (t = 199 down to 0) the blocks are committed from the
// top: after points 199..150, blocks 2 and 3 (8192 bytes); after all, 4.
// CHECK-NEXT: 8192
// CHECK-NEXT: 16384
// CHECK-NEXT: 2646700
// CHECK-NEXT: 0
memref.global @tempo_memory_stats : memref<2xi64> = dense<0>
func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %T = arith.constant 200 : index
  %lo = arith.constant 64 : index
  %hi = arith.constant 192 : index
  %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?x8xi64>
  scf.for %t = %c0 to %T step %c1 {
    %w = "store.write"(%s, %t) : (memref<?x8xi64>, index) -> memref<8xi64, strided<[1], offset: ?>>
    %ti = arith.index_cast %t : index to i64
    %sq = arith.muli %ti, %ti : i64
    linalg.fill ins(%sq : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
    "store.seal"(%s, %t) : (memref<?x8xi64>, index) -> ()
  }
  %host = "store.swap_out"(%s, %lo, %hi) : (memref<?x8xi64>, index, index) -> memref<?x8xi64>
  %stats = memref.get_global @tempo_memory_stats : memref<2xi64>
  %swapped_live = memref.load %stats[%c0] : memref<2xi64>
  "store.swap_in"(%s, %host, %lo, %hi) : (memref<?x8xi64>, memref<?x8xi64>, index, index) -> ()
  %all = "store.read_range"(%s, %c0, %T) {ranged = [true]} : (memref<?x8xi64>, index, index) -> memref<?x8xi64, strided<[8, 1], offset: ?>>
  %c7 = arith.constant 7 : index
  %zero = arith.constant 0 : i64
  %sum = scf.for %t = %c0 to %T step %c1 iter_args(%acc = %zero) -> i64 {
    %v = memref.load %all[%t, %c7] : memref<?x8xi64, strided<[8, 1], offset: ?>>
    %next = arith.addi %acc, %v : i64
    scf.yield %next : i64
  }
  %live = memref.load %stats[%c0] : memref<2xi64>
  %peak = memref.load %stats[%c1] : memref<2xi64>
  "store.free"(%s) : (memref<?x8xi64>) -> ()
  %after = memref.load %stats[%c0] : memref<2xi64>
  vector.print %sum : i64
  vector.print %swapped_live : i64
  vector.print %live : i64
  vector.print %peak : i64
  vector.print %after : i64

  %b = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?x8xi64>
  %c150 = arith.constant 150 : index
  %c199 = arith.constant 199 : index
  scf.for %i = %c0 to %T step %c1 {
    %t = arith.subi %c199, %i : index
    %w = "store.write"(%b, %t) : (memref<?x8xi64>, index) -> memref<8xi64, strided<[1], offset: ?>>
    %ti = arith.index_cast %t : index to i64
    %sq = arith.muli %ti, %ti : i64
    linalg.fill ins(%sq : i64) outs(%w : memref<8xi64, strided<[1], offset: ?>>)
    "store.seal"(%b, %t) : (memref<?x8xi64>, index) -> ()
    %at150 = arith.cmpi eq, %t, %c150 : index
    scf.if %at150 {
      %partial = memref.load %stats[%c0] : memref<2xi64>
      vector.print %partial : i64
    }
  }
  %full = memref.load %stats[%c0] : memref<2xi64>
  vector.print %full : i64
  %back = "store.read_range"(%b, %c0, %T) {ranged = [true]} : (memref<?x8xi64>, index, index) -> memref<?x8xi64, strided<[8, 1], offset: ?>>
  %sum2 = scf.for %t = %c0 to %T step %c1 iter_args(%acc = %zero) -> i64 {
    %v = memref.load %back[%t, %c7] : memref<?x8xi64, strided<[8, 1], offset: ?>>
    %next = arith.addi %acc, %v : i64
    scf.yield %next : i64
  }
  vector.print %sum2 : i64
  "store.free"(%b) : (memref<?x8xi64>) -> ()
  %end = memref.load %stats[%c0] : memref<2xi64>
  vector.print %end : i64
  return
}
