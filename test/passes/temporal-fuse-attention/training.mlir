// temporal-fuse-attention on a training step: after temporal-autodiff, a
// GPT-style block's causal attention (Inputs/gpt-step.mlir, from
// `bench_train gpt --layers 1 --heads 2 --width 8 --batch 2 --vocab 5`:
// 4 groups of heads and batch rows, one query row each, 4 dimensions per
// head) is three fused ops: the forward (its output, maximum and sum), the
// queries' half of the backward pass (the forward again, D = dO . O and
// dQ, and the statistics the keys' half reads) and the keys' half (dK
// and dV from the query rows that see each key). Vectorized at the
// run's bound, the per-step loop is gone: each is one op over the whole
// sequence with the causal band ":1" (for the keys' half, the query rows
// t >= n read key n: the same band seen from the queries).
// RUN: tempo-opt %S/Inputs/gpt-step.mlir --temporal-autodiff --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-opt %S/Inputs/gpt-step.mlir "--pass-pipeline=builtin.module(temporal-autodiff, temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-split-recurrences{bounds=T=6}, temporal-split-products{bounds=T=6 inexact=true}, temporal-fuse-attention, temporal-vectorize{bounds=T=6}, temporal-simplify, temporal-dedup, temporal-dce)" > %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: tempo-opt %t.mlir --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// The same gradients and updates within float rounding (fast math: the
// runtime's kernels, blocked and with a running maximum):
// RUN: tempo-run %S/Inputs/gpt-step.mlir --bound T=6 --seed 4 --interpret --format json > %t.json
// RUN: tempo-run %S/Inputs/gpt-step.mlir --bound T=6 --seed 4 --fast-math --format json > %t.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.json %t.fast.json 1e-5
// RUN: tempo-run %t.mlir --bound T=6 --seed 4 -O0 --format json > %t.fused.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.json %t.fused.json 1e-5
// RUN: tempo-run %t.mlir --bound T=6 --seed 4 --interpret --format json > %t.fused-interpreted.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.json %t.fused-interpreted.json 1e-5
// Attention over a growing cache whose values are a recurrence (f64; the
// queries' half stays in the loop, one query row per step, band ":"):
// RUN: tempo-opt %S/../temporal-autodiff/ranges.mlir --temporal-autodiff --temporal-fuse-attention | FileCheck %s --check-prefix=RANGES
// RUN: tempo-run %S/../temporal-autodiff/ranges.mlir --bound T=6 --seed 3 --interpret --format json > %t.ranges.json
// RUN: tempo-run %S/../temporal-autodiff/ranges.mlir --bound T=6 --seed 3 --fast-math --format json > %t.ranges.fast.json
// RUN: %python %S/../temporal-autodiff/Inputs/close.py %t.ranges.json %t.ranges.fast.json 1e-13

// BEFORE: for t = 0 up to T-1:
// BEFORE:   r0[t]
// BEFORE: for t = T-1 down to 0:

// CHECK-NOT: temporal.reduce_max"({{.*}}x?x
// CHECK: "temporal.flash_attention"({{.*}}) {band = ":1"} : (tensor<6x4x1x4xf32>, tensor<6x4x4xf32>, tensor<6x4x4xf32>, tensor<f32>) -> tensor<6x4x1x6xf32>
// CHECK: "temporal.flash_attention_key_grad"({{.*}}) {band = ":1"} : (tensor<6x4x1x4xf32>, tensor<6x4x1x4xf32>, tensor<6x4x1xf32>, tensor<6x4x1xf32>, tensor<6x4x1xf32>, tensor<6x4x4xf32>, tensor<6x4x4xf32>, tensor<f32>) -> tensor<6x4x8xf32>
// CHECK: "temporal.flash_attention_query_grad"({{.*}}) {band = ":1"} : (tensor<6x4x1x4xf32>, tensor<6x4x4xf32>, tensor<6x4x4xf32>, tensor<6x4x1x4xf32>, tensor<f32>) -> tensor<6x4x1x11xf32>

// AFTER-NOT: for t = T-1 down to 0:
// AFTER: r0[]
// AFTER: g_E$c$r0$0$0[]
// AFTER: g_E$a$r0$0$5$0[]

// RANGES: "temporal.flash_attention"({{.*}}) {band = ":"} : (tensor<1x1x1x4xf64>, tensor<?x1x4xf64>, tensor<?x1x4xf64>, tensor<f64>) -> tensor<1x1x1x6xf64>
// RANGES: "temporal.flash_attention_query_grad"({{.*}}) {band = ":"}
// RANGES: "temporal.flash_attention_key_grad"({{.*}}) {band = ":"}
