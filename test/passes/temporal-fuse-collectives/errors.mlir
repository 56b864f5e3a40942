// temporal-fuse-collectives refuses what it cannot work on, with a located
// diagnostic and a non-zero exit: a program the verifier rejects (a
// collective reading its own point: a zero-distance cycle, reported at
// the read), and an option the pass does not have (it has none).
// RUN: not tempo-opt %s --temporal-fuse-collectives 2>&1 | FileCheck %s
// RUN: not tempo-opt %s --temporal-fuse-collectives=bogus=1 2>&1 | FileCheck %s --check-prefix=OPTION

// CHECK: errors.mlir:[[# @LINE + 6]]:8: error: zero-distance cycle: c -> c
// OPTION: error: unknown option 'bogus' for pass 'temporal-fuse-collectives' (known: none)

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%c) ({
  %v = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
