// y is defined only for t < 3: fine when T <= 3, an error for larger T.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (2 - t >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
