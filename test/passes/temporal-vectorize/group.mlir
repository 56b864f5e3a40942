// temporal-vectorize{bounds=T=6} on a recurrence with time-parallel work
// around it (the group mode): h[t] = tanh(h[t-1] W + x[t] U) is recurrent
// along t, so t stays a loop for h, but the output layer y[t] = h[t] V and
// the loss at every step are on no cycle: they are computed for all six
// steps at once, y as one product of 6 * 2 rows by V (y[t] keeps its
// domain as an output and takes its row of y_batched). With the gradient
// of W, the backward loop reads h back, so h is stored whole anyway and
// batching its readers adds no store that grows with T; the cotangents of
// y (the product by V's transpose, and the cheap ones it reads) are
// batched too, after the forward loop. The loss, elementwise, stays in the
// loop reading its row of y_batched. The input
// product x[t] U is split out of h by temporal-split-recurrences
// (test/passes/temporal-split-recurrences) and batched the same way.
// Results are bit for bit those of the loops at levels 0 to 2; at -O3
// W's gradient is one product over the steps' rows after the backward
// loop (temporal-split-products{inexact}: another order of the sum, so
// within rounding).
// RUN: tempo-opt %s --temporal-autodiff --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-recurrences=bounds=T=6" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=6" | FileCheck %s
// RUN: tempo-run %s --bound T=6 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 2 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound T=6 --seed 2 -O 3 --disable-pass temporal-simplify --format json > %t.o3.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.o3.json 1e-5
// RUN: tempo-run %s --bound T=6 --seed 2 --disable-pass temporal-vectorize | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 2 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 2 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 2 | diff - %t.one
// The same without the gradient (Inputs/inference.mlir) keeps no point of
// h past the next step (a ring of two): batching y would store all of h,
// so t stays a loop for every tensor.
// RUN: tempo-opt %S/Inputs/inference.mlir "--temporal-split-recurrences=bounds=T=6" "--temporal-vectorize=bounds=T=6" --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=INFERENCE
// INFERENCE:      for t = 0 up to T-1:
// INFERENCE-NEXT:   h[t]  store: ring<2>
// INFERENCE-NEXT:   y[t]  store: output
// Whole dimensions only (groups=false, the GPU target's setting): t stays a loop.
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=6 groups=false" | FileCheck %s --check-prefix=WHOLE

// BEFORE:      for t = 0 up to T-1:
// BEFORE-NEXT:   h[t]
// BEFORE-NEXT:   y[t]
// BEFORE-NEXT:   loss[t]

// AFTER:      h$split0[]  store: full
// AFTER-NEXT: for t = 0 up to T-1:
// AFTER-NEXT:   h[t]  store: full
// AFTER-NEXT: y_batched[]  store: full
// AFTER-NEXT: gW$c$loss$0$0[]  store: full
// AFTER-NEXT: gW$d$y[]  store: full
// AFTER-NEXT: gW$c$y$0$1[]  store: full
// AFTER-NEXT: for t = T-1 down to 0:

// CHECK-DAG: {domain = [], element = tensor<6x2x4xf32>, sym_name = "y_batched"}
// CHECK-DAG: {domain = ["t"], element = tensor<2x4xf32>, sym_name = "y"}
// CHECK-DAG: {domain = ["t"], element = tensor<2x3xf32>, sym_name = "h"}
// CHECK-DAG: "temporal.dynamic_slice"
// CHECK: "temporal.reshape"({{.*}}) : (tensor<6x2x3xf32>) -> tensor<12x3xf32>
// CHECK-NEXT: "temporal.matmul"({{.*}}) : (tensor<12x3xf32>, tensor<3x4xf32>) -> tensor<12x4xf32>

// WHOLE-NOT: _batched

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<3x3xf32>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<5x3xf32>} : () -> !temporal.rtensor
%V = "temporal.input"() {sym_name = "V", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x5xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x5xf32>
  %xu = "temporal.matmul"(%xt, %u) : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %h0 = "temporal.tanh"(%xu) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%h0) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x3xf32>
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x5xf32>
  %hw = "temporal.matmul"(%prev, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %xu = "temporal.matmul"(%xt, %u) : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %pre = "temporal.add"(%hw, %xu) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %next = "temporal.tanh"(%pre) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%next) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %v = "temporal.read"(%V) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %o = "temporal.matmul"(%ht, %v) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%o) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %sq = "temporal.mul"(%yt, %yt) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2xf32>
  %s = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gW = "temporal.grad"(%loss, %W) {sym_name = "gW"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%gW) : (!temporal.rtensor) -> ()
