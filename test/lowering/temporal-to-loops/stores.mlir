// Stores follow the schedule: outputs are computed in their output buffers
// (Fibonacci reads y[t-2] straight from there), inputs are read in place,
// domain-less weights are whole memrefs multiplied with linalg.matvec.
// RUN: tempo-opt %examples/fibonacci.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=FIB
// RUN: tempo-opt %examples/running_sum.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=SUM
// RUN: tempo-opt %examples/rnn.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=RNN
// A batched running sum keeps s in a ring along t (b dropped): two points,
// indexed by t alone, read at t-1 in the t loop and at T-1 by total[b] after it.
// RUN: tempo-opt %S/Inputs/batched-sum.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=BATCH
// Stores of several dimensions run along t with a slice per layer: the
// slots sit at the along dimension's place in the domain order (`along`),
// and a range along t is one view of a layer's slots.
// RUN: tempo-opt %examples/corpus/layered_stores.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=LAYERED

// LAYERED: %[[K:.*]] = "store.alloc"(%[[L:.*]]) {along = 1 : i64, extent = 3 : i64, kind = "window"} : (index) -> memref<?x6x4xf32>
// LAYERED: %[[V:.*]] = "store.alloc"(%{{.*}}, %[[L]]) {extent = 256 : i64, kind = "blocks"} : (index, index) -> memref<?x?x4xf32>
// LAYERED: %[[R:.*]] = "store.alloc"(%[[L]]) {along = 1 : i64, extent = 2 : i64, kind = "ring"} : (index) -> memref<?x2x4xf32>
// LAYERED: "store.read_range"(%[[K]], %{{.*}}, %{{.*}}, %{{.*}}) {ranged = [false, true]} : (memref<?x6x4xf32>, index, index, index) -> memref<?x4xf32, strided<[4, 1], offset: ?>>
// LAYERED: "store.read_range"(%[[V]], %{{.*}}, %{{.*}}, %{{.*}}) {ranged = [true, false]} : (memref<?x?x4xf32>, index, index, index) -> memref<?x4xf32, strided<[?, 1], offset: ?>>

// BATCH: %[[S:.*]] = "store.alloc"() {extent = 2 : i64, kind = "ring"} : () -> memref<2xf64>
// BATCH: affine.for %[[b:.*]] = 0 to
// BATCH:   affine.for %[[t:.*]] = 0 to
// BATCH:     "store.write"(%[[S]], %[[t]]) : (memref<2xf64>, index)
// BATCH:     "store.read"(%[[S]], %{{.*}}) : (memref<2xf64>, index)
// BATCH:     "store.seal"(%[[S]], %[[t]])
// BATCH:   }
// BATCH:   "store.read"(%[[S]], %{{.*}}) : (memref<2xf64>, index)
// BATCH: }
// BATCH: "store.free"(%[[S]])

// FIB-DAG: affine_map<(d0)[s0] -> (d0 - 2)>
// FIB: func.func @tempo_main(%{{.*}}: index, %[[Y:.*]]: memref<?xi64>)
// FIB-NOT: memref.alloc
// FIB: memref.subview %[[Y]]

// SUM: func.func @tempo_main(%{{.*}}: index, %[[X:.*]]: memref<?x3xf32>, %{{.*}}: memref<?x3xf32>)
// SUM: memref.subview %[[X]][{{.*}}, 0] [1, 3] [1, 1] : memref<?x3xf32> to memref<3xf32, strided<[1], offset: ?>>
// SUM: arith.addf

// RNN: func.func @tempo_main(%{{.*}}: index, %[[W:.*]]: memref<4x4xf32>, %[[U:.*]]: memref<4x3xf32>, %{{.*}}: memref<?x3xf32>, %{{.*}}: memref<?x4xf32>)
// RNN-SAME: tempo.inputs = ["W", "U", "x"], tempo.outputs = ["h"]
// RNN: memref.cast %[[U]] : memref<4x3xf32> to memref<4x3xf32, strided<[3, 1], offset: ?>>
// RNN: linalg.fill
// RNN: linalg.matvec
// RNN: math.tanh
