// For the GPU, a matrix product with at least 16 rows (here 37 x 50 times
// 50 x 29: no dimension a multiple of the tile) is one gpu.launch of 16 x 16
// threads per block, tiles of A and B staged in workgroup (shared) memory
// between barriers, each thread computing elements 16 rows apart in
// registers (2 here: 37 rows take tiles of 32; 29 columns tiles of 16),
// each product summed in order up to K and stored inside C only; ptxas
// accepts the kernel, which uses 3 KiB of shared memory. Products of few
// tiles split K (gpu-matmul-split.mlir); the few-row products of a decode
// step split K in slices instead (gpu-split-k.mlir).
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: rm -rf %t && tempo-run %s --target cuda --emit-ptx %t
// RUN: %ptxas -arch=sm_90 -v %t/tempo_main_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: %[[TILE:[a-z0-9_]+]] = arith.constant 16 : index
// CHECK: %[[ONE:[a-z0-9_]+]] = arith.constant 1 : index
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %[[BY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in ({{.*}}, %{{[a-z0-9_]+}} = %[[ONE]]) threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[TILE]], %{{[a-z0-9_]+}} = %[[TILE]], %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}) workgroup(%[[AS:[a-z0-9_]+]] : memref<32x16xf32, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9_]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>) {
// Rows by * 32 + ty and 16 rows below.
// CHECK: %[[R:.*]] = arith.muli %[[BY]], %c32
// CHECK: %[[ROW:.*]] = arith.addi %[[R]], %[[TY]]
// CHECK: %[[ROW0:.*]] = arith.addi %[[ROW]], %c0
// CHECK: %[[ROW1:.*]] = arith.addi %[[ROW]], %c16
// Two accumulators per thread.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %cst, %{{.*}} = %cst) -> (f32, f32)
// CHECK: memref.load %{{.*}}[%[[ROW0]], %{{.*}}] : memref<37x50xf32
// CHECK: memref.store %{{.*}}, %[[AS]][%{{.*}}, %[[TX]]]
// CHECK: memref.load %{{.*}}[%[[ROW1]], %{{.*}}] : memref<37x50xf32
// CHECK: memref.store %{{.*}}, %[[AS]][%{{.*}}, %[[TX]]]
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TY]], %{{.*}}]
// CHECK-NEXT: gpu.barrier
// CHECK: arith.minui
// CHECK: scf.for {{.*}} -> (f32, f32)
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[BS]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.terminator
// PTXAS: used 1 barriers, 3072 bytes smem

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<37x50xf32>} : () -> !temporal.rtensor
  %w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<50x29xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<37x29xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<37x50xf32>
    %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<50x29xf32>
    %c = "temporal.matmul"(%a, %b) : (tensor<37x50xf32>, tensor<50x29xf32>) -> tensor<37x29xf32>
    %d = "temporal.tanh"(%c) : (tensor<37x29xf32>) -> tensor<37x29xf32>
    "gpu.yield"(%d) : (tensor<37x29xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
