// With fast-math and library-gemm (as tempo-run's fast math sets them), a
// large float product calls the runtime's tempo_gemm with each operand's
// address and row and column strides: the weight read transposed is passed
// as a transposed view (strides [1, 128]), neither copied nor gathered; the
// fused epilogue (bias and tanh) runs as one loop over C after the call. A
// small product (4 x 8 x 128) keeps the register-tiled kernel; without
// library-gemm no call is emitted. Compiled with --fast-math, results are
// within 1e-5 of the interpreter's; exact mode stays bit-exact. With
// `parallel`, a product of 2^21 multiply-adds or more (u: 64 x 256 x 256)
// is split into column blocks of whole vectors, one call each in an
// scf.parallel loop (OpenMP threads); a product of many rows by a narrow
// matrix (n: 1024 x 64 x 64, too few columns to split) into blocks of
// rows (four of 256); a batched product (e: 8 products of 128 x 64 x 128,
// as the heads of an attention over a whole sequence) calls the library
// once per batch index, the batch spread over threads.
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math library-gemm" | FileCheck %s
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math" | FileCheck %s --check-prefix=KERNEL
// RUN: tempo-run %s --bound T=2 --seed 3 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 3 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 3 --fast-math --format json > %t.fast
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.fast 1e-5
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math library-gemm parallel" | FileCheck %s --check-prefix=PAR
// RUN: not tempo-opt %s "--lower-temporal-to-loops=fast-math library-gemm=maybe" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tempo-run %s --bound T=2 --seed 3 --fast-math --threads 2 --format json > %t.threads
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.threads 1e-5

// CHECK: func.func private @tempo_gemm(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64)
// CHECK-LABEL: func.func @tempo_main
// CHECK: %[[T:.*]] = memref.transpose
// CHECK-NOT: linalg.copy
// CHECK: memref.extract_strided_metadata %[[T]] : memref<128x96xf32, strided<[1, 128], offset: ?>>
// CHECK: func.call @tempo_gemm(
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK: memref.load
// CHECK: arith.addf
// CHECK: memref.store
// CHECK-NOT: func.call @tempo_gemm
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (f32)
// KERNEL-NOT: tempo_gemm
// BAD: error: {{.*}}library-gemm
// PAR: scf.parallel (%[[JB:.*]]) = (%{{.*}}) to (%c4{{.*}}) step
// PAR-NEXT: arith.muli %[[JB]], %c64{{.*}} : index
// PAR: func.call @tempo_gemm(
// PAR: scf.parallel (%[[IB:.*]]) = (%{{.*}}) to (%c4{{.*}}) step
// PAR-NEXT: arith.muli %[[IB]], %c256{{.*}} : index
// PAR: func.call @tempo_gemm(
// PAR: scf.parallel (%[[BI:.*]]) = (%{{.*}}) to (%sizes{{.*}}#0) step
// PAR: arith.muli %[[BI]]
// PAR: func.call @tempo_gemm(

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<64x128xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<96x128xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = [], element = tensor<128x8xf32>} : () -> !temporal.rtensor
%bias = "temporal.input"() {sym_name = "bias", domain = [], element = tensor<96xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<64x96xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<4x8xf32>} : () -> !temporal.rtensor
%x2 = "temporal.input"() {sym_name = "x2", domain = ["t"], element = tensor<64x256xf32>} : () -> !temporal.rtensor
%w2 = "temporal.input"() {sym_name = "w2", domain = [], element = tensor<256x256xf32>} : () -> !temporal.rtensor
%u = "temporal.tensor"() {sym_name = "u", domain = ["t"], element = tensor<64x256xf32>} : () -> !temporal.rtensor
%x3 = "temporal.input"() {sym_name = "x3", domain = ["t"], element = tensor<1024x64xf32>} : () -> !temporal.rtensor
%w3 = "temporal.input"() {sym_name = "w3", domain = [], element = tensor<64x64xf32>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = ["t"], element = tensor<1024x64xf32>} : () -> !temporal.rtensor
%qa = "temporal.input"() {sym_name = "qa", domain = ["t"], element = tensor<8x128x64xf32>} : () -> !temporal.rtensor
%ka = "temporal.input"() {sym_name = "ka", domain = ["t"], element = tensor<8x64x128xf32>} : () -> !temporal.rtensor
%e = "temporal.tensor"() {sym_name = "e", domain = ["t"], element = tensor<8x128x128xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64x128xf32>
  %b = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<96x128xf32>
  %bt = "temporal.permute"(%b) {permutation = [1, 0]} : (tensor<96x128xf32>) -> tensor<128x96xf32>
  %p = "temporal.matmul"(%a, %bt) : (tensor<64x128xf32>, tensor<128x96xf32>) -> tensor<64x96xf32>
  %c = "temporal.read"(%bias) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<96xf32>
  %s = "temporal.add"(%p, %c) : (tensor<64x96xf32>, tensor<96xf32>) -> tensor<64x96xf32>
  %r = "temporal.tanh"(%s) : (tensor<64x96xf32>) -> tensor<64x96xf32>
  "gpu.yield"(%r) : (tensor<64x96xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64x128xf32>
  %a4 = "temporal.slice"(%a) {offsets = [0, 0]} : (tensor<64x128xf32>) -> tensor<4x128xf32>
  %b = "temporal.read"(%v) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<128x8xf32>
  %p = "temporal.matmul"(%a4, %b) : (tensor<4x128xf32>, tensor<128x8xf32>) -> tensor<4x8xf32>
  "gpu.yield"(%p) : (tensor<4x8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%u) ({
  %a = "temporal.read"(%x2) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64x256xf32>
  %b = "temporal.read"(%w2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<256x256xf32>
  %p = "temporal.matmul"(%a, %b) : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
  "gpu.yield"(%p) : (tensor<64x256xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%n) ({
  %a = "temporal.read"(%x3) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1024x64xf32>
  %b = "temporal.read"(%w3) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<64x64xf32>
  %p = "temporal.matmul"(%a, %b) : (tensor<1024x64xf32>, tensor<64x64xf32>) -> tensor<1024x64xf32>
  "gpu.yield"(%p) : (tensor<1024x64xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%u) : (!temporal.rtensor) -> ()
"temporal.define"(%e) ({
  %a = "temporal.read"(%qa) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x128x64xf32>
  %b = "temporal.read"(%ka) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x64x128xf32>
  %p = "temporal.matmul"(%a, %b) : (tensor<8x128x64xf32>, tensor<8x64x128xf32>) -> tensor<8x128x128xf32>
  "gpu.yield"(%p) : (tensor<8x128x128xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%n) : (!temporal.rtensor) -> ()
"temporal.output"(%e) : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
