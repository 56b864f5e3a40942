// What is left to collect from each step on: rest[t] = sum(r[t:T]).
// r[t:T] is a range read of the future (a suffix of dynamic length T - t).
// Run: tempo-run examples/suffix_sum.mlir --bound T=5 --seed 0
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %r = "temporal.input"() {sym_name = "r", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
  %rest = "temporal.tensor"() {sym_name = "rest", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
  "temporal.define"(%rest) ({
    %future = "temporal.read_range"(%r) {caps = [], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xf64>
    %sum = "temporal.reduce_sum"(%future) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
    "gpu.yield"(%sum) : (tensor<f64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%rest) : (!temporal.rtensor) -> ()
}
