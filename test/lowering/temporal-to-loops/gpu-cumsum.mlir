// For the GPU, a cumulative sum is one parallel loop over the other
// dimensions (a thread per row once mapped; a single scan a loop of one)
// with the scan along the axis sequential inside; ptxas accepts the kernels.
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: rm -rf %t && tempo-run %s --target cuda --emit-ptx %t 2>&1 | FileCheck %s --check-prefix=EMIT
// RUN: %ptxas -arch=sm_90 %t/tempo_main_kernel.ptx -o %t/k.cubin
// CHECK: scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%c3{{.*}}) step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c5{{.*}} step
// CHECK: memref.load %{{.*}}[%[[ROW]], %[[K]]]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
// CHECK: scf.for
// EMIT: tempo-run: {{[1-9]}} kernels written to
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3x5xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x5xf32>} : () -> !temporal.rtensor
  %z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<5xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3x5xf32>
    %c = "temporal.cumsum"(%a) {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3x5xf32>
    "gpu.yield"(%c) : (tensor<3x5xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%z) ({
    %a = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3x5xf32>
    %r = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<3x5xf32>) -> tensor<5xf32>
    %c = "temporal.cumsum"(%r) {axis = 0 : i64} : (tensor<5xf32>) -> tensor<5xf32>
    "gpu.yield"(%c) : (tensor<5xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
  "temporal.output"(%z) : (!temporal.rtensor) -> ()
}
