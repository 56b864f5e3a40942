// For the CUDA target, all the data work of a GPT decode step (matmuls,
// attention over the cache, norms, reshapes of heads, the residual
// additions) is in kernels: between the entry of the host function and the
// kernels' modules, host code loads and stores no float data, only the
// block tables and byte counters of the stores (index and i64 memrefs).
// RUN: %example_bin/gpt --layers 2 --heads 4 --width 32 --mlir > %t.mlir
// RUN: tempo-opt %t.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref, lower-loops-to-gpu' | FileCheck %s
// CHECK: func.func @tempo_main
// CHECK-NOT: memref.load {{.*}}f32
// CHECK-NOT: memref.store {{.*}}f32
// CHECK-NOT: vector.
// CHECK: gpu.launch_func
// CHECK-NOT: memref.load {{.*}}f32
// CHECK-NOT: memref.store {{.*}}f32
// CHECK: gpu.module
