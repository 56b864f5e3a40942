// Programs outside this lowering's scope are refused with located errors.
// RUN: not tempo-opt --split-input-file %s --lower-temporal-to-loops 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read x[t + 1] reads the future; this lowering only handles reads of t - k (k >= 0) yet
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read x[-t + T - 1]: this lowering only handles reads of t - k (k >= 0) of tensors over t yet
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (T - 1 - t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: tensor 'x': this lowering handles programs over one temporal dimension; 'x' has domain [b, t]
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%last = "temporal.tensor"() {sym_name = "last", domain = [], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%last) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read x[T - 1]: a tensor without a domain cannot read a tensor over a dimension in this lowering yet
  %p = "temporal.read"(%x) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// The verifier runs first: a zero-distance cycle is reported, not lowered.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: zero-distance cycle: y -> y
  %p = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
