"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %z = "temporal.constant"() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %a = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %n = "temporal.call"() ({
    "gpu.yield"(%z, %a) : (tensor<2xf32>, tensor<f32>) -> ()
  }) {callee = "env_step"} : () -> tensor<2xf32>
  "gpu.yield"(%n) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
