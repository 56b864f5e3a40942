// Windowed self-attention over the last 3 steps:
//   q[t] = Wq x[t], k[t] = Wk x[t], v[t] = Wv x[t]
//   o[t] = softmax(k[max(0,t-2):t+1] q[t]) v[max(0,t-2):t+1]
// The window is a range read whose lower bound is max(0, t-2): at most 3 points.
// Run: tempo-run examples/windowed_attention.mlir --bound T=6 --seed 0 --interpret
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %Wq = "temporal.input"() {sym_name = "Wq", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %Wv = "temporal.input"() {sym_name = "Wv", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%k) ({
    %w = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %r = "temporal.matmul"(%w, %xt) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%r) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%v) ({
    %w = "temporal.read"(%Wv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %r = "temporal.matmul"(%w, %xt) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%r) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%o) ({
    %w = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %q = "temporal.matmul"(%w, %xt) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %keys = "temporal.read_range"(%k) {caps = [], lower = [affine_map<(t)[T] -> (0, t - 2)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
    %values = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0, t - 2)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
    %scores = "temporal.matmul"(%keys, %q) : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?xf32>
    %m = "temporal.reduce_max"(%scores) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %shifted = "temporal.sub"(%scores, %m) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %e = "temporal.exp"(%shifted) : (tensor<?xf32>) -> tensor<?xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %weights = "temporal.div"(%e, %z) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %out = "temporal.matmul"(%weights, %values) : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
    "gpu.yield"(%out) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%o) : (!temporal.rtensor) -> ()
}
