// temporal-split-products on the backward pass of an MLP over the steps
// of a causal attention (a[t] over k[0:t+1]; y[t] = tanh(a[t] W1) W2).
// The contribution tensor of y's body packs, per step, the cotangent of
// a[t] and the two weight gradients a[t]^T dz[t] and h[t]^T dy[t]:
// products of two values varying along t, which temporal-vectorize does
// not batch (D small products and a store of them all), so the whole
// tensor, the recomputed h[t] = tanh(a[t] W1) and dz[t] = dy[t] W2^T *
// (1 - h^2) included, ran one step at a time. The pass moves everything
// but the per-step products into gW1$c$y$0$0$part (its point packs the
// values the products read, and the cotangent), which temporal-vectorize
// computes for all steps at once; the contribution tensor keeps the
// per-step products, reading its row. Bit for bit the same results.
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6" | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// Without a bound value nothing is split (it could not be batched).
// RUN: tempo-opt %s --temporal-autodiff --temporal-split-products | FileCheck %s --check-prefix=UNKNOWN
// RUN: tempo-run %s --bound T=6 --seed 4 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 4 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 4 --disable-pass temporal-split-products | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 4 --disable-pass temporal-vectorize | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 4 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 4 | diff - %t.one
// With inexact=true (-O3, --fast-math) each weight gradient's running sum
// of per-step products becomes one product over all the steps' rows (the
// sum of a[t]^T dz[t] over t is A^T DZ of 6 * 2 rows), read from the
// batched part; the per-step products leave the packed point and the
// running sums are left to temporal-dce. Results within rounding.
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact" --temporal-dce | FileCheck %s --check-prefix=SUMMED
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SUMMED-SCHEDULE
// RUN: tempo-run %s --bound T=6 --seed 4 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound T=6 --seed 4 --fast-math --format json > %t.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.fast.json 1e-5
// RUN: tempo-run %s --bound T=6 --seed 4 -O 3 --format json > %t.o3.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.o3.json 1e-5
// SUMMED-NOT: $s$y
// SUMMED: "temporal.matmul"({{.*}}) : (tensor<3x12xf32>, tensor<12x5xf32>) -> tensor<3x5xf32>
// SUMMED-SCHEDULE-NOT: ring<2>
// An ill-formed program gets the verifier's located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-split-products=bounds=T=3" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y

// CHECK-DAG: %[[PART:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<{{[0-9]+}}xf32>, sym_name = "gW1$c$y$0$0$part"}
// CHECK-DAG: %[[C:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<{{[0-9]+}}xf32>, sym_name = "gW1$c$y$0$0"}
// CHECK: "temporal.define"(%[[C]]) ({
// CHECK-NEXT: "temporal.read"(%[[PART]])
// CHECK-NOT: "temporal.tanh"
// CHECK: "temporal.matmul"
// CHECK: "temporal.define"(%[[PART]]) ({
// CHECK: "temporal.tanh"

// SCHEDULE:     gW1$c$y$0$0$part[]  store: full
// SCHEDULE:     for t = 0 up to T-1:
// SCHEDULE:       gW1$c$y$0$0[t]

// UNKNOWN-NOT: $part

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%W1 = "temporal.input"() {sym_name = "W1", domain = [], element = tensor<3x5xf32>} : () -> !temporal.rtensor
%W2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<5x3xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%k) ({
  %m = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%p) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %m = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %qt = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %ks = "temporal.read_range"(%k) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %xs = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  %sc = "temporal.einsum"(%qt, %ks) {spec = "bd,nbd->bn"} : (tensor<2x4xf32>, tensor<?x2x4xf32>) -> tensor<2x?xf32>
  %mx = "temporal.reduce_max"(%sc) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %mx1 = "temporal.reshape"(%mx) : (tensor<2xf32>) -> tensor<2x1xf32>
  %d = "temporal.sub"(%sc, %mx1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %z1 = "temporal.reshape"(%z) : (tensor<2xf32>) -> tensor<2x1xf32>
  %p = "temporal.div"(%e, %z1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %o = "temporal.einsum"(%p, %xs) {spec = "bn,nbd->bd"} : (tensor<2x?xf32>, tensor<?x2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%o) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %w1 = "temporal.read"(%W1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x5xf32>
  %w2 = "temporal.read"(%W2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %u = "temporal.matmul"(%at, %w1) : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %h = "temporal.tanh"(%u) : (tensor<2x5xf32>) -> tensor<2x5xf32>
  %o = "temporal.matmul"(%h, %w2) : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%o) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %sq = "temporal.mul"(%yt, %yt) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  %l = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%l) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g1 = "temporal.grad"(%loss, %W1) {sym_name = "gW1"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%g2 = "temporal.grad"(%loss, %W2) {sym_name = "gW2"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gk = "temporal.grad"(%loss, %Wk) {sym_name = "gWk"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%g1) : (!temporal.rtensor) -> ()
"temporal.output"(%g2) : (!temporal.rtensor) -> ()
"temporal.output"(%gk) : (!temporal.rtensor) -> ()
