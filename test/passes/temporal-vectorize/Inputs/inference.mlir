// group.mlir's recurrence and output layer without the gradient: an inference
// program, whose h lives in a ring of two points.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<3x3xf32>} : () -> !temporal.rtensor
%U = "temporal.input"() {sym_name = "U", domain = [], element = tensor<5x3xf32>} : () -> !temporal.rtensor
%V = "temporal.input"() {sym_name = "V", domain = [], element = tensor<3x4xf32>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x5xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x5xf32>
  %xu = "temporal.matmul"(%xt, %u) : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %h0 = "temporal.tanh"(%xu) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%h0) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x3xf32>
  %u = "temporal.read"(%U) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<5x3xf32>
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x5xf32>
  %hw = "temporal.matmul"(%prev, %w) : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %xu = "temporal.matmul"(%xt, %u) : (tensor<2x5xf32>, tensor<5x3xf32>) -> tensor<2x3xf32>
  %pre = "temporal.add"(%hw, %xu) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %next = "temporal.tanh"(%pre) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%next) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %v = "temporal.read"(%V) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3x4xf32>
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %o = "temporal.matmul"(%ht, %v) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%o) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %sq = "temporal.mul"(%yt, %yt) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = "temporal.reduce_sum"(%sq) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2xf32>
  %s = "temporal.reduce_sum"(%r) {axis = 0 : i64} : (tensor<2xf32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%loss) : (!temporal.rtensor) -> ()
