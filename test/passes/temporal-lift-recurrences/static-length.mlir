// A range read whose type states a static length (`tensor<1x3xf32>` for
// x[0:t+1]) is checked at each point: an error wherever the range holds
// another number of points. temporal-lift-recurrences leaves its reduction
// alone, so -O2 reports the error as the interpreter and -O0 do (before,
// the sum became a running recurrence, the read and its check were gone,
// and -O2 returned values where the other modes refused the program).
// RUN: tempo-opt %s --temporal-lift-recurrences | FileCheck %s
// RUN: tempo-run %s --bound T=1 --seed 1 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 1 -O 2 | diff - %t.one
// RUN: not tempo-run %s --bound T=3 --seed 1 --interpret 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not tempo-run %s --bound T=3 --seed 1 -O 0 2>&1 | FileCheck %s --check-prefix=LENGTH
// RUN: not tempo-run %s --bound T=3 --seed 1 -O 2 2>&1 | FileCheck %s --check-prefix=LENGTH

// CHECK-NOT: prefix_sum
// CHECK: "temporal.read_range"(%{{.*}}) {{.*}} -> tensor<1x3xf32>
// CHECK: "temporal.reduce_sum"
// LENGTH: static-length.mlir:[[# @LINE + 7]]:8: error: at y[t=1]: range dimension 0 of the read holds 2 points, but its type states 1

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %k = "temporal.constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<1x3xf32>
  %a = "temporal.mul"(%k, %r) : (tensor<f32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  %s = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<1x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%s) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
