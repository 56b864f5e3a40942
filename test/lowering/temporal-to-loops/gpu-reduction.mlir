// For the GPU, a reduction over a range that grows with a dimension (the
// softmax's maximum and sum over the prefix of causal attention: one
// result, a long axis; the product of the weights and the values, summing
// the prefix: four results) runs in two stages of parallel loops: a thread per
// chunk of 128 elements reduces its chunk in order into a buffer of
// partial results (allocated once for the longest range), then a thread per
// result combines the chunks in order. A window's reductions (length capped
// by a static width, here 3) are a thread per result, in order. ptxas accepts the kernels.
// RUN: tempo-opt %examples/causal_attention.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: tempo-opt %examples/windowed_attention.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s --check-prefix=WINDOW
// RUN: rm -rf %t && tempo-run %examples/causal_attention.mlir --target cuda --emit-ptx %t
// RUN: %ptxas -arch=sm_90 %t/tempo_main_kernel.ptx -o %t/k.cubin

// CHECK: func.func @tempo_main(%[[T:[a-z0-9_]+]]: index
// CHECK: %[[CHUNK:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[MOST:.*]] = arith.ceildivui %[[T]], %[[CHUNK]] : index
// CHECK-NEXT: %[[PARTIAL:.*]] = memref.alloc(%[[MOST]]) : memref<?xf32>
// CHECK: linalg.matvec
// The maximum: a thread per chunk, the chunk in order from -inf.
// CHECK: %[[LOWEST:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %[[N:[0-9]+]], %{{.*}} : index
// CHECK: scf.parallel (%[[C:.*]]) = (%{{.*}}) to (%[[CHUNKS]]) step
// CHECK: %[[LO:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK: %[[HI:.*]] = arith.minui %{{.*}}, %[[N]] : index
// CHECK: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %{{.*}} iter_args(%{{.*}} = %[[LOWEST]]) -> (f32)
// CHECK: arith.maximumf
// CHECK: memref.store %{{.*}}, %[[PARTIAL]][%[[C]]] : memref<?xf32>
// Then one thread combines the chunks in order.
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[CHUNKS]] step %{{.*}} iter_args(%{{.*}} = %[[LOWEST]]) -> (f32)
// CHECK: memref.load %[[PARTIAL]][%[[K]]] : memref<?xf32>
// CHECK: arith.maximumf
// The sum, the same way from 0.
// CHECK: math.exp
// CHECK: scf.parallel
// CHECK: arith.addf
// CHECK: scf.parallel
// CHECK: arith.addf
// The weighted sum of the values (weights[0:t+1] times values[0:t+1, 4]):
// a thread per chunk and column (the chunk outer: consecutive threads
// read consecutive columns), the products added in order, then a thread
// per column over the chunks.
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %c4{{.*}}) step
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c4{{.*}}) step

// WINDOW-NOT: arith.ceildivui
// WINDOW: scf.for {{.*}} iter_args
