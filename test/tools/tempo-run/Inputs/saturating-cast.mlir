// Float to integer casts saturate; NaN becomes 0 (compiled and interpreted alike).
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<6xi32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<6xi64>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %c = "temporal.constant"() {value = dense<[3.0e38, -3.0e38, 0x7FC00000, 0x7F800000, -2.7, 2147483520.0]> : tensor<6xf32>} : () -> tensor<6xf32>
    %r = "temporal.cast"(%c) : (tensor<6xf32>) -> tensor<6xi32>
    "gpu.yield"(%r) : (tensor<6xi32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %c = "temporal.constant"() {value = dense<[1.0e300, -1.0e300, 0x7FF8000000000000, 0xFFF0000000000000, 9.2233720368547748e18, -9.2233720368547758e18]> : tensor<6xf64>} : () -> tensor<6xf64>
    %r = "temporal.cast"(%c) : (tensor<6xf64>) -> tensor<6xi64>
    "gpu.yield"(%r) : (tensor<6xi64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
