// Sinking (lowering/src/schedule/sink.rs): a tensor computed in an
// earlier nest though all its readers run in a later one moves into the
// later nest when that shrinks its store and no other store grows or
// lives longer. Here h runs forward along t and g backward (reading h,
// a and b at t and itself at t+1); a[t] = 2 h[t]
// is ready in the forward loop (list scheduling would fuse it there and
// keep all T points), but g alone reads it: computed in the backward loop
// it is a point, and h is kept whole for g anyway. b[t] = exp(s[t]) with
// s[t] = x[t] - h[t] stays where it is: moving it would keep s (a point
// in the forward loop) for all T steps (moving s and b together would
// pay; moves are tried one tensor at a time). Compiled and interpreted
// agree.
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound T=9 --seed 3 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 3 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 3 | diff - %t.one

// CHECK:      schedule:
// CHECK-NEXT:   for t = 0 up to T-1:
// CHECK-DAG:      h[t]  store: full
// CHECK-DAG:      s[t]  store: point
// CHECK-DAG:      b[t]  store: full
// CHECK:        for t = T-1 down to 0:
// CHECK-DAG:      a[t]  store: point
// CHECK-DAG:      g[t]  store: output

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  "gpu.yield"(%xt) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sum = "temporal.add"(%prev, %xt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %next = "temporal.tanh"(%sum) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%next) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %two = "temporal.add"(%ht, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%two) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %d = "temporal.sub"(%xt, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%d) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %st = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %e = "temporal.exp"(%st) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%e) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %bt = "temporal.read"(%b) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %hg = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %ah = "temporal.mul"(%at, %hg) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %ab = "temporal.mul"(%ah, %bt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%ab) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == T - 1)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %bt = "temporal.read"(%b) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %later = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %hg = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %ah = "temporal.mul"(%at, %hg) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %ab = "temporal.mul"(%ah, %bt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %sum = "temporal.add"(%ab, %later) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%sum) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (T - 2 - t >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
