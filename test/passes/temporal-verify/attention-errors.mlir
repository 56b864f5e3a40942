// temporal.attention written by hand is checked like the other ops, with
// located diagnostics: a block outside 1..65536, a dynamic size on a label
// other than the attended one (compiled code keeps each row's buffers
// static), a combine that does not sum the score's label, a scale that is
// not a scalar.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %q = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %s = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: attention-errors.mlir:[[# @LINE + 1]]:8: error: attention: block must be between 1 and 65536, got 1099511627776
  %a = "temporal.attention"(%q, %k, %k, %s) {score = "d,nd->n", combine = "n,ne->e", block = 1099511627776 : i64} : (tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<f32>) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %s = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: attention-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.attention': label 'q' has a dynamic size; only the attended label 'n' may
  %a = "temporal.attention"(%k, %k, %k, %s) {score = "qd,nd->qn", combine = "qn,ne->qe", block = 4 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %r = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<4xf32>
  "gpu.yield"(%r) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %q = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %s = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: attention-errors.mlir:[[# @LINE + 1]]:8: error: attention: 'combine' (n,ne->ne) must sum exactly one label
  %a = "temporal.attention"(%q, %k, %k, %s) {score = "d,nd->n", combine = "n,ne->ne", block = 4 : i64} : (tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %r = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<4xf32>
  "gpu.yield"(%r) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %q = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  // CHECK: attention-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.attention' of tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32> cannot give tensor<4xf32> (float operands of one type, a scalar scale)
  %a = "temporal.attention"(%q, %k, %k, %q) {score = "d,nd->n", combine = "n,ne->e", block = 4 : i64} : (tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
