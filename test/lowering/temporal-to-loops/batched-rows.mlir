// A batch of matrices by one shared matrix, [4, 16, 96] x [96, 512] (the
// cotangents of all steps by a transposed weight in back-propagation
// through time): one product of the 64 rows, not one per batch index,
// where the batched operand and the result are contiguous: the library
// GEMM is called once (fast math), the register-tiled kernel runs one
// nest (exact). Each element sums its terms in order either way: bit for
// bit with the interpreter without fast math.
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math library-gemm" | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=EXACT
// RUN: tempo-run %s --bound T=2 --seed 3 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 3 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 3 --fast-math --format json > %t.fast
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.fast 1e-5

// CHECK-LABEL: func.func @tempo_main
// CHECK: memref.expand_shape {{.*}} into memref<64x96xf32
// CHECK: memref.expand_shape {{.*}} into memref<64x512xf32
// CHECK: func.call @tempo_gemm(
// CHECK-NOT: func.call @tempo_gemm(

// EXACT-LABEL: func.func @tempo_main
// EXACT: memref.expand_shape {{.*}} into memref<64x96xf32
// EXACT: memref.expand_shape {{.*}} into memref<64x512xf32
// EXACT-NOT: linalg.batch_matmul

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x16x96xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<512x96xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4x16x512xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x16x96xf32>
  %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<512x96xf32>
  %bt = "temporal.permute"(%b) {permutation = [1, 0]} : (tensor<512x96xf32>) -> tensor<96x512xf32>
  %c = "temporal.matmul"(%a, %bt) : (tensor<4x16x96xf32>, tensor<96x512xf32>) -> tensor<4x16x512xf32>
  "gpu.yield"(%c) : (tensor<4x16x512xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
