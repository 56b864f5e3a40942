// Programs the naive scheduler cannot order are refused with located errors.
// RUN: not tempo-opt --split-input-file %s --lower-temporal-to-loops 2>&1 | FileCheck %s

// a reads z one step back, z reads a one step ahead: a[t] needs a[t] (no
// loop direction works, and computing z a step late leaves the point
// needing itself).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read z[t - 1] by 'a' can reach the point being computed: a point would need itself (zero-distance cycle)
  %p = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %p = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// A cycle through a reversed index cannot be ordered by loops.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: read a[-t + T - 1] is on a cycle but is not bounded relative to the reader's variables
  %p = "temporal.read"(%a) {index = affine_map<(t)[T] -> (T - 1 - t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t * 2 - T >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// a[i] and b[t] read each other, but neither domain contains the other: no
// order of loops nests them (w[t] with x[i, t] is fine: the loops are
// interchanged, see ../schedule/interchange.mlir).
"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: cannot schedule 'b' with 'a': tensors on one cycle must have nested domains
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %p = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %p = "temporal.read"(%a) {index = affine_map<(t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// The verifier runs first: a zero-distance cycle is reported, not lowered.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:8: error: zero-distance cycle: y -> y
  %p = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// A range that includes the point being computed is a zero-distance cycle
// (found by the verifier, which runs first).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:11: error: zero-distance cycle: y -> y
  %past = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?xi64>
  %sum = "temporal.reduce_sum"(%past) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
  "gpu.yield"(%sum) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
