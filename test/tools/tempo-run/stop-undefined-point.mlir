// A stop's tensor is needed at every point the stop looks at: here 'done'
// (never true) is defined only for t < 3, so with T = 3 the loop reaches
// the bound and every run succeeds, while with T = 5 the stop looks at
// done[t=3], which no branch defines: compiled (at every level) and
// interpreted alike, the run fails naming the point (the compiled code
// reports it at run time; it once ran on with whatever the point held).
// The ragged form (Inputs/stop-undefined-ragged.mlir) names the batch
// point too. A program without outputs demands nothing, not even the stop.
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 | diff - %t.interpreted
// RUN: not tempo-run %s --bound T=5 --seed 2 --interpret 2>&1 | FileCheck %s
// RUN: not tempo-run %s --bound T=5 --seed 2 2>&1 | FileCheck %s
// RUN: not tempo-run %s --bound T=5 --seed 2 -O 0 2>&1 | FileCheck %s
// RUN: not tempo-run %s --bound T=5 --seed 2 -O 3 2>&1 | FileCheck %s
// RUN: not tempo-run %S/Inputs/stop-undefined-ragged.mlir --bound T=4 --bound B=2 --seed 2 --interpret 2>&1 | FileCheck %s --check-prefix=RAGGED
// RUN: not tempo-run %S/Inputs/stop-undefined-ragged.mlir --bound T=4 --bound B=2 --seed 2 2>&1 | FileCheck %s --check-prefix=RAGGED
// RUN: tempo-run %S/Inputs/stop-undefined-silent.mlir --bound T=4 --seed 2 --interpret 2>&1 | FileCheck %s --check-prefix=SILENT
// RUN: tempo-run %S/Inputs/stop-undefined-silent.mlir --bound T=4 --seed 2 2>&1 | FileCheck %s --check-prefix=SILENT

// CHECK: stop-undefined-point.mlir:[[@LINE+5]]:9: error: point done[t=3] is needed but no branch of 'done' defines it
// RAGGED: stop-undefined-ragged.mlir:{{[0-9]+}}:9: error: point done[b=0, t=2] is needed but no branch of 'done' defines it
// SILENT: the program marks no tensor with temporal.output
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c = "temporal.cmp"(%v, %two) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (-t + 2 >= 0)>} : (!temporal.rtensor) -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
