// bounds: T=9
// NumPy broadcasting: an RMS norm over the rows of a [2, 3] point (the
// mean of each row, kept as a [2, 1] column, divides the row), and a
// softmax over a window of 4 steps per element (the window [?, 2, 3] viewed
// as [2, 3, ?]; its maximum and sum along the window, kept as [2, 3, 1],
// stretch back along the dynamic axis), then the softmax-weighted sum of
// the window; and a row bias added as a missing leading dimension.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%bias = "temporal.input"() {sym_name = "bias", domain = [], element = tensor<3xf32>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%n) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %sq = "temporal.mul"(%v, %v) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %m = "temporal.reduce_mean"(%sq) {axis = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  %mc = "temporal.reshape"(%m) : (tensor<2xf32>) -> tensor<2x1xf32>
  %eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %me = "temporal.add"(%mc, %eps) : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %r = "temporal.sqrt"(%me) : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %d = "temporal.div"(%v, %r) : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %b = "temporal.read"(%bias) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf32>
  %o = "temporal.add"(%b, %d) : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%o) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %w = "temporal.read_range"(%n) {caps = [], lower = [affine_map<(t)[T] -> (0, t - 3)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  %p = "temporal.permute"(%w) {permutation = [1, 2, 0]} : (tensor<?x2x3xf32>) -> tensor<2x3x?xf32>
  %mx = "temporal.reduce_max"(%p) {axis = 2 : i64} : (tensor<2x3x?xf32>) -> tensor<2x3xf32>
  %mk = "temporal.reshape"(%mx) : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  %c = "temporal.sub"(%p, %mk) : (tensor<2x3x?xf32>, tensor<2x3x1xf32>) -> tensor<2x3x?xf32>
  %e = "temporal.exp"(%c) : (tensor<2x3x?xf32>) -> tensor<2x3x?xf32>
  %s = "temporal.reduce_sum"(%e) {axis = 2 : i64} : (tensor<2x3x?xf32>) -> tensor<2x3xf32>
  %sk = "temporal.reshape"(%s) : (tensor<2x3xf32>) -> tensor<2x3x1xf32>
  %sm = "temporal.div"(%e, %sk) : (tensor<2x3x?xf32>, tensor<2x3x1xf32>) -> tensor<2x3x?xf32>
  %wp = "temporal.mul"(%sm, %p) : (tensor<2x3x?xf32>, tensor<2x3x?xf32>) -> tensor<2x3x?xf32>
  %out = "temporal.reduce_sum"(%wp) {axis = 2 : i64} : (tensor<2x3x?xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%out) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%n) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
