// temporal-check-points checks only the reads that are evaluated: a read
// whose value reaches no result or external call needs no point
// ("Evaluation is demand-driven" in dialects/README.md), so it is never
// out of bounds and never reads an undefined point. The same reads, live,
// are reported.
// RUN: tempo-opt --split-input-file %s -p 'temporal-check-points{bounds=T=4}' 2>&1 | FileCheck %s --check-prefix=DEAD
// RUN: not tempo-opt --split-input-file %S/Inputs/live-reads.mlir -p 'temporal-check-points{bounds=T=4}' 2>&1 | FileCheck %S/Inputs/live-reads.mlir

// DEAD-NOT: error
// DEAD: "temporal.output"

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.input"() {sym_name = "w", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %p = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t - 3)>} : (!temporal.rtensor) -> tensor<f32>
  %unused = "temporal.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (1 - t >= 0)>} : (!temporal.rtensor) -> ()
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  %c = "temporal.constant"() {value = dense<2.0> : tensor<2xf32>} : () -> tensor<2xf32>
  %undefined = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %range = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 9)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %slice = "temporal.dynamic_slice"(%c) {offsets = affine_map<(t)[T] -> (t)>} : (tensor<2xf32>) -> tensor<1xf32>
  "gpu.yield"(%c) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
