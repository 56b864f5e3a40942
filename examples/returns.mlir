// Discounted returns, a backward recurrence: G[T-1] = r[T-1]; G[t] = r[t] + 0.9 * G[t+1].
// The compiler runs this loop from t = T-1 down to 0.
// Run: tempo-run examples/returns.mlir --bound T=6 --seed 0
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %r = "temporal.input"() {sym_name = "r", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %G = "temporal.tensor"() {sym_name = "G", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%G) ({
    %last = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%last) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (T - 1 - t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%G) ({
    %now = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    %next = "temporal.read"(%G) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
    %gamma = "temporal.constant"() {value = dense<0.9> : tensor<f32>} : () -> tensor<f32>
    %discounted = "temporal.mul"(%gamma, %next) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %sum = "temporal.add"(%now, %discounted) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%sum) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%G) : (!temporal.rtensor) -> ()
}
