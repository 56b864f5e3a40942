// batched-call.mlir without the `batched` attribute.


"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b"], element = tensor<2xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["b", "t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b)>} : (!temporal.rtensor) -> tensor<2xf32>
  "gpu.yield"(%v) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %p = "temporal.read"(%s) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
  %k = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %n = "temporal.call"() ({
    "gpu.yield"(%p, %k) : (tensor<2xf32>, tensor<f32>) -> ()
  }) {callee = "step"} : () -> tensor<2xf32>
  "gpu.yield"(%n) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
