// Softmax-like rows whose maximum and sum run along different axes, with
// scales large enough that exp overflows to inf or underflows to 0, so
// the values are inf / inf = NaN, 0 / 0 = NaN, x / inf = 0 and 1 by
// literal IEEE evaluation in op order (the interpreter's semantics). Row
// fusion (a reduction along the last axis with the elementwise ops
// around it), the unfused lowering and every level agree bit for bit
// with the interpreter, NaN for NaN and 0 for 0: a: the maximum along the
// rows broadcast along the columns of a square point (exp overflows), the
// sum along the columns; b: the maximum along the columns, a negative
// scale after the subtraction (exp overflows), the sum along the rows; c:
// a range read viewed as [3, ?] (empty at t = 0), maximum along the first
// axis, sum along the range.
// RUN: tempo-run %s --bound T=3 --seed 4 --interpret > %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 -O 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 4 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=FUSED

// CHECK: a: float32[3, 4, 4] = {{\[\[\[}}NaN, NaN, NaN, 0.0], [NaN, 0.0, NaN, 0.0],
// CHECK: b: float32[3, 4, 4] = {{\[\[\[}}0.0, NaN, NaN, NaN],
// CHECK: c: float32[3, 3] = {{\[\[}}0.0, 0.0, 0.0], [1.0, NaN, NaN], [1.0, NaN, 1.0]]

// The rows are fused: reductions carry their accumulators through a loop
// over a row (iter_args), exp is computed in the row loops.
// FUSED: scf.for {{.*}} iter_args
// FUSED: math.exp

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["t"], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x4xf32>
  %k = "temporal.constant"() {value = dense<1000.0> : tensor<f32>} : () -> tensor<f32>
  %s = "temporal.mul"(%p, %k) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %m = "temporal.reduce_max"(%s) {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4xf32>
  %d = "temporal.sub"(%s, %m) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %e = "temporal.exp"(%d) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<4x4xf32>) -> tensor<4xf32>
  %z1 = "temporal.reshape"(%z) : (tensor<4xf32>) -> tensor<1x4xf32>
  %r = "temporal.div"(%e, %z1) : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  "gpu.yield"(%r) : (tensor<4x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4x4xf32>
  %m = "temporal.reduce_max"(%p) {axis = 0 : i64} : (tensor<4x4xf32>) -> tensor<4xf32>
  %m1 = "temporal.reshape"(%m) : (tensor<4xf32>) -> tensor<1x4xf32>
  %d = "temporal.sub"(%p, %m1) : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<4x4xf32>
  %k = "temporal.constant"() {value = dense<-1.0e30> : tensor<f32>} : () -> tensor<f32>
  %s = "temporal.mul"(%d, %k) : (tensor<4x4xf32>, tensor<f32>) -> tensor<4x4xf32>
  %e = "temporal.exp"(%s) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4xf32>
  %z1 = "temporal.reshape"(%z) : (tensor<4xf32>) -> tensor<4x1xf32>
  %r = "temporal.div"(%e, %z1) : (tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x4xf32>
  "gpu.yield"(%r) : (tensor<4x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %w = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %p = "temporal.permute"(%w) {permutation = [1, 0]} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %k = "temporal.constant"() {value = dense<3.0e38> : tensor<f32>} : () -> tensor<f32>
  %s = "temporal.mul"(%p, %k) : (tensor<3x?xf32>, tensor<f32>) -> tensor<3x?xf32>
  %m = "temporal.reduce_max"(%s) {axis = 0 : i64} : (tensor<3x?xf32>) -> tensor<?xf32>
  %d = "temporal.sub"(%s, %m) : (tensor<3x?xf32>, tensor<?xf32>) -> tensor<3x?xf32>
  %e = "temporal.exp"(%d) : (tensor<3x?xf32>) -> tensor<3x?xf32>
  %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<3x?xf32>) -> tensor<3xf32>
  %z1 = "temporal.reshape"(%z) : (tensor<3xf32>) -> tensor<3x1xf32>
  %r = "temporal.div"(%e, %z1) : (tensor<3x?xf32>, tensor<3x1xf32>) -> tensor<3x?xf32>
  %o = "temporal.reduce_sum"(%r) {axis = 1 : i64} : (tensor<3x?xf32>) -> tensor<3xf32>
  "gpu.yield"(%o) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
