// Gradients through collectives: the loss of a run is the sum of every
// process's loss, so the cotangent of an all-reduced sum is the sum of the
// processes' cotangents (the all-reduce of the cotangent) and that of a
// mean their mean. With one process (no mpirun) both are the identity:
// gw = sum over t of x[t], compiled and interpreted alike (across two
// processes: test/tools/tempo-run/mpi-two-processes.mlir). Max and min have
// no gradient yet, refused at the op.
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 1 -O 0 | diff - %t.interpreted
// RUN: FileCheck %s --check-prefix=VALUES < %t.interpreted
// RUN: sed 's/"mean"/"max"/' %s | not tempo-opt --temporal-autodiff 2>&1 | FileCheck %s --check-prefix=MAX

// The forward all-reduce stays; the cotangent is all-reduced the same way.
// CHECK: "temporal.all_reduce"(%{{.*}}) {reduction = "mean"} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK: "temporal.all_reduce"(%{{.*}}) {reduction = "mean"} : (tensor<3xf64>) -> tensor<3xf64>
// CHECK-NOT: temporal.grad

// VALUES: gw: float64[3] = [[[G0:.*]], [[G1:.*]], [[G2:.*]]]
// VALUES-NEXT: xs: float64[3] = [[[G0]], [[G1]], [[G2]]]

// MAX: error: temporal-autodiff: no gradient through the all_reduce "max" (not yet: only "sum" and "mean" have gradients)

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<3xf64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%loss) ({
  %wv = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf64>
  %xv = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %p = "temporal.mul"(%wv, %xv) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %m = "temporal.all_reduce"(%p) {reduction = "mean"} : (tensor<3xf64>) -> tensor<3xf64>
  %l = "temporal.reduce_sum"(%m) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gw = "temporal.grad"(%loss, %w) {sym_name = "gw"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
// The expected gradient with one process: the sum of x over t.
%xs = "temporal.tensor"() {sym_name = "xs", domain = [], element = tensor<3xf64>} : () -> !temporal.rtensor
"temporal.define"(%xs) ({
  %all = "temporal.read_range"(%x) {lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>], caps = [affine_map<()[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x3xf64>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?x3xf64>) -> tensor<3xf64>
  "gpu.yield"(%s) : (tensor<3xf64>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%gw) : (!temporal.rtensor) -> ()
"temporal.output"(%xs) : (!temporal.rtensor) -> ()
