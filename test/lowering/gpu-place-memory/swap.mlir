// A growing block store on the GPU, swapped out and back in: the store,
// used only by kernels, reserves device address space; swapping out
// copies its points (a kernel) to a buffer in managed memory placed on the
// host, then releases the blocks wholly inside the range (their device
// memory is unmapped by @tempo_gpu_mprotect with PROT_NONE); swapping in
// commits them again (mapped again) and copies the points back (a kernel).
// RUN: tempo-opt %s -p 'lower-store-to-memref{gpu=true}, lower-loops-to-gpu' | FileCheck %s
// CHECK-LABEL: func.func @swap
// CHECK-DAG: %[[NONE:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[RW:.*]] = arith.constant 3 : i32
// CHECK: call @tempo_gpu_reserve_device(
// CHECK: %[[HOST:.*]] = gpu.alloc host_shared (%{{.*}}) : memref<?x16xf32>
// CHECK-NEXT: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK-NEXT: call @tempo_gpu_place_on_host(%[[P]])
// CHECK: gpu.launch_func
// CHECK: call @tempo_gpu_mprotect(%{{.*}}, %{{.*}}, %[[NONE]])
// CHECK: call @tempo_gpu_mprotect(%{{.*}}, %{{.*}}, %[[RW]])
// CHECK: gpu.launch_func
// CHECK: call @tempo_gpu_free
// CHECK: call @tempo_gpu_munmap(
// CHECK-NOT: memref.alloc
// CHECK-NOT: call @mmap
module {
  func.func @swap(%T: index, %lo: index, %hi: index) {
    %s = "store.alloc"(%T) {kind = "blocks", extent = 64 : i64} : (index) -> memref<?x16xf32>
    %host = "store.swap_out"(%s, %lo, %hi) : (memref<?x16xf32>, index, index) -> memref<?x16xf32>
    "store.swap_in"(%s, %host, %lo, %hi) : (memref<?x16xf32>, memref<?x16xf32>, index, index) -> ()
    "store.free"(%s) : (memref<?x16xf32>) -> ()
    return
  }
}
