// Running sum of an input: s[0] = x[0]; s[t] = s[t-1] + x[t].
// Run: tempo-run examples/running_sum.mlir --bound T=5 --input x=x.npy   (x: float32[T, 3])
//  or: tempo-run examples/running_sum.mlir --bound T=5 --seed 1
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
  "temporal.define"(%s) ({
    %first = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
    "gpu.yield"(%first) : (tensor<3xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
    %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
    %sum = "temporal.add"(%prev, %now) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "gpu.yield"(%sum) : (tensor<3xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
