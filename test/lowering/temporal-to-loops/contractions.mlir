// Contractions and shape changes of examples/corpus/contractions.mlir:
// - a slice at offsets that depend on the point is a subview at offsets
//   computed with affine.apply (h * 2), no copy;
// - an einsum that is no matmul (summed over two labels) is one
//   linalg.generic, result labels parallel and summed ones reductions;
// - an einsum that is a matmul up to a permutation ("ij,kj->ik") contracts
//   a transposed view with the register kernel (here its loop over the
//   columns narrower than a vector: N = 4; no panel loop is emitted);
// - a matmul of rank 4 with broadcast batch dimensions loops over the
//   result's batch and multiplies rank-reduced subviews, a size-1 batch
//   dimension of an operand staying at index 0.
// Compiled results are bit-exact with the interpreter's, floats and integers.
// RUN: tempo-opt %examples/corpus/contractions.mlir --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %examples/corpus/contractions.mlir --bound T=7 --bound H=2 --seed 3 > %t.compiled
// RUN: tempo-run %examples/corpus/contractions.mlir --bound T=7 --bound H=2 --seed 3 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// A slice that would leave its operand is refused before running, both ways.
// (Both y and z have such a slice at h = 2; which is reported first depends
// on the schedule: at -O2 the one-operand einsum over x's prefix becomes a
// recurrence, and z comes first. The program as written, -O0, reports y.)
// RUN: not tempo-run %examples/corpus/contractions.mlir --bound T=2 --bound H=3 --seed 1 -O0 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// RUN: not tempo-run %examples/corpus/contractions.mlir --bound T=2 --bound H=3 --seed 1 2>&1 | FileCheck %s --check-prefix=OUTSIDE-O2
// OUTSIDE-O2: contractions.mlir:{{[0-9]+}}:{{[0-9]+}}: error: at {{[yz]}}[t=0, h=2]: the slice at offsets [{{4|-2}}, 0] of shape [2, 3] is not inside the operand of shape [4, 3]
// RUN: not tempo-run %examples/corpus/contractions.mlir --bound T=2 --bound H=3 --seed 1 --interpret 2>&1 | FileCheck %s --check-prefix=OUTSIDE

// CHECK-DAG: #[[OFFSET:.*]] = affine_map<(d0, d1)[s0, s1] -> (d1 * 2)>
// CHECK: func.func @tempo_main
// CHECK: %[[ROWS:.*]] = affine.apply #[[OFFSET]](%{{.*}}, %{{.*}})
// CHECK: memref.subview %{{.*}}[%[[ROWS]], %{{.*}}] [2, 3] [1, 1] : memref<4x3xf32, strided<[3, 1], offset: ?>> to memref<2x3xf32, strided<[3, 1], offset: ?>>
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
// CHECK: memref.transpose %{{.*}} (d0, d1) -> (d1, d0) : memref<4x3xf32, strided<[3, 1], offset: ?>> to memref<3x4xf32, strided<[1, 3], offset: ?>>
// CHECK-NOT: vector.load
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32)
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.subview %{{.*}}[%[[I]], 0, 0, 0] [1, 1, 3, 4] [1, 1, 1, 1] : memref<2x1x3x4xf32, {{.*}}> to memref<3x4xf32, strided<[4, 1], offset: ?>>
// CHECK: memref.subview %{{.*}}[0, %[[J]], 0, 0] [1, 1, 4, 3] [1, 1, 1, 1] : memref<1x2x4x3xf32, {{.*}}> to memref<4x3xf32, strided<[3, 1], offset: ?>>
// CHECK: memref.subview %{{.*}}[%[[I]], %[[J]], 0, 0] [1, 1, 3, 3] [1, 1, 1, 1] : memref<2x2x3x3xf32, {{.*}}> to memref<3x3xf32, strided<[3, 1], offset: ?>>

// OUTSIDE: contractions.mlir:{{[0-9]+}}:{{[0-9]+}}: error: at y[t=0, h=2]: the slice at offsets [4, 0] of shape [2, 3] is not inside the operand of shape [4, 3]
