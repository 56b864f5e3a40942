// temporal-vectorize{bounds=B=3} turns the batch b of a recurrence over
// (b, t) into a leading dimension of batched points: h[b, t] becomes
// h[t] of [3, 1, 4] (the input x[b, t] is read as the range x[0:B, t]),
// the matmul of the batched rows by W is one matmul of 3 rows, the
// reduction's axis moves by one, and the output y keeps its domain and
// copies its slice out of y_batched. Results are unchanged, bit for bit.
// A tensor outside the batch that reads the batched points (total, the sum
// over the batch, Inputs/outside-reader.mlir) reads the batched value
// whole (the group mode, group.mlir): its range is only reduced, so no
// type after the read changes.
// RUN: tempo-opt %s "--temporal-vectorize=bounds=B=3" | FileCheck %s
// RUN: tempo-opt %s "--temporal-vectorize=bounds=B=3" | tempo-run - --bound B=3 --bound T=7 --seed 2 -O0 > %t.vectorized
// RUN: tempo-run %s --bound B=3 --bound T=7 --seed 2 -O0 > %t.original
// RUN: diff %t.vectorized %t.original
// The vectorized program is specialized for B = 3: other bounds are
// refused before running, both ways.
// RUN: tempo-opt %s "--temporal-vectorize=bounds=B=3" | not tempo-run - --bound B=4 --bound T=7 --seed 2 -O0 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: tempo-opt %s "--temporal-vectorize=bounds=B=3" | not tempo-run - --bound B=4 --bound T=7 --seed 2 --interpret 2>&1 | FileCheck %s --check-prefix=OTHER
// OTHER: <stdin>:{{[0-9]+}}:{{[0-9]+}}: error: at h[t=0]: range dimension 0 of the read holds 4 points, but its type states 3
// RUN: tempo-opt %S/Inputs/outside-reader.mlir "--temporal-vectorize=bounds=B=3" | FileCheck %s --check-prefix=OUTSIDE
// RUN: tempo-opt %S/Inputs/outside-reader.mlir "--temporal-vectorize=bounds=B=3" | tempo-run - --bound B=3 --bound T=5 --seed 2 -O0 > %t.outside.vectorized
// RUN: tempo-run %S/Inputs/outside-reader.mlir --bound B=3 --bound T=5 --seed 2 -O0 | diff - %t.outside.vectorized
// Without a bound value the dimension stays a loop.
// RUN: tempo-opt %s --temporal-vectorize | FileCheck %s --check-prefix=UNKNOWN
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-vectorize=bounds=B=3" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// A malformed bounds option is refused.
// RUN: not tempo-opt %s "--temporal-vectorize=bounds=B" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: tempo-opt: error: option bounds of pass 'temporal-vectorize' takes NAME=VALUE pairs separated by commas (T=10,B=3), got 'B'

// CHECK: {domain = ["t"], element = tensor<3x1x4xf32>, sym_name = "h"}
// CHECK: {domain = ["b", "t"], element = tensor<1x4xf32>, sym_name = "y"}
// CHECK: {domain = ["t"], element = tensor<3x1x4xf32>, sym_name = "y_batched"}
// CHECK: "temporal.read_range"(%{{.*}}) {{.*}} -> tensor<3x1x4xf32>
// CHECK: "temporal.reshape"({{.*}}) : (tensor<3x1x4xf32>) -> tensor<3x4xf32>
// CHECK-NEXT: "temporal.matmul"({{.*}}) : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
// CHECK: "temporal.reduce_sum"({{.*}}) {axis = 2 : i64} : (tensor<3x1x4xf32>) -> tensor<3x1xf32>
// CHECK: "temporal.dynamic_slice"
// UNKNOWN: {domain = ["b", "t"], element = tensor<1x4xf32>, sym_name = "h"}
// OUTSIDE: {domain = ["t"], element = tensor<3x1x4xf32>, sym_name = "h"}
// OUTSIDE: {domain = ["t"], element = tensor<1x4xf32>, sym_name = "total"}
// OUTSIDE: "temporal.reduce_sum"({{.*}}) {axis = 0 : i64} : (tensor<3x1x4xf32>) -> tensor<1x4xf32>

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %a = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  "gpu.yield"(%a) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %p = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %m = "temporal.read"(%w) {index = affine_map<(b, t)[B, T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
  %q = "temporal.matmul"(%p, %m) : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %s = "temporal.add"(%q, %a) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = "temporal.reduce_sum"(%s) {axis = 1 : i64} : (tensor<1x4xf32>) -> tensor<1xf32>
  %k = "temporal.constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %c = "temporal.mul"(%n, %k) : (tensor<1xf32>, tensor<f32>) -> tensor<1xf32>
  %r = "temporal.sub"(%s, %c) : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32>
  %v = "temporal.tanh"(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  "gpu.yield"(%v) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %a = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %v = "temporal.mul"(%a, %two) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  "gpu.yield"(%v) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
