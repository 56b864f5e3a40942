// temporal-verify accepts well-formed programs and leaves them unchanged,
// including recurrences that move strictly in time (t-1, t-2) and reads of
// domain-less tensors.
// RUN: tempo-opt %examples/counter.mlir --temporal-verify | FileCheck %s --check-prefix=COUNTER
// RUN: tempo-opt %examples/fibonacci.mlir --temporal-verify | FileCheck %s --check-prefix=FIB
// RUN: tempo-opt %examples/rnn.mlir --temporal-verify | FileCheck %s --check-prefix=RNN
// RUN: tempo-opt %s --temporal-verify | FileCheck %s

// COUNTER: "temporal.tensor"() {domain = ["t"], element = tensor<i64>, sym_name = "x"}
// COUNTER-COUNT-2: "temporal.define"
// FIB-COUNT-3: "temporal.define"
// RNN: "temporal.matmul"

// Two tensors that read each other one step back form a legal cycle.
// CHECK: sym_name = "a"
// CHECK: sym_name = "b"
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %p = "temporal.read"(%b) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %p = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.exp"(%p) : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
