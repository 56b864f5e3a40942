// For the GPU, a product of few tiles (64 x 256 times 256 x 64: one block
// of 64 x 64, each thread 4 x 4 elements in registers) splits K in ranges
// of at least 128 (here 2 ranges, the grid's third dimension): each block
// writes its range's partial tile into a buffer allocated once, then a
// thread per element sums the ranges in order. ptxas accepts the kernel
// (8 KiB of shared memory). With fast-math the products and sums are
// fused multiply-adds.
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true fast-math=true}' | FileCheck %s --check-prefix=FAST
// RUN: rm -rf %t && tempo-run %s --target cuda --emit-ptx %t
// RUN: %ptxas -arch=sm_90 -v %t/tempo_main_kernel.ptx -o %t/kernel.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<2x64x64xf32>
// CHECK: %[[SPLITS:.*]] = arith.constant 2 : index
// CHECK: gpu.launch blocks(%{{[a-z0-9_]+}}, %{{[a-z0-9_]+}}, %[[BZ:[a-z0-9_]+]]) in ({{.*}}, %{{[a-z0-9_]+}} = %[[SPLITS]]) threads({{.*}}) workgroup(%{{.*}} : memref<64x16xf32, #gpu.address_space<workgroup>>, %{{.*}} : memref<16x64xf32, #gpu.address_space<workgroup>>) {
// The block's range of K: [bz * 128, min(bz * 128 + 128, 256)).
// CHECK: %[[RANGE:.*]] = arith.constant 128 : index
// CHECK-NEXT: %[[LO:.*]] = arith.muli %[[BZ]], %[[RANGE]]
// CHECK-NEXT: %[[END:.*]] = arith.addi %[[LO]], %[[RANGE]]
// CHECK-NEXT: %[[HI:.*]] = arith.minui %[[END]], %c256
// 16 accumulators per thread.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK: arith.cmpi ult, %{{.*}}, %[[HI]]
// CHECK: gpu.barrier
// CHECK: memref.store %{{.*}}, %[[PARTIAL]][%[[BZ]], %{{.*}}, %{{.*}}] : memref<2x64x64xf32>
// CHECK: gpu.terminator
// Then a thread per element over the ranges, in order.
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = {{.*}} to (%c64{{.*}}, %c64{{.*}})
// CHECK-NEXT: scf.for %[[S:.*]] = %{{.*}} to %[[SPLITS]]
// CHECK-NEXT: memref.load %[[PARTIAL]][%[[S]], %[[I]], %[[J]]]
// CHECK-NEXT: arith.addf
// PTXAS: used 1 barriers, 8192 bytes smem
// CHECK-NOT: math.fma
// FAST: gpu.launch
// FAST-COUNT-16: math.fma
// FAST: gpu.terminator

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<64x256xf32>} : () -> !temporal.rtensor
  %w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<256x64xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<64x64xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64x256xf32>
    %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x64xf32>
    %c = "temporal.matmul"(%a, %b) : (tensor<64x256xf32>, tensor<256x64xf32>) -> tensor<64x64xf32>
    %d = "temporal.tanh"(%c) : (tensor<64x64xf32>) -> tensor<64x64xf32>
    "gpu.yield"(%d) : (tensor<64x64xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
