// An elementwise chain used once by a sum, maximum or mean is computed
// inside the reduction's loop: sum(x * x) along the rows (RMS norm's
// square sum) and max(exp(x - 1)) are one linalg.generic each, with no
// temporaries. Bit-exact with the interpreter.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=4 --seed 5 > %t.compiled
// RUN: tempo-run %s --bound T=4 --seed 5 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted

// CHECK: func.func @tempo_main
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x8xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %sq = "temporal.mul"(%a, %a) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2xf32>
  "gpu.yield"(%s) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %d = "temporal.sub"(%a, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = "temporal.exp"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %m = "temporal.reduce_max"(%e) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2xf32>
  "gpu.yield"(%m) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
