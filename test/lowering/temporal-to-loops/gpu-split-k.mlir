// For the GPU, a product of few rows (3 x 200, 1 x 96, a 200-vector) by a
// weight with K of at least two slices of 32 sums K in slices, in two
// stages of parallel loops: a thread per slice, row and column folds its
// slice in order into partial sums allocated once at entry (7 slices for
// K = 200, the last one of 8), then a thread per element folds the slices
// in order. ptxas accepts the kernels (cuda-ptx.mlir compiles the corpus).
// RUN: tempo-opt %examples/corpus/few_row_products.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s

// CHECK: %[[P:.*]] = memref.alloc() : memref<7x3x70xf32>
// CHECK: memref.alloc() : memref<7x1x70xf32>
// CHECK: memref.alloc() : memref<3x3x130xf32>
// CHECK: memref.alloc() : memref<3x1x40xf32>
// CHECK: scf.parallel (%[[S:.*]], %[[M:.*]], %[[N:.*]]) = ({{.*}}) to (%c7, %c3, %c70)
// CHECK: %[[LO:.*]] = arith.muli %[[S]], %c32
// CHECK: %[[END:.*]] = arith.addi %[[LO]], %c32
// CHECK: %[[HI:.*]] = arith.minui %[[END]], %c200
// CHECK: scf.for %[[K:[a-z0-9_]+]] = %[[LO]] to %[[HI]]
// CHECK: memref.load %{{.*}}[%[[M]], %[[K]]]
// CHECK: memref.load %{{.*}}[%[[K]], %[[N]]]
// CHECK: memref.store %{{.*}}, %[[P]][%[[S]], %[[M]], %[[N]]]
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = ({{.*}}) to (%c3, %c70)
// CHECK: scf.for %[[T:[a-z0-9_]+]] = %{{.*}} to %c7
// CHECK: memref.load %[[P]][%[[T]], %[[I]], %[[J]]]
// CHECK: memref.store
// The vector times the weight: its loads index the vector by k alone.
// CHECK: to (%c7, %c1{{.*}}, %c70)
// CHECK: scf.for %[[K2:[a-z0-9_]+]] =
// CHECK: memref.load %{{.*}}[%[[K2]]] : memref<200xf32
