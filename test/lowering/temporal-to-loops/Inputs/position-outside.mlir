module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  "temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %p = "temporal.position"() {dim = "l"} : () -> tensor<i64>
    "gpu.yield"(%p) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
