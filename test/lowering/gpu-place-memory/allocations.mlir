// gpu-place-memory puts each host buffer where the code using it can reach
// it: in device memory where only kernels use it (gpu.alloc async, waited
// for), in managed memory where host code and kernels both use it, even
// through a view (gpu.alloc host_shared, the host waiting for the kernels
// before touching it: launches are asynchronous), in host memory where only
// host code uses it (the memref.alloc stays), and a buffer marked tempo.swap
// in managed memory placed on the host. memref.dealloc of GPU memory
// becomes a call of @tempo_gpu_free on the buffer's pointer. The host also
// waits before external calls. memref.alloca, and allocations inside a
// gpu.module, are left alone.
// RUN: tempo-opt %s --gpu-place-memory | FileCheck %s

// CHECK-DAG: func.func private @tempo_gpu_free(index)
// CHECK-DAG: func.func private @tempo_gpu_place_on_host(index)
// CHECK-DAG: func.func private @tempo_gpu_wait()
// CHECK-LABEL: func.func @f
// The kernel's buffer, in device memory:
// CHECK: %[[READY:.*]] = gpu.wait async
// CHECK-NEXT: %[[DEVICE:.*]], %[[DONE:.*]] = gpu.alloc async [%[[READY]]] (%{{.*}}) : memref<?xf32>
// CHECK-NEXT: gpu.wait [%[[DONE]]]
// Used by a kernel and read by the host through a view, in managed memory:
// CHECK: %[[SHARED:.*]] = gpu.alloc host_shared () : memref<4x4xf32>
// The swap buffer, on the host:
// CHECK: %[[SWAP:.*]] = gpu.alloc host_shared (%{{.*}}) : memref<?xf32>
// CHECK-NEXT: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[SWAP]]
// CHECK-NEXT: call @tempo_gpu_place_on_host(%[[P]]) : (index) -> ()
// Only the host uses it: a host allocation.
// CHECK: %[[HOST:.*]] = memref.alloc() : memref<8xf32>
// CHECK: memref.alloca() : memref<2xf32>
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[DEVICE]] : memref<?xf32>, %[[SWAP]] : memref<?xf32>, %[[SHARED]] : memref<4x4xf32>)
// CHECK: call @tempo_gpu_wait() : () -> ()
// CHECK-NEXT: memref.load %{{.*}}[%{{.*}}] : memref<4xf32, strided<[1], offset: 4>>
// CHECK-NOT: tempo_gpu_wait
// CHECK: memref.store %{{.*}}, %[[HOST]]
// CHECK: call @tempo_gpu_wait() : () -> ()
// CHECK-NEXT: call @host_callback
// CHECK: %[[Q:.*]] = memref.extract_aligned_pointer_as_index %[[DEVICE]] : memref<?xf32> -> index
// CHECK-NEXT: call @tempo_gpu_free(%[[Q]]) : (index) -> ()
// CHECK: memref.dealloc %[[HOST]] : memref<8xf32>
// CHECK-NOT: memref.alloc(
// CHECK: gpu.module @kernels
// CHECK: memref.alloc() : memref<3xf32>
module attributes {gpu.container_module} {
  func.func private @host_callback()
  func.func @f(%n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = memref.alloc(%n) : memref<?xf32>
    %b = memref.alloc() : memref<4x4xf32>
    %swap = memref.alloc(%n) {tempo.swap} : memref<?xf32>
    %h = memref.alloc() : memref<8xf32>
    %s = memref.alloca() : memref<2xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>, %swap : memref<?xf32>, %b : memref<4x4xf32>)
    %row = memref.subview %b[1, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<4xf32, strided<[1], offset: 4>>
    %x = memref.load %row[%c0] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %x, %s[%c0] : memref<2xf32>
    memref.store %x, %h[%c0] : memref<8xf32>
    func.call @host_callback() : () -> ()
    memref.dealloc %a : memref<?xf32>
    memref.dealloc %b : memref<4x4xf32>
    memref.dealloc %swap : memref<?xf32>
    memref.dealloc %h : memref<8xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xf32>, %c: memref<4x4xf32>) kernel {
      %t = memref.alloc() : memref<3xf32>
      gpu.return
    }
  }
}

// A growing block store used only by kernels is reserved in device address
// space (@tempo_gpu_reserve_device); one whose data host code reads, in
// managed memory (@tempo_gpu_mmap), the host waiting for the kernels before
// it reads. Committing, releasing and freeing
// blocks call the runtime's versions of mprotect, madvise and munmap, which
// act on the reservation holding the address.
// RUN: tempo-opt %S/Inputs/reservations.mlir --gpu-place-memory | FileCheck %s --check-prefix=RESERVE
// RESERVE-DAG: func.func private @tempo_gpu_mmap(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
// RESERVE-DAG: func.func private @tempo_gpu_reserve_device(!llvm.ptr, i64, i32, i32, i32, i64) -> !llvm.ptr
// RESERVE-DAG: func.func private @tempo_gpu_mprotect(!llvm.ptr, i64, i32) -> i32
// RESERVE-DAG: func.func private @tempo_gpu_munmap(!llvm.ptr, i64) -> i32
// RESERVE-NOT: func.func private @mmap
// RESERVE-LABEL: func.func @g
// RESERVE: %[[DEVICE:.*]] = call @tempo_gpu_reserve_device(
// RESERVE: %[[SHARED:.*]] = call @tempo_gpu_mmap(
// RESERVE: call @tempo_gpu_mprotect(
// RESERVE: call @tempo_gpu_wait()
// RESERVE-NEXT: memref.load
// RESERVE: call @tempo_gpu_munmap(%[[DEVICE]],
// RESERVE: call @tempo_gpu_munmap(%[[SHARED]],

// The pass takes no options; malformed input gets the parser's located
// diagnostic.
// RUN: not tempo-opt %s --gpu-place-memory=x=1 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: unknown option 'x' for pass 'gpu-place-memory' (known: none)
// RUN: not tempo-opt %S/Inputs/malformed.mlir --gpu-place-memory 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: malformed.mlir:3:21: error: expected ')'
