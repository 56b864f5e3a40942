// The dialect's IRDL text lets stock mlir-opt read, verify and re-print a
// temporal program, and reject a malformed one.
// RUN: tempo-opt --emit-irdl > %t.irdl.mlir
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | FileCheck %s
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | mlir-opt --irdl-file=%t.irdl.mlir | FileCheck %s
// RUN: not mlir-opt --irdl-file=%t.irdl.mlir %S/Inputs/missing-attribute.mlir 2>&1 | FileCheck %s --check-prefix=BAD-ATTR
// RUN: not mlir-opt --irdl-file=%t.irdl.mlir %S/Inputs/wrong-operand-type.mlir 2>&1 | FileCheck %s --check-prefix=BAD-TYPE

// CHECK: %[[X:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<i64>, sym_name = "x"} : () -> !temporal.rtensor
// CHECK: "temporal.define"(%[[X]])
// CHECK: "temporal.read"(%[[X]])
// CHECK: "temporal.add"
// CHECK: "temporal.output"(%[[X]])

// BAD-ATTR: missing-attribute.mlir:4:8: error: 'temporal.read' op attribute "index" is expected but not provided
// BAD-TYPE: wrong-operand-type.mlir:3:1: error: expected base type 'temporal.rtensor' but got 'builtin.integer'

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %prev = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %next = "temporal.add"(%prev, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%next) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
