// temporal-pack-products on the recurrence of rnn.mlir at a batch of 40
// rows: h[i, t] = tanh(h[i, t-1] W[i] + x[t] U), W trained. Past 32 rows
// the forward product h[t-1] W[i] stays a matmul (the general product
// packs the weight well enough for that many rows), but the backward
// pass's product by the transpose, dh[t] W[i]^T, would hand the library a
// column-major weight to gather at every step: it reads a row-major copy
// of W[i]^T instead, made once per iteration (W$transposed-style tensor
// over i, outside the loop over t). The t == 0 branch's products run at
// one step only and get neither. Same values: exact.
// RUN: tempo-opt %s --temporal-autodiff --temporal-pack-products | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff --temporal-pack-products --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --threads 2 --format json > %t.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.fast.json 1e-5
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --stats --format none 2>&1 | FileCheck %s --check-prefix=EXACT
// Nothing changes the values: the rewritten program under the exact
// pipeline is the interpreter's, bit for bit.
// RUN: tempo-opt %s --temporal-autodiff --temporal-pack-products > %t.packed.mlir
// RUN: tempo-run %t.packed.mlir --bound I=3 --bound T=5 --seed 2 > %t.packed
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --interpret | diff - %t.packed

// CHECK-NOT: $packed
// CHECK-DAG: %[[H:.*]] = "temporal.tensor"() {domain = ["i", "t"], element = tensor<40x128xf32>, sym_name = "h"}
// CHECK-DAG: %[[T:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<128x128xf32>, sym_name = "[[NAME:.*]]$transposed"}
// CHECK:     "temporal.define"(%[[H]]) ({
// CHECK:       "temporal.matmul"(%{{.*}}, %{{.*}}) : (tensor<40x128xf32>, tensor<128x128xf32>) -> tensor<40x128xf32>
// The backward product reads the copy at its own iteration.
// CHECK:       %[[R:.*]] = "temporal.read"(%[[T]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<128x128xf32>
// CHECK-NEXT:  "temporal.matmul"(%{{.*}}, %[[R]]) : (tensor<40x128xf32>, tensor<128x128xf32>) -> tensor<40x128xf32>
// CHECK:     "temporal.define"(%[[T]]) ({
// CHECK-NEXT:  %[[W:.*]] = "temporal.read"(%{{.*}}) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<128x128xf32>
// CHECK-NEXT:  %[[P:.*]] = "temporal.permute"(%[[W]]) {permutation = [1, 0]} : (tensor<128x128xf32>) -> tensor<128x128xf32>
// CHECK-NEXT:  gpu.yield %[[P]]

// SCHEDULE:      for i = 0 up to I-1:
// SCHEDULE:        {{.*}}$transposed[i]
// SCHEDULE:        for t = T-1 down to 0:

// STATS: $transposed: point (65536 bytes)
// EXACT-NOT: transposed

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<128x128xf32>} : () -> !temporal.rtensor
%v0 = "temporal.input"() {sym_name = "v0", domain = [], element = tensor<128xf32>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<8x128xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<40x8xf32>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<40xf32>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<128x128xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["i"], element = tensor<128xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["i", "t"], element = tensor<40x128xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["i", "t"], element = tensor<f32>} : () -> !temporal.rtensor
%L = "temporal.tensor"() {sym_name = "L", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor
// W[0] = 0.1 W0, W[i] = W[i-1] - 0.001 stop_gradient(gW[i-1]); v alike
// (the update's branch holds everywhere: branches are tried in order).
"temporal.define"(%W) ({
  %w = "temporal.read"(%W0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<128x128xf32>
  %c = "temporal.constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %s = "temporal.mul"(%w, %c) : (tensor<128x128xf32>, tensor<f32>) -> tensor<128x128xf32>
  "gpu.yield"(%s) : (tensor<128x128xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%W) ({
  %w = "temporal.read"(%W) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<128x128xf32>
  %g = "temporal.read"(%gW) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<128x128xf32>
  %sg = "temporal.stop_gradient"(%g) : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %lr = "temporal.constant"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %step = "temporal.mul"(%sg, %lr) : (tensor<128x128xf32>, tensor<f32>) -> tensor<128x128xf32>
  %n = "temporal.sub"(%w, %step) : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  "gpu.yield"(%n) : (tensor<128x128xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %w = "temporal.read"(%v0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<128xf32>
  "gpu.yield"(%w) : (tensor<128xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %w = "temporal.read"(%v) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<128xf32>
  %g = "temporal.read"(%gv) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<128xf32>
  %sg = "temporal.stop_gradient"(%g) : (tensor<128xf32>) -> tensor<128xf32>
  %lr = "temporal.constant"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %step = "temporal.mul"(%sg, %lr) : (tensor<128xf32>, tensor<f32>) -> tensor<128xf32>
  %n = "temporal.sub"(%w, %step) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  "gpu.yield"(%n) : (tensor<128xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// h[i, t] = tanh(h[i, t-1] W[i] + x[t] U)
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<8x128xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<40x8xf32>
  %ux = "temporal.matmul"(%xt, %u) : (tensor<40x8xf32>, tensor<8x128xf32>) -> tensor<40x128xf32>
  %h0 = "temporal.tanh"(%ux) : (tensor<40x128xf32>) -> tensor<40x128xf32>
  "gpu.yield"(%h0) : (tensor<40x128xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<128x128xf32>
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<8x128xf32>
  %prev = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<40x128xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<40x8xf32>
  %wh = "temporal.matmul"(%prev, %w) : (tensor<40x128xf32>, tensor<128x128xf32>) -> tensor<40x128xf32>
  %ux = "temporal.matmul"(%xt, %u) : (tensor<40x8xf32>, tensor<8x128xf32>) -> tensor<40x128xf32>
  %pre = "temporal.add"(%wh, %ux) : (tensor<40x128xf32>, tensor<40x128xf32>) -> tensor<40x128xf32>
  %next = "temporal.tanh"(%pre) : (tensor<40x128xf32>) -> tensor<40x128xf32>
  "gpu.yield"(%next) : (tensor<40x128xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
// loss[i, t] = sum((h[i, t] v[i] - y[t])^2)
"temporal.define"(%loss) ({
  %vi = "temporal.read"(%v) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<128xf32>
  %ht = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<40x128xf32>
  %yt = "temporal.read"(%y) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<40xf32>
  %p = "temporal.matmul"(%ht, %vi) : (tensor<40x128xf32>, tensor<128xf32>) -> tensor<40xf32>
  %d = "temporal.sub"(%p, %yt) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
  %sq = "temporal.mul"(%d, %d) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
  %s = "temporal.reduce_sum"(%sq) {axis = 0 : i64} : (tensor<40xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%L) ({
  %l = "temporal.read_range"(%loss) {lower = [affine_map<(i)[I, T] -> (i)>, affine_map<(i)[I, T] -> (0)>], upper = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> (T)>], caps = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf32>
  %s = "temporal.reduce_mean"(%l) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gv = "temporal.grad"(%loss, %v) {sym_name = "gv"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%L) : (!temporal.rtensor) -> ()
