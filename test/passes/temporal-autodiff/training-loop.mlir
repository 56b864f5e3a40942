// A whole training run in one program: iterations i, samples t, a linear
// model whose weight W[i] is updated from its own gradient,
// W[i] = W[i-1] - 0.05 * stop_gradient(g[i-1]), g = grad(loss, W). W's
// read of its own past passes no gradient for g (the training-loop rule),
// so g[i] is the gradient of iteration i's loss. The schedule runs each
// iteration's work inside the loop over i, in one forward loop over t (the
// samples' contributions need nothing ahead, so the gradient's running sum
// runs forward with them); nothing grows with I or T but the outputs. The loss falls from 1.86 to 3e-18 in
// 30 iterations (W reaches the targets' weights [1, -2, 0.5]); compiled
// and interpreted agree bit for bit.
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound I=30 --bound T=16 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=30 --bound T=16 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=30 --bound T=16 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=30 --bound T=16 --seed 1 --disable-pass fusion | diff - %t.interpreted
// RUN: FileCheck %s --check-prefix=LOSS < %t.interpreted

// CHECK: for i = 0 up to I-1:
// CHECK:   W[i]  store: output
// CHECK:   for t = 0 up to T-1:
// CHECK:     g$s$loss$0$0[i, t]  store: ring<2> along t
// CHECK:   g$d$W[i]  store: point
// CHECK:   g[i]  store: ring<2>
// CHECK:   L[i]  store: output

// LOSS: L: float64[30] = [1.85520676{{[0-9]*}}, 0.2483580{{[0-9]*}},
// LOSS-SAME: 0.0000000000000000025{{[0-9]*}}]
// LOSS: W: float64[30, 3] = {{.*}}[1.000000000{{[0-9]*}}, -1.999999999{{[0-9]*}}, 0.499999997{{[0-9]*}}]]

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<3xf64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%L = "temporal.tensor"() {sym_name = "L", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
// targets from a fixed "true" weight [1, -2, 0.5]
"temporal.define"(%y) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %w = "temporal.constant"() {value = dense<[1.0, -2.0, 0.5]> : tensor<3xf64>} : () -> tensor<3xf64>
  %p = "temporal.mul"(%xt, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
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
"temporal.define"(%loss) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<3xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %yt = "temporal.read"(%y) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %p = "temporal.mul"(%xt, %w) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  %d = "temporal.sub"(%s, %yt) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %sq = "temporal.mul"(%d, %d) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sq) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%L) ({
  %l = "temporal.read_range"(%loss) {lower = [affine_map<(i)[I, T] -> (i)>, affine_map<(i)[I, T] -> (0)>], upper = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> (T)>], caps = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %s = "temporal.reduce_mean"(%l) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%loss, %W) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
"temporal.output"(%W) : (!temporal.rtensor) -> ()
