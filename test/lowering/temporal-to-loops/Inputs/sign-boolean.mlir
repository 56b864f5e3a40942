// temporal.sign of booleans: refused (a numeric operand).
module {
  %y = "temporal.tensor"() {sym_name = "y", domain = [], element = tensor<3xi1>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %c = "temporal.constant"() {value = dense<[true, false, true]> : tensor<3xi1>} : () -> tensor<3xi1>
    %r = "temporal.sign"(%c) : (tensor<3xi1>) -> tensor<3xi1>
    "gpu.yield"(%r) : (tensor<3xi1>) -> ()
  }) {when = affine_set<() : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
