// temporal-split-products{inexact} on the backward pass of a recurrent
// cell (h[t] = tanh(E[tokens[t]] Wx + h[t-1] Wh), h[0] without the
// recurrent term): the contribution tensor of h's second branch is on the
// backward recurrence (dz[t] needs h's adjoint at t+1), so nothing of it
// can be computed before the loop, and it is zeros at t = 0 (where the
// first branch applies). Its per-step weight gradients are products whose
// operands are elementwise functions, gathers and products of reads at
// the step or the step before (x[t]^T dz[t], h[t-1]^T dz[t], the one-hot
// of tokens[t] by dz[t] Wx^T): each running sum becomes one product over
// the steps 1 to T-1 after the loop, its operands computed for all those
// steps at once from the adjoint (now kept for every step) and the
// activations. The first branch holds at t = 0 only: its contributions
// are zero at every other step, so each of its weight gradients reads the
// contribution at t = 0 (gWx$a$h$0$...) instead of summing it over every
// step (a running sum adding zeros, a weight's size per step: an LSTM's
// input weight, a megabyte per step at width 256).
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact" --temporal-dce | FileCheck %s --check-prefix=SUMMED
// RUN: tempo-run %s --bound T=6 --seed 4 --interpret --format json > %t.interpreted.json
// RUN: tempo-run %s --bound T=6 --seed 4 --fast-math --format json > %t.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.fast.json 1e-5
// RUN: tempo-run %s --bound T=6 --seed 4 -O 3 --format json > %t.o3.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.o3.json 1e-5
// Under a memory budget (memory-budget, which tempo-run --memory-budget
// sets) the rows the one product reads must fit: 100 bytes keeps every
// per-step product of the second branch (their running sums ring<2>, the
// adjoint a point again), 100000 sums them as without a budget.
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact memory-budget=100" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=BUDGET
// RUN: tempo-opt %s --temporal-autodiff "--temporal-split-products=bounds=T=6 inexact memory-budget=100000" "--temporal-vectorize=bounds=T=6" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound T=6 --seed 4 --fast-math --memory-budget 100 --format json > %t.budget.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.interpreted.json %t.budget.json 1e-5
// Exact without fast math (nothing is summed in another order).
// RUN: tempo-run %s --bound T=6 --seed 4 > %t.exact
// RUN: tempo-run %s --bound T=6 --seed 4 --interpret | diff - %t.exact
// Three steps: one product over steps 1 and 2; two: a single step, kept.
// RUN: tempo-run %s --bound T=3 --seed 4 --interpret --format json > %t.i3.json
// RUN: tempo-run %s --bound T=3 --seed 4 --fast-math --format json > %t.f3.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.i3.json %t.f3.json 1e-5
// RUN: tempo-run %s --bound T=2 --seed 4 --interpret --format json > %t.i2.json
// RUN: tempo-run %s --bound T=2 --seed 4 --fast-math --format json > %t.f2.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.i2.json %t.f2.json 1e-5

// CHECK: for t = T-1 down to 0:
// CHECK: gWx$d$h[t]  store: full
// CHECK-NOT: gWx$s$h
// CHECK: gWx$c$h$0$0[t]  store: point
// CHECK-NOT: gWx$s$h
// CHECK: gWx$a$h$0$0[]  store: full
// CHECK: gWx$a$h$0$3[]  store: full
// CHECK: gWx$a$h$1$3[]  store: full
// CHECK: gWx$a$h$1$6[]  store: full

// BUDGET: for t = T-1 down to 0:
// BUDGET: gWx$d$h[t]  store: point
// BUDGET: gWx$s$h$1$0[t]  store: ring<2>
// BUDGET: gWx$s$h$1$3[t]  store: ring<2>
// BUDGET: gWx$s$h$1$6[t]  store: ring<2>

// The weight gradients of steps 1 to 5 (5 steps of 2 rows): Wx's from the
// gathered rows and dz, Wh's from h[0:5] and dz, E's from the one-hot rows.
// SUMMED-DAG: "temporal.read_range"(%{{.*}}) {caps = [#{{.*}}], lower = [#[[ONE:.*]]], upper = [#{{.*}}]} : (!temporal.rtensor) -> tensor<5x2x4xf32>
// SUMMED-DAG: "temporal.matmul"({{.*}}) : (tensor<3x10xf32>, tensor<10x4xf32>) -> tensor<3x4xf32>
// SUMMED-DAG: "temporal.matmul"({{.*}}) : (tensor<4x10xf32>, tensor<10x4xf32>) -> tensor<4x4xf32>
// SUMMED-DAG: "temporal.matmul"({{.*}}) : (tensor<5x10xf32>, tensor<10x3xf32>) -> tensor<5x3xf32>

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%E = "temporal.input"() {sym_name = "E", domain = [], element = tensor<5x3xf32>} : () -> !temporal.rtensor
%Wx = "temporal.input"() {sym_name = "Wx", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%Wh = "temporal.input"() {sym_name = "Wh", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%tok = "temporal.input"() {sym_name = "tokens", domain = ["t"], element = tensor<2xi64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %e = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %i = "temporal.read"(%tok) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xi64>
  %x = "temporal.gather"(%e, %i) : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %wx = "temporal.read"(%Wx) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %u = "temporal.matmul"(%x, %wx) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %o = "temporal.tanh"(%u) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%o) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %e = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %i = "temporal.read"(%tok) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xi64>
  %x = "temporal.gather"(%e, %i) : (tensor<5x3xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %wx = "temporal.read"(%Wx) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %u = "temporal.matmul"(%x, %wx) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %hp = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %wh = "temporal.read"(%Wh) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
  %r = "temporal.matmul"(%hp, %wh) : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %s = "temporal.add"(%u, %r) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %o = "temporal.tanh"(%s) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%o) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %sq = "temporal.mul"(%ht, %ht) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2xf32>
  %l = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%l) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gx = "temporal.grad"(%loss, %Wx) {sym_name = "gWx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gh = "temporal.grad"(%loss, %Wh) {sym_name = "gWh"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%ge = "temporal.grad"(%loss, %E) {sym_name = "gE"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
"temporal.output"(%gh) : (!temporal.rtensor) -> ()
"temporal.output"(%ge) : (!temporal.rtensor) -> ()
