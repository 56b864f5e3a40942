// lower-loops-to-gpu maps the spatial loops of each step to kernels
// launched from the host's time loop: the linalg ops of the RNN step
// (fills, matrix-vector products, the fused add and tanh) become parallel
// loops flattened to one dimension and tiled by 256, their tiles blocks and their points threads, each nest
// an outlined gpu.func; the time loop and the branch conditions stay on the
// host, and the buffers only kernels use (the state's store, the step's
// temporaries) are in device memory.
// RUN: tempo-opt %examples/rnn.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}, lower-loops-to-gpu' | FileCheck %s
// Loops over the same points are fused first: the fills and the
// matrix-vector products accumulating into them are one kernel, the add
// and tanh another, so each branch of a step launches 2 kernels (4 in all).
// RUN: tempo-opt %examples/rnn.mlir -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref, lower-loops-to-gpu' | grep -c "gpu.launch_func " | FileCheck %s --check-prefix=COUNT
// COUNT: {{^}}4{{$}}

// CHECK: module attributes {gpu.container_module}
// CHECK: func.func @tempo_main
// CHECK: gpu.alloc async [%{{.*}}] () : memref<4xf32>
// CHECK-NOT: host_shared
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step
// CHECK: scf.if
// CHECK: gpu.launch_func @tempo_main_kernel{{.*}}::@tempo_main_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) args(
// CHECK: call @tempo_gpu_free
// CHECK: gpu.module @tempo_main_kernel
// CHECK: gpu.func @tempo_main_kernel({{.*}}) kernel
// CHECK: gpu.block_id x
// CHECK: gpu.thread_id x
// CHECK: math.tanh
