// Incrementalization of a reduction of an elementwise expression over whole
// ranges: a loss sum(0.5 * (pred[0:T] - target[0:T])^2) read after the loop
// becomes the last point of one running recurrence of the expression,
// P[t] = P[t-1] + 0.5 * (pred[t] - target[t])^2, so neither pred nor target
// needs a store of all T points (pred still does here: the reduction
// below reads its whole range). The running maximum of 2 * pred[0:t+1]
// becomes a recurrence of the expression too. The same values added in the
// same order: bit-exact, at T = 300 and T = 0. A constant with more
// dimensions than a point would broadcast differently against one point
// than against the range: that reduction stays.
// RUN: tempo-opt %s --temporal-lift-recurrences | FileCheck %s
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=300 --seed 5 > %t.lifted
// RUN: tempo-run %s --bound T=300 --seed 5 -O0 > %t.original
// RUN: diff %t.lifted %t.original
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=0 --seed 5 > %t.lifted0
// RUN: tempo-run %s --bound T=0 --seed 5 -O0 > %t.original0
// RUN: diff %t.lifted0 %t.original0
// RUN: tempo-run %s --bound T=300 --seed 5 -O0 --stats --format none 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-run %s --bound T=300 --seed 5 --stats --format none 2>&1 | FileCheck %s --check-prefix=AFTER

// CHECK: %[[PRED:[0-9]+]] = "temporal.tensor"() {{.*}}sym_name = "pred"
// CHECK: %[[TARGET:[0-9]+]] = "temporal.tensor"() {{.*}}sym_name = "target"
// CHECK-DAG: sym_name = "pred_mapped_prefix_sum"
// CHECK-DAG: sym_name = "pred_mapped_prefix_max"
// The too-large constant's reduction keeps its range read.
// CHECK: "temporal.read_range"
// CHECK-NEXT: "temporal.constant"() {value = dense<3.000000e+00> : tensor<1x16xf32>}
// CHECK-NEXT: "temporal.mul"
// CHECK-NEXT: "temporal.reduce_sum"
// The recurrence of the loss: the points of both sources, the expression,
// the previous point plus it.
// CHECK: "temporal.read"(%[[PRED]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<16xf32>
// CHECK-NEXT: "temporal.read"(%[[TARGET]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<16xf32>
// CHECK-NEXT: "temporal.sub"
// CHECK-NEXT: "temporal.mul"
// CHECK: "temporal.mul"
// CHECK-NEXT: "temporal.add"
// BEFORE: target: full ({{[0-9]+}} bytes)
// AFTER-NOT: target: full
// AFTER: peak

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %pred = "temporal.tensor"() {sym_name = "pred", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %target = "temporal.tensor"() {sym_name = "target", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %loss = "temporal.tensor"() {sym_name = "loss", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
  %running = "temporal.tensor"() {sym_name = "running", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %wide = "temporal.tensor"() {sym_name = "wide", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
  "temporal.define"(%pred) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
    %r = "temporal.tanh"(%v) : (tensor<16xf32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%target) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
    %h = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %r = "temporal.mul"(%v, %h) : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%loss) ({
    %p = "temporal.read_range"(%pred) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %g = "temporal.read_range"(%target) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %d = "temporal.sub"(%p, %g) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %s = "temporal.mul"(%d, %d) : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %h = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %e = "temporal.mul"(%s, %h) : (tensor<?x16xf32>, tensor<f32>) -> tensor<?x16xf32>
    %r = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?x16xf32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%running) ({
    %p = "temporal.read_range"(%pred) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %two = "temporal.constant"() {value = dense<2.0> : tensor<16xf32>} : () -> tensor<16xf32>
    %e = "temporal.mul"(%p, %two) : (tensor<?x16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %r = "temporal.reduce_max"(%e) {axis = 0 : i64} : (tensor<?x16xf32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%wide) ({
    %p = "temporal.read_range"(%pred) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %row = "temporal.constant"() {value = dense<3.0> : tensor<1x16xf32>} : () -> tensor<1x16xf32>
    %e = "temporal.mul"(%p, %row) : (tensor<?x16xf32>, tensor<1x16xf32>) -> tensor<?x16xf32>
    %r = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?x16xf32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%loss) : (!temporal.rtensor) -> ()
  "temporal.output"(%running) : (!temporal.rtensor) -> ()
  "temporal.output"(%wide) : (!temporal.rtensor) -> ()
}
