// Which way a weight gradient's running sum runs
// (passes/src/temporal_autodiff/running_sums.rs). W[i] is read at every
// step t; its adjoint sums the steps' contributions. For g the loss at t
// weighs the prediction by the "return" G[i, t], a stop-gradient sum of
// the rollout's r over the window t : min(t+3, T): the contributions need
// at most two steps ahead, so the sum runs forward and the scheduler
// computes it two steps late in the rollout's own loop (with only g, r
// would keep 3 points: test/lowering/schedule/retime.mlir). For m the
// return M sums r over the whole future t : T (Monte-Carlo): the sum
// stays backward, in a loop of its own after the rollout, which keeps r
// whole for it. Compiled and interpreted agree bit for bit (both see the
// same summation order).
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s --check-prefix=SUM
// RUN: tempo-run %s --bound I=4 --bound T=7 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=4 --bound T=7 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=4 --bound T=7 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=2 --bound T=2 --seed 1 --interpret > %t.short
// RUN: tempo-run %s --bound I=2 --bound T=2 --seed 1 | diff - %t.short

// CHECK:      for i = 0 up to I-1:
// CHECK:        for t = 0 up to T-1+2:
// CHECK-DAG:      r[i, t]  store: full
// CHECK-DAG:      G[i, t]  store: point  late: 2
// CHECK-DAG:      g$s$loss$0$0[i, t]  store: ring<2> along t  late: 2
// CHECK:        for t = T-1 down to 0:
// CHECK-DAG:      M[i, t]  store: point
// CHECK-DAG:      m$s$mc$0$0[i, t]  store: ring<2> along t

// The forward sum starts at t = 0 and adds the previous step; its reader
// takes the last step. The backward one starts at T - 1.
// SUM-DAG:  #[[PREV:map[0-9]*]] = affine_map<(d0, d1)[s0, s1] -> (d0, d1 - 1)>
// SUM-DAG:  #[[LAST:map[0-9]*]] = affine_map<(d0)[s0, s1] -> (d0, s1 - 1)>
// SUM-DAG:  #[[FIRST:set[0-9]*]] = affine_set<(d0, d1)[s0, s1] : (d1 == 0)>
// SUM:      %[[GS:[0-9]+]] = "temporal.tensor"() {{.*}}sym_name = "g$s$loss$0$0"
// SUM:      "temporal.define"(%[[GS]]) ({
// SUM:      }) {when = #[[FIRST]]}
// SUM:      "temporal.define"(%[[GS]]) ({
// SUM:        "temporal.read"(%[[GS]]) {index = #[[PREV]]}
// SUM:      "temporal.read"(%[[GS]]) {index = #[[LAST]]}

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<3xf64>} : () -> !temporal.rtensor
%r = "temporal.tensor"() {sym_name = "r", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%G = "temporal.tensor"() {sym_name = "G", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%M = "temporal.tensor"() {sym_name = "M", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%mc = "temporal.tensor"() {sym_name = "mc", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%W) ({
  %w = "temporal.read"(%W0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<3xf64>
  "gpu.yield"(%w) : (tensor<3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%W) ({
  %w = "temporal.read"(%W) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<3xf64>
  %gp = "temporal.read"(%g) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<3xf64>
  %sg = "temporal.stop_gradient"(%gp) : (tensor<3xf64>) -> tensor<3xf64>
  %lr = "temporal.constant"() {value = dense<0.05> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %n = "temporal.sub"(%w, %step) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  "gpu.yield"(%n) : (tensor<3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
// The rollout's reward: tanh(W . x[t]).
"temporal.define"(%r) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %p = "temporal.mul"(%xt, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  %h = "temporal.tanh"(%s) : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%h) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// n-step return (n = 3): the window r[t : t+3], the rest of the episode at its end.
"temporal.define"(%G) ({
  %w = "temporal.read_range"(%r) {lower = [affine_map<(i, t)[I, T] -> (i)>, affine_map<(i, t)[I, T] -> (t)>], upper = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> (t + 3)>], caps = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %s = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - t - 4 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%G) ({
  %w = "temporal.read_range"(%r) {lower = [affine_map<(i, t)[I, T] -> (i)>, affine_map<(i, t)[I, T] -> (t)>], upper = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> (T)>], caps = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %s = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Monte-Carlo return: r[t : T].
"temporal.define"(%M) ({
  %w = "temporal.read_range"(%r) {lower = [affine_map<(i, t)[I, T] -> (i)>, affine_map<(i, t)[I, T] -> (t)>], upper = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> (T)>], caps = [affine_map<(i, t)[I, T] -> ()>, affine_map<(i, t)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %s = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Losses: the prediction W . x[t] weighed by a return held constant.
"temporal.define"(%loss) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %p = "temporal.mul"(%xt, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  %gt = "temporal.read"(%G) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %c = "temporal.stop_gradient"(%gt) : (tensor<f64>) -> tensor<f64>
  %l = "temporal.mul"(%s, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%mc) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %p = "temporal.mul"(%xt, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  %mt = "temporal.read"(%M) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %c = "temporal.stop_gradient"(%mt) : (tensor<f64>) -> tensor<f64>
  %l = "temporal.mul"(%s, %c) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%loss, %W) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%m = "temporal.grad"(%mc, %W) {sym_name = "m"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%W) : (!temporal.rtensor) -> ()
"temporal.output"(%m) : (!temporal.rtensor) -> ()
