// temporal-simplify applies its exact rules: x * 1, x + (-0.0) and x - 0.0
// become x (x + 0.0 stays: -0.0 + 0.0 is +0.0), -(-x) is x, max(x, x) is
// x, a permute of a permute is one permute (here the identity), a flip of a
// flip vanishes, a reshape of a reshape is one reshape, a slice of a slice
// is one slice, select of a constant condition picks its side, constants
// fold, and an integer matmul chain reassociates to the cheaper order.
// Results are unchanged, bit for bit (the run below also feeds NaN and
// signed zeros through the rules).
// RUN: tempo-opt %s --temporal-simplify | FileCheck %s
// RUN: tempo-opt %s --temporal-simplify | tempo-run - --bound T=5 --seed 6 > %t.simplified
// RUN: tempo-run %s --bound T=5 --seed 6 > %t.original
// RUN: diff %t.simplified %t.original
// Float matmuls reassociate only with inexact=true.
// RUN: tempo-opt %s --temporal-simplify | FileCheck %s --check-prefix=EXACT
// RUN: tempo-opt %s "--temporal-simplify=inexact=true" | FileCheck %s --check-prefix=INEXACT
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-simplify" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// An unknown option is refused.
// RUN: not tempo-opt %s "--temporal-simplify=nope=1" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: unknown option 'nope' for pass 'temporal-simplify' (known: inexact)
// A value of the wrong type is refused too (it used to count as false).
// RUN: not tempo-opt %s "--temporal-simplify=inexact=yes" 2>&1 | FileCheck %s --check-prefix=VALUE
// VALUE: tempo-opt: error: option inexact of pass 'temporal-simplify' takes true or false, got 'yes'

// CHECK-LABEL: "temporal.define"(%{{.*}}) ({
// CHECK-NEXT: %[[X:.*]] = "temporal.read"
// CHECK-NEXT: "temporal.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[PLUS:.*]] = "temporal.add"(%[[X]], %{{.*}})
// CHECK-NEXT: %[[SUM:.*]] = "temporal.add"(%[[X]], %[[PLUS]])
// CHECK-NEXT: gpu.yield %[[SUM]]
// The movement chains: one reshape of x[t] (2x3 -> 6) and one slice.
// CHECK: %[[M:.*]] = "temporal.read"
// CHECK-NEXT: %[[R:.*]] = "temporal.reshape"(%[[M]]) : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK-NEXT: %[[S:.*]] = "temporal.slice"(%[[R]]) {offsets = [3]} : (tensor<6xf32>) -> tensor<2xf32>
// CHECK-NEXT: gpu.yield %[[S]]
// Folded constants and a constant select:
// CHECK: %[[C:.*]] = "temporal.constant"() {value = dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>}
// CHECK-NEXT: gpu.yield %[[C]]
// The integer chain (A B) v is computed as A (B v):
// CHECK: %[[A:.*]] = "temporal.read"{{.*}}tensor<8x8xi64>
// CHECK-NEXT: %[[V:.*]] = "temporal.read"{{.*}}tensor<8x1xi64>
// CHECK-NEXT: %[[BV:.*]] = "temporal.matmul"(%[[A]], %[[V]]) : (tensor<8x8xi64>, tensor<8x1xi64>) -> tensor<8x1xi64>
// CHECK-NEXT: %[[ABV:.*]] = "temporal.matmul"(%[[A]], %[[BV]])
// EXACT: "temporal.matmul"(%[[FA:.*]], %[[FA]]) : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
// INEXACT-NOT: (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%m = "temporal.input"() {sym_name = "m", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%im = "temporal.input"() {sym_name = "im", domain = ["t"], element = tensor<8x8xi64>} : () -> !temporal.rtensor
%iv = "temporal.input"() {sym_name = "iv", domain = ["t"], element = tensor<8x1xi64>} : () -> !temporal.rtensor
%fm = "temporal.input"() {sym_name = "fm", domain = ["t"], element = tensor<8x8xf64>} : () -> !temporal.rtensor
%fv = "temporal.input"() {sym_name = "fv", domain = ["t"], element = tensor<8x1xf64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%i = "temporal.tensor"() {sym_name = "i", domain = ["t"], element = tensor<8x1xi64>} : () -> !temporal.rtensor
%f = "temporal.tensor"() {sym_name = "f", domain = ["t"], element = tensor<8x1xf64>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %negzero = "temporal.constant"() {value = dense<-0.0> : tensor<f32>} : () -> tensor<f32>
  %poszero = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %b = "temporal.mul"(%a, %one) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %c1 = "temporal.add"(%b, %negzero) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %c2 = "temporal.sub"(%c1, %poszero) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %n1 = "temporal.neg"(%c2) : (tensor<2xf32>) -> tensor<2xf32>
  %n2 = "temporal.neg"(%n1) : (tensor<2xf32>) -> tensor<2xf32>
  %mx = "temporal.max"(%n2, %n2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %kept = "temporal.add"(%mx, %poszero) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %r = "temporal.add"(%mx, %kept) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "gpu.yield"(%r) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%m) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p1 = "temporal.permute"(%a) {permutation = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %p2 = "temporal.permute"(%p1) {permutation = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %f1 = "temporal.flip"(%p2) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %f2 = "temporal.flip"(%f1) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r1 = "temporal.reshape"(%f2) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %r2 = "temporal.reshape"(%r1) : (tensor<3x2xf32>) -> tensor<6xf32>
  %s1 = "temporal.slice"(%r2) {offsets = [1]} : (tensor<6xf32>) -> tensor<4xf32>
  %s2 = "temporal.slice"(%s1) {offsets = [2]} : (tensor<4xf32>) -> tensor<2xf32>
  "gpu.yield"(%s2) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %k1 = "temporal.constant"() {value = dense<[1.0, -4.0]> : tensor<2xf32>} : () -> tensor<2xf32>
  %k2 = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %sum = "temporal.add"(%k1, %k2) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %half = "temporal.constant"() {value = dense<[1.0, 0.5]> : tensor<2xf32>} : () -> tensor<2xf32>
  %prod = "temporal.mul"(%sum, %half) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %yes = "temporal.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  %other = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
  %pick = "temporal.select"(%yes, %prod, %other) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "gpu.yield"(%pick) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%i) ({
  %a = "temporal.read"(%im) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x8xi64>
  %v = "temporal.read"(%iv) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x1xi64>
  %ab = "temporal.matmul"(%a, %a) : (tensor<8x8xi64>, tensor<8x8xi64>) -> tensor<8x8xi64>
  %abv = "temporal.matmul"(%ab, %v) : (tensor<8x8xi64>, tensor<8x1xi64>) -> tensor<8x1xi64>
  "gpu.yield"(%abv) : (tensor<8x1xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%f) ({
  %a = "temporal.read"(%fm) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x8xf64>
  %v = "temporal.read"(%fv) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x1xf64>
  %ab = "temporal.matmul"(%a, %a) : (tensor<8x8xf64>, tensor<8x8xf64>) -> tensor<8x8xf64>
  %abv = "temporal.matmul"(%ab, %v) : (tensor<8x8xf64>, tensor<8x1xf64>) -> tensor<8x1xf64>
  "gpu.yield"(%abv) : (tensor<8x1xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
"temporal.output"(%i) : (!temporal.rtensor) -> ()
"temporal.output"(%f) : (!temporal.rtensor) -> ()
