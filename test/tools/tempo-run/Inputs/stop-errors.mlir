// CHECK: stop-errors.mlir:[[# @LINE + 7]]:1: error: temporal.stop: 'd' must have tensor<i1> points, has tensor<i64>
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%c) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%d) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %p = "temporal.position"() {dim = "t"} : () -> tensor<i64>
  // CHECK: stop-errors.mlir:[[# @LINE + 1]]:8: error: this op of 'd' uses the bound T: 'd' decides where 't' stops, so what it is computed from must not depend on where it stops
  %n = "temporal.bound"() {dim = "t"} : () -> tensor<i64>
  %e = "temporal.cmp"(%p, %n) {predicate = "eq"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%e) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%d) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.position"() {dim = "t"} : () -> tensor<i64>
  "gpu.yield"(%p) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%d) ({
  // CHECK: stop-errors.mlir:[[# @LINE + 1]]:8: error: read x[t + 1] by 'd' may reach ahead along 't': 'd' decides where 't' stops
  %n = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<5> : tensor<i64>} : () -> tensor<i64>
  %e = "temporal.cmp"(%n, %c) {predicate = "eq"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%e) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
