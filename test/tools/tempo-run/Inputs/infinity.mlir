// Infinities in --format json.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %c = "temporal.constant"() {value = dense<0x7F800000> : tensor<f32>} : () -> tensor<f32>
    "gpu.yield"(%c) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
}
