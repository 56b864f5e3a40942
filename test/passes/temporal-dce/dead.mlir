// temporal-dce removes what no output needs: the tensor `unused` (and
// `helper`, read only by it), and the body ops of y whose values do not
// reach its result. An input nobody reads stays (it is the interface); an
// external call stays in a branch that is still computed.
// RUN: tempo-opt %s --temporal-dce | FileCheck %s
// RUN: tempo-opt %s --temporal-dce | tempo-run - --bound T=9 --seed 5 --input w=%S/Inputs/w.npy > %t.after
// RUN: tempo-run %s --bound T=9 --seed 5 --input w=%S/Inputs/w.npy > %t.before
// RUN: diff %t.after %t.before
// A program without outputs keeps nothing but its inputs.
// RUN: tempo-opt %S/Inputs/no-outputs.mlir --temporal-dce | FileCheck %s --check-prefix=NONE
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-dce" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y

// CHECK: sym_name = "x"
// CHECK: sym_name = "w"
// CHECK-NOT: sym_name = "helper"
// CHECK-NOT: sym_name = "unused"
// CHECK: %[[Y:.*]] = "temporal.tensor"() {{.*}}sym_name = "y"
// CHECK: "temporal.define"(%[[Y]])
// CHECK-NEXT: "temporal.read"
// CHECK-NEXT: "temporal.exp"
// CHECK-NEXT: gpu.yield
// CHECK-NOT: temporal.define
// CHECK: "temporal.output"(%[[Y]])

// NONE: sym_name = "x"
// NONE-NOT: temporal.tensor
// NONE-NOT: temporal.define

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf64>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<2xf64>} : () -> !temporal.rtensor
%helper = "temporal.tensor"() {sym_name = "helper", domain = ["t"], element = tensor<2xf64>} : () -> !temporal.rtensor
%unused = "temporal.tensor"() {sym_name = "unused", domain = ["t"], element = tensor<2xf64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2xf64>} : () -> !temporal.rtensor
"temporal.define"(%helper) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf64>
  %b = "temporal.neg"(%a) : (tensor<2xf64>) -> tensor<2xf64>
  "gpu.yield"(%b) : (tensor<2xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%unused) ({
  %a = "temporal.read"(%helper) {index = affine_map<(t)[T] -> (T - 1 - t)>} : (!temporal.rtensor) -> tensor<2xf64>
  "gpu.yield"(%a) : (tensor<2xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf64>
  %dead1 = "temporal.read"(%unused) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf64>
  %dead2 = "temporal.mul"(%dead1, %a) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %b = "temporal.exp"(%a) : (tensor<2xf64>) -> tensor<2xf64>
  "gpu.yield"(%b) : (tensor<2xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
