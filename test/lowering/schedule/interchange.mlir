// Loop interchange: x[i, t] (domain order i, t) and w[t], the mean of
// x[0:I, t], read each other one step back along t, so t must be the outer
// loop although x lists i first; the scheduler tries the other loop orders
// when the domain order admits none (before, this was refused). Compiled
// results equal the interpreter's, bit for bit.
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound I=3 --bound T=9 --seed 1 > %t.compiled
// RUN: tempo-run %s --bound I=3 --bound T=9 --seed 1 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted

// CHECK: for t = 0 up to T-1:
// CHECK-NEXT: for i = 0 up to I-1:
// CHECK-NEXT: x[i, t]
// CHECK-NEXT: w[t]

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%u = "temporal.input"() {sym_name = "u", domain = ["i"], element = tensor<2xf32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["i", "t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %a = "temporal.read"(%u) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<2xf32>
  "gpu.yield"(%a) : (tensor<2xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
  %m = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
  %s = "temporal.sub"(%p, %m) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %v = "temporal.tanh"(%s) : (tensor<2xf32>) -> tensor<2xf32>
  "gpu.yield"(%v) : (tensor<2xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %all = "temporal.read_range"(%x) {caps = [affine_map<(t)[I, T] -> ()>, affine_map<(t)[I, T] -> ()>], lower = [affine_map<(t)[I, T] -> (0)>, affine_map<(t)[I, T] -> (t)>], upper = [affine_map<(t)[I, T] -> (I)>, affine_map<(t)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2xf32>
  %m = "temporal.reduce_mean"(%all) {axis = 0 : i64} : (tensor<?x2xf32>) -> tensor<2xf32>
  "gpu.yield"(%m) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
