// bounds: T=5
// Reductions along a leading or middle axis, as a batch's bias gradient
// is (the sum of a [6, 4] point's rows), a mean of squares down the
// columns (an elementwise chain fused into the reduction), and the maximum
// along the middle axis of a [2, 5, 3] point; the sums carried along t.
// The sum down the 520 rows of a [520, 3] point is long enough that the
// GPU splits it in chunks (two stages).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<6x4xf32>} : () -> !temporal.rtensor
%y = "temporal.input"() {sym_name = "y", domain = ["t"], element = tensor<2x5x3xf32>} : () -> !temporal.rtensor
%z = "temporal.input"() {sym_name = "z", domain = ["t"], element = tensor<520x3xf32>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%m = "temporal.tensor"() {sym_name = "m", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%g) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x4xf32>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<6x4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x4xf32>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<6x4xf32>) -> tensor<4xf32>
  %p = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %o = "temporal.add"(%p, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%o) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%m) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<6x4xf32>
  %sq = "temporal.mul"(%v, %v) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
  %s = "temporal.reduce_mean"(%sq) {axis = 0 : i64} : (tensor<6x4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x5x3xf32>
  %s = "temporal.reduce_max"(%v) {axis = 1 : i64} : (tensor<2x5x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%s) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %v = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<520x3xf32>
  %s = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<520x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%s) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%c) : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
"temporal.output"(%m) : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
