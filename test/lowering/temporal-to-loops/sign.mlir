// temporal.sign: 1 above zero, -1 below, the operand itself elsewhere
// (both zeros keep their sign, NaN stays NaN), for floats and integers;
// the compiled code (exact and fast-math) is the interpreter's bit for
// bit. Its gradient is zero: d/dx sum(sign(x) * x) = sign(x).
// RUN: tempo-opt %s --temporal-autodiff --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=2 | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=2 --fast-math | diff - %t.interpreted
// The CUDA target lowers it to kernels too (PTX written without a GPU).
// RUN: rm -rf %t.ptx && tempo-run %s --bound T=2 --target cuda --emit-ptx %t.ptx 2>&1 | FileCheck %s --check-prefix=PTX
// RUN: not tempo-opt %S/Inputs/sign-boolean.mlir --temporal-verify 2>&1 | FileCheck %s --check-prefix=BOOLEAN

// CHECK-DAG: arith.cmpf ogt
// CHECK-DAG: arith.cmpf olt
// CHECK-DAG: arith.cmpi sgt
// CHECK-DAG: arith.select
// OUT-DAG: s: float32[2, 6] = {{\[\[}}-1.0, -0.0, 0.0, 1.0, NaN, -1.0], [-1.0, -0.0, 0.0, 1.0, NaN, -1.0]]
// OUT-DAG: n: int32[2, 4] = {{\[\[}}-1, 0, 1, -1], [-1, 0, 1, -1]]
// OUT-DAG: g: float32[6] = [-2.0, 0.0, 0.0, 2.0, NaN, -2.0]
// PTX: tempo-run: {{[0-9]+}} kernels written to
// BOOLEAN: sign-boolean.mlir:{{[0-9]+}}:{{[0-9]+}}: error: 'temporal.sign' needs a numeric operand, got tensor<3xi1>

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = [], element = tensor<6xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<6xf32>} : () -> !temporal.rtensor
  %n = "temporal.tensor"() {sym_name = "n", domain = ["t"], element = tensor<4xi32>} : () -> !temporal.rtensor
  %loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %c = "temporal.constant"() {value = dense<[-2.5, -0.0, 0.0, 3.5, 0x7FC00000, -1.0e-30]> : tensor<6xf32>} : () -> tensor<6xf32>
    "gpu.yield"(%c) : (tensor<6xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<6xf32>
    %r = "temporal.sign"(%v) : (tensor<6xf32>) -> tensor<6xf32>
    "gpu.yield"(%r) : (tensor<6xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%n) ({
    %c = "temporal.constant"() {value = dense<[-7, 0, 5, -2147483648]> : tensor<4xi32>} : () -> tensor<4xi32>
    %r = "temporal.sign"(%c) : (tensor<4xi32>) -> tensor<4xi32>
    "gpu.yield"(%r) : (tensor<4xi32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  // loss[t] = sum(sign(x) * x): its gradient over t is sum_t sign(x).
  "temporal.define"(%loss) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<6xf32>
    %r = "temporal.sign"(%v) : (tensor<6xf32>) -> tensor<6xf32>
    %p = "temporal.mul"(%r, %v) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %l = "temporal.reduce_sum"(%p) {axis = 0 : i64} : (tensor<6xf32>) -> tensor<f32>
    "gpu.yield"(%l) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  %g = "temporal.grad"(%loss, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
  "temporal.output"(%n) : (!temporal.rtensor) -> ()
  "temporal.output"(%g) : (!temporal.rtensor) -> ()
}
