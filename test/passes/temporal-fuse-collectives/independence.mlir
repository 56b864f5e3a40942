// Which all-reduces of one domain travel together: `a` and `c` do (c[i]
// reads a[i - 1], sent one iteration before), `b` does not (b[i] reads
// a[I - 1 - i], which may be a's point i or a later one), nor does `d`
// (an f32 value among f64 ones), `e` (its two branches do not cover
// every point) or `big` (past the size of a merged message), but `f` does
// (its last branch holds everywhere). One
// process: the results are the program's without the pass.
// RUN: tempo-opt %s --temporal-fuse-collectives | FileCheck %s
// RUN: tempo-opt %s --temporal-fuse-collectives | grep -c temporal.all_reduce | FileCheck %s --check-prefix=COUNT
// RUN: tempo-run %s --bound I=4 --seed 1 --interpret -O0 > %t.plain
// RUN: tempo-run %s --bound I=4 --seed 1 | diff - %t.plain

// CHECK: %[[A:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2xf64>, sym_name = "a"}
// CHECK: %[[C:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<f64>, sym_name = "c"}
// CHECK: %[[AO:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2xf64>, sym_name = "a$operand"}
// CHECK: %[[CO:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<f64>, sym_name = "c$operand"}
// CHECK: %[[FO:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<f64>, sym_name = "f$operand"}
// CHECK: %[[BUF:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<4xf64>, sym_name = "a$fused"}
// f's branches, each without its all-reduce.
// CHECK: "temporal.define"(%[[FO]]) ({
// CHECK-NEXT: "temporal.constant"() {value = dense<3.000000e+00> : tensor<f64>}
// CHECK-NEXT: gpu.yield
// CHECK: "temporal.define"(%[[FO]]) ({
// CHECK-NEXT: "temporal.position"
// CHECK-NEXT: gpu.yield
// CHECK: "temporal.define"(%[[BUF]]) ({
// CHECK-NEXT: "temporal.read"(%[[AO]])
// CHECK-NEXT: "temporal.read"(%[[CO]])
// CHECK-NEXT: "temporal.reshape"
// CHECK-NEXT: "temporal.read"(%[[FO]])
// CHECK-NEXT: "temporal.reshape"
// CHECK-NEXT: "temporal.concat"
// CHECK-NEXT: "temporal.concat"
// CHECK-NEXT: "temporal.all_reduce"({{.*}}) {reduction = "sum"} : (tensor<4xf64>) -> tensor<4xf64>
// a, c and f: one; b, d, big and each of e's two branches: one each.
// COUNT: 6

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
%a = "temporal.tensor"() {sym_name = "a", domain = ["i"], element = tensor<2xf64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %p = "temporal.position"() {dim = "i"} : () -> tensor<f64>
  %c = "temporal.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf64>} : () -> tensor<2xf64>
  %v = "temporal.mul"(%c, %p) : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<2xf64>) -> tensor<2xf64>
  "gpu.yield"(%y) : (tensor<2xf64>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
%b = "temporal.tensor"() {sym_name = "b", domain = ["i"], element = tensor<2xf64>} : () -> !temporal.rtensor
"temporal.define"(%b) ({
  %v = "temporal.read"(%a) {index = affine_map<(i)[I] -> (I - 1 - i)>} : (!temporal.rtensor) -> tensor<2xf64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<2xf64>) -> tensor<2xf64>
  "gpu.yield"(%y) : (tensor<2xf64>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
// p[i] = sum(a[i - 1]) (0 at i = 0), c[i] = its sum over the processes.
%p = "temporal.tensor"() {sym_name = "p", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%p) ({
  %z = "temporal.constant"() {value = dense<0.0> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%z) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%p) ({
  %v = "temporal.read"(%a) {index = affine_map<(i)[I] -> (i - 1)>} : (!temporal.rtensor) -> tensor<2xf64>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
%c = "temporal.tensor"() {sym_name = "c", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%c) ({
  %v = "temporal.read"(%p) {index = affine_map<(i)[I] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
%d = "temporal.tensor"() {sym_name = "d", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.position"() {dim = "i"} : () -> tensor<f32>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%y) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
%e = "temporal.tensor"() {sym_name = "e", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%e) ({
  %v = "temporal.position"() {dim = "i"} : () -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%e) ({
  %v = "temporal.position"() {dim = "i"} : () -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
// Two branches, the last holding everywhere: one all-reduce per point
// whichever branch defines it, so it joins a and c.
%f = "temporal.tensor"() {sym_name = "f", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%f) ({
  %v = "temporal.constant"() {value = dense<3.0> : tensor<f64>} : () -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%f) ({
  %v = "temporal.position"() {dim = "i"} : () -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
// 320 KB: with a, c and f past MAX_FUSED_BYTES (256 KiB; merging copies
// every operand), so it travels apart.
%big = "temporal.tensor"() {sym_name = "big", domain = ["i"], element = tensor<40000xf64>} : () -> !temporal.rtensor
"temporal.define"(%big) ({
  %v = "temporal.position"() {dim = "i"} : () -> tensor<f64>
  %w = "temporal.expand"(%v) : (tensor<f64>) -> tensor<40000xf64>
  %y = "temporal.all_reduce"(%w) {reduction = "sum"} : (tensor<40000xf64>) -> tensor<40000xf64>
  "gpu.yield"(%y) : (tensor<40000xf64>) -> ()
}) {when = affine_set<(i)[I] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()
"temporal.output"(%f) : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
"temporal.output"(%d) : (!temporal.rtensor) -> ()
"temporal.output"(%e) : (!temporal.rtensor) -> ()
