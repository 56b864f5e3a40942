// temporal-lift-recurrences replaces reductions over growing ranges by
// running recurrences: the sum of x[b, 0:t+1] (floats) becomes
// x_prefix_sum[b, t] = x_prefix_sum[b, t-1] + x[b, t] from 0 + x[b, 0]; the
// maximum of the integer c[0:t+1] and the sum of its suffix c[t:T] become
// recurrences too (the suffix one backward). The float suffix sum of x is
// left alone unless inexact=true (it would add in the other order). Results
// are bit-exact; the stores of x's prefixes (blocks) become rings of 2.
// The integer sum over the window c[max(0, t-2):t+1] becomes a difference of
// prefix sums c_prefix_sum[t] - c_prefix_sum[t-3] (exact: integers wrap);
// the float window sum of x only with inexact=true.
// RUN: tempo-opt %s --temporal-lift-recurrences | FileCheck %s
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=40 --bound B=2 --seed 8 > %t.lifted
// RUN: tempo-run %s --bound T=40 --bound B=2 --seed 8 > %t.original
// RUN: diff %t.lifted %t.original
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=40 --bound B=2 --seed 8 --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tempo-opt %s "--temporal-lift-recurrences=inexact=true" | FileCheck %s --check-prefix=INEXACT
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-lift-recurrences" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y

// CHECK-DAG: sym_name = "x_prefix_sum"
// CHECK-DAG: sym_name = "c_prefix_max"
// CHECK-DAG: sym_name = "c_suffix_sum"
// CHECK-DAG: sym_name = "c_prefix_sum"
// CHECK-DAG: sym_name = "c_window3_sum"
// CHECK-NOT: sym_name = "x_window2_sum"
// CHECK-NOT: sym_name = "x_suffix_sum"
// The whole range c[0:T] is neither a prefix nor a suffix of t:
// CHECK-NOT: sym_name = "c_suffix_max"
// The float suffix and window sums and the whole range still read their
// ranges:
// CHECK: "temporal.read_range"
// CHECK: "temporal.read_range"
// CHECK: "temporal.read_range"
// CHECK-NOT: "temporal.read_range"
// INEXACT-DAG: sym_name = "x_suffix_sum"
// INEXACT-DAG: sym_name = "x_window2_sum"
// INEXACT: "temporal.read_range"
// INEXACT-NOT: "temporal.read_range"
// STATS: x_prefix_sum: ring<2>
// STATS: c_prefix_max: ring<2>
// STATS: c_suffix_sum: ring<2>

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%c = "temporal.input"() {sym_name = "c", domain = ["t"], element = tensor<2xi32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["b", "t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%m = "temporal.tensor"() {sym_name = "m", domain = ["t"], element = tensor<2xi32>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<2xi32>} : () -> !temporal.rtensor
%f = "temporal.tensor"() {sym_name = "f", domain = ["b", "t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<2xi32>} : () -> !temporal.rtensor
%ws = "temporal.tensor"() {sym_name = "ws", domain = ["t"], element = tensor<2xi32>} : () -> !temporal.rtensor
%fw = "temporal.tensor"() {sym_name = "fw", domain = ["b", "t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%ws) ({
  %r = "temporal.read_range"(%c) {caps = [affine_map<(t)[B, T] -> ()>], lower = [affine_map<(t)[B, T] -> (0, t - 2)>], upper = [affine_map<(t)[B, T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xi32>
  %v = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?x2xi32>) -> tensor<2xi32>
  "gpu.yield"(%v) : (tensor<2xi32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%fw) ({
  %r = "temporal.read_range"(%x) {caps = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> ()>], lower = [affine_map<(b, t)[B, T] -> (b)>, affine_map<(b, t)[B, T] -> (t - 1, 0)>], upper = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %v = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%v) : (tensor<3xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %r = "temporal.read_range"(%c) {caps = [affine_map<(t)[B, T] -> ()>], lower = [affine_map<(t)[B, T] -> (0)>], upper = [affine_map<(t)[B, T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x2xi32>
  %v = "temporal.reduce_max"(%r) {axis = 0 : i64} : (tensor<?x2xi32>) -> tensor<2xi32>
  "gpu.yield"(%v) : (tensor<2xi32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %r = "temporal.read_range"(%x) {caps = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> ()>], lower = [affine_map<(b, t)[B, T] -> (b)>, affine_map<(b, t)[B, T] -> (0)>], upper = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %v = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%v) : (tensor<3xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%m) ({
  %r = "temporal.read_range"(%c) {caps = [affine_map<(t)[B, T] -> ()>], lower = [affine_map<(t)[B, T] -> (0)>], upper = [affine_map<(t)[B, T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xi32>
  %v = "temporal.reduce_max"(%r) {axis = 0 : i64} : (tensor<?x2xi32>) -> tensor<2xi32>
  "gpu.yield"(%v) : (tensor<2xi32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %r = "temporal.read_range"(%c) {caps = [affine_map<(t)[B, T] -> ()>], lower = [affine_map<(t)[B, T] -> (t)>], upper = [affine_map<(t)[B, T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x2xi32>
  %v = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?x2xi32>) -> tensor<2xi32>
  "gpu.yield"(%v) : (tensor<2xi32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%f) ({
  %r = "temporal.read_range"(%x) {caps = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> ()>], lower = [affine_map<(b, t)[B, T] -> (b)>, affine_map<(b, t)[B, T] -> (t)>], upper = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %v = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%v) : (tensor<3xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
"temporal.output"(%m) : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
"temporal.output"(%f) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%ws) : (!temporal.rtensor) -> ()
"temporal.output"(%fw) : (!temporal.rtensor) -> ()
