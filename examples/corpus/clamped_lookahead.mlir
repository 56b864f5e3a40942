// bounds: T=9
// A backward recurrence through a clamped read: z[t] = x[t] + 0.5 * z[min(t+1, T-1)]
// while t < T-1, and z[T-1] = x[T-1]. The clamp reaches the present point only
// where the branch does not apply; the scheduler uses the branch condition
// (t <= T-2, so min(t+1, T-1) = t+1) to run t backward with z in a ring.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
"temporal.define"(%z) ({
  %next = "temporal.read_range"(%z) {caps = [affine_map<(t)[T] -> (T - 1)>], lower = [affine_map<(t)[T] -> (t + 1)>], upper = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<3xf64>
  %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %half = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  %scaled = "temporal.mul"(%next, %half) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %sum = "temporal.add"(%now, %scaled) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  "gpu.yield"(%sum) : (tensor<3xf64>) -> ()
}) {when = affine_set<(t)[T] : (T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  "gpu.yield"(%now) : (tensor<3xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %v = "temporal.read"(%z) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %e = "temporal.exp"(%v) : (tensor<3xf64>) -> tensor<3xf64>
  "gpu.yield"(%e) : (tensor<3xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
