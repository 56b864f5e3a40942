// Elementwise work after a matrix product runs in the register-tiled
// kernel (an epilogue): once a tile's sums are complete (after the last
// block of k) each element becomes relu(sum + b) (the bias broadcast along
// the rows) or sum * sigmoid(sum) (the product used twice by one chain),
// in a loop over the tile, and so does each column left over, before the
// final store. No loop over the result of its own, no buffer for the
// product. Bit-exact with the interpreter (the same scalar ops after the
// same sums), and with fusion off.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 6 > %t.compiled
// RUN: tempo-run %s --bound T=3 --seed 6 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 6 --disable-pass fusion > %t.unfused
// RUN: diff %t.unfused %t.interpreted

// CHECK-LABEL: func.func @tempo_main
// CHECK: %[[Y:.*]] = memref.subview %{{.*}}[%{{.*}}, 0, 0] [1, 6, 70]
// CHECK: %[[K:.*]] = arith.constant 5 : index
// CHECK: vector.store %{{.*}}, %[[Y]]
// CHECK: %[[LAST:.*]] = arith.cmpi eq, %{{.*}}, %[[K]] : index
// CHECK: scf.if %[[LAST]] {
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK:       %[[S:.*]] = memref.load %[[Y]]
// CHECK:       %[[B:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<70xf32
// CHECK:       %[[P:.*]] = arith.addf %[[S]], %[[B]] : f32
// CHECK:       %[[R:.*]] = arith.maximumf %[[P]], %{{.*}} : f32
// CHECK:       memref.store %[[R]], %[[Y]]
// The columns left over.
// CHECK: %[[T:.*]] = scf.for {{.*}} -> (f32)
// CHECK: arith.addf %[[T]], %{{.*}} : f32
// CHECK: arith.maximumf
// CHECK: memref.store
// The second product: sum * sigmoid(sum).
// CHECK: vector.store
// CHECK: scf.if
// CHECK:   %[[S2:.*]] = memref.load
// CHECK:   arith.negf %[[S2]]
// CHECK:   math.exp
// CHECK:   arith.mulf %[[S2]], %{{.*}} : f32
// CHECK-NOT: linalg.generic
// CHECK: return

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<6x5xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<5x70xf32>} : () -> !temporal.rtensor
%b = "temporal.input"() {sym_name = "b", domain = [], element = tensor<70xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<6x70xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<6x70xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x5xf32>
  %m = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x70xf32>
  %bias = "temporal.read"(%b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<70xf32>
  %p = "temporal.matmul"(%a, %m) : (tensor<6x5xf32>, tensor<5x70xf32>) -> tensor<6x70xf32>
  %s = "temporal.add"(%p, %bias) : (tensor<6x70xf32>, tensor<70xf32>) -> tensor<6x70xf32>
  %r = "temporal.relu"(%s) : (tensor<6x70xf32>) -> tensor<6x70xf32>
  "gpu.yield"(%r) : (tensor<6x70xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x5xf32>
  %m = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x70xf32>
  %p = "temporal.matmul"(%a, %m) : (tensor<6x5xf32>, tensor<5x70xf32>) -> tensor<6x70xf32>
  %g = "temporal.sigmoid"(%p) : (tensor<6x70xf32>) -> tensor<6x70xf32>
  %u = "temporal.mul"(%p, %g) : (tensor<6x70xf32>, tensor<6x70xf32>) -> tensor<6x70xf32>
  "gpu.yield"(%u) : (tensor<6x70xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
