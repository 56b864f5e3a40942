// Cycles through reads through data (data groups): one nest over the
// group's dimension whose points run depth by depth (the lowering's
// tempo_depth_order), the group's tensors in same-point order (c before h);
// every point of them kept. Groups the compiler cannot order are refused
// at the read, with the rule.
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=LOOPS
// RUN: not tempo-opt --split-input-file %S/Inputs/data-group-errors.mlir --temporal-schedule 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: for n in 0..N by depth (the order of the data, known at run time):
// CHECK-NEXT: c[n]  store: full
// CHECK-NEXT: h[n]  store: output
// LOOPS: call @tempo_depth_order

// ERR: data-group-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: not yet: on a cycle through reads through data, 'h' reads 'h' at another point than its own
// ERR: data-group-errors.mlir:{{[0-9]+}}:{{[0-9]+}}: error: the coordinates of a read through data of 'h' on a cycle depend on this read of the cycle's own values

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%left = "temporal.input"() {sym_name = "left", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%c) ({
  %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (-n + 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %l = "temporal.read"(%left) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read_at"(%h, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  "gpu.yield"(%a) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%c) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  %t = "temporal.tanh"(%v) : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%t) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
