// A recurrence over the whole past: y[0] = 1; y[t] = 1 + sum(y[0:t]) (so y[t] = 2^t).
// The range y[0:t] stops before t, so the loop over t can run forward.
// Run: tempo-run examples/prefix_recurrence.mlir --bound T=10
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %past = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t)>]} : (!temporal.rtensor) -> tensor<?xi64>
    %sum = "temporal.reduce_sum"(%past) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %next = "temporal.add"(%sum, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%next) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
