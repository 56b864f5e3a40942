// With gpu=true, lower-temporal-to-loops leaves contractions as linalg
// named ops (here a 1x32 by 32x64 product) instead of the CPU's
// register-tiled vector kernel, so that the GPU mapping parallelizes them
// (few rows with K of two slices of 32 or more: gpu-split-k.mlir).
// RUN: tempo-opt %s --lower-temporal-to-loops=gpu=true | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=CPU
// CHECK: linalg.matmul
// CHECK-NOT: vector.load
// CPU: vector.load
// CPU-NOT: linalg.matmul
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<1x32xf32>} : () -> !temporal.rtensor
  %w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<32x64xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<1x64xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %a = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32x64xf32>
    %b = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x32xf32>
    %c = "temporal.matmul"(%b, %a) : (tensor<1x32xf32>, tensor<32x64xf32>) -> tensor<1x64xf32>
    "gpu.yield"(%c) : (tensor<1x64xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
