// temporal.attention (made by temporal-tile-ranges) lowers to a loop over
// blocks of the attended range carrying the running maximum and sum; the
// last block is masked by its length (min(block, N - start)); the scores
// of a block live in a static buffer allocated once, outside the time loop.
// RUN: tempo-opt %S/../../passes/temporal-tile-ranges/attention.mlir --temporal-tile-ranges=block=2 | tempo-opt - --temporal-schedule --lower-temporal-to-loops | FileCheck %s

// CHECK: func.func
// CHECK-DAG: %[[SCORES:.*]] = memref.alloc() : memref<2xf32>
// CHECK-DAG: %[[ACC:.*]] = memref.alloc() : memref<2xf32>
// CHECK: %[[BLOCKS:.*]] = arith.ceildivui %{{.*}}, %{{.*}} : index
// CHECK: %{{.*}}:2 = scf.for %[[B:.*]] = %{{.*}} to %[[BLOCKS]] step %{{.*}} iter_args(%[[M:.*]] = %{{.*}}, %[[L:.*]] = %{{.*}}) -> (f32, f32)
// CHECK: %[[LEN:.*]] = arith.minui
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK: memref.store %{{.*}}, %[[SCORES]]
// CHECK: %[[NEW:.*]] = arith.maximumf %[[M]]
// CHECK: math.exp
// CHECK: arith.mulf %[[L]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK: memref.load %[[SCORES]]
// CHECK: math.exp
// CHECK: scf.yield %[[NEW]]
// CHECK: arith.divf

// For the GPU, over the prefix (a length that grows with t), the range is
// split into chunks of 128 positions (64 blocks of 2): a thread per row
// (the two queries) and chunk, each with its own block of scores and
// accumulator (allocas in the loop body), no vector ops, the scale read in
// the kernel, not by host code, running the blocks of its chunk and storing
// its maximum, sum and accumulator; then a thread per row combines the
// chunks rescaled to the row's maximum.
// RUN: tempo-opt %S/../../passes/temporal-tile-ranges/attention.mlir --temporal-tile-ranges=block=2 | tempo-opt - --temporal-schedule --lower-temporal-to-loops=gpu=true | FileCheck %s --check-prefix=GPU
// GPU-DAG: %[[MAXIMA:.*]] = memref.alloc(%{{.*}}) : memref<2x?xf32>
// GPU-DAG: %[[ACCS:.*]] = memref.alloc(%{{.*}}) : memref<2x?x2xf32>
// GPU: %[[PER_CHUNK:.*]] = arith.constant 64 : index
// GPU-NEXT: %[[CHUNKS:.*]] = arith.ceildivui %{{.*}}, %[[PER_CHUNK]] : index
// GPU: scf.parallel (%[[ROW:.*]], %[[CHUNK:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %[[CHUNKS]]) step (%{{.*}}, %{{.*}}) {
// GPU-NEXT: memref.load
// GPU-NEXT: memref.alloca() : memref<2xf32>
// GPU-NEXT: memref.alloca() : memref<2xf32>
// GPU-NOT: vector.
// GPU: arith.muli %[[CHUNK]], %[[PER_CHUNK]] : index
// GPU: scf.for
// GPU: memref.store %{{.*}}#0, %[[MAXIMA]][%{{.*}}, %[[CHUNK]]]
// GPU: memref.store %{{.*}}, %[[ACCS]][%{{.*}}, %[[CHUNK]], %{{.*}}]
// GPU: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// GPU: scf.for %{{.*}} = %{{.*}} to %[[CHUNKS]] step
// GPU: arith.maximumf
// GPU: math.exp
// GPU: arith.divf

// With CPU threads (parallel=true), rows are one scf.parallel loop too
// where a block's work across them pays for a parallel region (here 8 rows
// of 64 wide keys and values, blocks of 32), each row working in its slice
// of buffers with a leading row dimension (allocated once), keeping the
// vector code. Two rows of 2 stay on one thread.
// RUN: tempo-opt %S/Inputs/attention-wide.mlir --temporal-tile-ranges=block=32 | tempo-opt - --temporal-schedule --lower-temporal-to-loops=parallel=true | FileCheck %s --check-prefix=THREADS
// RUN: tempo-opt %S/../../passes/temporal-tile-ranges/attention.mlir --temporal-tile-ranges=block=2 | tempo-opt - --temporal-schedule --lower-temporal-to-loops=parallel=true | FileCheck %s --check-prefix=SMALL
// THREADS-DAG: %[[SCORES:.*]] = memref.alloc() : memref<8x32xf32>
// THREADS-DAG: memref.alloc() : memref<8x64xf32>
// THREADS: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// THREADS: memref.subview %[[SCORES]][%{{.*}}, 0] [1, 32] [1, 1] : memref<8x32xf32> to memref<32xf32, strided<[1], offset: ?>>
// THREADS: memref.subview %{{.*}}[%{{.*}}, 0] [1, 64] [1, 1] : memref<8x64xf32> to memref<64xf32, strided<[1], offset: ?>>
// THREADS: vector.reduction <add>
// SMALL-NOT: scf.parallel
