// lower-store-to-memref on full stores: one memref.alloc sized by the
// bounds, counted as their product times the point size; a read_range keeps
// its ranged dimensions and drops the others.
// RUN: tempo-opt %s --lower-store-to-memref | FileCheck %s

// CHECK-LABEL: func.func @full
// CHECK-SAME: (%[[I:.*]]: index, %[[T:.*]]: index, %[[i:.*]]: index, %[[LO:.*]]: index, %[[N:.*]]: index)
// CHECK: %[[S:.*]] = memref.alloc(%[[I]], %[[T]]) : memref<?x?x3xi64>
// CHECK: %[[POINT:.*]] = arith.constant 24 : index
// CHECK: %[[D0:.*]] = memref.dim %[[S]], %{{.*}} : memref<?x?x3xi64>
// CHECK: %[[P0:.*]] = arith.muli %[[POINT]], %[[D0]] : index
// CHECK: %[[D1:.*]] = memref.dim %[[S]], %{{.*}} : memref<?x?x3xi64>
// CHECK: arith.muli %[[P0]], %[[D1]] : index
// CHECK: memref.subview %[[S]][%[[i]], %[[LO]], 0] [1, %[[N]], 3] [1, 1, 1] : memref<?x?x3xi64> to memref<?x3xi64, strided<[3, 1], offset: ?>>
// CHECK: memref.alloc(%{{.*}}) : memref<?x3xi64>
// CHECK: linalg.copy
// CHECK: linalg.copy
// CHECK: memref.dealloc %[[S]]
func.func @full(%I: index, %T: index, %i: index, %lo: index, %n: index) {
  %f = "store.alloc"(%I, %T) {kind = "full", extent = 0 : i64} : (index, index) -> memref<?x?x3xi64>
  %r = "store.read_range"(%f, %i, %lo, %n) {ranged = [false, true]} : (memref<?x?x3xi64>, index, index, index) -> memref<?x3xi64, strided<[3, 1], offset: ?>>
  %g = "store.alloc"(%T) {kind = "full", extent = 0 : i64} : (index) -> memref<?x3xi64>
  %host = "store.swap_out"(%g, %lo, %n) : (memref<?x3xi64>, index, index) -> memref<?x3xi64>
  "store.swap_in"(%g, %host, %lo, %n) : (memref<?x3xi64>, memref<?x3xi64>, index, index) -> ()
  "store.free"(%g) : (memref<?x3xi64>) -> ()
  "store.free"(%f) : (memref<?x?x3xi64>) -> ()
  return
}
