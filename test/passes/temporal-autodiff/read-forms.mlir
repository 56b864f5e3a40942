// Gradients through the read forms point reads have: a reversed index
// (x[T-1-t]), clamps on both sides (x[min(t+2, T-1)], x[max(t-1, 0)]: the
// clamped-onto points collect every reader point clamped there), a
// condition (t mod 2 == 0: only the branch that defines a point passes a
// gradient), an elementwise and a reducing maximum, and discounted returns
// over the future (G[t] = y[t] r[t] + 0.9 G[t+1], computed backward, so the
// adjoint runs forward). The gradients agree with central finite
// differences through the interpreter to 4e-10 (T = 1, 2, 5, 8; checked
// in tests/gradients.rs); here compiled and interpreted agree bit for bit
// at every level, fused or not, at three bounds, and the schedule runs the
// adjoint of G in a forward loop after the backward one.
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound T=1 --seed 4 --interpret > %t.1
// RUN: tempo-run %s --bound T=1 --seed 4 -O 0 | diff - %t.1
// RUN: tempo-run %s --bound T=1 --seed 4 | diff - %t.1
// RUN: tempo-run %s --bound T=9 --seed 4 --interpret > %t.9
// RUN: tempo-run %s --bound T=9 --seed 4 -O 0 | diff - %t.9
// RUN: tempo-run %s --bound T=9 --seed 4 -O 1 | diff - %t.9
// RUN: tempo-run %s --bound T=9 --seed 4 | diff - %t.9
// RUN: tempo-run %s --bound T=9 --seed 4 -O 3 | diff - %t.9
// RUN: tempo-run %s --bound T=9 --seed 4 --disable-pass fusion | diff - %t.9

// CHECK: for t = T-1 down to 0:
// CHECK:   G[t]  store: ring<2>
// CHECK: for t = 0 up to T-1:
// CHECK:   gx$d$G[t]  store: point
// CHECK:   gr[t]  store: output
// CHECK:   gx[t]  store: output

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf64>} : () -> !temporal.rtensor
%r = "temporal.input"() {sym_name = "r", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%G = "temporal.tensor"() {sym_name = "G", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%L = "temporal.tensor"() {sym_name = "L", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
// y[t] = x[T-1-t] . x[min(t+2, T-1)] + (t even ? sum x[t/2]^3 : sum sin(x[max(t-1,0)]))
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (T - 1 - t)>} : (!temporal.rtensor) -> tensor<2xf64>
  %b = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (t + 2)>], upper = [affine_map<(t)[T] -> ()>], caps = [affine_map<(t)[T] -> (T - 1)>]} : (!temporal.rtensor) -> tensor<2xf64>
  %ab = "temporal.mul"(%a, %b) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %s = "temporal.reduce_sum"(%ab) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t mod 2 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (t - 1, 0)>], upper = [affine_map<(t)[T] -> ()>], caps = []} : (!temporal.rtensor) -> tensor<2xf64>
  %sn = "temporal.sin"(%a) : (tensor<2xf64>) -> tensor<2xf64>
  %c = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf64>
  %m = "temporal.max"(%sn, %c) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %s = "temporal.reduce_max"(%m) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// discounted returns over the future: G[T-1] = y r; G[t] = y[t] r[t] + 0.9 G[t+1]
"temporal.define"(%G) ({
  %yv = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %rv = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %p = "temporal.mul"(%yv, %rv) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%p) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - T + 1 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%G) ({
  %yv = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %rv = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %p = "temporal.mul"(%yv, %rv) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %n = "temporal.read"(%G) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.constant"() {value = dense<0.9> : tensor<f64>} : () -> tensor<f64>
  %d = "temporal.mul"(%k, %n) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %s = "temporal.add"(%p, %d) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%L) ({
  %g = "temporal.read"(%G) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sq = "temporal.mul"(%g, %g) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sq) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gx = "temporal.grad"(%L, %x) {sym_name = "gx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gr = "temporal.grad"(%L, %r) {sym_name = "gr"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
"temporal.output"(%gr) : (!temporal.rtensor) -> ()
