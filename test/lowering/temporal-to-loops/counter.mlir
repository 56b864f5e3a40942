// lower-temporal-to-loops on the counter: one loop over t, a ring of 2
// points for x (read only at t-1), the branches as an affine.if chain, and
// the output copied point by point.
// RUN: tempo-opt %examples/counter.mlir --lower-temporal-to-loops | FileCheck %s

// CHECK-DAG: #[[SLOT:.*]] = affine_map<(d0) -> (d0 mod 2)>
// CHECK-DAG: #[[PREV:.*]] = affine_map<(d0) -> ((d0 - 1) mod 2)>
// CHECK-DAG: #[[FIRST:.*]] = affine_set<(d0)[s0] : (d0 == 0)>
// CHECK-DAG: #[[REST:.*]] = affine_set<(d0)[s0] : (d0 - 1 >= 0)>
// CHECK: memref.global "private" constant @[[ZERO:.*]] : memref<i64> = dense<0>
// CHECK: func.func @tempo_main(%[[T:.*]]: index, %[[OUT:.*]]: memref<?xi64>) attributes {llvm.emit_c_interface, tempo.bounds = ["T"], tempo.inputs = [], tempo.outputs = ["x"]}
// CHECK:   %[[RING:.*]] = memref.alloc() : memref<2xi64>
// CHECK:   affine.for %[[t:.*]] = 0 to %[[T]] {
// CHECK:     %[[S:.*]] = affine.apply #[[SLOT]](%[[t]])
// CHECK:     %[[DST:.*]] = memref.subview %[[RING]][%[[S]]] [1] [1]
// CHECK:     affine.if #[[FIRST]](%[[t]])[%[[T]]] {
// CHECK:       memref.get_global @[[ZERO]]
// CHECK:       linalg.copy
// CHECK:     } else {
// CHECK:       affine.if #[[REST]](%[[t]])[%[[T]]] {
// CHECK:         affine.apply #[[PREV]](%[[t]])
// CHECK:         linalg.generic
// CHECK:           arith.addi
// CHECK:     %[[O:.*]] = memref.subview %[[OUT]][%[[t]]] [1] [1]
// CHECK:     linalg.copy ins(%[[DST]] : {{.*}}) outs(%[[O]] : {{.*}})
// CHECK:   memref.dealloc %[[RING]] : memref<2xi64>
// CHECK-NOT: temporal.
