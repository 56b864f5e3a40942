// A loss over a whole trajectory, read after the loop:
// loss = sum over t of 0.5 * (tanh(x[t]) - 0.5 * x[t])^2, 256 wide.
// temporal-lift-recurrences makes it one running recurrence, so neither
// pred nor target is stored whole.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<256xf32>} : () -> !temporal.rtensor
  %pred = "temporal.tensor"() {sym_name = "pred", domain = ["t"], element = tensor<256xf32>} : () -> !temporal.rtensor
  %target = "temporal.tensor"() {sym_name = "target", domain = ["t"], element = tensor<256xf32>} : () -> !temporal.rtensor
  %loss = "temporal.tensor"() {sym_name = "loss", domain = [], element = tensor<256xf32>} : () -> !temporal.rtensor
  "temporal.define"(%pred) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<256xf32>
    %r = "temporal.tanh"(%v) : (tensor<256xf32>) -> tensor<256xf32>
    "gpu.yield"(%r) : (tensor<256xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%target) ({
    %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<256xf32>
    %h = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %r = "temporal.mul"(%v, %h) : (tensor<256xf32>, tensor<f32>) -> tensor<256xf32>
    "gpu.yield"(%r) : (tensor<256xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%loss) ({
    %p = "temporal.read_range"(%pred) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x256xf32>
    %g = "temporal.read_range"(%target) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x256xf32>
    %d = "temporal.sub"(%p, %g) : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
    %s = "temporal.mul"(%d, %d) : (tensor<?x256xf32>, tensor<?x256xf32>) -> tensor<?x256xf32>
    %h = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %e = "temporal.mul"(%s, %h) : (tensor<?x256xf32>, tensor<f32>) -> tensor<?x256xf32>
    %r = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?x256xf32>) -> tensor<256xf32>
    "gpu.yield"(%r) : (tensor<256xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%loss) : (!temporal.rtensor) -> ()
}
