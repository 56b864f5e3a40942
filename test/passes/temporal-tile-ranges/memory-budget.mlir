// With a memory budget, temporal-tile-ranges tiles only the attention whose
// range-long temporaries could exceed it at the bounds given: the causal
// decode's scores, exponentials and weights are three f32 buffers as long
// as the cache, 3 * 4 * T bytes, 12,000 at T = 1000. A budget of 11,999
// bytes tiles it; 12,000 leaves it exact; without the bound of T the range
// is unbounded, so it is tiled. tempo-run's -O2 does this with
// --memory-budget (the run's bounds): tiled, its results are those of -O3's
// tiling (-O3 without temporal-fuse-attention, which would take the chain
// first).
// RUN: tempo-opt %examples/causal_attention.mlir --pass-pipeline='temporal-tile-ranges{memory-budget=11999 bounds=T=1000}' | FileCheck %s --check-prefix=OVER
// RUN: tempo-opt %examples/causal_attention.mlir --pass-pipeline='temporal-tile-ranges{memory-budget=12000 bounds=T=1000}' | FileCheck %s --check-prefix=WITHIN
// RUN: tempo-opt %examples/causal_attention.mlir --pass-pipeline='temporal-tile-ranges{memory-budget=12000}' | FileCheck %s --check-prefix=OVER
// RUN: not tempo-opt %examples/causal_attention.mlir --pass-pipeline='temporal-tile-ranges{memory-budget=lots}' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 0 --memory-budget 0 > %t.budget
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 0 -O3 --disable-pass temporal-simplify --disable-pass temporal-lift-recurrences --disable-pass temporal-fuse-attention > %t.tiled
// RUN: diff %t.budget %t.tiled
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 0 --memory-budget 1000 > %t.within
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 0 > %t.exact
// RUN: diff %t.within %t.exact

// OVER: "temporal.attention"
// OVER-NOT: temporal.reduce_max

// WITHIN-NOT: temporal.attention
// WITHIN: temporal.reduce_max

// BAD: tempo-opt: error: option memory-budget of pass 'temporal-tile-ranges' takes a non-negative integer, got 'lots'
