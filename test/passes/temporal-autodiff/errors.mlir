// What temporal-autodiff refuses, each at the user's op, and temporal-verify
// refusing a program whose gradients were not expanded.
// RUN: not tempo-opt --split-input-file %s --temporal-autodiff 2>&1 | FileCheck %s
// RUN: not tempo-opt %S/Inputs/unexpanded.mlir --temporal-verify 2>&1 | FileCheck %S/Inputs/unexpanded.mlir --check-prefix=VERIFY

// The gradient is of the sum of scalar points.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %e = "temporal.exp"(%v) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%e) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: temporal.grad: the gradient is of the sum of the points of 'y', which must be scalar floats (tensor<f32> or tensor<f64>), not tensor<3xf32>
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// Gradients are with respect to floats.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %f = "temporal.cast"(%v) : (tensor<i64>) -> tensor<f32>
  "gpu.yield"(%f) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: temporal.grad: 'x' has tensor<i64> points; gradients are with respect to floats
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// A running sum along a range read: the element frame cannot follow it
// (the error names the op that uses the range so).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: temporal-autodiff: no gradient through this read of a range of 'x' yet: a running sum along the range
  %c = "temporal.cumsum"(%v) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<?xf32>
  %s = "temporal.reduce_sum"(%c) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// A range whose bound has a stride (x[0:2t+1]).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: temporal-autodiff: no gradient through this read of a range of 'x' yet: a range bound whose dimension has a coefficient other than 1 or -1
  %v = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t * 2 + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf32>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// A box over two range dimensions (not yet).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "u", bound = "U"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t", "u"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: temporal-autodiff: no gradient through this read of a range of 'x' yet: a box over several range dimensions
  %v = "temporal.read_range"(%x) {lower = [affine_map<(t)[T, U] -> (0)>, affine_map<(t)[T, U] -> (0)>], upper = [affine_map<(t)[T, U] -> (t + 1)>, affine_map<(t)[T, U] -> (U)>], caps = [affine_map<(t)[T, U] -> ()>, affine_map<(t)[T, U] -> ()>]} : (!temporal.rtensor) -> tensor<?x?xf32>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<?x?xf32>) -> tensor<?xf32>
  %r = "temporal.reduce_sum"(%s) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%r) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T, U] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// An external call on the path has no gradient.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: temporal-autodiff: no gradient through the external call 'env', which has no gradient (on a path the gradient needs)
  %r = "temporal.call"() ({
    "gpu.yield"(%v) : (tensor<f32>) -> ()
  }) {callee = "env"} : () -> tensor<f32>
  "gpu.yield"(%r) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// A coordinate the pass cannot reverse yet.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: temporal-autodiff: no gradient through this read of 'x' yet: a coordinate with mod or division
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> ((t * 2) mod 3)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// Gradients of gradients are not supported.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %e = "temporal.mul"(%v, %v) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%e) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%y, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:7: error: 'gg': its 'of' is the gradient 'g'; gradients of gradients are not supported
%gg = "temporal.grad"(%g, %x) {sym_name = "gg"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%gg) : (!temporal.rtensor) -> ()
