// gpu-scope-launch-arguments: each kernel launch of host code is bracketed
// by llvm.intr.stacksave / llvm.intr.stackrestore, so that the stack memory
// its translation packs the arguments in (an alloca at the launch) is given
// back after every launch of a loop; launches inside gpu.module and other
// ops are left alone. Translated to LLVM IR, the allocas sit between the
// two (T = 10^7 steps of a cumulative sum overflowed the stack before).
// RUN: tempo-opt %s --split-input-file --gpu-scope-launch-arguments | FileCheck %s
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-to-cuda | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: llvm.func @step
// CHECK: ^bb1(
// CHECK: %[[SP:.*]] = llvm.intr.stacksave : !llvm.ptr
// CHECK-NEXT: gpu.launch_func @kernels::@k
// CHECK-NEXT: llvm.intr.stackrestore %[[SP]] : !llvm.ptr
// CHECK-NEXT: llvm.add
// CHECK-NOT: stacksave
// Host code without launches is left as it is.
// CHECK-LABEL: llvm.func @no_launch
// CHECK-NOT: stacksave
// CHECK: llvm.return

// LLVM: call ptr @llvm.stacksave.p0()
// LLVM-NEXT: alloca
// LLVM: call void @mgpuLaunchKernel(
// LLVM: call void @llvm.stackrestore.p0(

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: i64) kernel {
      gpu.return
    }
  }
  llvm.func @step(%n: i64) {
    %c0 = llvm.mlir.constant(0 : i64) : i64
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %one = arith.constant 1 : index
    llvm.br ^bb1(%c0 : i64)
  ^bb1(%i: i64):
    gpu.launch_func @kernels::@k blocks in (%one, %one, %one) threads in (%one, %one, %one) args(%i : i64)
    %next = llvm.add %i, %c1 : i64
    %done = llvm.icmp "eq" %next, %n : i64
    llvm.cond_br %done, ^bb2, ^bb1(%next : i64)
  ^bb2:
    llvm.return
  }
}

// -----

module {
  llvm.func @no_launch(%n: i64) -> i64 {
    %c1 = llvm.mlir.constant(1 : i64) : i64
    %r = llvm.add %n, %c1 : i64
    llvm.return %r : i64
  }
}
