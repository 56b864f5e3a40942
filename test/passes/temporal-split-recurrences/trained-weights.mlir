// temporal-split-recurrences when the input projection's weight is trained
// too (U[i], updated from its gradient of the previous iteration like W and
// v): U[i] depends on h only through iteration i - 1, a read carried by the
// loop over i, so x[t] U[i] is as time-parallel inside iteration i as with
// a constant U. It moves into h$split0[i, t] and temporal-vectorize
// computes it for all steps before the loop over t. (Before, the reads of
// every iteration counted, U was on h's cycle and nothing was split.)
// Results are bit for bit those of the loops and the interpreter.
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-recurrences=bounds=I=40,T=8" | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-recurrences=bounds=I=40,T=8" "--temporal-vectorize=bounds=I=40,T=8" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// RUN: tempo-run %s --bound I=5 --bound T=8 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=8 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=8 --seed 1 --disable-pass temporal-split-recurrences | diff - %t.interpreted

// CHECK: %[[SPLIT:.*]] = "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf64>, sym_name = "h$split0"}
// CHECK: "temporal.define"(%[[SPLIT]]) ({
// CHECK-NEXT: "temporal.read"
// CHECK-NEXT: "temporal.read"
// CHECK-NEXT: "temporal.matmul"({{.*}}) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>

// SCHEDULE:      for i = 0 up to I-1:
// SCHEDULE:        h$split0[i]  store: point
// SCHEDULE-NEXT:   for t = 0 up to T-1:
// SCHEDULE-NEXT:     h[i, t]

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%v0 = "temporal.input"() {sym_name = "v0", domain = [], element = tensor<4xf64>} : () -> !temporal.rtensor
%U0 = "temporal.input"() {sym_name = "U0", domain = [], element = tensor<4x3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%U = "temporal.tensor"() {sym_name = "U", domain = ["i"], element = tensor<4x3xf64>} : () -> !temporal.rtensor
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
// U[0] = U0, U[i] = U[i-1] - 0.02 stop_gradient(gU[i-1]).
"temporal.define"(%U) ({
  %w = "temporal.read"(%U0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<4x3xf64>
  "gpu.yield"(%w) : (tensor<4x3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%U) ({
  %w = "temporal.read"(%U) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %g = "temporal.read"(%gU) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %sg = "temporal.stop_gradient"(%g) : (tensor<4x3xf64>) -> tensor<4x3xf64>
  %lr = "temporal.constant"() {value = dense<0.02> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<4x3xf64>, tensor<f64>) -> tensor<4x3xf64>
  %n = "temporal.sub"(%w, %step) : (tensor<4x3xf64>, tensor<4x3xf64>) -> tensor<4x3xf64>
  "gpu.yield"(%n) : (tensor<4x3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// h[i, t] = tanh(W[i] h[i, t-1] + U x[t])
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<4x3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %ux = "temporal.matmul"(%u, %xt) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
  %h0 = "temporal.tanh"(%ux) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%h0) : (tensor<4xf64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<4x3xf64>
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
%gU = "temporal.grad"(%loss, %U) {sym_name = "gU"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
