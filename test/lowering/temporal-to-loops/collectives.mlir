// The processes of a run: temporal.all_reduce becomes an in-place
// mpi.allreduce on a contiguous 1-D buffer (MLIR 22.1.8 counts only the
// first dimension of a memref of higher rank), the mean a division by the
// world size, which comes from the runtime (mpi.comm_size is not lowered);
// temporal.rank is mpi.comm_rank of mpi.comm_world. The module's DLTI entry
// names the MPI ABI (the option mpi-implementation, MPICH by default).
// RUN: tempo-opt %s --lower-temporal-to-loops='mpi-implementation=OpenMPI' | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=DEFAULT
// Down to the LLVM dialect, calls of the MPI library for the ABI named, the count the
// size of the 1-D buffer's only dimension.
// RUN: tempo-opt %s -p 'builtin.module(lower-temporal-to-loops{mpi-implementation=OpenMPI}, lower-store-to-memref, lower-loops-to-llvm)' | FileCheck %s --check-prefix=LLVM
// RUN: tempo-opt %s -p 'builtin.module(lower-temporal-to-loops{mpi-implementation=MPICH}, lower-store-to-memref, lower-loops-to-llvm)' | FileCheck %s --check-prefix=MPICH
// A module already lowered for another ABI, and an unknown one, are refused.
// RUN: sed 's/^module {/module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">} {/' %s | not tempo-opt --lower-temporal-to-loops='mpi-implementation=OpenMPI' 2>&1 | FileCheck %s --check-prefix=MISMATCH
// RUN: not tempo-opt %s --lower-temporal-to-loops='mpi-implementation=LAM' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// The GPU target: the flat buffer is device memory (only kernels and the
// runtime's all-reduce use it), reduced in place by the runtime's
// tempo_gpu_all_reduce(address, count, element, op) (NCCL on the kernels'
// stream: no wait before it); the rank asked once on the host.
// RUN: tempo-opt %s -p 'builtin.module(temporal-verify,temporal-schedule,lower-temporal-to-loops{gpu=true},lower-store-to-memref,lower-loops-to-gpu)' | FileCheck %s --check-prefix=GPU
// RUN: tempo-opt %s -p 'builtin.module(temporal-to-cuda)' | FileCheck %s --check-prefix=CUDA

// CHECK: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// CHECK: func.func private @tempo_mpi_world_size() -> i64
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<6xf32>
// CHECK: %[[MEAN:.*]] = memref.alloc() : memref<6xf64>
// CHECK: %[[SIZE:.*]] = call @tempo_mpi_world_size() : () -> i64
// The rank, asked once at entry.
// CHECK: %[[WORLD:.*]] = mpi.comm_world : !mpi.comm
// CHECK-NEXT: mpi.comm_rank(%[[WORLD]]) : i32
// CHECK: %[[COMM:.*]] = mpi.comm_world : !mpi.comm
// CHECK: mpi.allreduce(%[[SUM]], %[[SUM]], MPI_SUM, %[[COMM]]) : memref<6xf32>, memref<6xf32>
// CHECK: mpi.allreduce(%[[MEAN]], %[[MEAN]], MPI_SUM, %{{.*}}) : memref<6xf64>, memref<6xf64>
// CHECK: arith.divf
// CHECK: mpi.allreduce(%{{.*}}, %{{.*}}, MPI_MAX, %{{.*}}) : memref<3xi64>, memref<3xi64>
// CHECK-NOT: mpi.comm_size

// DEFAULT: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "MPICH">}

// LLVM-DAG: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, !llvm.ptr, !llvm.ptr, !llvm.ptr) -> i32
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_comm_world()
// LLVM-DAG: llvm.mlir.global external @ompi_mpi_sum()
// LLVM-DAG: llvm.func @MPI_Comm_rank(!llvm.ptr, !llvm.ptr) -> i32
// LLVM-DAG: llvm.func @tempo_mpi_world_size() -> i64
// The count is the flat buffer's size: all 6 elements of the 2 x 3 tensor
// (the descriptor's size, folded to a constant by the last canonicalize).
// LLVM: %[[SIZE:.*]] = llvm.mlir.constant(6 : index) : i64
// LLVM: %[[COUNT:.*]] = llvm.trunc %[[SIZE]] : i64 to i32
// LLVM: llvm.call @MPI_Allreduce(%{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}, %{{.*}}, %{{.*}})
// LLVM-NOT: mpi.

// MPICH: llvm.func @MPI_Allreduce(!llvm.ptr, !llvm.ptr, i32, i32, i32, i32) -> i32
// MPICH: llvm.mlir.constant(1140850688 : i64)

// MISMATCH: error: the module is for the MPI implementation MPICH (its DLTI entry "MPI:Implementation"), but the MPI library of this run is OpenMPI
// UNKNOWN: error: mpi-implementation: unknown MPI implementation 'LAM' (MPICH or OpenMPI)
// GPU: func.func private @tempo_gpu_all_reduce(i64, i64, i32, i32)
// GPU: %[[BUF:.*]], %{{.*}} = gpu.alloc async [%{{.*}}] () : memref<6xf32>
// GPU: %[[RANK:.*]] = mpi.comm_rank
// GPU: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BUF]] : memref<6xf32> -> index
// GPU-NEXT: %[[A:.*]] = arith.index_cast %[[P]] : index to i64
// GPU-NOT: tempo_gpu_wait
// GPU: func.call @tempo_gpu_all_reduce(%[[A]], %c6_i64, %c0_i32, %c0_i32) : (i64, i64, i32, i32) -> ()
// GPU: func.call @tempo_gpu_all_reduce(%{{.*}}, %c6_i64, %c1_i32, %c0_i32)
// GPU: func.call @tempo_gpu_all_reduce(%{{.*}}, %c3_i64, %c3_i32, %c1_i32)
// CUDA: llvm.func @MPI_Comm_rank(
// CUDA: llvm.call @tempo_gpu_all_reduce(
// CUDA-NOT: mpi.

module {
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "sum", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%y) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%m = "temporal.tensor"() {sym_name = "mean", domain = ["t"], element = tensor<2x3xf64>} : () -> !temporal.rtensor
"temporal.define"(%m) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %w = "temporal.cast"(%v) : (tensor<2x3xf32>) -> tensor<2x3xf64>
  %y = "temporal.all_reduce"(%w) {reduction = "mean"} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  "gpu.yield"(%y) : (tensor<2x3xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%mx = "temporal.tensor"() {sym_name = "max", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%mx) ({
  %r = "temporal.rank"() : () -> tensor<i64>
  %c = "temporal.constant"() {value = dense<[10, -20, 30]> : tensor<3xi64>} : () -> tensor<3xi64>
  %v = "temporal.mul"(%c, %r) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %y = "temporal.all_reduce"(%v) {reduction = "max"} : (tensor<3xi64>) -> tensor<3xi64>
  "gpu.yield"(%y) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
"temporal.output"(%m) : (!temporal.rtensor) -> ()
"temporal.output"(%mx) : (!temporal.rtensor) -> ()
}
