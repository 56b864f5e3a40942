// Gradient accumulation over a trajectory, read after the loop:
// grad = sum over t of outer(tanh(a[t]), 2 e[t]), 64 x 32.
// temporal-lift-recurrences makes it one running recurrence of outer
// products, so neither factor is stored whole.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %a = "temporal.input"() {sym_name = "a", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
  %e = "temporal.input"() {sym_name = "e", domain = ["t"], element = tensor<32xf32>} : () -> !temporal.rtensor
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
  %g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<32xf32>} : () -> !temporal.rtensor
  %grad = "temporal.tensor"() {sym_name = "grad", domain = [], element = tensor<64x32xf32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %v = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
    %r = "temporal.tanh"(%v) : (tensor<64xf32>) -> tensor<64xf32>
    "gpu.yield"(%r) : (tensor<64xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%g) ({
    %v = "temporal.read"(%e) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<32xf32>
    %r = "temporal.add"(%v, %v) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    "gpu.yield"(%r) : (tensor<32xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%grad) ({
    %xs = "temporal.read_range"(%x) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x64xf32>
    %gs = "temporal.read_range"(%g) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x32xf32>
    %r = "temporal.einsum"(%xs, %gs) {spec = "ti,tj->ij"} : (tensor<?x64xf32>, tensor<?x32xf32>) -> tensor<64x32xf32>
    "gpu.yield"(%r) : (tensor<64x32xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%grad) : (!temporal.rtensor) -> ()
}
