// temporal-check-points: with bounds given at compile time, a program whose
// needed points are all defined and in bounds passes unchanged; otherwise the
// first failing read or tensor is reported where it is written.
// RUN: tempo-opt %examples/counter.mlir -p 'temporal-check-points{bounds=T=10}' | FileCheck %s --check-prefix=OK
// RUN: tempo-opt %examples/batched_max.mlir -p 'temporal-check-points{bounds=B=3,T=4}' | FileCheck %s --check-prefix=OK
// RUN: not tempo-opt --split-input-file %s -p 'temporal-check-points{bounds=T=4}' 2>&1 | FileCheck %s
// RUN: not tempo-opt %examples/counter.mlir -p 'temporal-check-points' 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tempo-opt %examples/counter.mlir -p 'temporal-check-points{bounds=T=x}' 2>&1 | FileCheck %s --check-prefix=BAD

// OK: "temporal.output"
// MISSING: error: temporal-check-points needs a value for bound T (bounds=T=N)
// BAD: tempo-opt: error: option bounds of pass 'temporal-check-points' takes NAME=VALUE pairs separated by commas (T=10,B=3), got 'T=x'

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  // CHECK: basic.mlir:[[# @LINE + 1]]:8: error: read x[t + 1] at x[t=3] is out of bounds: t = 4 is outside 0..4 (T = 4)
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t + 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: basic.mlir:[[# @LINE + 1]]:6: error: point y[t=2] is needed but no branch of 'y' defines it (bounds: T=4)
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (1 - t >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
