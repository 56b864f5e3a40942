// Running statistics over the whole history, as written by a user: at every
// step t the sum and the maximum of all rewards r[0:t+1] so far (work that
// grows with t, O(T^2) in all), used to normalise the reward.
// temporal-lift-recurrences turns both into running recurrences.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%r = "temporal.input"() {sym_name = "r", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %history = "temporal.read_range"(%r) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x64xf32>
  %total = "temporal.reduce_sum"(%history) {axis = 0 : i64} : (tensor<?x64xf32>) -> tensor<64xf32>
  %peak = "temporal.reduce_max"(%history) {axis = 0 : i64} : (tensor<?x64xf32>) -> tensor<64xf32>
  %now = "temporal.read"(%r) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
  %scale = "temporal.constant"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %drift = "temporal.mul"(%total, %scale) : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %centred = "temporal.sub"(%now, %drift) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %abs = "temporal.abs"(%peak) : (tensor<64xf32>) -> tensor<64xf32>
  %range = "temporal.add"(%abs, %one) : (tensor<64xf32>, tensor<f32>) -> tensor<64xf32>
  %v = "temporal.div"(%centred, %range) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  "gpu.yield"(%v) : (tensor<64xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
