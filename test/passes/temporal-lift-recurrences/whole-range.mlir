// Incrementalization: reductions over the whole range y[0:T], read after
// the loop over t (by tensors without t), become the last point of the
// running recurrence y_prefix_sum[t] (y_prefix_max[t]), so y needs no
// store of all T points (a full store of T x 64 floats becomes rings of 2).
// The same additions in the same order: results are bit-exact. The branch
// splits: where T >= 1 it reads the recurrence at T - 1; otherwise the range
// is empty and the sum is 0 (the maximum -inf), as before. The reduction
// over b's whole range from a tensor over b is a different thing (the
// range is not after its loop) and stays.
// RUN: tempo-opt %s --temporal-lift-recurrences | FileCheck %s
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=300 --bound B=3 --seed 5 > %t.lifted
// RUN: tempo-run %s --bound T=300 --bound B=3 --seed 5 -O0 > %t.original
// RUN: diff %t.lifted %t.original
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=0 --bound B=3 --seed 5 > %t.lifted0
// RUN: tempo-run %s --bound T=0 --bound B=3 --seed 5 -O0 > %t.original0
// RUN: diff %t.lifted0 %t.original0
// RUN: tempo-run %s --bound T=300 --bound B=3 --seed 5 -O0 --stats --format none 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-run %s --bound T=300 --bound B=3 --seed 5 --stats --format none 2>&1 | FileCheck %s --check-prefix=AFTER

// CHECK-DAG: sym_name = "y_prefix_sum"
// CHECK-DAG: sym_name = "y_prefix_max"
// CHECK-LABEL: "temporal.define"(%{{.*}}) ({
// CHECK: "temporal.read"(%{{.*}}) {index = #map{{[0-9]*}}} : (!temporal.rtensor) -> tensor<64xf32>
// CHECK: }) {when = #set{{[0-9]*}}}
// CHECK: "temporal.constant"() {value = dense<0.000000e+00> : tensor<64xf32>}
// BEFORE: y: full ({{[0-9]+}} bytes)
// AFTER-NOT: y: full
// AFTER: peak

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  "temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
  %c = "temporal.input"() {sym_name = "c", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
  %total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<64xf32>} : () -> !temporal.rtensor
  %peak = "temporal.tensor"() {sym_name = "peak", domain = [], element = tensor<64xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T, B] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
    %r = "temporal.tanh"(%v) : (tensor<64xf32>) -> tensor<64xf32>
    "gpu.yield"(%r) : (tensor<64xf32>) -> ()
  }) {when = affine_set<(t)[T, B] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%total) ({
    %all = "temporal.read_range"(%y) {caps = [affine_map<()[T, B] -> ()>], lower = [affine_map<()[T, B] -> (0)>], upper = [affine_map<()[T, B] -> (T)>]} : (!temporal.rtensor) -> tensor<?x64xf32>
    %r = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?x64xf32>) -> tensor<64xf32>
    "gpu.yield"(%r) : (tensor<64xf32>) -> ()
  }) {when = affine_set<()[T, B] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%peak) ({
    %all = "temporal.read_range"(%y) {caps = [affine_map<()[T, B] -> ()>], lower = [affine_map<()[T, B] -> (0)>], upper = [affine_map<()[T, B] -> (T)>]} : (!temporal.rtensor) -> tensor<?x64xf32>
    %r = "temporal.reduce_max"(%all) {axis = 0 : i64} : (tensor<?x64xf32>) -> tensor<64xf32>
    "gpu.yield"(%r) : (tensor<64xf32>) -> ()
  }) {when = affine_set<()[T, B] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %all = "temporal.read_range"(%c) {caps = [affine_map<(b)[T, B] -> ()>], lower = [affine_map<(b)[T, B] -> (0)>], upper = [affine_map<(b)[T, B] -> (B)>]} : (!temporal.rtensor) -> tensor<?xi64>
    %r = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
    "gpu.yield"(%r) : (tensor<i64>) -> ()
  }) {when = affine_set<(b)[T, B] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%total) : (!temporal.rtensor) -> ()
  "temporal.output"(%peak) : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
