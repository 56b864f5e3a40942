// temporal.position and temporal.bound: the reader's position along one of
// its dimensions and a dimension's bound, as scalars; lowered to the loop
// index and the bound argument (cast or converted), computed the same by
// the interpreter.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=4 | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=4 --interpret | FileCheck %s --check-prefix=OUT
// RUN: not tempo-opt %S/Inputs/position-outside.mlir --temporal-verify 2>&1 | FileCheck %s --check-prefix=OUTSIDE

// CHECK: affine.for %[[t:.*]] = 0 to %[[T:.*]] {
// CHECK-DAG: arith.index_cast %[[t]] : index to i64
// CHECK-DAG: arith.index_cast %[[T]] : index to i64
// CHECK-DAG: arith.sitofp
// OUT-DAG: angle: float32[4] = [0.0, 0.25, 0.5, 0.75]
// OUT-DAG: step: int64[4] = [0, 1, 2, 3]
// OUTSIDE: position-outside.mlir:6:10: error: position along 'l' in a definition of 'y', whose domain does not have it

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %angle = "temporal.tensor"() {sym_name = "angle", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %step = "temporal.tensor"() {sym_name = "step", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
  // angle[t] = t / T
  "temporal.define"(%angle) ({
    %p = "temporal.position"() {dim = "t"} : () -> tensor<f32>
    %n = "temporal.bound"() {dim = "t"} : () -> tensor<f32>
    %a = "temporal.div"(%p, %n) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%a) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%step) ({
    %p = "temporal.position"() {dim = "t"} : () -> tensor<i64>
    "gpu.yield"(%p) : (tensor<i64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%angle) : (!temporal.rtensor) -> ()
  "temporal.output"(%step) : (!temporal.rtensor) -> ()
}
