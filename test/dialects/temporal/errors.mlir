// IRDL-level verification inside tempo-opt: located errors, non-zero exit.
// RUN: not tempo-opt --split-input-file %s 2>&1 | FileCheck %s

// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: 'temporal.tensor' op attribute "domain" is expected but not provided
%x = "temporal.tensor"() {sym_name = "x", element = tensor<i64>} : () -> !temporal.rtensor

// -----

// CHECK: errors.mlir:[[# @LINE + 1]]:1: error: op expects exactly 1 operands, but got 0
"temporal.define"() ({
  "gpu.yield"() : () -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : () -> ()

// -----

// CHECK: errors.mlir:[[# @LINE + 1]]:6: error: op expects exactly 1 operands, but got 0
%x = "temporal.read"() {index = 3 : i64} : () -> tensor<i64>

// -----

// CHECK: errors.mlir:[[# @LINE + 2]]:6: error: expected base attribute 'builtin.affine_map' but got 'builtin.integer'
%h = "temporal.tensor"() {sym_name = "h", domain = [], element = tensor<i64>} : () -> !temporal.rtensor
%x = "temporal.read"(%h) {index = 3 : i64} : (!temporal.rtensor) -> tensor<i64>

// -----

// Custom syntax does not exist for IRDL ops; the tool says so.
// CHECK: errors.mlir:[[# @LINE - 2]]:1: error: cannot parse the input as MLIR (ops of IRDL dialects such as temporal.* have only the generic form
temporal.add
