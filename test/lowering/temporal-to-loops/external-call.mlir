// An external call copies its arguments into buffers allocated once, passes
// their addresses to the runtime's trampoline with the call-site number, and
// copies the result into the point being computed.
// RUN: tempo-opt %S/../../tools/tempo-run/Inputs/external.mlir --lower-temporal-to-loops | FileCheck %s

// CHECK: func.func private @tempo_external_call(i64, i64, i64)
// CHECK: %[[TABLE:.*]] = memref.alloc() : memref<2xi64>
// CHECK: %[[ARG0:.*]] = memref.alloc() : memref<2xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[ARG0]]
// CHECK: memref.store %{{.*}}, %[[TABLE]][%{{.*}}] : memref<2xi64>
// CHECK: %[[ARG1:.*]] = memref.alloc() : memref<f32>
// CHECK: affine.for
// CHECK: linalg.generic
// CHECK: %[[SITE:.*]] = arith.constant 0 : i64
// CHECK: func.call @tempo_external_call(%[[SITE]], %{{.*}}, %{{.*}}) : (i64, i64, i64) -> ()
// CHECK: linalg.generic
// CHECK: memref.dealloc %[[TABLE]]
