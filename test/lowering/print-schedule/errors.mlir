// temporal-print-schedule refuses a program with no legal schedule, and an
// illegal hand-written @tempo_schedule, with located diagnostics.
// RUN: not tempo-opt --split-input-file %s --temporal-print-schedule 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: zero-distance cycle: a -> a
  %v = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the schedule runs 't' backward but read s[t - 1] by 's' then reaches a point not yet computed
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%prev) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%c) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %i = 0 to %T {
    %t = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>(%i)[%T]
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "backward"}
  return
}
