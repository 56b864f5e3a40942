// temporal-drop-pinned-dims: a tensor read only at one point of a
// dimension is computed at that point only. `first` (a contribution that
// holds at t == 0 and is zero elsewhere, read at t = 0) and `last` (read
// at t = T - 1) lose `t`; their branch conditions and reads have it
// replaced by the point, a branch that cannot hold there goes, and the
// point must lie inside the dimension (`0 <= p <= T - 1`). `both` is read
// at two points and `acc` reads itself: they keep `t`. `odd` is read at
// t = 0 only, where no branch of it holds (the read is in a branch of
// `y` that never holds): it keeps `t` too (it would have no branch). The
// results are the same, at T = 5 and at T = 0 (where nobody needs the
// points).
// RUN: tempo-opt %s --temporal-drop-pinned-dims | FileCheck %s
// RUN: tempo-opt %s --temporal-drop-pinned-dims | tempo-run - --bound I=3 --bound T=5 --seed 7 > %t.after
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 7 > %t.before
// RUN: diff %t.after %t.before
// RUN: tempo-opt %s --temporal-drop-pinned-dims | tempo-run - --bound I=3 --bound T=0 --seed 7 > %t.after0
// RUN: tempo-run %s --bound I=3 --bound T=0 --seed 7 > %t.before0
// RUN: diff %t.after0 %t.before0
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-drop-pinned-dims 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// The -O2 pipeline runs it.
// RUN: tempo-opt %s -O2 | FileCheck %s --check-prefix=O2

// CHECK: %[[FIRST:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<4xf32>, sym_name = "first"}
// CHECK: %[[LAST:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<4xf32>, sym_name = "last"}
// CHECK: "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf32>, sym_name = "both"}
// CHECK: "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf32>, sym_name = "acc"}
// CHECK: "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf32>, sym_name = "odd"}
// CHECK: "temporal.define"(%[[FIRST]])
// CHECK-NEXT: "temporal.read"(%{{.*}}) {index = #[[AT0:.*]]}
// CHECK: }) {when = #[[INSIDE:.*]]} : (!temporal.rtensor) -> ()
// CHECK-NOT: "temporal.define"(%[[FIRST]])
// CHECK: "temporal.define"(%[[LAST]])
// CHECK-NEXT: "temporal.read"(%{{.*}}) {index = #[[ATLAST:.*]]}
// The readers read the point of the tensor over `i`.
// CHECK: "temporal.read"(%[[FIRST]]) {index = #[[IDENT:.*]]}
// CHECK: "temporal.read"(%[[LAST]]) {index = #[[IDENT]]}

// O2: {domain = ["i"], element = tensor<4xf32>, sym_name = "first"}

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%first = "temporal.tensor"() {sym_name = "first", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%last = "temporal.tensor"() {sym_name = "last", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%both = "temporal.tensor"() {sym_name = "both", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%acc = "temporal.tensor"() {sym_name = "acc", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%odd = "temporal.tensor"() {sym_name = "odd", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["i"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%first) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%b) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%first) ({
  %z = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %e = "temporal.expand"(%z) : (tensor<f32>) -> tensor<4xf32>
  "gpu.yield"(%e) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%last) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%b) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%both) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%b) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%acc) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%acc) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %p = "temporal.read"(%acc) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %s = "temporal.add"(%a, %p) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%odd) ({
  %a = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t mod 2 - 1 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %o = "temporal.read"(%odd) {index = affine_map<(i)[I, T] -> (i, 0)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%o) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (T + 1 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %f = "temporal.read"(%first) {index = affine_map<(i)[I, T] -> (i, 0)>} : (!temporal.rtensor) -> tensor<4xf32>
  %l = "temporal.read"(%last) {index = affine_map<(i)[I, T] -> (i, T - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b0 = "temporal.read"(%both) {index = affine_map<(i)[I, T] -> (i, 0)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b1 = "temporal.read"(%both) {index = affine_map<(i)[I, T] -> (i, T - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %c = "temporal.read"(%acc) {index = affine_map<(i)[I, T] -> (i, T - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %s1 = "temporal.add"(%f, %l) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "temporal.mul"(%b0, %b1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s3 = "temporal.sub"(%s1, %s2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s4 = "temporal.add"(%s3, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s4) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (T - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %z = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %e = "temporal.expand"(%z) : (tensor<f32>) -> tensor<4xf32>
  "gpu.yield"(%e) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
