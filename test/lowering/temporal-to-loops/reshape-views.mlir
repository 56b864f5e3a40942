// Fused, a reshape of a contiguous value is a view (memref.collapse_shape
// to one dimension, then memref.expand_shape), not a copy; and a reshape
// that is the point's value makes the value it reshapes be computed
// straight into the point, seen with that value's shape: here the matrix
// product writes the point of y through a [2, 6] view of its [3, 4] slot,
// and tanh reads x[t] through an [8] view. With fusion off each reshape
// is a loop copying the elements. Bit-exact with the interpreter either
// way.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops=fuse=false | FileCheck %s --check-prefix=UNFUSED
// RUN: tempo-run %s --bound T=3 --seed 2 > %t.compiled
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 --disable-pass fusion > %t.unfused
// RUN: diff %t.unfused %t.interpreted

// CHECK: affine.for
// CHECK: %[[SLOT:.*]] = memref.subview %{{.*}}[%{{.*}}, 0, 0] [1, 3, 4]
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[SLOT]] {{\[\[}}0, 1]] : memref<3x4xf32, strided<[4, 1], offset: ?>> into memref<12xf32, strided<[1], offset: ?>>
// CHECK: %[[AS:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [2, 6] : memref<12xf32, strided<[1], offset: ?>> into memref<2x6xf32, strided<[6, 1], offset: ?>>
// CHECK-NOT: vector.store
// CHECK: memref.store {{.*}}, %[[AS]]
// CHECK-NOT: linalg.copy
// CHECK: %[[X:.*]] = memref.collapse_shape %{{.*}} {{\[\[}}0, 1]] : memref<2x4xf32, strided<[4, 1], offset: ?>> into memref<8xf32, strided<[1], offset: ?>>
// CHECK: linalg.generic {{.*}} ins(%[[X]] :
// CHECK: math.tanh
// CHECK-NOT: scf.for
// CHECK: return

// UNFUSED-NOT: memref.collapse_shape
// UNFUSED-NOT: memref.expand_shape
// UNFUSED: return

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<4x6xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
  %p = "temporal.matmul"(%a, %b) : (tensor<2x4xf32>, tensor<4x6xf32>) -> tensor<2x6xf32>
  %r = "temporal.reshape"(%p) : (tensor<2x6xf32>) -> tensor<3x4xf32>
  "gpu.yield"(%r) : (tensor<3x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %f = "temporal.reshape"(%a) : (tensor<2x4xf32>) -> tensor<8xf32>
  %h = "temporal.tanh"(%f) : (tensor<8xf32>) -> tensor<8xf32>
  "gpu.yield"(%h) : (tensor<8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
