// Each ill-formed program gets a located diagnostic and a non-zero exit.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: zero-distance cycle: y -> y
  %p = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: zero-distance cycle: a -> b -> a
  %p = "temporal.read"(%b) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %p = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: unknown dimension 'i' in the domain of 'x'
%x = "temporal.tensor"() {sym_name = "x", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: tensor 'x': point type must be a statically shaped ranked tensor, got tensor<?xf32>
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<?xf32>} : () -> !temporal.rtensor

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:1: error: condition of 'x' must have 1 dims (its domain) and 1 symbols (the bounds), has (2)[1]
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t, u)[T] : (t == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read of 'x' must give 1 coordinates (its domain), gives 2
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1, 0)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read of 'x' must produce tensor<f32>, produces tensor<2xf32>
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
  %q = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:1: error: 'x' is an input and cannot be defined
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:1: error: branch of 'x' yields tensor<f32> but the tensor holds tensor<2xf32>
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %b = "temporal.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.matmul' cannot multiply tensor<2x3xf32> by tensor<2xf32> into tensor<2xf32>
  %m = "temporal.matmul"(%a, %b) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2xf32>
  "gpu.yield"(%m) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.tanh' needs a floating-point operand, got tensor<i32>
  %m = "temporal.tanh"(%a) : (tensor<i32>) -> tensor<i32>
  "gpu.yield"(%m) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %b = "temporal.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.add' needs operands and result of one type, got tensor<f32> and tensor<2xf32> -> tensor<f32>
  %m = "temporal.add"(%a, %b) : (tensor<f32>, tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%m) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: tensor 'x' has no temporal.define
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: redefinition of symbol named 'x'
%y = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: 'temporal.constant' must appear inside a temporal.define body
%c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'arith.addf' is not allowed in a temporal.define body
  %d = "arith.addf"(%c, %c) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%d) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.reshape': reshape keeps the elements: static shapes with as many elements, or one dynamic dimension in each with the same static sizes around it; not tensor<2x3xf32> to tensor<4xf32>
  %r = "temporal.reshape"(%a) : (tensor<2x3xf32>) -> tensor<4xf32>
  "gpu.yield"(%r) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<3x2xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.permute': 'permutation' must be a permutation of 0..2
  %r = "temporal.permute"(%a) {permutation = [0, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  "gpu.yield"(%r) : (tensor<3x2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: a read_range cap applies to point dimensions only; a range dimension's cap must have no results
  %r = "temporal.read_range"(%x) {caps = [affine_map<(t)[T] -> (T - 1)>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %s = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read_range of 'x' needs 'caps' empty or with one map per source dimension (2)
  %r = "temporal.read_range"(%x) {caps = [affine_map<(t)[T, B] -> (T - 1)>], lower = [affine_map<(t)[T, B] -> (0)>, affine_map<(t)[T, B] -> (t)>], upper = [affine_map<(t)[T, B] -> ()>, affine_map<(t)[T, B] -> ()>]} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%r) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T, B] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: the 'args' region of temporal.call must hold exactly one gpu.yield of the arguments
  %r = "temporal.call"() ({
    %b = "temporal.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "gpu.yield"(%b) : (tensor<f32>) -> ()
  }) {callee = "f"} : () -> tensor<f32>
  "gpu.yield"(%r) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// A range read that may include the point being computed closes a
// zero-distance cycle too (y[0:t+1] inside y[t]); y[0:t] would not.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: zero-distance cycle: y -> y
  %r = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %s = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
