// gpu-share-kernels leaves alone kernel modules that differ (here in one
// constant) and the launches naming them, and a module without kernels.
// The pass has no error of its own: launches name their modules as
// gpu-kernel-outlining wrote them.
// RUN: tempo-opt %s --split-input-file --gpu-share-kernels | FileCheck %s

// CHECK-LABEL: func.func @host
// CHECK: gpu.launch_func @a::@k
// CHECK: gpu.launch_func @b::@k
// CHECK: gpu.module @a
// CHECK: gpu.module @b
module attributes {gpu.container_module} {
  func.func @host(%n: index, %x: memref<4xf32>) {
    gpu.launch_func @a::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%x : memref<4xf32>)
    gpu.launch_func @b::@k blocks in (%n, %n, %n) threads in (%n, %n, %n) args(%x : memref<4xf32>)
    return
  }
  gpu.module @a {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 1.0 : f32
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @b {
    gpu.func @k(%x: memref<4xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = arith.constant 2.0 : f32
      memref.store %v, %x[%c0] : memref<4xf32>
      gpu.return
    }
  }
}

// -----

// CHECK-LABEL: func.func @nothing
// CHECK-NEXT: return
module {
  func.func @nothing() {
    return
  }
}
