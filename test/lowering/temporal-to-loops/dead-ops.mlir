// Ops whose values reach no branch result or external call are never
// evaluated ("Evaluation is demand-driven" in dialects/README.md), at every
// level: lower-temporal-to-loops emits no code for them even when
// temporal-dce has not run (as at -O0). Here the dead reads would be out of
// bounds (w[t + 7], the range w[0:t+100]) and the dead slice outside its
// operand.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=4 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 2 -O 0 | diff - %t.interpreted

// The dead ops leave no trace: no index map past the point, no reduction,
// no exp; only the copy of the live read into the output.
// CHECK-NOT: {{d0 \+ (3|7|100)}}
// CHECK-LABEL: func.func @tempo_main
// CHECK-NOT: {{d0 \+ (3|7|100)|math.exp|linalg.generic|linalg.reduce|scf.for}}
// CHECK: linalg.copy
// CHECK-NOT: {{d0 \+ (3|7|100)|math.exp|linalg.generic|linalg.reduce|scf.for}}
// CHECK: return

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.input"() {sym_name = "w", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %now = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %far = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t + 7)>} : (!temporal.rtensor) -> tensor<3xf32>
  %range = "temporal.read_range"(%w) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 100)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %sum = "temporal.reduce_sum"(%range) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  %slice = "temporal.dynamic_slice"(%now) {offsets = affine_map<(t)[T] -> (t + 3)>} : (tensor<3xf32>) -> tensor<1xf32>
  %e = "temporal.exp"(%far) : (tensor<3xf32>) -> tensor<3xf32>
  %unused = "temporal.add"(%e, %sum) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%now) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
