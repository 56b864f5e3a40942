// A reshape that only drops or inserts dimensions of size 1 is a view on
// the CPU whatever the strides of its operand (a rank-reducing
// memref.subview, then memref.expand_shape), where the last dimension
// keeps unit stride: y's product reads the permuted tanh(x) through it,
// and v's sum reads it with unit dimensions inserted. z's reshape, whose
// last dimension would stride across the buffer, is not made a view by
// it. Compiled results are the interpreter's bit for bit.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 --disable-pass fusion --format json | diff - %t.interpreted

// CHECK: math.tanh
// CHECK: %[[P:.*]] = memref.transpose %{{.*}} (d0, d1, d2, d3) -> (d1, d0, d2, d3) : memref<4x3x1x5xf32, strided<[15, 5, 5, 1], offset: ?>> to memref<3x4x1x5xf32, strided<[5, 15, 5, 1], offset: ?>>
// CHECK-NEXT: %[[R:.*]] = memref.subview %[[P]][0, 0, 0, 0] [3, 4, 1, 5] [1, 1, 1, 1] : memref<3x4x1x5xf32, strided<[5, 15, 5, 1], offset: ?>> to memref<3x4x5xf32, strided<[5, 15, 1], offset: ?>>
// CHECK: memref.load %[[R]]
// CHECK: math.tanh
// CHECK: %[[Q:.*]] = memref.subview %{{.*}}[0, 0, 0, 0] [3, 4, 1, 5] [1, 1, 1, 1] : {{.*}} to memref<3x4x5xf32, strided<[5, 15, 1], offset: ?>>
// CHECK-NEXT: %[[E:.*]] = memref.expand_shape %[[Q]] {{\[}}[0], [1, 2], [3, 4]] output_shape [3, 1, 4, 5, 1] : memref<3x4x5xf32, strided<[5, 15, 1], offset: ?>> into memref<3x1x4x5x1xf32, strided<[5, 60, 15, 1, 1], offset: ?>>
// CHECK: linalg.generic {{.*}} ins(%[[E]] :
// CHECK: math.exp
// CHECK-NOT: memref.expand_shape
// CHECK: memref.subview %{{.*}} to memref<5x1x1x4xf32, strided<[1, 5, 5, 15], offset: ?>>

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x3x1x5xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = ["t"], element = tensor<3x5x2xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x1x4x2xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<3x1x5x1xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<5x4xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x3x1x5xf32>
  %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3x5x2xf32>
  %e = "temporal.tanh"(%a) : (tensor<4x3x1x5xf32>) -> tensor<4x3x1x5xf32>
  %p = "temporal.permute"(%e) {permutation = [1, 0, 2, 3]} : (tensor<4x3x1x5xf32>) -> tensor<3x4x1x5xf32>
  %r = "temporal.reshape"(%p) : (tensor<3x4x1x5xf32>) -> tensor<3x4x5xf32>
  %m = "temporal.einsum"(%r, %b) {spec = "zmk,zkn->zmn"} : (tensor<3x4x5xf32>, tensor<3x5x2xf32>) -> tensor<3x4x2xf32>
  %u = "temporal.reshape"(%m) : (tensor<3x4x2xf32>) -> tensor<3x1x4x2xf32>
  %s = "temporal.sigmoid"(%u) : (tensor<3x1x4x2xf32>) -> tensor<3x1x4x2xf32>
  "gpu.yield"(%s) : (tensor<3x1x4x2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x3x1x5xf32>
  %e = "temporal.exp"(%a) : (tensor<4x3x1x5xf32>) -> tensor<4x3x1x5xf32>
  %p = "temporal.permute"(%e) {permutation = [3, 1, 2, 0]} : (tensor<4x3x1x5xf32>) -> tensor<5x3x1x4xf32>
  %q = "temporal.slice"(%p) {offsets = [0, 1, 0, 0]} : (tensor<5x3x1x4xf32>) -> tensor<5x1x1x4xf32>
  %r = "temporal.reshape"(%q) : (tensor<5x1x1x4xf32>) -> tensor<5x4xf32>
  %n = "temporal.neg"(%r) : (tensor<5x4xf32>) -> tensor<5x4xf32>
  "gpu.yield"(%n) : (tensor<5x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x3x1x5xf32>
  %e = "temporal.tanh"(%a) : (tensor<4x3x1x5xf32>) -> tensor<4x3x1x5xf32>
  %p = "temporal.permute"(%e) {permutation = [1, 0, 2, 3]} : (tensor<4x3x1x5xf32>) -> tensor<3x4x1x5xf32>
  %r = "temporal.reshape"(%p) : (tensor<3x4x1x5xf32>) -> tensor<3x1x4x5x1xf32>
  %s = "temporal.reduce_sum"(%r) {axis = 2 : i64} : (tensor<3x1x4x5x1xf32>) -> tensor<3x1x5x1xf32>
  "gpu.yield"(%s) : (tensor<3x1x5x1xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
"temporal.output"(%v) : (!temporal.rtensor) -> ()
