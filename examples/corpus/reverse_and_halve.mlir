// bounds: T=9
// Reversal and floordiv indices: r[t] = x[T-1-t]; h[t] = x[t floordiv 2] + r[t].
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%r = "temporal.tensor"() {sym_name = "r", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%r) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (T - 1 - t)>} : (!temporal.rtensor) -> tensor<3xf32>
  "gpu.yield"(%v) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t floordiv 2)>} : (!temporal.rtensor) -> tensor<3xf32>
  %b = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %s = "temporal.add"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%s) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%r) : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
