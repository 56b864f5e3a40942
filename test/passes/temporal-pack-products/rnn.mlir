// temporal-pack-products on a recurrence trained over iterations i: h[i, t]
// = tanh(h[i, t-1] W[i] + x[t] U), two rows by a 128 x 128 weight at every
// step, W and v trained from their gradients. The weight changes with i
// only, so it is packed in panels of 16 columns once per iteration
// (h$packed[i], outside the loop over t), and the product becomes an
// einsum with the packed panels; the backward pass's product by W's
// transpose (dh[t] W[i]^T) gets its own packed tensor. Products that do
// not qualify stay matmuls: x[t] U (a 1,024-element weight, under 16K),
// the loss's h v (a vector). The pass is exact (each element sums the
// same terms in the same order); with fast math the lowering calls the
// runtime's packed kernel (fused multiply-adds: within rounding of the
// interpreter).
// RUN: tempo-opt %s --temporal-autodiff --temporal-pack-products | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff --temporal-pack-products --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --format json > %t.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.fast.json 1e-5
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --threads 2 --format json > %t.threads.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.threads.json 1e-5
// The -O2 pipeline packs with fast math only (the exact lowering has no
// packed kernel); the pass can be left out.
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --stats --format none 2>&1 | FileCheck %s --check-prefix=EXACT
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --fast-math --disable-pass temporal-pack-products --stats --format none 2>&1 | FileCheck %s --check-prefix=EXACT
// An ill-formed program gets the verifier's located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-pack-products 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// Exact pipeline and interpreter: bit for bit.
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=3 --bound T=5 --seed 2 | diff - %t.interpreted

// CHECK-DAG: %[[H:.*]] = "temporal.tensor"() {domain = ["i", "t"], element = tensor<2x128xf32>, sym_name = "h"}
// CHECK-DAG: %[[P:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<8x128x16xf32>, sym_name = "h$packed"}
// CHECK-DAG: "temporal.tensor"() {domain = ["i"], element = tensor<8x128x16xf32>, sym_name = "{{.*}}$packed"}
// CHECK: "temporal.define"(%[[H]]) ({
// CHECK:   %[[R:.*]] = "temporal.read"(%[[P]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<8x128x16xf32>
// CHECK:   %[[E:.*]] = "temporal.einsum"(%{{.*}}, %[[R]]) {spec = "mk,jkr->mjr"} : (tensor<2x128xf32>, tensor<8x128x16xf32>) -> tensor<2x8x16xf32>
// CHECK:   "temporal.reshape"(%[[E]]) : (tensor<2x8x16xf32>) -> tensor<2x128xf32>
// CHECK: "temporal.define"(%[[P]]) ({
// CHECK-NEXT: %[[W:.*]] = "temporal.read"(%{{.*}}) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<128x128xf32>
// CHECK-NEXT: %[[S:.*]] = "temporal.reshape"(%[[W]]) : (tensor<128x128xf32>) -> tensor<128x8x16xf32>
// CHECK-NEXT: "temporal.permute"(%[[S]]) {permutation = [1, 0, 2]} : (tensor<128x8x16xf32>) -> tensor<8x128x16xf32>

// SCHEDULE:      for i = 0 up to I-1:
// SCHEDULE:        h$packed[i]
// SCHEDULE:        for t = 0 up to T-1:
// SCHEDULE-NEXT:     h[i, t]

// STATS: h$packed: point (65536 bytes)
// EXACT-NOT: packed

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W0 = "temporal.input"() {sym_name = "W0", domain = [], element = tensor<128x128xf32>} : () -> !temporal.rtensor
%v0 = "temporal.input"() {sym_name = "v0", domain = [], element = tensor<128xf32>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<8x128xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x8xf32>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%W = "temporal.tensor"() {sym_name = "W", domain = ["i"], element = tensor<128x128xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["i"], element = tensor<128xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["i", "t"], element = tensor<2x128xf32>} : () -> !temporal.rtensor
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
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %ux = "temporal.matmul"(%xt, %u) : (tensor<2x8xf32>, tensor<8x128xf32>) -> tensor<2x128xf32>
  %h0 = "temporal.tanh"(%ux) : (tensor<2x128xf32>) -> tensor<2x128xf32>
  "gpu.yield"(%h0) : (tensor<2x128xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<128x128xf32>
  %u = "temporal.read"(%U) {index = affine_map<(i, t)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<8x128xf32>
  %prev = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<2x128xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %wh = "temporal.matmul"(%prev, %w) : (tensor<2x128xf32>, tensor<128x128xf32>) -> tensor<2x128xf32>
  %ux = "temporal.matmul"(%xt, %u) : (tensor<2x8xf32>, tensor<8x128xf32>) -> tensor<2x128xf32>
  %pre = "temporal.add"(%wh, %ux) : (tensor<2x128xf32>, tensor<2x128xf32>) -> tensor<2x128xf32>
  %next = "temporal.tanh"(%pre) : (tensor<2x128xf32>) -> tensor<2x128xf32>
  "gpu.yield"(%next) : (tensor<2x128xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
// loss[i, t] = sum((h[i, t] v[i] - y[t])^2)
"temporal.define"(%loss) ({
  %vi = "temporal.read"(%v) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<128xf32>
  %ht = "temporal.read"(%h) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<2x128xf32>
  %yt = "temporal.read"(%y) {index = affine_map<(i, t)[I, T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
  %p = "temporal.matmul"(%ht, %vi) : (tensor<2x128xf32>, tensor<128xf32>) -> tensor<2xf32>
  %d = "temporal.sub"(%p, %yt) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %sq = "temporal.mul"(%d, %d) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %s = "temporal.reduce_sum"(%sq) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
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
