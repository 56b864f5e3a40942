// bounds: T=6
// Embedding lookup (gather with clamped indices), batched matmul, and a gather
// from a growing range (rows 0 and 3 of v[0:t+1]; row 3 clamps while t < 3).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%tokens = "temporal.input"() {sym_name = "tokens", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%E = "temporal.input"() {sym_name = "E", domain = [], element = tensor<5x4xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x2x2xf32>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %table = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x4xf32>
  %ids = "temporal.read"(%tokens) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  %emb = "temporal.gather"(%table, %ids) : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %x = "temporal.reshape"(%emb) : (tensor<3x4xf32>) -> tensor<3x2x2xf32>
  %xx = "temporal.matmul"(%x, %x) : (tensor<3x2x2xf32>, tensor<3x2x2xf32>) -> tensor<3x2x2xf32>
  "gpu.yield"(%xx) : (tensor<3x2x2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %rows = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %ids = "temporal.constant"() {value = dense<[0, 3]> : tensor<2xi32>} : () -> tensor<2xi32>
  %picked = "temporal.gather"(%rows, %ids) : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<2x4xf32>
  "gpu.yield"(%picked) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
