// y[t] reads y[t]: rejected before compilation.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %p = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %s = "temporal.add"(%p, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
