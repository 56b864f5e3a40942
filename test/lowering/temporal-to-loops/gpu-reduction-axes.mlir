// For the GPU, a reduction is a parallel loop over its results, each
// folding the reduced axis in order in a register, whatever the axis's
// position (a leading axis: a batch's rows, as a bias gradient sums; a
// middle axis): a thread per result once mapped, not a host loop over the
// axis launching a kernel per element, nor a load and a store of the
// running value per element (linalg's loops, on the CPU). A static axis of at least 512 elements with few results is
// split in chunks of 128 (two stages, as growing ranges are), and so is a
// window at least 512 wide (the softmax of a batch's heads over a window of
// 512: partial results for min(512, T) / 128 chunks). After the mapping,
// the only host loop is the one over t.
// RUN: tempo-opt %examples/corpus/column_sums.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: tempo-opt %examples/corpus/column_sums.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}, lower-loops-to-gpu' | FileCheck %s --check-prefix=HOST
// RUN: tempo-opt %examples/corpus/column_sums.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops' | FileCheck %s --check-prefix=CPU
// RUN: %example_bin/gpt --layers 1 --heads 2 --width 8 --batch 3 --window 512 --mlir > %t.mlir
// RUN: tempo-opt %t.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s --check-prefix=WINDOW

// The 520 rows: partial sums for 5 chunks, allocated once.
// CHECK: %[[N:.*]] = arith.constant 520 : index
// CHECK-NEXT: %[[CHUNK:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[MOST:.*]] = arith.ceildivui %[[N]], %[[CHUNK]] : index
// CHECK-NEXT: %[[PARTIAL:.*]] = memref.alloc(%[[MOST]]) : memref<?x3xf32>
// CHECK: scf.parallel (%[[C:.*]], %[[J:.*]]) = {{.*}} to (%{{.*}}, %c3{{.*}})
// CHECK: scf.for %[[I:.*]] = {{.*}} iter_args
// CHECK: memref.load %{{.*}}[%[[I]], %[[J]]] : memref<520x3xf32
// CHECK: memref.store %{{.*}}, %[[PARTIAL]][%[[C]], %[[J]]]
// CHECK: scf.parallel (%{{.*}}) = {{.*}} to (%c3{{.*}})
// The sum of the 6 rows: a thread per column, the rows in order.
// CHECK: scf.parallel (%[[COL:.*]]) = {{.*}} to (%c4{{.*}})
// CHECK-NEXT: %[[SUM:.*]] = scf.for %[[ROW:.*]] = %{{.*}} to %c6{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %cst{{.*}}) -> (f32)
// CHECK-NEXT: %[[X:.*]] = memref.load %{{.*}}[%[[ROW]], %[[COL]]] : memref<6x4xf32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[NEXT]]
// CHECK: memref.store %[[SUM]], %{{.*}}[%[[COL]]]
// The mean of squares down the columns: the square per element, then the
// division by 6.
// CHECK: scf.parallel (%[[COL:.*]]) = {{.*}} to (%c4{{.*}})
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.divf
// The maximum along the middle axis: a thread per (i, k), j in order.
// CHECK: scf.parallel (%[[I:.*]], %[[K:.*]]) = {{.*}} to (%c2{{.*}}, %c3{{.*}})
// CHECK-NEXT: scf.for %[[J:.*]] = %{{.*}} to %c5
// CHECK-NEXT: memref.load %{{.*}}[%[[I]], %[[J]], %[[K]]] : memref<2x5x3xf32
// CHECK-NEXT: arith.maximumf

// HOST: func.func @tempo_main(
// HOST: scf.for
// HOST-NOT: scf.for
// HOST: gpu.module

// On the CPU the rows stay the outer loop (the columns vectorize).
// CPU: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "parallel"]} ins(%{{.*}} : memref<6x4xf32
// CPU-NOT: arith.ceildivui

// WINDOW: %[[WIDTH:.*]] = arith.constant 512 : index
// WINDOW-NEXT: %[[CAP:.*]] = arith.minsi %[[WIDTH]], %arg0 : index
// WINDOW: %[[CHUNKS:.*]] = arith.ceildivui %[[CAP]], %c128 : index
// WINDOW-NEXT: memref.alloc(%[[CHUNKS]]) : memref<?x6x1xf32>
