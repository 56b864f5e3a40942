// lower-loops-to-llvm takes loop-level code (the output of lower-temporal-to-loops
// and lower-store-to-memref, checked in below for Fibonacci) to the LLVM dialect.
// RUN: tempo-opt %s --lower-loops-to-llvm | FileCheck %s
// RUN: tempo-opt %s -p "builtin.module(func.func(convert-linalg-to-loops), lower-affine, convert-scf-to-cf, expand-strided-metadata, lower-affine, convert-math-to-libm, convert-to-llvm, reconcile-unrealized-casts)" | FileCheck %s

// CHECK: llvm.mlir.global private constant @__tempo_constant_3
// CHECK: llvm.func @tempo_main(%{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: llvm.call @malloc
// CHECK: llvm.func @_mlir_ciface_tempo_main
// CHECK-NOT: affine.
// CHECK-NOT: memref.
// CHECK-NOT: linalg.

#map = affine_map<(d0) -> (d0 mod 3)>
#map1 = affine_map<(d0) -> ((d0 - 1) mod 3)>
#map2 = affine_map<(d0) -> ((d0 - 2) mod 3)>
#map3 = affine_map<() -> ()>
#set = affine_set<(d0)[s0] : (d0 == 0)>
#set1 = affine_set<(d0)[s0] : (d0 - 1 == 0)>
module {
  memref.global "private" constant @__tempo_constant_3 : memref<i64> = dense<0>
  memref.global "private" constant @__tempo_constant_5 : memref<i64> = dense<1>
  func.func @tempo_main(%arg0: index, %arg1: memref<?xi64>) attributes {llvm.emit_c_interface, tempo.bounds = ["T"], tempo.inputs = [], tempo.outputs = ["y"]} {
    %alloc = memref.alloc() : memref<3xi64>
    affine.for %arg2 = 0 to %arg0 {
      %0 = affine.apply #map(%arg2)
      %subview = memref.subview %alloc[%0] [1] [1] : memref<3xi64> to memref<i64, strided<[], offset: ?>>
      affine.if #set(%arg2)[%arg0] {
        %1 = memref.get_global @__tempo_constant_3 : memref<i64>
        %cast = memref.cast %1 : memref<i64> to memref<i64, strided<[], offset: ?>>
        linalg.copy ins(%cast : memref<i64, strided<[], offset: ?>>) outs(%subview : memref<i64, strided<[], offset: ?>>)
      } else {
        affine.if #set1(%arg2)[%arg0] {
          %1 = memref.get_global @__tempo_constant_5 : memref<i64>
          %cast = memref.cast %1 : memref<i64> to memref<i64, strided<[], offset: ?>>
          linalg.copy ins(%cast : memref<i64, strided<[], offset: ?>>) outs(%subview : memref<i64, strided<[], offset: ?>>)
        } else {
          %1 = affine.apply #map1(%arg2)
          %subview_1 = memref.subview %alloc[%1] [1] [1] : memref<3xi64> to memref<i64, strided<[], offset: ?>>
          %2 = affine.apply #map2(%arg2)
          %subview_2 = memref.subview %alloc[%2] [1] [1] : memref<3xi64> to memref<i64, strided<[], offset: ?>>
          linalg.generic {indexing_maps = [#map3, #map3, #map3], iterator_types = []} ins(%subview_1, %subview_2 : memref<i64, strided<[], offset: ?>>, memref<i64, strided<[], offset: ?>>) outs(%subview : memref<i64, strided<[], offset: ?>>) {
          ^bb0(%in: i64, %in_3: i64, %out: i64):
            %3 = arith.addi %in, %in_3 : i64
            linalg.yield %3 : i64
          }
        }
      }
      %subview_0 = memref.subview %arg1[%arg2] [1] [1] : memref<?xi64> to memref<i64, strided<[], offset: ?>>
      linalg.copy ins(%subview : memref<i64, strided<[], offset: ?>>) outs(%subview_0 : memref<i64, strided<[], offset: ?>>)
    }
    memref.dealloc %alloc : memref<3xi64>
    return
  }
}

