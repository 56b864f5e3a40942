// Valid elementwise broadcasts (dialects/README.md, "Broadcasting"): size-1
// dimensions and missing leading ones stretch, against static sizes and
// against the lengths of range reads (`?`), for arithmetic, cmp and select
// with operands of three ranks. The interpreter, every level and the
// unfused lowering agree, at T = 1 (ranges of one point) and T = 4. The
// result types that state a static size for a range's length are refused
// (test/passes/temporal-verify/broadcast-errors.mlir).
// RUN: tempo-run %s --bound T=4 --seed 5 --interpret > %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 5 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 5 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 5 -O 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 5 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 5 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 5 -O 0 | diff - %t.one
// RUN: tempo-run %s --bound T=1 --seed 5 -O 2 | diff - %t.one

// CHECK: y: float32[4, 3, 3]

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%s = "temporal.input"() {sym_name = "s", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %prefix = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %suffix = "temporal.read_range"(%s) {caps = [], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xf32>
  %row = "temporal.constant"() {value = dense<[[0.5, -1.0, 2.0]]> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  %column = "temporal.constant"() {value = dense<[[1.0], [2.0], [-3.0]]> : tensor<3x1xf32>} : () -> tensor<3x1xf32>
  %half = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  // ?x3 + 1x3, then a scalar: ?x3.
  %a = "temporal.add"(%prefix, %row) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %b = "temporal.mul"(%half, %a) : (tensor<f32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  // 3x1 * ?: 3x?.
  %c = "temporal.mul"(%column, %suffix) : (tensor<3x1xf32>, tensor<?xf32>) -> tensor<3x?xf32>
  // cmp of ?x3 against 3, select among ?x3, 1x3 and a scalar.
  %m = "temporal.cmp"(%b, %now) {predicate = "gt"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  %d = "temporal.select"(%m, %row, %half) : (tensor<?x3xi1>, tensor<1x3xf32>, tensor<f32>) -> tensor<?x3xf32>
  // A static broadcast whose type says ? (a weaker statement; allowed).
  %e = "temporal.add"(%column, %row) : (tensor<3x1xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  %ds = "temporal.reduce_sum"(%d) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  %cs = "temporal.reduce_max"(%c) {axis = 1 : i64} : (tensor<3x?xf32>) -> tensor<3xf32>
  %es = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  %f = "temporal.add"(%ds, %cs) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %g = "temporal.sub"(%f, %es) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  // 3 against 3x1: 3x3.
  %h = "temporal.mul"(%g, %column) : (tensor<3xf32>, tensor<3x1xf32>) -> tensor<3x3xf32>
  "gpu.yield"(%h) : (tensor<3x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
