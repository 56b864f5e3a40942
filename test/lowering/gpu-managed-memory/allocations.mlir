// gpu-managed-memory moves host allocations to CUDA managed memory (one
// address for the host and the kernels): memref.alloc becomes
// gpu.alloc host_shared, memref.dealloc a call of @tempo_gpu_free on its
// pointer, and the reservation functions of block stores (mmap, mprotect,
// madvise, munmap) their managed-memory versions. Allocations inside a
// gpu.module (none here) and memref.alloca are left alone.
// RUN: tempo-opt %s --gpu-managed-memory | FileCheck %s

// CHECK-DAG: func.func private @tempo_gpu_mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
// CHECK-DAG: func.func private @tempo_gpu_munmap(!llvm.ptr, i64) -> i32
// CHECK-DAG: func.func private @tempo_gpu_free(index)
// CHECK-LABEL: func.func @f
// CHECK: %[[A:.*]] = gpu.alloc host_shared (%{{.*}}) : memref<?xf32>
// CHECK: %[[B:.*]] = gpu.alloc host_shared () : memref<4x4xf32>
// CHECK: memref.alloca() : memref<2xf32>
// CHECK: call @tempo_gpu_mmap(
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[A]] : memref<?xf32>)
// CHECK: call @tempo_gpu_munmap(
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[A]] : memref<?xf32> -> index
// CHECK: call @tempo_gpu_free(%[[P]]) : (index) -> ()
// CHECK: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %[[B]]
// CHECK: call @tempo_gpu_free(%[[Q]]) : (index) -> ()
// CHECK-NOT: memref.alloc(
// CHECK-NOT: memref.dealloc
module {
  func.func private @mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
  func.func private @munmap(!llvm.ptr, i64) -> i32
  func.func @f(%n: index, %bytes: i64) {
    %a = memref.alloc(%n) : memref<?xf32>
    %b = memref.alloc() : memref<4x4xf32>
    %s = memref.alloca() : memref<2xf32>
    %null = llvm.mlir.zero : !llvm.ptr
    %c0 = arith.constant 0 : i32
    %z = arith.constant 0 : i64
    %r = func.call @mmap(%null, %bytes, %c0, %c0, %c0, %z) : (!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
    %f = arith.constant 1.0 : f32
    linalg.fill ins(%f : f32) outs(%a : memref<?xf32>)
    %u = func.call @munmap(%r, %bytes) : (!llvm.ptr, i64) -> i32
    memref.dealloc %a : memref<?xf32>
    memref.dealloc %b : memref<4x4xf32>
    return
  }
}

// The pass takes no options; malformed input gets the parser's located
// diagnostic.
// RUN: not tempo-opt %s --gpu-managed-memory=x=1 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: unknown option 'x' for pass 'gpu-managed-memory' (known: none)
// RUN: not tempo-opt %S/Inputs/malformed.mlir --gpu-managed-memory 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:21: error: expected ')'
