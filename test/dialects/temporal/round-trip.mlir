// RUN: tempo-opt %s | tempo-opt | FileCheck %s
// RUN: tempo-opt %s --mlir-print-op-generic | tempo-opt | FileCheck %s

// A program prints and re-parses unchanged: dims, inputs, tensors, ordered
// branches with affine_set conditions, reads with affine_map indices.

// CHECK-DAG: #[[PREV:.*]] = affine_map<(d0)[s0] -> (d0 - 1)>
// CHECK-DAG: #[[FIRST:.*]] = affine_set<(d0)[s0] : (d0 == 0)>
// CHECK: "temporal.dim"() {bound = "T", sym_name = "t"}
// CHECK: %[[X:.*]] = "temporal.input"() {domain = ["t"], element = tensor<2xf32>, sym_name = "x"} : () -> !temporal.rtensor
// CHECK: %[[S:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<2xf32>, sym_name = "s"} : () -> !temporal.rtensor
// CHECK: "temporal.define"(%[[S]]) ({
// CHECK:   "temporal.read"(%[[X]])
// CHECK: }) {when = #[[FIRST]]}
// CHECK: "temporal.define"(%[[S]]) ({
// CHECK:   "temporal.read"(%[[S]]) {index = #[[PREV]]}
// CHECK:   "temporal.mul"
// CHECK:   gpu.yield
// CHECK: "temporal.output"(%[[S]])

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  "temporal.define"(%s) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
    "gpu.yield"(%v) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
    %m = "temporal.mul"(%p, %v) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "gpu.yield"(%m) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
