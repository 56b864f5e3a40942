// outline-loop-nests: each outermost scf loop nest of 4 ops or more moves
// into a private noinline function called in its place: values from
// outside become arguments (here the bound, the memref and the loop index
// of the temporal affine.for around it, in the order of their first use), constants are copied in, the
// nest's results are the function's. Smaller nests and the temporal
// affine.for stay. A second nest identical to the first (the same kernel
// at another site) calls the first one's function; its own is erased.
// Lowered to LLVM, the function keeps `noinline`.
// RUN: tempo-opt %s --split-input-file --outline-loop-nests | FileCheck %s
// RUN: tempo-opt %s --split-input-file -p 'outline-loop-nests, lower-affine, convert-scf-to-cf, convert-to-llvm, reconcile-unrealized-casts' | mlir-translate --split-input-file --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @tempo_main(
// CHECK: affine.for %[[T:.*]] = 0 to %{{.*}} {
// CHECK-NEXT: %[[S:.*]] = func.call @tempo_main_nest0(%arg1, %arg0, %[[T]]) : (index, memref<?xf32>, index) -> f32
// CHECK-NEXT: memref.store %[[S]], %arg2[%[[T]]]
// CHECK-NEXT: %[[S2:.*]] = func.call @tempo_main_nest0(%arg1, %arg0, %[[T]]) : (index, memref<?xf32>, index) -> f32
// CHECK-NEXT: memref.store %[[S2]], %arg3[%[[T]]]
// The small nest stays.
// CHECK-NEXT: scf.for
// CHECK: func.func private @tempo_main_nest0(%[[N:.*]]: index, %[[X:.*]]: memref<?xf32>, %[[I:.*]]: index) -> f32 attributes {passthrough = ["noinline"]}
// CHECK-DAG: arith.constant 0 : index
// CHECK-DAG: arith.constant 1 : index
// CHECK-DAG: arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(
// CHECK: return %[[R]] : f32
// CHECK-NOT: func.func private @tempo_main_nest1
// A declaration and a function whose only nest is small stay as they are.
// CHECK-LABEL: func.func private @declared
// CHECK-LABEL: func.func @small
// CHECK: scf.for
// CHECK-NOT: func.call

// LLVM: define float @tempo_main_nest0(i64 %{{.*}}, ptr %{{.*}}, {{.*}}) #[[A:[0-9]+]]
// LLVM: attributes #[[A]] = { noinline }

module {
  func.func @tempo_main(%x: memref<?xf32>, %n: index, %out: memref<?xf32>, %out2: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    affine.for %t = 0 to %n {
      %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %x[%i] : memref<?xf32>
        %ti = arith.index_cast %t : index to i64
        %tf = arith.sitofp %ti : i64 to f32
        %w = arith.mulf %v, %tf : f32
        %u = arith.addf %w, %v : f32
        %q = arith.mulf %u, %u : f32
        %r = arith.subf %q, %w : f32
        %p = arith.maximumf %r, %zero : f32
        %o = arith.minimumf %p, %v : f32
        %next = arith.addf %acc, %o : f32
        scf.yield %next : f32
      }
      memref.store %s, %out[%t] : memref<?xf32>
      %s2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
        %v = memref.load %x[%i] : memref<?xf32>
        %ti = arith.index_cast %t : index to i64
        %tf = arith.sitofp %ti : i64 to f32
        %w = arith.mulf %v, %tf : f32
        %u = arith.addf %w, %v : f32
        %q = arith.mulf %u, %u : f32
        %r = arith.subf %q, %w : f32
        %p = arith.maximumf %r, %zero : f32
        %o = arith.minimumf %p, %v : f32
        %next = arith.addf %acc, %o : f32
        scf.yield %next : f32
      }
      memref.store %s2, %out2[%t] : memref<?xf32>
      scf.for %i = %c0 to %c1 step %c1 {
        memref.store %zero, %x[%i] : memref<?xf32>
      }
    }
    return
  }
}

// -----

module {
  func.func private @declared(memref<?xf32>)
  func.func @small(%x: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %zero = arith.constant 0.0 : f32
    scf.for %i = %c0 to %n step %c1 {
      memref.store %zero, %x[%i] : memref<?xf32>
    }
    return
  }
}
