"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
// CHECK: ragged-stop-errors.mlir:[[# @LINE + 1]]:6: error: 'y' is over 't' but not over (b): 'd' gives each point of (b) its own length along 't', so it must be over them too
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %c = "temporal.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%c) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["b"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %c = "temporal.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  // CHECK: ragged-stop-errors.mlir:[[# @LINE + 1]]:8: error: read d[0, 0] by 'z' must be at its own 'b': 'd' gives each point of (b) its own length along 't'
  %v = "temporal.read"(%d) {index = affine_map<(b)[B, T] -> (0, 0)>} : (!temporal.rtensor) -> tensor<i1>
  "gpu.yield"(%v) : (tensor<i1>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = [], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %c = "temporal.constant"() {value = dense<true> : tensor<i1>} : () -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%n) ({
  // CHECK: ragged-stop-errors.mlir:[[# @LINE + 1]]:8: error: this op of 'n', not over (b), uses the bound of 't': 'd' gives each point of (b) its own length along 't'
  %v = "temporal.bound"() {dim = "t"} : () -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<()[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%n) : (!temporal.rtensor) -> ()

// -----

// What decides where point b stops may read lengths of earlier points
// only (../ragged-stop-decode.mlir), not its own.
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%n) ({
  // CHECK: ragged-stop-errors.mlir:[[# @LINE + 1]]:8: error: this op of 'n' uses the bound T: 'd' decides where 't' stops, so what it is computed from must not depend on where it stops
  %v = "temporal.bound"() {dim = "t"} : () -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%d) ({
  %v = "temporal.read"(%n) {index = affine_map<(b, t)[B, T] -> (b)>} : (!temporal.rtensor) -> tensor<i64>
  %p = "temporal.position"() {dim = "t"} : () -> tensor<i64>
  %c = "temporal.cmp"(%p, %v) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%d) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%d) : (!temporal.rtensor) -> ()
