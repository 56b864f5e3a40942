// temporal-vectorize{bounds=T=6} through range reads of a tensor's own
// point: causal attention a[t] over k[0:t+1] and v[0:t+1], a window sum
// w[t] over k[max(0, t-2):t+1] and a suffix maximum s[t] over v[t:T] are
// on no cycle along t, so they are computed for all six steps at once:
// each range is read whole (k[0:T], one value for every step) and masked
// by the step's position (the lower triangle for a prefix, a band for a
// window, the upper triangle for a suffix) where it is summed, maximized
// or contracted. The queries by all keys are one batched product per
// batch row ("zmk,zkn->zmn": the steps are rows), so is the product of
// the masked probabilities by the values. The gradient of Wq reads the
// cotangents of later steps (suffixes, masked the same way). Results are
// bit for bit those of the loops at levels 0 to 2.
// The attention's product of the masked probabilities by the values
// zeroes one of two operands carrying the range: `inexact` (-O3, fast
// math), since a value of a later step that is infinite or NaN would not
// be cancelled by the zero (test/passes/temporal-vectorize/non-finite.mlir).
// Without it (the exact pipeline) `a` stays a loop; the sum and the
// maximum, which select the identity outside the range, are batched.
// RUN: tempo-opt %s --temporal-autodiff --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=6 inexact=true" --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=6 inexact=true" | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=6" --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=EXACT
// RUN: tempo-run %s --bound T=6 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 2 | diff - %t.interpreted
// (-O3 tiles the attention and lifts the window sum into a recurrence,
// both of which change float rounding: it runs, not compared bit for bit.)
// RUN: tempo-run %s --bound T=6 --seed 2 -O 3 > /dev/null
// RUN: tempo-run %s --bound T=6 --seed 2 --disable-pass temporal-vectorize | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 2 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 2 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 2 | diff - %t.one
// Past the batched-value limit (8 MiB for a masked [T, T, ...] value) the
// steps stay a loop:
// RUN: tempo-opt %s --temporal-autodiff "--temporal-vectorize=bounds=T=3000000" --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=LARGE

// BEFORE:      for t = 0 up to T-1:
// BEFORE-DAG:    a[t]
// BEFORE-DAG:    w[t]

// AFTER-DAG:  a_batched[]  store: full
// AFTER-DAG:  w_batched[]  store: full
// AFTER-DAG:  s_batched[]  store: full

// EXACT-DAG:  w_batched[]  store: full
// EXACT-DAG:  s_batched[]  store: full
// EXACT-DAG:    a[t]
// EXACT-NOT:  a_batched

// The positions of the range against each step's bounds, and the products.
// CHECK-DAG: "temporal.arange"() : () -> tensor<6xi64>
// CHECK-DAG: "temporal.cmp"({{.*}}) {predicate = "ge"}
// CHECK-DAG: "temporal.cmp"({{.*}}) {predicate = "lt"}
// CHECK-DAG: "temporal.einsum"({{.*}}) {spec = "zmk,zkn->zmn"} : (tensor<2x6x4xf32>, tensor<2x4x6xf32>) -> tensor<2x6x6xf32>
// CHECK-DAG: {domain = [], element = tensor<6x2x4xf32>, sym_name = "a_batched"}

// LARGE-NOT: a_batched

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%Wq = "temporal.input"() {sym_name = "Wq", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%Wv = "temporal.input"() {sym_name = "Wv", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%q = "temporal.tensor"() {sym_name = "q", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%q) ({
  %m = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%p) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%k) ({
  %m = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%p) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %m = "temporal.read"(%Wv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%p) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %qt = "temporal.read"(%q) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %ks = "temporal.read_range"(%k) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %vs = "temporal.read_range"(%v) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %sc = "temporal.einsum"(%qt, %ks) {spec = "bd,nbd->bn"} : (tensor<2x4xf32>, tensor<?x2x4xf32>) -> tensor<2x?xf32>
  %mx = "temporal.reduce_max"(%sc) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %mx1 = "temporal.reshape"(%mx) : (tensor<2xf32>) -> tensor<2x1xf32>
  %d = "temporal.sub"(%sc, %mx1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %z1 = "temporal.reshape"(%z) : (tensor<2xf32>) -> tensor<2x1xf32>
  %p = "temporal.div"(%e, %z1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %o = "temporal.einsum"(%p, %vs) {spec = "bn,nbd->bd"} : (tensor<2x?xf32>, tensor<?x2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%o) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %ks = "temporal.read_range"(%k) {lower = [affine_map<(t)[T] -> (0, t - 2)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %sum = "temporal.reduce_sum"(%ks) {axis = 0 : i64} : (tensor<?x2x4xf32>) -> tensor<2x4xf32>
  %m = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.add"(%sum, %p) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%r) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %vs = "temporal.read_range"(%v) {lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %sc = "temporal.mul"(%vs, %two) : (tensor<?x2x4xf32>, tensor<f32>) -> tensor<?x2x4xf32>
  %mx = "temporal.reduce_max"(%sc) {axis = 0 : i64} : (tensor<?x2x4xf32>) -> tensor<2x4xf32>
  %m = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %p = "temporal.matmul"(%xt, %m) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.add"(%mx, %p) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%r) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %wt = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %st = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %aw = "temporal.mul"(%at, %wt) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %all = "temporal.add"(%aw, %st) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.reduce_sum"(%all) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2xf32>
  %l = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%l) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%loss, %Wq) {sym_name = "gWq"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%a) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
