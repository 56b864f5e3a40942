// Concatenation lowers to one row-major copy nest per operand, the second
// storing at its offset along the axis: contiguous inner loops that LLVM
// vectorizes as plain loads and stores (a per-element choice of operand
// became masked gathers). Along the last axis and along the first.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 4 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 --disable-pass fusion | diff - %t.interpreted

// CHECK-LABEL: func.func @tempo_main
// CHECK-NOT: scf.if
// CHECK: %[[FIRST:.*]] = arith.constant 24 : index
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[A:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<4x24xf32
// CHECK-NEXT: memref.store %[[A]], %[[Z:.*]][%[[I]], %[[J]]] : memref<4x64xf32
// CHECK: scf.for %[[I2:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J2:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[B:.*]] = memref.load %{{.*}}[%[[I2]], %[[J2]]] : memref<4x40xf32
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[J2]], %[[FIRST]] : index
// CHECK-NEXT: memref.store %[[B]], %[[Z]][%[[I2]], %[[AT]]] : memref<4x64xf32
// The second: exp(a) is computed straight into its part of the result
// (destinations), so only a is copied, at its offset.
// CHECK: %[[PART:.*]] = memref.subview %{{.*}}[0, 0] [4, 24] [1, 1]
// CHECK: linalg.generic {{.*}} outs(%[[PART]] :
// CHECK: math.exp
// CHECK: %[[ROWS:.*]] = arith.constant 4 : index
// CHECK-NOT: memref.store %{{.*}}, %[[PART]]
// CHECK: scf.for %[[R:.*]] = %{{.*}} to %{{.*}} step
// CHECK: arith.addi %[[R]], %[[ROWS]] : index
// CHECK-NOT: scf.if

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x24xf32>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<4x40xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<4x64xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<8x24xf32>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x24xf32>
  %b = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x40xf32>
  %c = "temporal.concat"(%a, %b) {axis = 1 : i64} : (tensor<4x24xf32>, tensor<4x40xf32>) -> tensor<4x64xf32>
  "gpu.yield"(%c) : (tensor<4x64xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x24xf32>
  %e = "temporal.exp"(%a) : (tensor<4x24xf32>) -> tensor<4x24xf32>
  %c = "temporal.concat"(%e, %a) {axis = 0 : i64} : (tensor<4x24xf32>, tensor<4x24xf32>) -> tensor<8x24xf32>
  "gpu.yield"(%c) : (tensor<8x24xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
