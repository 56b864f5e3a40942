// Sequence nests (a loop over i around nests of its own, see carried.mlir)
// are checked like any schedule: read back from a hand-written
// @tempo_schedule, every read must still find its source computed, and a
// cycle whose iteration has no legal order is refused with the inner
// cycle's read.
// RUN: not tempo-opt --split-input-file %s --lower-temporal-to-loops 2>&1 | FileCheck %s
// RUN: not tempo-opt --split-input-file %s --temporal-print-schedule 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%c) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %q = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1, 0)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.constant"() {value = dense<0.01> : tensor<f64>} : () -> tensor<f64>
  %m = "temporal.mul"(%q, %k) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %s = "temporal.sub"(%p, %m) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %p = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  %m = "temporal.mul"(%p, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %s = "temporal.add"(%m, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %n = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  // The backward loop runs before the forward one: b[i, t] reads a[i, t] too early.
  // CHECK: carried-errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: read a[i, t] by 'b' sees the point being computed, but the schedule does not compute 'a' first
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%n, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%I: index, %T: index) {
  affine.for %i = 0 to %I {
    "temporal.compute"(%i) {tensor = "w"} : (index) -> ()
    affine.for %s = 0 to %T {
      %t = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>(%s)[%T]
      "temporal.compute"(%i, %t) {tensor = "b"} : (index, index) -> ()
    } {tempo.dim = "t", tempo.direction = "backward"}
    affine.for %t = 0 to %T {
      "temporal.compute"(%i, %t) {tensor = "a"} : (index, index) -> ()
    } {tempo.dim = "t", tempo.direction = "forward"}
  } {tempo.dim = "i", tempo.direction = "forward"}
  return
}

// -----

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%c) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  // CHECK: carried-errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: the schedule runs 'i' backward but read w[i - 1] by 'w' then reaches a point not yet computed
  %p = "temporal.read"(%w) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %q = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1, 0)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.constant"() {value = dense<0.01> : tensor<f64>} : () -> tensor<f64>
  %m = "temporal.mul"(%q, %k) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %s = "temporal.sub"(%p, %m) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %p = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  %m = "temporal.mul"(%p, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %s = "temporal.add"(%m, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %n = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%n, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%I: index, %T: index) {
  affine.for %j = 0 to %I {
    %i = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>(%j)[%I]
    "temporal.compute"(%i) {tensor = "w"} : (index) -> ()
    affine.for %t = 0 to %T {
      "temporal.compute"(%i, %t) {tensor = "a"} : (index, index) -> ()
    } {tempo.dim = "t", tempo.direction = "forward"}
    affine.for %s = 0 to %T {
      %t = affine.apply affine_map<(d0)[s0] -> (s0 - d0 - 1)>(%s)[%T]
      "temporal.compute"(%i, %t) {tensor = "b"} : (index, index) -> ()
    } {tempo.dim = "t", tempo.direction = "backward"}
  } {tempo.dim = "i", tempo.direction = "backward"}
  return
}

// -----

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%c) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %q = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1, 0)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.constant"() {value = dense<0.01> : tensor<f64>} : () -> tensor<f64>
  %m = "temporal.mul"(%q, %k) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %s = "temporal.sub"(%p, %m) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %p = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  // Within one iteration a and b now form a cycle of their own, reading
  // both the past and the future along t.
  // CHECK: carried-errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: reads on one cycle go both to the past and to the future along 't' (e.g. b[i, t + 1]); no loop direction satisfies them
  %f = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  %m0 = "temporal.mul"(%p, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %m = "temporal.add"(%m0, %f) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %s = "temporal.add"(%m, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0, T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %n = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%n, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
