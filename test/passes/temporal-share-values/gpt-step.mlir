// temporal-share-values on a GPT-style training step vectorized over its
// steps (Inputs/gpt-step-64.mlir: `bench_train gpt --layers 1 --heads 2 --width 64 --batch 16 --vocab 5`): the forward
// pass's body of r0 computes the queries a0 Wq0 for every step and the
// backward pass's reader sweep computes them again; u0's body computes
// the MLP's hidden pre-activation rms(r0) W10 and the backward pass's
// contribution computes it again. Each is computed once, in a tensor of
// its own ($shared) both read: two products fewer per layer. Exact: the
// same ops on the same operands, bit for bit with the interpreter.
// RUN: tempo-opt %S/Inputs/gpt-step-64.mlir "--pass-pipeline=builtin.module(temporal-autodiff, temporal-dce, temporal-dedup, temporal-split-recurrences{bounds=T=32}, temporal-split-products{bounds=T=32}, temporal-vectorize{bounds=T=32 inexact=true}, temporal-simplify, temporal-dedup)" > %t.before.mlir
// RUN: tempo-opt %t.before.mlir --temporal-share-values --temporal-dce > %t.after.mlir
// RUN: FileCheck %s < %t.after.mlir
// RUN: grep -c '"temporal.matmul"' %t.before.mlir | FileCheck %s --check-prefix=BEFORE
// RUN: grep -c '"temporal.matmul"' %t.after.mlir | FileCheck %s --check-prefix=AFTER
// RUN: tempo-run %S/Inputs/gpt-step-64.mlir --bound T=32 --seed 4 --interpret > %t.interpreted
// RUN: tempo-run %S/Inputs/gpt-step-64.mlir --bound T=32 --seed 4 | diff - %t.interpreted
// RUN: tempo-run %S/Inputs/gpt-step-64.mlir --bound T=32 --seed 4 --disable-pass temporal-share-values | diff - %t.interpreted
// Small products (per-step values, fewer than 2^21 multiply-adds) stay:
// RUN: tempo-opt %S/Inputs/gpt-step-64.mlir --temporal-autodiff --temporal-share-values | FileCheck %s --check-prefix=SMALL

// CHECK-DAG: sym_name = "r0$shared"
// CHECK-DAG: sym_name = "u0$shared"
// BEFORE: 25
// AFTER: 23
// SMALL-NOT: $shared
// An ill-formed program gets the verifier's located diagnostic:
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-share-values 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
