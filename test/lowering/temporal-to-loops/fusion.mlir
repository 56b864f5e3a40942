// Elementwise chains are fused: each op used once by an elementwise op of
// the same shape is computed inside its user's linalg.generic, so
// y = tanh(x * 2 + b) - relu(x) is one loop with no temporaries (the
// splat constant 2 is a buffer filled once at entry, not a global of
// every element); the
// broadcast bias b (a vector against a matrix) is read through its own
// indexing map; a cast to the same type (whose body only forwards its
// operand) stays in the chain. The scalar ops are the same, so results stay bit-exact.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=5 --seed 3 > %t.compiled
// RUN: tempo-run %s --bound T=5 --seed 3 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted

// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK: func.func @tempo_main
// CHECK: %[[TWO:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[TWO]] : memref<2x3xf32>)
// CHECK-NOT: memref.alloc
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ROW]], #[[ID]]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: math.tanh
// CHECK: arith.maximumf
// CHECK: arith.subf
// CHECK: linalg.yield
// CHECK-NOT: linalg.generic

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%b = "temporal.input"() {sym_name = "b", domain = [], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %bias = "temporal.read"(%b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %m = "temporal.mul"(%a, %two) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = "temporal.add"(%m, %bias) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %th = "temporal.tanh"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = "temporal.relu"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %rc = "temporal.cast"(%r) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %v = "temporal.sub"(%th, %rc) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%v) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
