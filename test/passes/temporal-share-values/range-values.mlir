// temporal-share-values on an LSTM training step whose weight gradients
// are products over every step (Inputs/lstm-step-64.mlir: `bench_train
// lstm --batch 16 --width 64 --vocab 5`; `temporal-split-products` with
// `inexact`, as -O3 and --fast-math run it): the gradients of the input
// weight, the embedding and the recurrent weight each computed the
// pre-activation cotangents of steps 1 to T - 1 from the stored gates and
// their cotangents (dy * y (1 - y) per sigmoid gate, dy (1 - y^2) for the
// tanh one: 8 of the 30 subtractions before). One tensor over the same
// ranges, under the readers' one condition, now computes them
// ($shared); the three products read it. Exact: with the pass and without
// it, the same bits.
// RUN: tempo-opt %S/Inputs/lstm-step-64.mlir "--pass-pipeline=builtin.module(temporal-autodiff, temporal-dce, temporal-dedup, temporal-drop-pinned-dims, temporal-split-recurrences{bounds=T=20}, temporal-split-products{bounds=T=20 inexact}, temporal-vectorize{bounds=T=20}, temporal-simplify, temporal-dedup)" > %t.before.mlir
// RUN: tempo-opt %t.before.mlir --temporal-share-values --temporal-dce > %t.after.mlir
// RUN: FileCheck %s < %t.after.mlir
// RUN: grep -c '"temporal.sub"' %t.before.mlir | FileCheck %s --check-prefix=BEFORE
// RUN: grep -c '"temporal.sub"' %t.after.mlir | FileCheck %s --check-prefix=AFTER
// RUN: tempo-run %S/Inputs/lstm-step-64.mlir --bound T=20 --seed 4 -O 3 > %t.shared
// RUN: tempo-run %S/Inputs/lstm-step-64.mlir --bound T=20 --seed 4 -O 3 --disable-pass temporal-share-values | diff - %t.shared
// Values under 256 KiB stay computed where they are read (T = 8: 7 steps
// of 16 KiB):
// RUN: tempo-opt %S/Inputs/lstm-step-64.mlir "--pass-pipeline=builtin.module(temporal-autodiff, temporal-dce, temporal-split-recurrences{bounds=T=8}, temporal-split-products{bounds=T=8 inexact}, temporal-vectorize{bounds=T=8}, temporal-simplify, temporal-dedup, temporal-share-values)" | FileCheck %s --check-prefix=SMALL

// CHECK: %[[S:.*]] = "temporal.tensor"() {domain = [], element = tensor<19x16x256xf32>, sym_name = "g_E$a$gates$1$0$shared"}
// Three readers, under the same condition:
// CHECK-COUNT-3: "temporal.read"(%[[S]])
// CHECK-NOT: "temporal.read"(%[[S]])
// CHECK: "temporal.define"(%[[S]]) ({
// CHECK-NEXT: "temporal.read_range"
// CHECK: "temporal.concat"({{.*}}) -> tensor<19x16x256xf32>
// CHECK-NEXT: gpu.yield
// BEFORE: 30
// AFTER: 22
// SMALL-NOT: $shared
