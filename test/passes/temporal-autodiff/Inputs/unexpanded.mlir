// A program with a gradient and a stop_gradient, for temporal-verify.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  // VERIFY-DAG: unexpanded.mlir:[[# @LINE + 1]]:8: error: run temporal-autodiff first: it expands temporal.grad and removes temporal.stop_gradient
  %s = "temporal.stop_gradient"(%v) : (tensor<f32>) -> tensor<f32>
  %e = "temporal.mul"(%v, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%e) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// VERIFY-DAG: unexpanded.mlir:[[# @LINE + 1]]:6: error: run temporal-autodiff first: it expands temporal.grad and removes temporal.stop_gradient
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()
