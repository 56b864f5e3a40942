// bounds: B=3 T=8
// Per sequence, a moving average over a window of 3 along t, over a two-dimensional input,
// and the column sum over the whole batch at each t (a range along b).
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%avg = "temporal.tensor"() {sym_name = "avg", domain = ["b", "t"], element = tensor<2xf32>} : () -> !temporal.rtensor
%col = "temporal.tensor"() {sym_name = "col", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%avg) ({
  %w = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(b, t)[B, T] -> (b)>, affine_map<(b, t)[B, T] -> (0, t - 2)>], upper = [affine_map<(b, t)[B, T] -> ()>, affine_map<(b, t)[B, T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
  %s = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?x2xf32>) -> tensor<2xf32>
  %three = "temporal.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
  %m = "temporal.div"(%s, %three) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  "gpu.yield"(%m) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%avg) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<2xf32>
  "gpu.yield"(%v) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%col) ({
  %all = "temporal.read_range"(%avg) {caps = [], lower = [affine_map<(t)[B, T] -> (0)>, affine_map<(t)[B, T] -> (t)>], upper = [affine_map<(t)[B, T] -> (B)>, affine_map<(t)[B, T] -> ()>]} : (!temporal.rtensor) -> tensor<?x2xf32>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?x2xf32>) -> tensor<2xf32>
  "gpu.yield"(%s) : (tensor<2xf32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%avg) : (!temporal.rtensor) -> ()
"temporal.output"(%col) : (!temporal.rtensor) -> ()
