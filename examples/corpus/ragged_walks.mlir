// bounds: B=5 T=12
// A ragged stop: B walks x[b, t] = x[b, t-1] + v[b, t], each ending where
// it first passes 1.0 (or at the bound); per walk its points up to its own
// stop (zeros after), the mean of them (a range x[b, 0:T] read after the
// loop, ending at b's stop) and its last point x[b, T-1].
module {
  "temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %v = "temporal.input"() {sym_name = "v", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
  %x = "temporal.tensor"() {sym_name = "x", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
  %done = "temporal.tensor"() {sym_name = "done", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
  %mean = "temporal.tensor"() {sym_name = "mean", domain = ["b"], element = tensor<f32>} : () -> !temporal.rtensor
  %last = "temporal.tensor"() {sym_name = "last", domain = ["b"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %a = "temporal.read"(%v) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%a) : (tensor<f32>) -> ()
  }) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%x) ({
    %p = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<f32>
    %a = "temporal.read"(%v) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
    %s = "temporal.add"(%p, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%s) : (tensor<f32>) -> ()
  }) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%done) ({
    %a = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
    %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %d = "temporal.cmp"(%a, %c) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "gpu.yield"(%d) : (tensor<i1>) -> ()
  }) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%mean) ({
    %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(b)[B, T] -> (b)>, affine_map<(b)[B, T] -> (0)>], upper = [affine_map<(b)[B, T] -> ()>, affine_map<(b)[B, T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xf32>
    %m = "temporal.reduce_mean"(%all) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    "gpu.yield"(%m) : (tensor<f32>) -> ()
  }) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%last) ({
    %a = "temporal.read"(%x) {index = affine_map<(b)[B, T] -> (b, T - 1)>} : (!temporal.rtensor) -> tensor<f32>
    "gpu.yield"(%a) : (tensor<f32>) -> ()
  }) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%x) : (!temporal.rtensor) -> ()
  "temporal.output"(%mean) : (!temporal.rtensor) -> ()
  "temporal.output"(%last) : (!temporal.rtensor) -> ()
  "temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
}
