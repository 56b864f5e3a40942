// s reads 2^31 steps back (a branch never taken for small bounds): it is
// stored in full, not in a ring of 2^31 + 1 slots that cannot be allocated.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%s) ({
    %c = "temporal.constant"() {value = dense<7> : tensor<i64>} : () -> tensor<i64>
    "gpu.yield"(%c) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (2147483647 - t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 2147483648)>} : (!temporal.rtensor) -> tensor<i64>
    "gpu.yield"(%p) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
    "gpu.yield"(%p) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
