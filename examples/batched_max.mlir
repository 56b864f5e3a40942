// A two-dimensional program over sequences b and steps t: the running
// maximum of each sequence, m[b, 0] = x[b, 0]; m[b, t] = max(m[b, t-1], x[b, t]),
// and the final maximum of each sequence, last[b] = m[b, T-1].
// Run: tempo-run examples/batched_max.mlir --bound B=3 --bound T=5 --seed 0
module {
  "temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
  %m = "temporal.tensor"() {sym_name = "m", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
  %last = "temporal.tensor"() {sym_name = "last", domain = ["b"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%m) ({
    %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%v) : (tensor<f32>) -> ()
  }) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%m) ({
    %prev = "temporal.read"(%m) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<f32>
    %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
    %mx = "temporal.max"(%prev, %v) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%mx) : (tensor<f32>) -> ()
  }) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%last) ({
    %v = "temporal.read"(%m) {index = affine_map<(b)[B, T] -> (b, T - 1)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%v) : (tensor<f32>) -> ()
  }) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%m) : (!temporal.rtensor) -> ()
  "temporal.output"(%last) : (!temporal.rtensor) -> ()
}
