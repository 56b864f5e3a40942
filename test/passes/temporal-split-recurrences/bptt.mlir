// temporal-split-recurrences on back-propagation through time in a
// training run (../../lowering/schedule/training-bptt.mlir: h[i, t] =
// tanh(W[i] h[i, t-1] + U x[t]), the loss v[i] . h[i, t], W and v trained
// over i). U x[t] does not depend on the recurrence: it moves into a
// tensor of its own, h$split0[i, t], which h reads in both its branches
// (t = 0 and the recurrent one). The adjoint's contribution tensor copies
// h's body and gets its own split (merged with h's by temporal-dedup).
// temporal-vectorize then computes the split for all T steps at once,
// before the loop over t (one product per iteration i). Results are bit
// for bit those of the loops.
// RUN: tempo-opt %S/../../lowering/schedule/training-bptt.mlir --temporal-autodiff "--temporal-split-recurrences=bounds=I=40,T=8" | FileCheck %s
// RUN: tempo-opt %S/../../lowering/schedule/training-bptt.mlir --temporal-autodiff "--temporal-split-recurrences=bounds=I=40,T=8" "--temporal-vectorize=bounds=I=40,T=8" --temporal-dedup --temporal-dce --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// Without a bound value nothing is split (it could not be batched).
// RUN: tempo-opt %S/../../lowering/schedule/training-bptt.mlir --temporal-autodiff --temporal-split-recurrences | FileCheck %s --check-prefix=UNKNOWN
// RUN: tempo-run %S/../../lowering/schedule/training-bptt.mlir --bound I=5 --bound T=8 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %S/../../lowering/schedule/training-bptt.mlir --bound I=5 --bound T=8 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %S/../../lowering/schedule/training-bptt.mlir --bound I=5 --bound T=8 --seed 1 --disable-pass temporal-split-recurrences | diff - %t.interpreted
// RUN: tempo-run %S/../../lowering/schedule/training-bptt.mlir --bound I=5 --bound T=8 --seed 1 --disable-pass temporal-vectorize | diff - %t.interpreted
// An ill-formed program gets the verifier's located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-split-recurrences=bounds=T=3" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// RUN: not tempo-opt %S/../../lowering/schedule/training-bptt.mlir "--temporal-split-recurrences=bounds=T" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: option bounds of pass 'temporal-split-recurrences' takes NAME=VALUE pairs separated by commas (T=10,B=3), got 'T'

// CHECK: %[[H:.*]] = "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf64>, sym_name = "h"}
// CHECK: %[[SPLIT:.*]] = "temporal.tensor"() {domain = ["i", "t"], element = tensor<4xf64>, sym_name = "h$split0"}
// CHECK: "temporal.define"(%[[H]]) ({
// CHECK-NEXT: "temporal.read"(%[[SPLIT]])
// CHECK-NEXT: "temporal.tanh"
// CHECK: "temporal.define"(%[[H]]) ({
// CHECK: "temporal.matmul"
// CHECK: "temporal.read"(%[[SPLIT]])
// CHECK-NEXT: "temporal.add"
// CHECK: "temporal.define"(%[[SPLIT]]) ({
// CHECK-NEXT: "temporal.read"
// CHECK-NEXT: "temporal.read"
// CHECK-NEXT: "temporal.matmul"({{.*}}) : (tensor<4x3xf64>, tensor<3xf64>) -> tensor<4xf64>
// CHECK-NEXT: gpu.yield

// SCHEDULE:      for i = 0 up to I-1:
// SCHEDULE:        h$split0[i]  store: point
// SCHEDULE-NEXT:   for t = 0 up to T-1:
// SCHEDULE-NEXT:     h[i, t]

// UNKNOWN-NOT: split
