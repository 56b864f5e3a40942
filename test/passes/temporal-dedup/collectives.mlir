// Collectives are effects, like external calls: every process must reach
// the same ones in the same order, once per computed point. Two equal
// all-reduces in a body are not merged, one whose value is unused is kept,
// tensors holding one are not merged, and no optimization level removes or
// batches them (x is over b, which -O2 would otherwise vectorize).
// RUN: tempo-opt %s --temporal-dedup --temporal-dce | FileCheck %s
// RUN: tempo-opt %s -O2 | FileCheck %s
// RUN: tempo-opt %s -O3 | FileCheck %s

// CHECK-COUNT-4: "temporal.all_reduce"
// CHECK-NOT: "temporal.all_reduce"

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
%in = "temporal.input"() {sym_name = "in", domain = ["b"], element = tensor<4xf32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["b"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %v = "temporal.read"(%in) {index = affine_map<(b)[B] -> (b)>} : (!temporal.rtensor) -> tensor<4xf32>
  %s = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  %t = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  %unused = "temporal.all_reduce"(%v) {reduction = "max"} : (tensor<4xf32>) -> tensor<4xf32>
  %y = "temporal.add"(%s, %t) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%y) : (tensor<4xf32>) -> ()
}) {when = affine_set<(b)[B] : (0 == 0)>} : (!temporal.rtensor) -> ()
%x2 = "temporal.tensor"() {sym_name = "x2", domain = ["b"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%x2) ({
  %v = "temporal.read"(%in) {index = affine_map<(b)[B] -> (b)>} : (!temporal.rtensor) -> tensor<4xf32>
  %s = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s) : (tensor<4xf32>) -> ()
}) {when = affine_set<(b)[B] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%x2) : (!temporal.rtensor) -> ()
