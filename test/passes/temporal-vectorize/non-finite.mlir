// Regression (tempo-fuzz seed 1795951436, case 3398): causal attention
// over c[0:t+1] whose later points overflow to -inf (c[t] = c[t-1] -
// 3e38). The interpreter's step 0 reads only c[0] = 0 and gives 1.0;
// the batched form contracted the probabilities, zeroed outside the
// range, with the values of every step, and 0 * -inf made NaN at step 0.
// The exact pipeline (-O2) no longer batches a contraction with a second
// operand carrying the range, so it agrees with the interpreter bit for
// bit; -O3 and --fast-math, which do (`temporal-vectorize` with
// `inexact`), assume finite values outside the ranges, as documented.
// RUN: tempo-run %s --bound T=4 --seed 868 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 868 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 868 -O 1 | diff - %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// CHECK: o: float32[4, 2, 2] = {{.}}{{.}}{{.}}1.0, 1.0], {{.}}1.0, 1.0]], {{.}}{{.}}NaN
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<2x2xf32>} : () -> !temporal.rtensor
  // c[t] = [t, t]
  "temporal.define"(%c) ({
    %z = "temporal.constant"() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
    "gpu.yield"(%z) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%c) ({
    %p = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
    %one = "temporal.constant"() {value = dense<-3.0e38> : tensor<f32>} : () -> tensor<f32>
    %n = "temporal.add"(%p, %one) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    "gpu.yield"(%n) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%o) ({
    %q = "temporal.constant"() {value = dense<[[1.0, 0.0], [-1.0, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
    %keys = "temporal.read_range"(%c) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %cache = "temporal.read_range"(%c) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %two = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %values = "temporal.mul"(%cache, %two) : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
    %s = "temporal.einsum"(%q, %keys) {spec = "qd,nd->qn"} : (tensor<2x2xf32>, tensor<?x2xf32>) -> tensor<2x?xf32>
    %scale = "temporal.constant"() {value = dense<1000.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
    %x = "temporal.mul"(%scale, %s) : (tensor<1x1xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
    %m = "temporal.reduce_max"(%x) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
    %mk = "temporal.reshape"(%m) : (tensor<2xf32>) -> tensor<2x1xf32>
    %d = "temporal.sub"(%x, %mk) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
    %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
    %zk = "temporal.reshape"(%z) : (tensor<2xf32>) -> tensor<2x1xf32>
    %p = "temporal.div"(%e, %zk) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
    %r = "temporal.einsum"(%values, %p) {spec = "nb,an->ab"} : (tensor<?x2xf32>, tensor<2x?xf32>) -> tensor<2x2xf32>
    %w = "temporal.reduce_sum"(%p) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
    %wk = "temporal.reshape"(%w) : (tensor<2xf32>) -> tensor<2x1xf32>
    %rw = "temporal.add"(%r, %wk) : (tensor<2x2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
    "gpu.yield"(%rw) : (tensor<2x2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%o) : (!temporal.rtensor) -> ()
}
