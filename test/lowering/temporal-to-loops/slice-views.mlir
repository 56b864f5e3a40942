// Slices at constant offsets of a static shape are views on the CPU
// (memref.subview at the offsets, read through by their users), not
// copies: y reads rows 2 to 4 of tanh(x) in place. Where the slice is to
// be computed into a destination it is still copied: z's result reshape
// sees the slot with the slice's shape, and the slice's rows are copied
// into it. Compiled results are the interpreter's bit for bit.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 --disable-pass fusion --format json | diff - %t.interpreted

// CHECK: math.tanh
// CHECK: %[[S:.*]] = memref.subview %{{.*}}[%c2, %c0{{.*}}] [3, 8] [1, 1] : memref<6x8xf32, strided<[8, 1], offset: ?>> to memref<3x8xf32, strided<[8, 1], offset: ?>>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[S]], %[[S]] :
// CHECK: math.exp
// CHECK: %[[SLOT:.*]] = memref.expand_shape {{.*}} output_shape [2, 8]
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store %{{.*}}, %[[SLOT]]

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<6x8xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x8xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<8x2xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x8xf32>
  %e = "temporal.tanh"(%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = "temporal.slice"(%e) {offsets = [2, 0]} : (tensor<6x8xf32>) -> tensor<3x8xf32>
  %m = "temporal.mul"(%s, %s) : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
  "gpu.yield"(%m) : (tensor<3x8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x8xf32>
  %e = "temporal.exp"(%a) : (tensor<6x8xf32>) -> tensor<6x8xf32>
  %s = "temporal.slice"(%e) {offsets = [4, 0]} : (tensor<6x8xf32>) -> tensor<2x8xf32>
  %r = "temporal.reshape"(%s) : (tensor<2x8xf32>) -> tensor<8x2xf32>
  "gpu.yield"(%r) : (tensor<8x2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
