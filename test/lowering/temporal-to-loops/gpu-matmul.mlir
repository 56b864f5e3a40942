// For the GPU, a matrix product with at least 16 rows (here 37 x 50 times
// 50 x 29: no dimension a multiple of the tile) is one gpu.launch of 16 x 16
// threads per block, tiles of A and B staged in workgroup (shared) memory
// between barriers, each product summed in order up to K and stored inside
// C only; ptxas accepts the kernel, which uses 2 KiB of shared memory. The
// few-row products of a decode step split K instead (gpu-split-k.mlir).
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: rm -rf %t && tempo-run %s --target cuda --emit-ptx %t
// RUN: %ptxas -arch=sm_90 -v %t/tempo_main_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: %[[TILE:[a-z0-9_]+]] = arith.constant 16 : index
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}) in ({{.*}}) threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{[a-z0-9_]+}}) in (%{{[a-z0-9_]+}} = %[[TILE]], %{{[a-z0-9_]+}} = %[[TILE]], %{{[a-z0-9_]+}} = %{{[a-z0-9_]+}}) workgroup(%[[AS:[a-z0-9_]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>, %[[BS:[a-z0-9_]+]] : memref<16x16xf32, #gpu.address_space<workgroup>>) {
// CHECK: scf.for {{.*}} iter_args
// CHECK: memref.store %{{.*}}, %[[AS]][%[[TY]], %[[TX]]]
// CHECK: memref.store %{{.*}}, %[[BS]][%[[TY]], %[[TX]]]
// CHECK-NEXT: gpu.barrier
// CHECK: arith.minui
// CHECK: memref.load %[[AS]]
// CHECK: memref.load %[[BS]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: memref.store
// CHECK: gpu.terminator
// PTXAS: used 1 barriers, 2048 bytes smem

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
