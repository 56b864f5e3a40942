// gpu-flatten-parallel-loops: an outermost 2-d scf.parallel (1 x 768, the
// shape of a decode step's rows) becomes a 1-d loop over 768 points, each
// index recovered row-major as (k / stride) % extent; a loop with a lower
// bound other than 0 is left alone. Mapped to the GPU, the flat loop is
// tiled by 256 threads per block.
// RUN: tempo-opt %s --gpu-flatten-parallel-loops | FileCheck %s
// RUN: tempo-opt %s -p 'gpu-flatten-parallel-loops, func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true}, gpu-map-parallel-loops, convert-parallel-loops-to-gpu)' | FileCheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @f
// CHECK: %[[S0:.*]] = arith.muli %{{.*}}, %[[N1:.*]] : index
// CHECK: %[[TOTAL:.*]] = arith.muli %[[S0]], %[[N0:.*]] : index
// CHECK: scf.parallel (%[[K:.*]]) = (%{{.*}}) to (%[[TOTAL]]) step (%{{.*}}) {
// CHECK: %[[Q0:.*]] = arith.divui %[[K]], %[[S0]] : index
// CHECK: %[[I:.*]] = arith.remui %[[Q0]], %[[N0]] : index
// CHECK: %[[Q1:.*]] = arith.divui %[[K]], %{{.*}} : index
// CHECK: %[[J:.*]] = arith.remui %[[Q1]], %[[N1]] : index
// CHECK: memref.load %arg0[%[[I]], %[[J]]]
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) = (%c1, %c0) to
// GPU: arith.constant 256 : index
// GPU: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads
// GPU: gpu.launch blocks

func.func @f(%a: memref<1x768xf32>, %b: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c768 = arith.constant 768 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c1, %c768) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<1x768xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i, %j] : memref<1x768xf32>
  }
  scf.parallel (%i, %j) = (%c1, %c0) to (%c4, %c4) step (%c1, %c1) {
    %z = memref.load %b[%i, %j] : memref<4x4xf32>
    memref.store %z, %b[%j, %i] : memref<4x4xf32>
  }
  return
}

// The pass takes no options; malformed input gets the parser's located
// diagnostic.
// RUN: not tempo-opt %s --gpu-flatten-parallel-loops=tile=3 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: unknown option 'tile' for pass 'gpu-flatten-parallel-loops' (known: none)
// RUN: not tempo-opt %S/../gpu-place-memory/Inputs/malformed.mlir --gpu-flatten-parallel-loops 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:21: error: expected ')'
