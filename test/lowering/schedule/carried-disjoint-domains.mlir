// Parameters over (i, e) and a rollout over (i, t) on one cycle (PPO's
// epochs as a dimension: w[i, e] is epoch e's update of iteration i, the
// rollout x[i, t] reads the last epoch's parameters, the first epoch of the
// next iteration reads the rollout's last step). No order of loops nests
// both domains, but the cycle is carried by i: inside the i loop the epochs
// and the rollout are two nests (before, this was refused with "tensors on
// one cycle must have nested domains"). Compiled equals interpreted.
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-run %s --bound I=4 --bound E=3 --bound T=5 --seed 1 > %t.compiled
// RUN: tempo-run %s --bound I=4 --bound E=3 --bound T=5 --seed 1 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted

// CHECK: for i = 0 up to I-1:
// CHECK-NEXT: for e = 0 up to E-1:
// CHECK-NEXT: w[i, e]
// CHECK-NEXT: for t = 0 up to T-1:
// CHECK-NEXT: x[i, t]  store: ring<2> along i per t

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "e", bound = "E"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i", "e"], element = tensor<f32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["i", "t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.read"(%w) {index = affine_map<(i, t)[I, E, T] -> (i, E - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(i, t)[I, E, T] : (-t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(i, t)[I, E, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %h = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %q = "temporal.mul"(%p, %h) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(i, t)[I, E, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(i, e)[I, E, T] : (-i == 0, -e == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(i, e)[I, E, T] -> (i - 1, E - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %r = "temporal.read"(%x) {index = affine_map<(i, e)[I, E, T] -> (i - 1, T - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.add"(%p, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(i, e)[I, E, T] : (i - 1 >= 0, -e == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(i, e)[I, E, T] -> (i, e - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %h = "temporal.constant"() {value = dense<1.5> : tensor<f32>} : () -> tensor<f32>
  %q = "temporal.mul"(%p, %h) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(i, e)[I, E, T] : (e - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
