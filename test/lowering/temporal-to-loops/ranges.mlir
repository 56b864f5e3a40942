// Range reads become clamped store.read_range ops (or subviews of inputs); reductions
// are linalg.generic ops with a reduction iterator; a scalar operand is
// broadcast through its indexing map.
// RUN: tempo-opt %examples/causal_attention.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=CAUSAL
// RUN: tempo-opt %examples/windowed_attention.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=WINDOW
// RUN: tempo-opt %examples/suffix_sum.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=SUFFIX

// CAUSAL: func.func @tempo_main(%[[T:.*]]: index,
// CAUSAL: memref.alloc(%[[T]]) : memref<?xf32>
// The keys live in a store of growing blocks: o reads them as a growing
// prefix. k, v and o share one loop: the prefix k[0:t+1] only reaches back,
// and k[t] is written (and sealed) before o[t] reads it.
// CAUSAL: %[[K:.*]] = "store.alloc"(%[[T]]) {extent = 256 : i64, kind = "blocks"} : (index) -> memref<?x4xf32>
// CAUSAL: affine.for %[[t:.*]] = 0 to %[[T]] {
// CAUSAL-NOT: affine.for
// CAUSAL:   %[[KT:.*]] = "store.write"(%[[K]], %[[t]])
// CAUSAL:   linalg.matvec {{.*}} outs(%[[KT]]
// CAUSAL:   "store.seal"(%[[K]], %[[t]])
// CAUSAL:   %[[HI:.*]] = affine.apply #{{.*}}(%[[t]])[%[[T]]]
// CAUSAL:   %[[LEN:.*]] = arith.subi %{{.*}}, %[[LO:.*]] : index
// CAUSAL:   "store.read_range"(%[[K]], %[[LO]], %[[LEN]]) {ranged = [true]} : (memref<?x4xf32>, index, index) -> memref<?x4xf32, strided<[4, 1], offset: ?>>
// CAUSAL:   linalg.matvec
// The softmax over the scores of the range is one nest (fused rows: here
// one row): the maximum, the exponentials (stored: two ops use them), their
// sum and the weights, each a loop along the range.
// CAUSAL:   scf.for
// CAUSAL:     %[[MAX:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CAUSAL:       arith.maximumf
// CAUSAL:     scf.for %{{.*}} = %{{.*}} to %[[LEN]] step
// CAUSAL:       arith.subf %{{.*}}, %[[MAX]] : f32
// CAUSAL:       math.exp
// CAUSAL:       memref.store
// CAUSAL:     %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CAUSAL:       arith.addf
// CAUSAL:     scf.for %{{.*}} = %{{.*}} to %[[LEN]] step
// CAUSAL:       arith.divf %{{.*}}, %[[SUM]] : f32
// The weighted sum of the values is the register-tiled contraction, here
// its scalar loop alone (4 columns, narrower than a vector), summing the
// range in order.
// CAUSAL:   scf.for
// CAUSAL:     scf.for
// CAUSAL:       scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args({{.*}}) -> (f32)
// CAUSAL:         arith.mulf
// CAUSAL:         arith.addf
// Temporaries of dynamic size are allocated once, sized by the bound, and
// viewed at each step's sizes: no allocation in the loop.
// CAUSAL-NOT: memref.alloc
// CAUSAL: }
// CAUSAL: "store.free"(%[[K]])

// WINDOW-DAG: #[[WIN:.*]] = affine_map<(d0)[s0] -> (0, d0 - 2)>
// WINDOW: affine.max #[[WIN]]

// SUFFIX: func.func @tempo_main(%[[T:[a-z0-9]*]]: index, %[[R:[a-z0-9]*]]: memref<?xf64>
// SUFFIX: memref.subview %[[R]][%{{.*}}] [%{{.*}}] [1] : memref<?xf64> to memref<?xf64, strided<[1], offset: ?>>
// SUFFIX: arith.addf
