// Two sets that would each be fine but together make a cycle: a2 (a sum)
// reads b1 (a maximum) at its own point and b2 reads a1. Merging {a1, a2}
// and {b1, b2} on one analysis would make each buffer wait for the other
// (a zero-distance cycle: found by the random collective programs of the
// differential tests). The pass merges {a1, a2}, analyses the program
// again, and leaves b1 and b2 apart: 3 all-reduces, and the results are
// those of the program as written.
// RUN: tempo-opt %s --temporal-fuse-collectives | FileCheck %s
// RUN: tempo-opt %s --temporal-fuse-collectives | grep -c temporal.all_reduce | FileCheck %s --check-prefix=COUNT
// RUN: tempo-opt %s --temporal-fuse-collectives --temporal-verify > /dev/null
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret -O0 > %t.plain
// RUN: tempo-run %s --bound T=3 --seed 2 | diff - %t.plain

// CHECK: sym_name = "a1$fused"
// CHECK-NOT: sym_name = "b1$fused"
// COUNT: 3

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%a1 = "temporal.tensor"() {sym_name = "a1", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%a1) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%b1 = "temporal.tensor"() {sym_name = "b1", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%b1) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %w = "temporal.tanh"(%v) : (tensor<f64>) -> tensor<f64>
  %y = "temporal.all_reduce"(%w) {reduction = "max"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%a2 = "temporal.tensor"() {sym_name = "a2", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%a2) ({
  %v = "temporal.read"(%b1) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %w = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%v, %w) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %y = "temporal.all_reduce"(%s) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%b2 = "temporal.tensor"() {sym_name = "b2", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%b2) ({
  %v = "temporal.read"(%a1) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %w = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.mul"(%v, %w) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %y = "temporal.all_reduce"(%s) {reduction = "max"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a1) : (!temporal.rtensor) -> ()
"temporal.output"(%b1) : (!temporal.rtensor) -> ()
"temporal.output"(%a2) : (!temporal.rtensor) -> ()
"temporal.output"(%b2) : (!temporal.rtensor) -> ()
