// Dead ops are not evaluated ("Evaluation is demand-driven" in
// dialects/README.md): reads out of bounds on both sides, a read of points
// no branch defines, a range past the end and a slice outside its operand,
// all feeding only values that reach no result. The interpreter, the
// checks before a compiled run and the compiled code at every level agree
// (before, the interpreter and -O0 rejected the program while -O2, whose
// temporal-dce removes the reads, ran it). The same reads, live, are errors
// in every mode (errors.mlir, test/lowering/check-points).
// RUN: tempo-run %s --bound T=6 --seed 1 --interpret > %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 -O 2 --disable-pass temporal-dce | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 1 -O 0 | FileCheck %s --check-prefix=ONE

// CHECK: s: float32[6, 2, 3] = {{\[\[\[}}-0.3621168, 0.9801569, 0.63295364], [-0.29478836, -0.32039285, 0.08119345]],
// ONE: s: float32[1, 2, 3] = {{\[\[\[}}-0.3621168, 0.9801569, 0.63295364], [-0.29478836, -0.32039285, 0.08119345]]]

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
// u is defined only at t = 0.
%u = "temporal.tensor"() {sym_name = "u", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%u) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  "gpu.yield"(%c) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (0)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  // Out of bounds below 0 at t < 5 and past T - 1 at t > T - 4.
  %far_back = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 5)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %far_ahead = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t + 3)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  // Undefined at every t > 0.
  %undefined = "temporal.read"(%u) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  // A range past the end, reduced, and a slice outside its operand.
  %range = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 100)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  %total = "temporal.reduce_sum"(%range) {axis = 0 : i64} : (tensor<?x2x3xf32>) -> tensor<2x3xf32>
  %slice = "temporal.dynamic_slice"(%a) {offsets = affine_map<(t)[T] -> (t, 0)>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  %d1 = "temporal.add"(%far_back, %far_ahead) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %d2 = "temporal.mul"(%d1, %undefined) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %d3 = "temporal.sub"(%d2, %total) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %next = "temporal.add"(%prev, %a) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%next) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
