// The backward pass reads the activations a reader's point stored instead
// of computing them again. g[t] = [sigmoid(a), tanh(b)] with [a, b] =
// x[t] W + h[t-1] U, as an LSTM's gates: the derivatives of sigmoid and
// tanh need only their outputs (y (1 - y), 1 - y^2), which are the parts
// of g[t]. The contribution of g's second branch to its reads slices
// them out of g[t] (read at its own point), so the two products of the
// forward body (x W and h U) are not computed again per step: the
// contribution keeps only the three products of the vector-Jacobian
// products (dh = U dz, dU = h^T dz, dW = x^T dz). Compiled results are the
// interpreter's bit for bit at every level, fused or not.
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-run %s --bound T=6 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 --disable-pass fusion | diff - %t.interpreted

// CHECK: %[[G:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<8xf64>, sym_name = "g"}
// CHECK: %[[C:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<60xf64>, sym_name = "gW$c$g$1$0"}
// CHECK: "temporal.define"(%[[C]])
// CHECK: "temporal.define"(%[[C]])
// CHECK: %[[S:.*]] = "temporal.read"(%[[G]]) {index = #map{{[0-9]*}}} : (!temporal.rtensor) -> tensor<8xf64>
// CHECK: "temporal.slice"(%[[S]]) {offsets = [4]}
// CHECK: "temporal.slice"(%[[S]]) {offsets = [0]}
// CHECK-COUNT-3: temporal.matmul
// CHECK-NOT: temporal.matmul
// CHECK: gpu.yield

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<3x8xf64>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x8xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<8xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
// g[t] = [sigmoid(a), tanh(b)] with [a, b] = x[t] W (+ h[t-1] U)
"temporal.define"(%g) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x8xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %z = "temporal.matmul"(%xt, %w) : (tensor<3xf64>, tensor<3x8xf64>) -> tensor<8xf64>
  %a = "temporal.slice"(%z) {offsets = [0]} : (tensor<8xf64>) -> tensor<4xf64>
  %b = "temporal.slice"(%z) {offsets = [4]} : (tensor<8xf64>) -> tensor<4xf64>
  %sa = "temporal.sigmoid"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  %tb = "temporal.tanh"(%b) : (tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.concat"(%sa, %tb) {axis = 0 : i64} : (tensor<4xf64>, tensor<4xf64>) -> tensor<8xf64>
  "gpu.yield"(%r) : (tensor<8xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x8xf64>
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x8xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %hp = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xw = "temporal.matmul"(%xt, %w) : (tensor<3xf64>, tensor<3x8xf64>) -> tensor<8xf64>
  %hu = "temporal.matmul"(%hp, %u) : (tensor<4xf64>, tensor<4x8xf64>) -> tensor<8xf64>
  %z = "temporal.add"(%xw, %hu) : (tensor<8xf64>, tensor<8xf64>) -> tensor<8xf64>
  %a = "temporal.slice"(%z) {offsets = [0]} : (tensor<8xf64>) -> tensor<4xf64>
  %b = "temporal.slice"(%z) {offsets = [4]} : (tensor<8xf64>) -> tensor<4xf64>
  %sa = "temporal.sigmoid"(%a) : (tensor<4xf64>) -> tensor<4xf64>
  %tb = "temporal.tanh"(%b) : (tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.concat"(%sa, %tb) {axis = 0 : i64} : (tensor<4xf64>, tensor<4xf64>) -> tensor<8xf64>
  "gpu.yield"(%r) : (tensor<8xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
// h[t] = sigmoid part * tanh part
"temporal.define"(%h) ({
  %gt = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8xf64>
  %p = "temporal.slice"(%gt) {offsets = [0]} : (tensor<8xf64>) -> tensor<4xf64>
  %q = "temporal.slice"(%gt) {offsets = [4]} : (tensor<8xf64>) -> tensor<4xf64>
  %m = "temporal.mul"(%p, %q) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%m) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sq = "temporal.mul"(%ht, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %s = "temporal.reduce_sum"(%sq) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gU = "temporal.grad"(%loss, %U) {sym_name = "gU"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%gW) : (!temporal.rtensor) -> ()
"temporal.output"(%gU) : (!temporal.rtensor) -> ()
