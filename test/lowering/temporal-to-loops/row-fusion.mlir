// Row fusion: a softmax along the rows of a range that starts empty
// (x[0:t] at t = 0), the mean and a weighted sum of its weights, and an
// RMS norm of a vector (no row dimensions), each one loop nest: a loop over
// the rows, in it a loop along the row per reduction (its accumulator an
// iteration argument) and per stored wide value. The exponentials and the
// weights are used twice, so they are stored; w * p is used once, so it is
// computed inside the sum's loop; maxima, sums and the reshapes between
// them stay in registers. At t = 0 the maximum is -inf, the sum 0 and the
// mean 0 / 0 = NaN, as the interpreter says. Bit-exact with the
// interpreter, and with fusion off.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=5 --seed 3 > %t.compiled
// RUN: tempo-run %s --bound T=5 --seed 3 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=5 --seed 3 --disable-pass fusion > %t.unfused
// RUN: diff %t.unfused %t.interpreted
// RUN: FileCheck %s --check-prefix=VALUES < %t.compiled
// With fast math each row's float reduction may be reassociated and asks
// LLVM to interleave its vectorized loop 4 times (4 partial sums: the CPU
// code is optimized with interleaving off elsewhere); exact, it does not.
// RUN: tempo-opt %s --lower-temporal-to-loops=fast-math=true | FileCheck %s --check-prefix=INTERLEAVE
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=NO-HINT
// RUN: tempo-run %s --bound T=5 --seed 3 --fast-math --format json | %python -c "import json,sys; [json.loads(l) for l in sys.stdin]"
// With `parallel`, a group of at least 2^17 elements runs its rows as an
// scf.parallel loop (64 rows of 2,048 here), with the same results.
// RUN: tempo-opt %S/Inputs/wide-rows.mlir --lower-temporal-to-loops=parallel=true | FileCheck %s --check-prefix=PARALLEL
// RUN: tempo-opt %S/Inputs/wide-rows.mlir --lower-temporal-to-loops | FileCheck %s --check-prefix=SEQUENTIAL
// RUN: tempo-run %S/Inputs/wide-rows.mlir --bound T=3 --seed 1 --threads 2 > %t.parallel
// RUN: tempo-run %S/Inputs/wide-rows.mlir --bound T=3 --seed 1 --interpret > %t.parallel-interpreted
// RUN: diff %t.parallel %t.parallel-interpreted

// INTERLEAVE: #[[COUNT:.*]] = #llvm.loop_interleave<count = 4 : i32>
// INTERLEAVE: #[[HINT:.*]] = #llvm.loop_annotation<interleave = #[[COUNT]]>
// INTERLEAVE: scf.for {{.*}} iter_args({{.*}}) -> (f32) {
// INTERLEAVE: arith.maximumf {{.*}} fastmath<reassoc> : f32
// INTERLEAVE: } {llvm.loop_annotation = #[[HINT]]}
// INTERLEAVE: scf.for {{.*}} iter_args({{.*}}) -> (f32) {
// INTERLEAVE: arith.addf {{.*}} fastmath<reassoc> : f32
// INTERLEAVE: } {llvm.loop_annotation = #[[HINT]]}
// NO-HINT-NOT: llvm.loop_annotation

// CHECK-LABEL: func.func @tempo_main
// CHECK: affine.for
// The softmax rows: one nest.
// CHECK: %[[LEN:.*]] = arith.subi
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %{{.*}} step
// CHECK:   %[[MAX:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK:     arith.maximumf
// CHECK:   scf.for %[[J:.*]] = %{{.*}} to %[[LEN]] step
// CHECK:     arith.subf %{{.*}}, %[[MAX]]
// CHECK:     math.exp
// CHECK:     memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[J]]]
// CHECK:   %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK:   scf.for %{{.*}} = %{{.*}} to %[[LEN]] step
// CHECK:     arith.divf %{{.*}}, %[[SUM]]
// CHECK:   %[[WSUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK:   %[[MEAN:.*]] = arith.divf %[[WSUM]]
// CHECK:   %[[PSUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[LEN]] step %{{.*}} iter_args
// CHECK:     arith.mulf
// CHECK:     arith.addf
// CHECK:   %[[OUT:.*]] = arith.addf %[[MEAN]], %[[PSUM]]
// CHECK:   memref.store %[[OUT]], %{{.*}}[%[[ROW]]]
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: memref.subview %{{.*}}[%{{.*}}, 0] [1, 5]
// The norm of a vector: a loop of one row.
// CHECK: scf.for
// CHECK:   scf.for {{.*}} iter_args
// CHECK:   math.sqrt
// CHECK:   scf.for
// CHECK:     arith.divf
// CHECK-NOT: linalg.generic
// CHECK: return

// PARALLEL: scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// PARALLEL:   scf.for {{.*}} iter_args
// PARALLEL:   arith.mulf
// PARALLEL-NOT: linalg.generic
// PARALLEL: math.exp

// SEQUENTIAL-NOT: scf.parallel

// VALUES: y: float32[5, 2] = {{\[\[}}NaN, NaN], [
// VALUES: n: float32[5, 5]

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<5xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = ["t"], element = tensor<5xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
  %p = "temporal.permute"(%r) {permutation = [1, 0]} : (tensor<?x2xf32>) -> tensor<2x?xf32>
  %m = "temporal.reduce_max"(%p) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %m1 = "temporal.reshape"(%m) : (tensor<2xf32>) -> tensor<2x1xf32>
  %d = "temporal.sub"(%p, %m1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
  %s = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %s1 = "temporal.reshape"(%s) : (tensor<2xf32>) -> tensor<2x1xf32>
  %w = "temporal.div"(%e, %s1) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
  %mean = "temporal.reduce_mean"(%w) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %wp = "temporal.mul"(%w, %p) : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  %ps = "temporal.reduce_sum"(%wp) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
  %out = "temporal.add"(%mean, %ps) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "gpu.yield"(%out) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%n) ({
  %a = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<5xf32>
  %sq = "temporal.mul"(%a, %a) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %ms = "temporal.reduce_mean"(%sq) {axis = 0 : i64} : (tensor<5xf32>) -> tensor<f32>
  %eps = "temporal.constant"() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
  %sh = "temporal.add"(%ms, %eps) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %rt = "temporal.sqrt"(%sh) : (tensor<f32>) -> tensor<f32>
  %nv = "temporal.div"(%a, %rt) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>
  "gpu.yield"(%nv) : (tensor<5xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%n) : (!temporal.rtensor) -> ()
