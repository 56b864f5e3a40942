// Counter: x[0] = 0; x[t] = x[t-1] + 1. Run: tempo-run examples/counter.mlir --bound T=10
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %zero = "temporal.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    "gpu.yield"(%zero) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%x) ({
    %prev = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %next = "temporal.add"(%prev, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%next) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
}
