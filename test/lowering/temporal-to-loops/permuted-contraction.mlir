// A permutation that is not a body's result is a memref.transpose view (no
// copy). Attention reads its keys through one: [n, h, d] viewed as
// [h, d, n] is B of a batched contraction with non-unit column stride,
// read with gathers from a flat view of the store; the values viewed as
// [h, n, d] keep unit column stride and are read with vector loads.
// Compiled results are bit-exact with the interpreter's.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=40 --seed 2 > %t.compiled
// RUN: tempo-run %s --bound T=40 --seed 2 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted

// CHECK: memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d2, d0)
// CHECK-NOT: linalg.batch_matmul
// CHECK: memref.extract_strided_metadata
// CHECK: memref.reinterpret_cast
// CHECK: vector.gather
// CHECK: memref.transpose %{{.*}} (d0, d1, d2) -> (d1, d0, d2)
// CHECK: vector.load

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%q = "temporal.input"() {sym_name = "q", domain = ["t"], element = tensor<2x1x16xf32>} : () -> !temporal.rtensor
%k = "temporal.input"() {sym_name = "k", domain = ["t"], element = tensor<2x16xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<2x16xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<2x1x16xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %qt = "temporal.read"(%q) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x1x16xf32>
  %ks = "temporal.read_range"(%k) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x16xf32>
  %vs = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x16xf32>
  %kt = "temporal.permute"(%ks) {permutation = [1, 2, 0]} : (tensor<?x2x16xf32>) -> tensor<2x16x?xf32>
  %s = "temporal.matmul"(%qt, %kt) : (tensor<2x1x16xf32>, tensor<2x16x?xf32>) -> tensor<2x1x?xf32>
  %vt = "temporal.permute"(%vs) {permutation = [1, 0, 2]} : (tensor<?x2x16xf32>) -> tensor<2x?x16xf32>
  %r = "temporal.matmul"(%s, %vt) : (tensor<2x1x?xf32>, tensor<2x?x16xf32>) -> tensor<2x1x16xf32>
  "gpu.yield"(%r) : (tensor<2x1x16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%o) : (!temporal.rtensor) -> ()
