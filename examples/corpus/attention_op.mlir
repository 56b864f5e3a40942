// bounds: T=9 H=2
// temporal.attention written directly (what temporal-tile-ranges makes):
// per head h, softmax attention of a query over the keys and values of a
// growing prefix k[0:t+1, h] (einsum specs with a head label), scaled by a
// scalar, in blocks of 2 (so the last block is partial and the running
// maximum moves between blocks); and, per (t, h), attention of x[t, h]
// over the window x[max(0, t-2):t+1, h], the values serving as keys, with
// the scale 1 given as a tensor<1xf32>.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "h", bound = "H"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t", "h"], element = tensor<4xf32>} : () -> !temporal.rtensor
%q = "temporal.input"() {sym_name = "q", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t", "h"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%o) ({
  %qt = "temporal.read"(%q) {index = affine_map<(t)[T, H] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  %k = "temporal.read_range"(%x) {caps = [affine_map<(t)[T, H] -> ()>, affine_map<(t)[T, H] -> ()>], lower = [affine_map<(t)[T, H] -> (0)>, affine_map<(t)[T, H] -> (0)>], upper = [affine_map<(t)[T, H] -> (t + 1)>, affine_map<(t)[T, H] -> (H)>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %s = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %a = "temporal.attention"(%qt, %k, %k, %s) {score = "hd,nhd->hn", combine = "hn,nhe->he", block = 2 : i64} : (tensor<2x4xf32>, tensor<?x2x4xf32>, tensor<?x2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  "gpu.yield"(%a) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T, H] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t, h)[T, H] -> (t, h)>} : (!temporal.rtensor) -> tensor<4xf32>
  %v = "temporal.read_range"(%x) {caps = [affine_map<(t, h)[T, H] -> ()>, affine_map<(t, h)[T, H] -> ()>], lower = [affine_map<(t, h)[T, H] -> (0, t - 2)>, affine_map<(t, h)[T, H] -> (h)>], upper = [affine_map<(t, h)[T, H] -> (t + 1)>, affine_map<(t, h)[T, H] -> ()>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %a = "temporal.attention"(%xt, %v, %v, %one) {score = "d,nd->n", combine = "n,ne->e", block = 64 : i64} : (tensor<4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<1xf32>) -> tensor<4xf32>
  "gpu.yield"(%a) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, h)[T, H] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%o) : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
