// temporal-to-cuda: the whole CUDA pipeline. The host code is in the LLVM
// dialect (launches through the runtime's mgpu* functions, managed
// allocations through mgpuMemAlloc), and each kernel is a gpu.binary
// holding PTX for sm_90 (gpu-module-to-binary{format=isa}); tanh comes from
// libdevice, linked in, so no external math call is left in the PTX.
// RUN: tempo-opt %examples/rnn.mlir -p temporal-to-cuda | FileCheck %s
// RUN: tempo-opt %examples/rnn.mlir -p temporal-to-cuda | FileCheck %s --check-prefix=PTX

// CHECK: llvm.func @tempo_main(
// CHECK: llvm.call @mgpuMemAlloc
// CHECK: gpu.launch_func @tempo_main_kernel{{.*}}::@tempo_main_kernel
// CHECK: gpu.binary @tempo_main_kernel [#gpu.object<#nvvm.target<O = 3, chip = "sm_90"
// CHECK: llvm.func @mgpuMemAlloc(i64, !llvm.ptr, i8) -> !llvm.ptr
// PTX: assembly = "{{.*}}.target sm_90{{.*}}.visible .entry tempo_main_kernel(
// PTX-NOT: __nv_tanhf
