// Back-propagation through time inside a training run, one program: an
// RNN h[i, t] = tanh(W[i] h[i, t-1] + U x[t]) read out as v[i] . h[i, t]
// against targets y[t], W and v trained by gradient descent from their
// own gradients (W[i] = W[i-1] - 0.02 stop_gradient(gW[i-1])). The
// adjoint of h runs backward along t, h forward, and the cycle through the
// updates is carried by i alone: the schedule is a loop over i holding the
// parameters, the forward loop over t (which also sums v's gradient: its
// contributions need no backward pass, so their running sum runs forward,
// passes/src/temporal_autodiff/running_sums.rs), the backward loop over t
// and W's gradient (see carried.mlir). Activations are kept for one iteration
// (T points, reused by every i); nothing grows with I. The mean loss
// falls from 0.92 to 0.069 in 40 iterations; compiled and interpreted
// agree bit for bit at levels 0 to 2 (-O3 sums W's gradient as one
// product over the steps after the backward loop: within rounding).
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 -O 3 --format json > %t.o3.json
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted.json %t.o3.json 1e-5
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 --disable-pass fusion | diff - %t.interpreted
// RUN: FileCheck %s --check-prefix=LOSS < %t.interpreted
// One step, and no steps at all (the mean of nothing is NaN), agree too.
// RUN: tempo-run %s --bound I=2 --bound T=1 --seed 1 --interpret > %t.one
// RUN: tempo-run %s --bound I=2 --bound T=1 --seed 1 | diff - %t.one
// RUN: tempo-run %s --bound I=2 --bound T=0 --seed 1 --interpret > %t.none
// RUN: tempo-run %s --bound I=2 --bound T=0 --seed 1 | diff - %t.none
// The same peak of live stores at 40 and 400 iterations (2,496 bytes).
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tempo-run %s --bound I=40 --bound T=8 --seed 1 --stats --format none 2>&1 | grep peak > %t.peak
// RUN: tempo-run %s --bound I=400 --bound T=8 --seed 1 --stats --format none 2>&1 | grep peak | diff - %t.peak

// CHECK:      schedule:
// CHECK-NEXT:   for i = 0 up to I-1:
// CHECK-NEXT:     W[i]  store: ring<2>
// CHECK-NEXT:     v[i]  store: ring<2>
// CHECK-NEXT:     for t = 0 up to T-1:
// CHECK-NEXT:       h[i, t]  store: ring<1> along i per t
// CHECK-NEXT:       loss[i, t]
// CHECK-NEXT:       gW$c$loss$0$0[i, t]
// CHECK-NEXT:       gW$s$loss$0$0[i, t]  store: ring<2> along t
// CHECK:          gv[i]  store: ring<2>
// CHECK:          for t = T-1 down to 0:
// CHECK-NEXT:       gW${{.*}}[i, t]  store:
// CHECK:          gW[i]  store: ring<2>
// CHECK-NOT:  for

// LOSS: L: float64[40] = [0.91980432{{[0-9]*}}, 0.59538881{{[0-9]*}}, 0.42456577{{[0-9]*}},
// LOSS-SAME: 0.06894978{{[0-9]*}}]

// STATS: h: ring<1> along i per t (256 bytes)

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%v0 = "temporal.input"() {sym_name = "v0", domain = [], element = tensor<4xf64>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["i"], element = tensor<4xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["i", "t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%L = "temporal.tensor"() {sym_name = "L", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
// W[0] = 0.5 W0, W[i] = W[i-1] - 0.02 stop_gradient(gW[i-1]); v alike.
"temporal.define"(%W) ({
  %w = "temporal.read"(%W0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %half = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  %s = "temporal.mul"(%w, %half) : (tensor<4x4xf64>, tensor<f64>) -> tensor<4x4xf64>
  "gpu.yield"(%s) : (tensor<4x4xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%W) ({
  %w = "temporal.read"(%W) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %g = "temporal.read"(%gW) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %sg = "temporal.stop_gradient"(%g) : (tensor<4x4xf64>) -> tensor<4x4xf64>
  %lr = "temporal.constant"() {value = dense<0.02> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<4x4xf64>, tensor<f64>) -> tensor<4x4xf64>
  %n = "temporal.sub"(%w, %step) : (tensor<4x4xf64>, tensor<4x4xf64>) -> tensor<4x4xf64>
  "gpu.yield"(%n) : (tensor<4x4xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %w = "temporal.read"(%v0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<4xf64>
  "gpu.yield"(%w) : (tensor<4xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %w = "temporal.read"(%v) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %g = "temporal.read"(%gv) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sg = "temporal.stop_gradient"(%g) : (tensor<4xf64>) -> tensor<4xf64>
  %lr = "temporal.constant"() {value = dense<0.02> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
  %n = "temporal.sub"(%w, %step) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%n) : (tensor<4xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
// h[i, t] = tanh(W[i] h[i, t-1] + U x[t])
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
  %h0 = "temporal.tanh"(%ux) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%h0) : (tensor<4xf64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %prev = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %wh = "temporal.matmul"(%w, %prev) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
  %pre = "temporal.add"(%wh, %ux) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %next = "temporal.tanh"(%pre) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%next) : (tensor<4xf64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
// loss[i, t] = (v[i] . h[i, t] - y[t])^2
"temporal.define"(%loss) ({
  %vi = "temporal.read"(%v) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<4xf64>
  %ht = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %yt = "temporal.read"(%y) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %p = "temporal.mul"(%vi, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  %d = "temporal.sub"(%s, %yt) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %sq = "temporal.mul"(%d, %d) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sq) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%L) ({
  %l = "temporal.read_range"(%loss) {lower = [affine_map<(i)[I, T] -> (i)>, affine_map<(i)[I, T] -> (0)>], upper = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> (T)>], caps = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %s = "temporal.reduce_mean"(%l) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gv = "temporal.grad"(%loss, %v) {sym_name = "gv"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
