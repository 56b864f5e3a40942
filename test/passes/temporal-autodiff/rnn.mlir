// temporal-autodiff on an RNN (h[t] = tanh(W h[t-1] + U x[t]), a loss per
// step): back-propagation through time. The gradient with respect to W
// (no domain) and x[t] becomes ordinary recurrent tensors: the adjoint of
// h collects the contribution of h[t+1]'s read of h[t] (the read t - 1
// reversed: the adjoint reads its own future) and that of loss[t]; the
// weight's contributions at every step are summed by a running sum along
// t. No temporal.grad is left; the scheduler runs the forward loop, then
// the adjoints in a backward loop. Compiled and interpreted agree bit for
// bit at every level (the gradients themselves are checked against finite
// differences in tests/gradients.rs).
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff --temporal-verify > /dev/null
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// RUN: tempo-run %s --bound T=7 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=7 --seed 2 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=7 --seed 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=7 --seed 2 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 2 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 2 | diff - %t.one

// CHECK-NOT: temporal.grad
// CHECK-DAG: %[[GW:.*]] = "temporal.tensor"() {domain = [], element = tensor<4x4xf64>, sym_name = "gW"}
// CHECK-DAG: %[[DW:.*]] = "temporal.tensor"() {domain = [], element = tensor<4x4xf64>, sym_name = "gW$d$W"}
// CHECK-DAG: %[[DH:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<4xf64>, sym_name = "gW$d$h"}
// CHECK-DAG: %[[S:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<4x4xf64>, sym_name = "gW$s$h$1$0"}
// One adjoint program for both gradients, and one backward sweep per
// branch: the cotangents of the step's reads of W (16 elements), h[t-1]
// (4) and x[t] (3) side by side in one tensor.
// CHECK-DAG: "temporal.tensor"() {domain = ["t"], element = tensor<23xf64>, sym_name = "gW$c$h$1$0"}
// The gradient reads the adjoint of W.
// CHECK: "temporal.define"(%[[GW]])
// CHECK-NEXT: "temporal.read"(%[[DW]])
// The running sum of W's contributions, from the last step back.
// CHECK: "temporal.define"(%[[S]])
// CHECK: }) {when = #{{.*}}} : (!temporal.rtensor) -> ()
// CHECK: "temporal.define"(%[[S]])
// CHECK:   "temporal.slice"(%{{.*}}) {offsets = [0]} : (tensor<23xf64>) -> tensor<16xf64>
// CHECK:   %[[HERE:.*]] = "temporal.reshape"
// CHECK:   %[[LATER:.*]] = "temporal.read"(%[[S]])
// CHECK:   "temporal.add"(%[[HERE]], %[[LATER]])

// SCHEDULE: for t = 0 up to T-1:
// SCHEDULE:   h[t]  store: full
// SCHEDULE: for t = T-1 down to 0:
// SCHEDULE:   gW$d$h[t]  store: point
// SCHEDULE:   gW$c$h$1$0[t]  store: ring<2>
// SCHEDULE:   gx[t]  store: output
// SCHEDULE:   gW$s$h$1$0[t]  store: ring<2>
// SCHEDULE: gW[]  store: output

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
  %h0 = "temporal.tanh"(%ux) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%h0) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %wh = "temporal.matmul"(%w, %prev) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
  %pre = "temporal.add"(%wh, %ux) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %next = "temporal.tanh"(%pre) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%next) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sq = "temporal.mul"(%ht, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %s = "temporal.reduce_sum"(%sq) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gx = "temporal.grad"(%loss, %x) {sym_name = "gx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%gW) : (!temporal.rtensor) -> ()
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
