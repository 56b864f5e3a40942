// bounds: B=4 T=5
// A two-dimensional recurrence reading the next b (so b runs backward) and the
// previous t (forward): h[b, t] = h[b + 1, t] + h[b, t - 1] + x[b, t] inside the box.
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["b", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (B - 1 - b == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f64>
  %down = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b + 1, t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%v, %down) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f64>
  %down = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b + 1, t)>} : (!temporal.rtensor) -> tensor<f64>
  %left = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%v, %down) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %r = "temporal.add"(%s, %left) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
