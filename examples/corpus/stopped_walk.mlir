// bounds: T=12
// A data-dependent stop: a walk x[t] = x[t-1] + v[t] ends where it first
// passes 1.0 (or at the bound); the walk's points up to the stop, and the
// mean of all of them (a range x[0:T] read after the loop, ending at the
// stop).
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %v = "temporal.input"() {sym_name = "v", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
  %mean = "temporal.tensor"() {sym_name = "mean", domain = [], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %a = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%a) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%x) ({
    %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f32>
    %a = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    %s = "temporal.add"(%p, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%s) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%done) ({
    %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %d = "temporal.cmp"(%a, %c) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "gpu.yield"(%d) : (tensor<i1>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%mean) ({
    %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xf32>
    %m = "temporal.reduce_mean"(%all) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    "gpu.yield"(%m) : (tensor<f32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
  "temporal.output"(%mean) : (!temporal.rtensor) -> ()
  "temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
}
