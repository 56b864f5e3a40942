// bounds: T=6
// Domain-less tensors computed once from inputs and constants, feeding a recurrence:
// M = W W^T / 4, c = M 1; z[0] = c; z[t] = tanh(M z[t-1]) + c.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<3x3xf32>} : () -> !temporal.rtensor
%M = "temporal.tensor"() {sym_name = "M", domain = [], element = tensor<3x3xf32>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = [], element = tensor<3xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%M) ({
  %w = "temporal.read"(%W) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<3x3xf32>
  %wt = "temporal.permute"(%w) {permutation = [1, 0]} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  %p = "temporal.matmul"(%w, %wt) : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  %q = "temporal.constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %m = "temporal.mul"(%p, %q) : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  "gpu.yield"(%m) : (tensor<3x3xf32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %m = "temporal.read"(%M) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<3x3xf32>
  %ones = "temporal.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %r = "temporal.matmul"(%m, %ones) : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%r) : (tensor<3xf32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %v = "temporal.read"(%c) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf32>
  "gpu.yield"(%v) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %m = "temporal.read"(%M) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x3xf32>
  %prev = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
  %p = "temporal.matmul"(%m, %prev) : (tensor<3x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %th = "temporal.tanh"(%p) : (tensor<3xf32>) -> tensor<3xf32>
  %cc = "temporal.read"(%c) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf32>
  %s = "temporal.add"(%th, %cc) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%s) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
