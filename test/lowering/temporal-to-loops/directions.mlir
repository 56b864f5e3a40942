// Loop directions come from the reads: returns read G[t+1], so the loop
// runs from T-1 down to 0; the running maximum over (b, t) nests t inside b,
// and last[b] = m[b, T-1] runs in the same b loop, after the t loop.
// RUN: tempo-opt %examples/returns.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=BACK
// RUN: tempo-opt %examples/batched_max.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=NEST

// BACK-DAG: #[[REV:.*]] = affine_map<(d0)[s0] -> (-d0 + s0 - 1)>
// BACK: affine.for %[[STEP:.*]] = 0 to %[[T:[a-z0-9]+]] {
// BACK:   %[[t:.*]] = affine.apply #[[REV]](%[[STEP]])[%[[T]]]

// NEST: func.func @tempo_main(%[[B:.*]]: index, %[[T:.*]]: index, %{{.*}}: memref<?x?xf32>, %[[M:.*]]: memref<?x?xf32>, %[[LAST:.*]]: memref<?xf32>)
// NEST: affine.for %[[b:.*]] = 0 to %[[B]] {
// NEST:   affine.for %[[t:.*]] = 0 to %[[T]] {
// NEST:     memref.subview %[[M]][%[[b]], %[[t]]] [1, 1] [1, 1]
// NEST:   }
// NEST:   memref.subview %[[LAST]][%[[b]]] [1] [1]
