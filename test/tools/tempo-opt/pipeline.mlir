// Pipelines mix Rust and upstream passes, with nested op anchors and
// options, as --pass-pipeline text or as individual --PASS flags.
// RUN: tempo-opt %examples/counter.mlir -p 'builtin.module(temporal-verify, lower-temporal-to-loops, func.func(canonicalize{max-iterations=3}, cse), lower-affine)' | FileCheck %s
// RUN: tempo-opt %examples/counter.mlir --temporal-verify --lower-temporal-to-loops '--canonicalize=max-iterations=3' --lower-affine | FileCheck %s
// RUN: tempo-opt %examples/counter.mlir -p 'temporal-to-llvm' | FileCheck %s --check-prefix=LLVM
// RUN: tempo-opt --list-passes | FileCheck %s --check-prefix=LIST
// RUN: cat %examples/counter.mlir | tempo-opt - --temporal-verify | FileCheck %s --check-prefix=STDIN

// CHECK: func.func @tempo_main
// CHECK: scf.for
// CHECK-NOT: affine.for
// CHECK-NOT: temporal.

// LLVM: llvm.func @tempo_main
// LLVM-NOT: temporal.

// LIST: temporal-verify Check declarations
// LIST: temporal-simplify Exact algebraic simplification
// LIST-NEXT: inexact=<bool, default false>: Also apply rules
// LIST: lower-temporal-to-loops Lower a temporal program
// LIST: memory-budget=<unsigned>: bytes:
// LIST-NEXT: bounds=<NAME=VALUE,...>:
// LIST-NEXT: fuse=<bool, default true>:
// LIST: lower-loops-to-llvm
// LIST: temporal-to-llvm

// STDIN: "temporal.tensor"
