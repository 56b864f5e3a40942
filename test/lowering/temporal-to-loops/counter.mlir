// lower-temporal-to-loops on the counter: one loop over t, the branches as
// an affine.if chain, each point computed straight into the output buffer.
// RUN: tempo-opt %examples/counter.mlir --lower-temporal-to-loops | FileCheck %s
// An internal tensor read only at t-1 lives in a ring of 2 points, whatever T is.
// RUN: tempo-opt %S/Inputs/internal-ring.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=RING

// CHECK-DAG: #[[PREV:.*]] = affine_map<(d0)[s0] -> (d0 - 1)>
// CHECK-DAG: #[[FIRST:.*]] = affine_set<(d0)[s0] : (d0 == 0)>
// CHECK-DAG: #[[REST:.*]] = affine_set<(d0)[s0] : (d0 - 1 >= 0)>
// CHECK: memref.global "private" constant @[[ZERO:.*]] : memref<i64> = dense<0>
// CHECK: func.func @tempo_main(%[[T:.*]]: index, %[[OUT:.*]]: memref<?xi64>) attributes {llvm.emit_c_interface, tempo.bounds = ["T"], tempo.inputs = [], tempo.outputs = ["x"]}
// CHECK-NOT: memref.alloc
// CHECK:   affine.for %[[t:.*]] = 0 to %[[T]] {
// CHECK:     %[[DST:.*]] = memref.subview %[[OUT]][%[[t]]] [1] [1]
// CHECK:     affine.if #[[FIRST]](%[[t]])[%[[T]]] {
// CHECK:       memref.get_global @[[ZERO]]
// CHECK:       linalg.copy
// CHECK:     } else {
// CHECK:       affine.if #[[REST]](%[[t]])[%[[T]]] {
// CHECK:         %[[P:.*]] = affine.apply #[[PREV]](%[[t]])[%[[T]]]
// CHECK:         %[[LO:.*]] = arith.maxsi %[[P]], %{{.*}} : index
// CHECK:         %[[C:.*]] = arith.minsi %[[LO]], %{{.*}} : index
// CHECK:         memref.subview %[[OUT]][%[[C]]] [1] [1]
// CHECK:         linalg.generic
// CHECK:           arith.addi
// CHECK-NOT: temporal.

// RING: func.func @tempo_main(%{{.*}}: index, %[[OUT:.*]]: memref<?xi64>)
// RING:   %[[RING:.*]] = "store.alloc"() {extent = 2 : i64, kind = "ring"} : () -> memref<2xi64>
// RING:   affine.for %[[t:.*]] = 0 to
// RING:     "store.write"(%[[RING]], %[[t]]) : (memref<2xi64>, index) -> memref<i64, strided<[], offset: ?>>
// RING:     "store.read"(%[[RING]], %{{.*}}) : (memref<2xi64>, index) -> memref<i64, strided<[], offset: ?>>
// RING:     "store.seal"(%[[RING]], %[[t]])
// RING:     memref.subview %[[OUT]][%[[t]]]
// RING:   "store.free"(%[[RING]]) : (memref<2xi64>) -> ()
