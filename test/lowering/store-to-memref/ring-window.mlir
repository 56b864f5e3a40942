// lower-store-to-memref: point, ring and window stores become one
// memref.alloc each, with their bytes added to (and, when freed, taken from)
// the live count in @tempo_memory_stats. A ring keeps point p at p mod k; a
// window at p mod w, and store.seal copies it to p mod w + w, so a range
// starting at lo is the contiguous view from slot lo mod w.
// RUN: tempo-opt %s --lower-store-to-memref | FileCheck %s
// It lowers on to LLVM with the upstream passes.
// RUN: tempo-opt %s --lower-store-to-memref --lower-loops-to-llvm | FileCheck %s --check-prefix=LLVM

// CHECK: memref.global @tempo_memory_stats : memref<2xi64> = dense<0>
// CHECK-LABEL: func.func @ring
// CHECK-SAME: (%[[T:.*]]: index, %[[t:.*]]: index)
// CHECK: %[[S:.*]] = memref.alloc() : memref<2x4xf32>
// CHECK: %[[BYTES:.*]] = arith.index_cast %c32
// CHECK: %[[STATS:.*]] = memref.get_global @tempo_memory_stats
// CHECK: %[[LIVE:.*]] = memref.load %[[STATS]]
// CHECK: %[[NEW:.*]] = arith.addi %[[LIVE]], %[[BYTES]]
// CHECK: arith.maxsi
// CHECK: %[[SLOT:.*]] = arith.remui %[[t]], %{{.*}} : index
// CHECK: memref.subview %[[S]][%[[SLOT]], 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK: arith.subi
// CHECK: memref.dealloc %[[S]] : memref<2x4xf32>
// CHECK-NOT: store.
func.func @ring(%T: index, %t: index) -> f32 {
  %ring = "store.alloc"() {kind = "ring", extent = 2 : i64} : () -> memref<2x4xf32>
  %w = "store.write"(%ring, %t) : (memref<2x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  "store.seal"(%ring, %t) : (memref<2x4xf32>, index) -> ()
  %r = "store.read"(%ring, %t) : (memref<2x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  %c0 = arith.constant 0 : index
  %x = memref.load %r[%c0] : memref<4xf32, strided<[1], offset: ?>>
  "store.free"(%ring) : (memref<2x4xf32>) -> ()
  return %x : f32
}

// CHECK-LABEL: func.func @window
// CHECK-SAME: (%[[t:.*]]: index, %[[LO:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[S:.*]] = memref.alloc() : memref<16x4xf32>
// CHECK: arith.constant 256 : index
// CHECK: %[[SLOT:.*]] = arith.remui %[[t]], %{{.*}} : index
// CHECK: %[[W:.*]] = memref.subview %[[S]][%[[SLOT]], 0]
// CHECK: %[[A:.*]] = arith.remui %[[t]], %{{.*}} : index
// CHECK: %[[B:.*]] = arith.addi %[[A]], %{{.*}} : index
// CHECK: %[[FROM:.*]] = memref.subview %[[S]][%[[A]], 0] [1, 4]
// CHECK: %[[TO:.*]] = memref.subview %[[S]][%[[B]], 0] [1, 4]
// CHECK: linalg.copy ins(%[[FROM]] : {{.*}}) outs(%[[TO]] :
// CHECK: %[[START:.*]] = arith.remui %[[LO]], %{{.*}} : index
// CHECK: memref.subview %[[S]][%[[START]], 0] [%[[N]], 4] [1, 1] : memref<16x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
// CHECK: memref.dealloc %[[S]]
func.func @window(%t: index, %lo: index, %n: index) {
  %win = "store.alloc"() {kind = "window", extent = 8 : i64} : () -> memref<16x4xf32>
  %w = "store.write"(%win, %t) : (memref<16x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  "store.seal"(%win, %t) : (memref<16x4xf32>, index) -> ()
  %r = "store.read_range"(%win, %lo, %n) {ranged = [true]} : (memref<16x4xf32>, index, index) -> memref<?x4xf32, strided<[4, 1], offset: ?>>
  "store.free"(%win) : (memref<16x4xf32>) -> ()
  return
}

// A point store (and a tensor without a domain) is the memref itself.
// CHECK-LABEL: func.func @point
// CHECK: %[[S:.*]] = memref.alloc() : memref<3xi64>
// CHECK: memref.cast %[[S]] : memref<3xi64> to memref<3xi64, strided<[1], offset: ?>>
func.func @point(%t: index) {
  %p = "store.alloc"() {kind = "point", extent = 1 : i64} : () -> memref<3xi64>
  %w = "store.write"(%p, %t) : (memref<3xi64>, index) -> memref<3xi64, strided<[1], offset: ?>>
  "store.seal"(%p, %t) : (memref<3xi64>, index) -> ()
  "store.free"(%p) : (memref<3xi64>) -> ()
  return
}

// LLVM-NOT: store.
// LLVM-NOT: memref.
// LLVM: llvm.func @ring

// A ring along the outer dimension of a two-dimensional tensor keeps whole
// slices: slot t mod 2, then the inner coordinate; its bytes are
// 2 * L * point bytes, with L read from the store.
// CHECK-LABEL: func.func @ring_slices
// CHECK-SAME: (%[[L:.*]]: index, %[[t:.*]]: index, %[[l:.*]]: index)
// CHECK: %[[S:.*]] = memref.alloc(%[[L]]) : memref<2x?x4xf32>
// CHECK: %[[SLICE:.*]] = arith.constant 32 : index
// CHECK: %[[DIM:.*]] = memref.dim %[[S]], %{{.*}} : memref<2x?x4xf32>
// CHECK: arith.muli %[[SLICE]], %[[DIM]] : index
// CHECK: %[[SLOT:.*]] = arith.remui %[[t]], %{{.*}} : index
// CHECK: memref.subview %[[S]][%[[SLOT]], %[[l]], 0] [1, 1, 4] [1, 1, 1] : memref<2x?x4xf32> to memref<4xf32, strided<[1], offset: ?>>
// CHECK: %[[SLOT2:.*]] = arith.remui %[[t]], %{{.*}} : index
// CHECK: memref.subview %[[S]][%[[SLOT2]], %{{.*}}, 0] [1, %[[L]], 4] [1, 1, 1] : memref<2x?x4xf32> to memref<?x4xf32, strided<[4, 1], offset: ?>>
func.func @ring_slices(%L: index, %t: index, %l: index) {
  %c0 = arith.constant 0 : index
  %s = "store.alloc"(%L) {kind = "ring", extent = 2 : i64} : (index) -> memref<2x?x4xf32>
  %w = "store.write"(%s, %t, %l) : (memref<2x?x4xf32>, index, index) -> memref<4xf32, strided<[1], offset: ?>>
  "store.seal"(%s, %t, %l) : (memref<2x?x4xf32>, index, index) -> ()
  %layers = "store.read_range"(%s, %t, %c0, %L) {ranged = [false, true]} : (memref<2x?x4xf32>, index, index, index) -> memref<?x4xf32, strided<[4, 1], offset: ?>>
  "store.free"(%s) : (memref<2x?x4xf32>) -> ()
  return
}
