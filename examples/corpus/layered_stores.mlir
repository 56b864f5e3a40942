// bounds: T=9 L=3
// A layered recurrence with layers as a dimension (t outside l, through
// h[t, 0] = tanh(o[t-1, L-1])): keys over (l, t) read through a window of 3
// per layer, values over (t, l) read through prefixes per layer, and a
// running sum over (l, t) read one step back per layer. Their stores run
// along t, one window, one set of blocks and one ring per layer.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
%x0 = "temporal.input"() {sym_name = "x0", domain = [], element = tensor<4xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = ["l"], element = tensor<4xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["l", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
%r = "temporal.tensor"() {sym_name = "r", domain = ["l", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %a = "temporal.read"(%x0) {index = affine_map<(t, l)[T, L] -> ()>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (t == 0, l == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %a = "temporal.read"(%o) {index = affine_map<(t, l)[T, L] -> (t - 1, L - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%b) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (l == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %a = "temporal.read"(%o) {index = affine_map<(t, l)[T, L] -> (t, l - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%k) ({
  %a = "temporal.read"(%h) {index = affine_map<(l, t)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.read"(%w) {index = affine_map<(l, t)[T, L] -> (l)>} : (!temporal.rtensor) -> tensor<4xf32>
  %c = "temporal.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%c) : (tensor<4xf32>) -> ()
}) {when = affine_set<(l, t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %a = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
  %one = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %b = "temporal.sub"(%a, %one) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  "gpu.yield"(%b) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%r) ({
  %a = "temporal.read"(%h) {index = affine_map<(l, t)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(l, t)[T, L] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%r) ({
  %a = "temporal.read"(%r) {index = affine_map<(l, t)[T, L] -> (l, t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %b = "temporal.read"(%h) {index = affine_map<(l, t)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<4xf32>
  %c = "temporal.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%c) : (tensor<4xf32>) -> ()
}) {when = affine_set<(l, t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%o) ({
  %keys = "temporal.read_range"(%k) {caps = [], lower = [affine_map<(t, l)[T, L] -> (l)>, affine_map<(t, l)[T, L] -> (0, t - 2)>], upper = [affine_map<(t, l)[T, L] -> ()>, affine_map<(t, l)[T, L] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %ks = "temporal.reduce_sum"(%keys) {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<4xf32>
  %values = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t, l)[T, L] -> (0)>, affine_map<(t, l)[T, L] -> (l)>], upper = [affine_map<(t, l)[T, L] -> (t + 1)>, affine_map<(t, l)[T, L] -> ()>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %vm = "temporal.reduce_mean"(%values) {axis = 0 : i64} : (tensor<?x4xf32>) -> tensor<4xf32>
  %run = "temporal.read"(%r) {index = affine_map<(t, l)[T, L] -> (l, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %quarter = "temporal.constant"() {value = dense<0.25> : tensor<f32>} : () -> tensor<f32>
  %rs = "temporal.mul"(%run, %quarter) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %a = "temporal.add"(%ks, %vm) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = "temporal.sub"(%a, %rs) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "temporal.tanh"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%c) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%o) : (!temporal.rtensor) -> ()
