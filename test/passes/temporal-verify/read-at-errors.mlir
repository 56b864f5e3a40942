// temporal.read_at (reads through data) is checked like the other reads,
// with located diagnostics: coordinates must be scalar integers, the index
// map takes the reader's variables then one per coordinate, gives one
// coordinate per source dimension, and the coordinates may not come from
// another read through data.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  // CHECK: read-at-errors.mlir:[[# @LINE + 1]]:8: error: coordinate operand #0 of temporal.read_at must be a scalar integer (tensor<i64> or tensor<i32>), is tensor<f32>
  %a = "temporal.read_at"(%x, %v) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%a) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%i = "temporal.input"() {sym_name = "i", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %k = "temporal.read"(%i) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  // CHECK: read-at-errors.mlir:[[# @LINE + 1]]:8: error: index of a read through data by 's' must have 2 dims (the reader's domain, then one per coordinate operand) and 1 symbols (the bounds), has (1)[1]
  %a = "temporal.read_at"(%i, %k) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%i = "temporal.input"() {sym_name = "i", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %k = "temporal.read"(%i) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  // CHECK: read-at-errors.mlir:[[# @LINE + 1]]:8: error: read of 'i' must give 1 coordinates (its domain), gives 2
  %a = "temporal.read_at"(%i, %k) {index = affine_map<(n, k)[N] -> (k, n)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%i = "temporal.input"() {sym_name = "i", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %k = "temporal.read"(%i) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %j = "temporal.read_at"(%i, %k) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  %o = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %jo = "temporal.add"(%j, %o) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  // CHECK: read-at-errors.mlir:[[# @LINE + 1]]:8: error: the coordinates of a read through data come from 'temporal.read_at': they may not come from a read through data, an external call or a collective
  %a = "temporal.read_at"(%i, %jo) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
