// Cotangents of slices: slices that tile one axis without overlapping (the
// gates of an LSTM cut from one product) are joined by one chain of
// concatenations, zeros only in the gaps, with no add of zero-padded
// tensors; overlapping slices are padded and added.
// RUN: tempo-opt %s --temporal-autodiff --temporal-dce | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 2 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 2 | diff - %t.interpreted

// CHECK-LABEL: sym_name = "g_tiles$c$tiles$0$0"
// CHECK-LABEL: "temporal.define"(%5)
// CHECK-NOT: "temporal.add"{{.*}}tensor<2x8xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x4xf64>
// CHECK-NEXT: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x4xf64>, tensor<2x2xf64>) -> tensor<2x6xf64>
// CHECK-NEXT: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x6xf64>, tensor<2x2xf64>) -> tensor<2x8xf64>
// CHECK-NOT: "temporal.add"{{.*}}tensor<2x8xf64>
// CHECK-LABEL: "temporal.define"(%7)
// CHECK-NOT: "temporal.add"{{.*}}tensor<2x8xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x1xf64>, tensor<2x2xf64>) -> tensor<2x3xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x3xf64>, tensor<2x1xf64>) -> tensor<2x4xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x4xf64>, tensor<2x3xf64>) -> tensor<2x7xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x7xf64>, tensor<2x1xf64>) -> tensor<2x8xf64>
// CHECK-NOT: "temporal.add"{{.*}}tensor<2x8xf64>
// CHECK-LABEL: "temporal.define"(%9)
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x3xf64>, tensor<2x5xf64>) -> tensor<2x8xf64>
// CHECK: "temporal.concat"({{.*}}) {axis = 1 : i64} : (tensor<2x5xf64>, tensor<2x3xf64>) -> tensor<2x8xf64>
// CHECK: "temporal.add"({{.*}}) : (tensor<2x8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64>

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x8xf64>} : () -> !temporal.rtensor
%tiles = "temporal.tensor"() {sym_name = "tiles", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%gaps = "temporal.tensor"() {sym_name = "gaps", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%overlap = "temporal.tensor"() {sym_name = "overlap", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%tiles) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf64>
  %a = "temporal.slice"(%v) {offsets = [0, 0]} : (tensor<2x8xf64>) -> tensor<2x2xf64>
  %b = "temporal.slice"(%v) {offsets = [0, 2]} : (tensor<2x8xf64>) -> tensor<2x2xf64>
  %c = "temporal.slice"(%v) {offsets = [0, 4]} : (tensor<2x8xf64>) -> tensor<2x2xf64>
  %d = "temporal.slice"(%v) {offsets = [0, 6]} : (tensor<2x8xf64>) -> tensor<2x2xf64>
  %sa = "temporal.sigmoid"(%a) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %sb = "temporal.tanh"(%b) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %sc = "temporal.sin"(%c) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %sd = "temporal.exp"(%d) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %ab = "temporal.mul"(%sa, %sb) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %cd = "temporal.mul"(%sc, %sd) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %s = "temporal.add"(%ab, %cd) : (tensor<2x2xf64>, tensor<2x2xf64>) -> tensor<2x2xf64>
  %r0 = "temporal.reduce_sum"(%s) {axis = 1 : i64} : (tensor<2x2xf64>) -> tensor<2xf64>
  %r = "temporal.reduce_sum"(%r0) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%gaps) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf64>
  %a = "temporal.slice"(%v) {offsets = [0, 1]} : (tensor<2x8xf64>) -> tensor<2x2xf64>
  %c = "temporal.slice"(%v) {offsets = [0, 4]} : (tensor<2x8xf64>) -> tensor<2x3xf64>
  %sa = "temporal.tanh"(%a) : (tensor<2x2xf64>) -> tensor<2x2xf64>
  %sc = "temporal.sin"(%c) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %ra = "temporal.reduce_sum"(%sa) {axis = 1 : i64} : (tensor<2x2xf64>) -> tensor<2xf64>
  %rc = "temporal.reduce_sum"(%sc) {axis = 1 : i64} : (tensor<2x3xf64>) -> tensor<2xf64>
  %m = "temporal.mul"(%ra, %rc) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %r = "temporal.reduce_sum"(%m) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%overlap) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x8xf64>
  %a = "temporal.slice"(%v) {offsets = [0, 0]} : (tensor<2x8xf64>) -> tensor<2x5xf64>
  %c = "temporal.slice"(%v) {offsets = [0, 3]} : (tensor<2x8xf64>) -> tensor<2x5xf64>
  %m = "temporal.mul"(%a, %c) : (tensor<2x5xf64>, tensor<2x5xf64>) -> tensor<2x5xf64>
  %r0 = "temporal.reduce_sum"(%m) {axis = 1 : i64} : (tensor<2x5xf64>) -> tensor<2xf64>
  %r = "temporal.reduce_sum"(%r0) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g1 = "temporal.grad"(%tiles, %x) {sym_name = "g_tiles"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%g2 = "temporal.grad"(%gaps, %x) {sym_name = "g_gaps"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%g3 = "temporal.grad"(%overlap, %x) {sym_name = "g_overlap"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g1) : (!temporal.rtensor) -> ()
"temporal.output"(%g2) : (!temporal.rtensor) -> ()
"temporal.output"(%g3) : (!temporal.rtensor) -> ()
