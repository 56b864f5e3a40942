// A small RNN cell on vectors: h[0] = tanh(U x[0]); h[t] = tanh(W h[t-1] + U x[t]).
// W (4x4) and U (4x3) are inputs without a temporal domain; x is float32[T, 3].
// Run: tempo-run examples/rnn.mlir --bound T=6 --seed 0
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x3xf32>} : () -> !temporal.rtensor
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%h) ({
    %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
    %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
    %h0 = "temporal.tanh"(%ux) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%h0) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf32>
    %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
    %wh = "temporal.matmul"(%w, %prev) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
    %pre = "temporal.add"(%wh, %ux) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %next = "temporal.tanh"(%pre) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%next) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%h) : (!temporal.rtensor) -> ()
}
