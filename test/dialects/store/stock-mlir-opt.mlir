// The store dialect's IRDL (emitted with the temporal dialect's) lets stock
// mlir-opt read, verify and re-print memory-level IR, and reject an op
// without its required attributes.
// RUN: tempo-opt --emit-irdl > %t.irdl.mlir
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | FileCheck %s
// RUN: not mlir-opt --irdl-file=%t.irdl.mlir %S/Inputs/missing-kind.mlir 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: missing-kind.mlir:2:{{[0-9]+}}: error: 'store.alloc' op attribute "kind" is expected but not provided

// CHECK-LABEL: func.func @stores
// CHECK: %[[S:.*]] = "store.alloc"() {extent = 2 : i64, kind = "ring"} : () -> memref<2x4xf32>
// CHECK: "store.write"(%[[S]], %{{.*}})
// CHECK: "store.seal"(%[[S]], %{{.*}})
// CHECK: "store.read"(%[[S]], %{{.*}})
// CHECK: "store.read_range"(%[[S]], %{{.*}}) {ranged = [false]}
// CHECK: "store.free"(%[[S]])
func.func @stores(%t: index) {
  %s = "store.alloc"() {kind = "ring", extent = 2 : i64} : () -> memref<2x4xf32>
  %w = "store.write"(%s, %t) : (memref<2x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  "store.seal"(%s, %t) : (memref<2x4xf32>, index) -> ()
  %r = "store.read"(%s, %t) : (memref<2x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  %p = "store.read_range"(%s, %t) {ranged = [false]} : (memref<2x4xf32>, index) -> memref<4xf32, strided<[1], offset: ?>>
  "store.free"(%s) : (memref<2x4xf32>) -> ()
  return
}
