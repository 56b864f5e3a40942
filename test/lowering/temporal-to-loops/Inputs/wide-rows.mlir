// Row norms and softmax of 64 rows of 2,048 per step (a copy of
// bench/optimize/normalized_recurrence.mlir): a row group with enough work
// for parallel rows.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = [], element = tensor<64x2048xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<64x2048xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = [], element = tensor<64x2048xf32>} : () -> !temporal.rtensor
  "temporal.define"(%h) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<64x2048xf32>
    "gpu.yield"(%v) : (tensor<64x2048xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %v = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<64x2048xf32>
    %sq = "temporal.mul"(%v, %v) : (tensor<64x2048xf32>, tensor<64x2048xf32>) -> tensor<64x2048xf32>
    %ms = "temporal.reduce_mean"(%sq) {axis = 1 : i64} : (tensor<64x2048xf32>) -> tensor<64xf32>
    %ms1 = "temporal.reshape"(%ms) : (tensor<64xf32>) -> tensor<64x1xf32>
    %eps = "temporal.constant"() {value = dense<1.0e-5> : tensor<f32>} : () -> tensor<f32>
    %sh = "temporal.add"(%ms1, %eps) : (tensor<64x1xf32>, tensor<f32>) -> tensor<64x1xf32>
    %rt = "temporal.sqrt"(%sh) : (tensor<64x1xf32>) -> tensor<64x1xf32>
    %a = "temporal.div"(%v, %rt) : (tensor<64x2048xf32>, tensor<64x1xf32>) -> tensor<64x2048xf32>
    %m = "temporal.reduce_max"(%a) {axis = 1 : i64} : (tensor<64x2048xf32>) -> tensor<64xf32>
    %m1 = "temporal.reshape"(%m) : (tensor<64xf32>) -> tensor<64x1xf32>
    %d = "temporal.sub"(%a, %m1) : (tensor<64x2048xf32>, tensor<64x1xf32>) -> tensor<64x2048xf32>
    %e = "temporal.exp"(%d) : (tensor<64x2048xf32>) -> tensor<64x2048xf32>
    %s = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<64x2048xf32>) -> tensor<64xf32>
    %s1 = "temporal.reshape"(%s) : (tensor<64xf32>) -> tensor<64x1xf32>
    %w = "temporal.constant"() {value = dense<2048.0> : tensor<f32>} : () -> tensor<f32>
    %p = "temporal.div"(%e, %s1) : (tensor<64x2048xf32>, tensor<64x1xf32>) -> tensor<64x2048xf32>
    %r = "temporal.mul"(%p, %w) : (tensor<64x2048xf32>, tensor<f32>) -> tensor<64x2048xf32>
    "gpu.yield"(%r) : (tensor<64x2048xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %v = "temporal.read"(%h) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<64x2048xf32>
    "gpu.yield"(%v) : (tensor<64x2048xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
