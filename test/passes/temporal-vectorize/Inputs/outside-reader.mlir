"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["b", "t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = ["t"], element = tensor<1x4xf32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %a = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  "gpu.yield"(%a) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %p = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %m = "temporal.read"(%w) {index = affine_map<(b, t)[B, T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
  %q = "temporal.matmul"(%p, %m) : (tensor<1x4xf32>, tensor<4x4xf32>) -> tensor<1x4xf32>
  %a = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %s = "temporal.add"(%q, %a) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %n = "temporal.reduce_sum"(%s) {axis = 1 : i64} : (tensor<1x4xf32>) -> tensor<1xf32>
  %k = "temporal.constant"() {value = dense<0.1> : tensor<f32>} : () -> tensor<f32>
  %c = "temporal.mul"(%n, %k) : (tensor<1xf32>, tensor<f32>) -> tensor<1xf32>
  %r = "temporal.sub"(%s, %c) : (tensor<1x4xf32>, tensor<1xf32>) -> tensor<1x4xf32>
  %v = "temporal.tanh"(%r) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  "gpu.yield"(%v) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %a = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<1x4xf32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<1x4xf32>} : () -> tensor<1x4xf32>
  %v = "temporal.mul"(%a, %two) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  "gpu.yield"(%v) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %all = "temporal.read_range"(%h) {caps = [affine_map<(t)[B, T] -> ()>, affine_map<(t)[B, T] -> ()>], lower = [affine_map<(t)[B, T] -> (0)>, affine_map<(t)[B, T] -> (t)>], upper = [affine_map<(t)[B, T] -> (B)>, affine_map<(t)[B, T] -> ()>]} : (!temporal.rtensor) -> tensor<?x1x4xf32>
  %v = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?x1x4xf32>) -> tensor<1x4xf32>
  "gpu.yield"(%v) : (tensor<1x4xf32>) -> ()
}) {when = affine_set<(t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
