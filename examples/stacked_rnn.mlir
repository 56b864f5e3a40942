// A stack of L RNN layers run at every step, layers inside time:
//   h[t, 0] = tanh(W h[t-1, 0] + U x[t]),  h[t, l] = tanh(W h[t-1, l] + V h[t, l-1]),
//   y[t] = h[t, L-1] (step 0 starts from zero state).
// The schedule nests l inside t with y after the l loop, so h keeps only the
// layers of steps t and t-1 (a ring of 2 slices of L points) whatever T is.
// Run: tempo-run examples/stacked_rnn.mlir --bound T=6 --bound L=3 --seed 0 --stats
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  "temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
  %W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %V = "temporal.input"() {sym_name = "V", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x3xf32>} : () -> !temporal.rtensor
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  // The input to each layer: U x[t] for layer 0, V h[t, l-1] above it.
  %in = "temporal.tensor"() {sym_name = "in", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%in) ({
    %v = "temporal.read"(%V) {index = affine_map<(t, l)[T, L] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %below = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t, l - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
    %vh = "temporal.matmul"(%v, %below) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%vh) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (l - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%in) ({
    %u = "temporal.read"(%U) {index = affine_map<(t, l)[T, L] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t, l)[T, L] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
    %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4xf32>
    "gpu.yield"(%ux) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %w = "temporal.read"(%W) {index = affine_map<(t, l)[T, L] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %prev = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t - 1, l)>} : (!temporal.rtensor) -> tensor<4xf32>
    %i = "temporal.read"(%in) {index = affine_map<(t, l)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
    %wh = "temporal.matmul"(%w, %prev) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %pre = "temporal.add"(%wh, %i) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %next = "temporal.tanh"(%pre) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%next) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %i = "temporal.read"(%in) {index = affine_map<(t, l)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
    %first = "temporal.tanh"(%i) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%first) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %top = "temporal.read"(%h) {index = affine_map<(t)[T, L] -> (t, L - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
    "gpu.yield"(%top) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
