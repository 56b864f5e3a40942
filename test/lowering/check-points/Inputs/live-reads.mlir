// The reads of ../dead-reads.mlir, live: each is reported at the read.

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.input"() {sym_name = "w", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %p = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
  // CHECK: live-reads.mlir:[[# @LINE + 1]]:8: error: read w[t - 3] at x[t=0] is out of bounds: t = -3 is outside 0..4 (T = 4)
  %q = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t - 3)>} : (!temporal.rtensor) -> tensor<f32>
  %used = "temporal.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%used) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: live-reads.mlir:[[# @LINE + 1]]:6: error: point y[t=2] is needed but no branch of 'y' defines it (bounds: T=4)
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (1 - t >= 0)>} : (!temporal.rtensor) -> ()
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  %undefined = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%undefined) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  // CHECK: live-reads.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: range read of 'y' at z[t=0] is out of bounds: t in 0..9 is outside 0..4 (T = 4)
  %range = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 9)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %sum = "temporal.reduce_sum"(%range) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%sum) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<1xf32>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  %c = "temporal.constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: live-reads.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: at z[t=2]: the slice at offsets [2] of shape [1] is not inside the operand of shape [2] (bounds: T=4)
  %slice = "temporal.dynamic_slice"(%c) {offsets = affine_map<(t)[T] -> (t)>} : (tensor<2xf32>) -> tensor<1xf32>
  "gpu.yield"(%slice) : (tensor<1xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
