// Fibonacci: y[0] = 0; y[1] = 1; otherwise y[t] = y[t-1] + y[t-2].
// Branches are tried in order; the last one has no condition (always true).
// Run: tempo-run examples/fibonacci.mlir --bound T=12
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %zero = "temporal.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    "gpu.yield"(%zero) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    "gpu.yield"(%one) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (t == 1)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %a = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
    %b = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t - 2)>} : (!temporal.rtensor) -> tensor<i64>
    %sum = "temporal.add"(%a, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%sum) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
