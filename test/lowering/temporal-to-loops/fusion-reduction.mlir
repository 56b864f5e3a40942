// An elementwise chain used once by a sum, maximum or mean is computed
// inside the reduction's loop: sum(x * x) along the rows (RMS norm's
// square sum) and max(exp(x - 1)) are one loop nest each (a loop over the
// rows, in it a loop along the row carrying the accumulator), with no
// temporaries, no fill and each element loaded once. With fusion off
// (fuse=false) each op is its own linalg.generic after a fill. Bit-exact
// with the interpreter either way.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops=fuse=false | FileCheck %s --check-prefix=UNFUSED
// RUN: tempo-opt %s --lower-temporal-to-loops=fuse=false | FileCheck %s --check-prefix=UNFUSED-FILLS
// RUN: tempo-run %s --bound T=4 --seed 5 > %t.compiled
// RUN: tempo-run %s --bound T=4 --seed 5 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 5 --disable-pass fusion > %t.unfused
// RUN: diff %t.unfused %t.interpreted

// CHECK: func.func @tempo_main
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[J]]]
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK-NEXT: scf.yield %[[NEXT]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %{{.*}}[%[[ROW]]]
// CHECK: scf.for
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic

// UNFUSED-COUNT-5: linalg.generic
// UNFUSED-NOT: linalg.generic
// UNFUSED-FILLS-COUNT-2: linalg.fill
// UNFUSED-FILLS-NOT: linalg.fill

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x8xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %sq = "temporal.mul"(%a, %a) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2xf32>
  "gpu.yield"(%s) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %d = "temporal.sub"(%a, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = "temporal.exp"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %m = "temporal.reduce_max"(%e) {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2xf32>
  "gpu.yield"(%m) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
