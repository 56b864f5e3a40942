// Back-propagation through time through an LSTM: gates from vector-times-
// matrix products combined elementwise (x W + h[t-1] U + b), sliced into
// input, forget, cell and output gates; the cell state c[t] reads c[t-1],
// h[t] reads c[t]; a log-sum-exp loss per step. Gradients with respect to
// W, U, b (no domain) and x[t] agree with central finite differences
// through the interpreter to 1.3e-9 (T = 6); compiled agrees bit for bit
// with the interpreter at levels 0 to 2, fused or not (-O3 sums the weight
// gradients as products over the steps after the backward loop: within
// rounding).
// RUN: tempo-run %s --bound T=9 --seed 3 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 3 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound T=9 --seed 3 -O 3 --format json > %t.o3.json
// RUN: %python %S/Inputs/close.py %t.interpreted.json %t.o3.json 1e-5
// RUN: tempo-run %s --bound T=9 --seed 3 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s

// The forward loop keeps the activations the backward one reads; the
// adjoints of the recurrences run backward, once for the four gradients
// (one adjoint program per loss), with the weights' contributions summed
// along the way.
// CHECK: for t = 0 up to T-1:
// CHECK:   z[t]  store: full
// CHECK: for t = T-1 down to 0:
// CHECK-DAG:   gW$d$h[t]  store: point
// CHECK-DAG:   gW$d$c[t]  store: point
// CHECK-DAG:   gW$d$z[t]  store: point
// CHECK-DAG:   gx[t]  store: output
// CHECK-DAG:   gW$s$z$1$0[t]  store: ring<2>
// CHECK-NOT: gU$d
// CHECK: gW[]  store: output
// CHECK: gU[]  store: output
// CHECK: gbias[]  store: output

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<3x16xf64>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<4x16xf64>} : () -> !temporal.rtensor
%bias = "temporal.input"() {sym_name = "bias", domain = [], element = tensor<16xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<16xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
// gates z[t] = x[t] W + h[t-1] U + b (vector x matrix, combined elementwise)
"temporal.define"(%z) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x16xf64>
  %b = "temporal.read"(%bias) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %xw = "temporal.matmul"(%xt, %w) : (tensor<3xf64>, tensor<3x16xf64>) -> tensor<16xf64>
  %s = "temporal.add"(%xw, %b) : (tensor<16xf64>, tensor<16xf64>) -> tensor<16xf64>
  "gpu.yield"(%s) : (tensor<16xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x16xf64>
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x16xf64>
  %b = "temporal.read"(%bias) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %hp = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xw = "temporal.matmul"(%xt, %w) : (tensor<3xf64>, tensor<3x16xf64>) -> tensor<16xf64>
  %hu = "temporal.matmul"(%hp, %u) : (tensor<4xf64>, tensor<4x16xf64>) -> tensor<16xf64>
  %s0 = "temporal.add"(%xw, %hu) : (tensor<16xf64>, tensor<16xf64>) -> tensor<16xf64>
  %s = "temporal.add"(%s0, %b) : (tensor<16xf64>, tensor<16xf64>) -> tensor<16xf64>
  "gpu.yield"(%s) : (tensor<16xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
// c[t] = sigmoid(f) * c[t-1] + sigmoid(i) * tanh(g); h[t] = sigmoid(o) * tanh(c[t])
"temporal.define"(%c) ({
  %zt = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf64>
  %i = "temporal.slice"(%zt) {offsets = [0]} : (tensor<16xf64>) -> tensor<4xf64>
  %g = "temporal.slice"(%zt) {offsets = [8]} : (tensor<16xf64>) -> tensor<4xf64>
  %si = "temporal.sigmoid"(%i) : (tensor<4xf64>) -> tensor<4xf64>
  %tg = "temporal.tanh"(%g) : (tensor<4xf64>) -> tensor<4xf64>
  %n = "temporal.mul"(%si, %tg) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%n) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %zt = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf64>
  %cp = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %i = "temporal.slice"(%zt) {offsets = [0]} : (tensor<16xf64>) -> tensor<4xf64>
  %f = "temporal.slice"(%zt) {offsets = [4]} : (tensor<16xf64>) -> tensor<4xf64>
  %g = "temporal.slice"(%zt) {offsets = [8]} : (tensor<16xf64>) -> tensor<4xf64>
  %si = "temporal.sigmoid"(%i) : (tensor<4xf64>) -> tensor<4xf64>
  %sf = "temporal.sigmoid"(%f) : (tensor<4xf64>) -> tensor<4xf64>
  %tg = "temporal.tanh"(%g) : (tensor<4xf64>) -> tensor<4xf64>
  %keep = "temporal.mul"(%sf, %cp) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %n = "temporal.mul"(%si, %tg) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %s = "temporal.add"(%keep, %n) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%s) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %zt = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf64>
  %ct = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %o = "temporal.slice"(%zt) {offsets = [12]} : (tensor<16xf64>) -> tensor<4xf64>
  %so = "temporal.sigmoid"(%o) : (tensor<4xf64>) -> tensor<4xf64>
  %tc = "temporal.tanh"(%ct) : (tensor<4xf64>) -> tensor<4xf64>
  %hh = "temporal.mul"(%so, %tc) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%hh) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// loss[t] = logsumexp-ish: log(sum(exp(h))) - h[0]
"temporal.define"(%loss) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %e = "temporal.exp"(%ht) : (tensor<4xf64>) -> tensor<4xf64>
  %s = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  %l = "temporal.log"(%s) : (tensor<f64>) -> tensor<f64>
  %first = "temporal.slice"(%ht) {offsets = [0]} : (tensor<4xf64>) -> tensor<1xf64>
  %f0 = "temporal.reshape"(%first) : (tensor<1xf64>) -> tensor<f64>
  %d = "temporal.sub"(%l, %f0) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%d) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gU = "temporal.grad"(%loss, %U) {sym_name = "gU"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gbias = "temporal.grad"(%loss, %bias) {sym_name = "gbias"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gx = "temporal.grad"(%loss, %x) {sym_name = "gx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%gW) : (!temporal.rtensor) -> ()
"temporal.output"(%gU) : (!temporal.rtensor) -> ()
"temporal.output"(%gbias) : (!temporal.rtensor) -> ()
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
