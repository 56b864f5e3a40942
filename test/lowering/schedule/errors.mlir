// lower-temporal-to-loops checks a hand-written @tempo_schedule against
// the program's reads and refuses an illegal one with a located diagnostic.
// RUN: not tempo-opt --split-input-file %s --lower-temporal-to-loops 2>&1 | FileCheck %s
// temporal-schedule writes its own schedule in place of a hand-written one;
// it refuses only the program with no legal schedule, naming the cycle.
// RUN: not tempo-opt --split-input-file %s --temporal-schedule 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE-NOT: error:
// SCHEDULE: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zero-distance cycle: a -> b -> a
// SCHEDULE-NOT: error:
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}the schedule runs 't' backward but read s[t - 1] by 's' then reaches a point not yet computed
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %i = 0 to %T {
    %t = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>(%i)[%T]
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "backward"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}does not compute 'd' first
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: {{.*}}the schedule computes 'd' after 's', which reads it
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
// CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the schedule does not compute 's'
func.func @tempo_schedule(%T: index) {
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
    // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: no tensor named 'q'
    "temporal.compute"(%t) {tensor = "q"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'tempo.direction' is "forward" or "backward"
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "sideways"}
  return
}

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%b) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// A program with no legal schedule: the diagnostic names the cycle.
// CHECK: errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zero-distance cycle: a -> b -> a
"temporal.define"(%b) ({
  %v = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
