// Destinations: a packed vector as temporal-autodiff builds it (a weight's
// per-step gradient x^T g flattened, then the bias's and the input's
// concatenated after it). Each part is computed straight into its place
// in the point's slot: the product's tile stores go to the slot seen as
// 16 x 32 (a sub-view, expand_shape), the sums' outs are sub-views at
// offsets 512 and 544, and no copy loop follows. Compiled results are
// bit-exact with the interpreter's, with fusion (where destinations
// apply) and without. The second tensor is RoPE's pattern: the result is a
// reshape of a concatenation along the last axis, which the body computes
// into the slot seen with the concatenation's shape; its operands go to
// strided parts of that view (a miscompile the differential suite found
// when the two rules disagreed on the concatenation's buffer).
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 8 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 8 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 8 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 8 -O 0 | diff - %t.interpreted

// CHECK-LABEL: func.func @tempo_main
// CHECK: %[[SLOT:.*]] = memref.subview %arg3[%{{.*}}, 0] [1, 560] [1, 1]
// CHECK: %[[HEAD:.*]] = memref.subview %[[SLOT]][0] [544] [1]
// CHECK: %[[DX:.*]] = memref.subview %[[SLOT]][544] [16] [1]
// CHECK: %[[DWFLAT:.*]] = memref.subview %[[HEAD]][0] [512] [1]
// CHECK: %[[DW:.*]] = memref.expand_shape %[[DWFLAT]] {{\[\[}}0, 1]] output_shape [16, 32]
// CHECK: %[[DB:.*]] = memref.subview %[[HEAD]][512] [32] [1]
// CHECK: vector.store %{{.*}}, %[[DW]]
// CHECK: linalg.generic {{.*}} outs(%[[DB]] :
// CHECK: linalg.generic {{.*}} outs(%[[DX]] :
// CHECK-NOT: memref.store
// CHECK: memref.subview %arg4[

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<8x16xf32>} : () -> !temporal.rtensor
%g = "temporal.input"() {sym_name = "g", domain = ["t"], element = tensor<8x32xf32>} : () -> !temporal.rtensor
%p = "temporal.tensor"() {sym_name = "p", domain = ["t"], element = tensor<560xf32>} : () -> !temporal.rtensor
%q = "temporal.tensor"() {sym_name = "q", domain = ["t"], element = tensor<1x8xf32>} : () -> !temporal.rtensor
"temporal.define"(%p) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x16xf32>
  %b = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x32xf32>
  %at = "temporal.permute"(%a) {permutation = [1, 0]} : (tensor<8x16xf32>) -> tensor<16x8xf32>
  %dw = "temporal.matmul"(%at, %b) : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
  %f1 = "temporal.reshape"(%dw) : (tensor<16x32xf32>) -> tensor<512xf32>
  %db = "temporal.reduce_sum"(%b) {axis = 0 : i64} : (tensor<8x32xf32>) -> tensor<32xf32>
  %c1 = "temporal.concat"(%f1, %db) {axis = 0 : i64} : (tensor<512xf32>, tensor<32xf32>) -> tensor<544xf32>
  %dx = "temporal.reduce_sum"(%a) {axis = 0 : i64} : (tensor<8x16xf32>) -> tensor<16xf32>
  %c2 = "temporal.concat"(%c1, %dx) {axis = 0 : i64} : (tensor<544xf32>, tensor<16xf32>) -> tensor<560xf32>
  "gpu.yield"(%c2) : (tensor<560xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%q) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x16xf32>
  %r = "temporal.slice"(%a) {offsets = [0, 0]} : (tensor<8x16xf32>) -> tensor<1x8xf32>
  %v = "temporal.reshape"(%r) : (tensor<1x8xf32>) -> tensor<1x4x2xf32>
  %e = "temporal.slice"(%v) {offsets = [0, 0, 0]} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
  %o = "temporal.slice"(%v) {offsets = [0, 0, 1]} : (tensor<1x4x2xf32>) -> tensor<1x4x1xf32>
  %c = "temporal.cos"(%e) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %s = "temporal.sin"(%o) : (tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %m1 = "temporal.mul"(%e, %c) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %m2 = "temporal.mul"(%o, %s) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %lo = "temporal.sub"(%m1, %m2) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %m3 = "temporal.mul"(%e, %s) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %m4 = "temporal.mul"(%o, %c) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %hi = "temporal.add"(%m3, %m4) : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x1xf32>
  %j = "temporal.concat"(%lo, %hi) {axis = 2 : i64} : (tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<1x4x2xf32>
  %f = "temporal.reshape"(%j) : (tensor<1x4x2xf32>) -> tensor<1x8xf32>
  "gpu.yield"(%f) : (tensor<1x8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%p) : (!temporal.rtensor) -> ()
"temporal.output"(%q) : (!temporal.rtensor) -> ()
