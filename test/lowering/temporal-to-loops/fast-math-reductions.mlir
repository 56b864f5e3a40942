// With fast-math, float reductions may be reassociated: the combine op of
// a row group (here a softmax: maximum, then sum of exponentials) and of a
// reduction carries fastmath<reassoc>, so LLVM vectorizes the row loop
// with partial accumulators. Without it the reduction order is the
// interpreter's and results are bit-exact.
// RUN: tempo-opt %s --lower-temporal-to-loops="fast-math" | FileCheck %s --check-prefix=FAST
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=EXACT
// RUN: tempo-run %s --bound T=3 --seed 6 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 6 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 6 --fast-math --format json > %t.fast
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.fast 1e-5

// FAST: arith.maximumf {{.*}} fastmath<reassoc> : f32
// FAST: arith.addf {{.*}} fastmath<reassoc> : f32
// FAST: linalg.generic
// FAST: arith.addf {{.*}} fastmath<reassoc> : f32
// EXACT-NOT: reassoc

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<16x200xf32>} : () -> !temporal.rtensor
%p = "temporal.tensor"() {sym_name = "p", domain = ["t"], element = tensor<16x200xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<200xf32>} : () -> !temporal.rtensor
"temporal.define"(%p) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16x200xf32>
  %m0 = "temporal.reduce_max"(%a) {axis = 1 : i64} : (tensor<16x200xf32>) -> tensor<16xf32>
  %m = "temporal.reshape"(%m0) : (tensor<16xf32>) -> tensor<16x1xf32>
  %d = "temporal.sub"(%a, %m) : (tensor<16x200xf32>, tensor<16x1xf32>) -> tensor<16x200xf32>
  %e = "temporal.exp"(%d) : (tensor<16x200xf32>) -> tensor<16x200xf32>
  %z0 = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<16x200xf32>) -> tensor<16xf32>
  %z = "temporal.reshape"(%z0) : (tensor<16xf32>) -> tensor<16x1xf32>
  %r = "temporal.div"(%e, %z) : (tensor<16x200xf32>, tensor<16x1xf32>) -> tensor<16x200xf32>
  "gpu.yield"(%r) : (tensor<16x200xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16x200xf32>
  %r = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<16x200xf32>) -> tensor<200xf32>
  "gpu.yield"(%r) : (tensor<200xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%p) : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
