// Destinations and reads through data: a tree cell whose two children,
// read through data, are concatenated along the point's axis 0 and then
// multiplied by a [2H, H] weight (and sliced). A read through data is a
// view of the point it names, not a value computed into a buffer, so the
// concatenation copies it into its part (it was once taken for a value
// computed there and never copied: NaN and wrong numbers at -O2, at the
// points computed one at a time; issue 40). Segments of one point (the
// root) and batched ones (N=15: 2 and 4 points) agree with the
// interpreter bit for bit, fused or not, batched by depth or not.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-run %s --bound N=15 --seed 3 --interpret > %t.interpreted
// RUN: tempo-run %s --bound N=15 --seed 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound N=15 --seed 3 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound N=15 --seed 3 --disable-pass depth-batching | diff - %t.interpreted
// RUN: tempo-run %s --bound N=15 --seed 3 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound N=3 --seed 3 --interpret > %t.small
// RUN: tempo-run %s --bound N=3 --seed 3 | diff - %t.small

// The single point's concatenation: a buffer of 8, both children's views
// copied into it (loads from the store's points), then the product reads it.
// CHECK-LABEL: func.func @tempo_main
// CHECK: %[[BUF:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[CAT:.*]] = memref.cast %[[BUF]]
// CHECK: func.call @tempo_data_read_error
// CHECK: %[[LEFT:.*]] = memref.subview %arg{{[0-9]+}}[%{{.*}}, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32
// CHECK: func.call @tempo_data_read_error
// CHECK: %[[RIGHT:.*]] = memref.subview %arg{{[0-9]+}}[%{{.*}}, 0] [1, 4] [1, 1] : memref<?x4xf32> to memref<4xf32
// CHECK: memref.load %[[LEFT]]
// CHECK-NEXT: memref.store %{{.*}}, %[[CAT]]
// CHECK: memref.load %[[RIGHT]]
// CHECK: memref.store %{{.*}}, %[[CAT]]
module {
  "temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<8x4xf32>} : () -> !temporal.rtensor
  %lc = "temporal.tensor"() {sym_name = "lc", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
  %rc = "temporal.tensor"() {sym_name = "rc", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%lc) ({
    %p = "temporal.position"() {dim = "n"} : () -> tensor<i64>
    %two = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %d = "temporal.mul"(%p, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %l = "temporal.add"(%d, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%l) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%rc) ({
    %l = "temporal.read"(%lc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %r = "temporal.add"(%l, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%r) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<4xf32>
    %t = "temporal.tanh"(%v) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%t) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(n)[N] : (n * 2 + 2 - N >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %l = "temporal.read"(%lc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %r = "temporal.read"(%rc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %a = "temporal.read_at"(%s, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<4xf32>
    %b = "temporal.read_at"(%s, %r) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<4xf32>
    %c = "temporal.concat"(%a, %b) {axis = 0} : (tensor<4xf32>, tensor<4xf32>) -> tensor<8xf32>
    %W = "temporal.read"(%w) {index = affine_map<(n)[N] -> ()>} : (!temporal.rtensor) -> tensor<8x4xf32>
    %aw = "temporal.matmul"(%c, %W) : (tensor<8xf32>, tensor<8x4xf32>) -> tensor<4xf32>
    %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<4xf32>
    %zs = "temporal.add"(%aw, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %mid = "temporal.slice"(%c) {offsets = [2]} : (tensor<8xf32>) -> tensor<4xf32>
    %z = "temporal.add"(%zs, %mid) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "temporal.tanh"(%z) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%t) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
