// gpu-share-kernels: after gpu-kernel-outlining each launch has a module of
// its own; kernels that are the same op for op (tanh of a 4 x 8 point, in
// two tensors) share the first one's module, both launches naming it, and
// the duplicate is erased; a different kernel (exp) keeps its module.
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}, func.func(convert-linalg-to-parallel-loops), func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true}, gpu-map-parallel-loops, convert-parallel-loops-to-gpu), lower-affine, gpu-kernel-outlining' | FileCheck %s --check-prefix=OUTLINED
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}, func.func(convert-linalg-to-parallel-loops), func.func(scf-parallel-loop-tiling{parallel-loop-tile-sizes=256 no-min-max-bounds=true}, gpu-map-parallel-loops, convert-parallel-loops-to-gpu), lower-affine, gpu-kernel-outlining, gpu-share-kernels' | FileCheck %s

// OUTLINED-COUNT-3: gpu.module @
// OUTLINED-NOT: gpu.module @

// CHECK: func.func @tempo_main
// CHECK: gpu.launch_func @[[TANH:[a-z0-9_]+]]::@tempo_main_kernel
// CHECK: gpu.launch_func @[[TANH]]::@tempo_main_kernel
// CHECK: gpu.launch_func @[[EXP:[a-z0-9_]+]]::@tempo_main_kernel
// CHECK: gpu.module @[[TANH]]
// CHECK-NOT: gpu.module @
// CHECK: gpu.module @[[EXP]]
// CHECK-NOT: gpu.module @

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
  %y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
  %a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
  %b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
  %c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
  "temporal.define"(%a) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x8xf32>
    %r = "temporal.tanh"(%v) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "gpu.yield"(%r) : (tensor<4x8xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%b) ({
    %v = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x8xf32>
    %r = "temporal.tanh"(%v) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "gpu.yield"(%r) : (tensor<4x8xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%c) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x8xf32>
    %r = "temporal.exp"(%v) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    "gpu.yield"(%r) : (tensor<4x8xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%a) : (!temporal.rtensor) -> ()
  "temporal.output"(%b) : (!temporal.rtensor) -> ()
  "temporal.output"(%c) : (!temporal.rtensor) -> ()
}
