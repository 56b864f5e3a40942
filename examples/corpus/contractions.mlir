// bounds: T=6 H=2
// Contractions and shape-changing ops of dynamic sizes: einsums (matmuls up
// to a permutation, sums over two labels, a one-operand sum, integers), a
// matmul with broadcast batch dimensions of rank 4, a slice at offsets that
// depend on the point (rows 2h..2h+1 of x[t]), and a reshape and expand of
// a prefix's dynamic length.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "h", bound = "H"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4x3xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "W", domain = [], element = tensor<2x1x3x4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t", "h"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t", "h"], element = tensor<2x3xi64>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t, h)[T, H] -> (t)>} : (!temporal.rtensor) -> tensor<4x3xf32>
  %s = "temporal.dynamic_slice"(%a) {offsets = affine_map<(t, h)[T, H] -> (h * 2, 0)>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %p = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t, h)[T, H] -> (0)>], upper = [affine_map<(t, h)[T, H] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4x3xf32>
  %gram = "temporal.einsum"(%p, %p) {spec = "nij,nkj->ik"} : (tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<4x4xf32>
  %sa = "temporal.einsum"(%s, %a) {spec = "ij,kj->ik"} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %sg = "temporal.einsum"(%sa, %gram) {spec = "ik,kl->il"} : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %q = "temporal.einsum"(%p) {spec = "nij->ij"} : (tensor<?x4x3xf32>) -> tensor<4x3xf32>
  %q4 = "temporal.reshape"(%q) : (tensor<4x3xf32>) -> tensor<1x1x4x3xf32>
  %v = "temporal.expand"(%q4) : (tensor<1x1x4x3xf32>) -> tensor<1x2x4x3xf32>
  %wt = "temporal.read"(%w) {index = affine_map<(t, h)[T, H] -> ()>} : (!temporal.rtensor) -> tensor<2x1x3x4xf32>
  %m = "temporal.matmul"(%wt, %v) : (tensor<2x1x3x4xf32>, tensor<1x2x4x3xf32>) -> tensor<2x2x3x3xf32>
  %ms = "temporal.einsum"(%m) {spec = "abcd->bc"} : (tensor<2x2x3x3xf32>) -> tensor<2x3xf32>
  %row = "temporal.reduce_sum"(%p) {axis = 2 : i64} : (tensor<?x4x3xf32>) -> tensor<?x4xf32>
  %col = "temporal.reshape"(%row) : (tensor<?x4xf32>) -> tensor<?x4x1xf32>
  %wide = "temporal.expand"(%col) : (tensor<?x4x1xf32>) -> tensor<?x4x3xf32>
  %flat = "temporal.reshape"(%p) : (tensor<?x4x3xf32>) -> tensor<?x12xf32>
  %back = "temporal.reshape"(%flat) : (tensor<?x12xf32>) -> tensor<?x4x3xf32>
  %both = "temporal.mul"(%wide, %back) : (tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  %bs = "temporal.reduce_sum"(%both) {axis = 0 : i64} : (tensor<?x4x3xf32>) -> tensor<4x3xf32>
  %sq = "temporal.matmul"(%sg, %bs) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r1 = "temporal.add"(%ms, %s) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %scale = "temporal.constant"() {value = dense<0.001> : tensor<f32>} : () -> tensor<f32>
  %r2 = "temporal.mul"(%sq, %scale) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %r3 = "temporal.add"(%r1, %r2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %r4 = "temporal.tanh"(%r3) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%r4) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t, h)[T, H] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%x) {index = affine_map<(t, h)[T, H] -> (t)>} : (!temporal.rtensor) -> tensor<4x3xf32>
  %s = "temporal.dynamic_slice"(%a) {offsets = affine_map<(t, h)[T, H] -> (2 - h * 2, 0)>} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  %ten = "temporal.constant"() {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
  %sa = "temporal.mul"(%s, %ten) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %aa = "temporal.mul"(%a, %ten) : (tensor<4x3xf32>, tensor<f32>) -> tensor<4x3xf32>
  %ia = "temporal.cast"(%sa) : (tensor<2x3xf32>) -> tensor<2x3xi64>
  %ib = "temporal.cast"(%aa) : (tensor<4x3xf32>) -> tensor<4x3xi64>
  %iz = "temporal.einsum"(%ia, %ib) {spec = "ij,kj->ik"} : (tensor<2x3xi64>, tensor<4x3xi64>) -> tensor<2x4xi64>
  %l = "temporal.reshape"(%iz) : (tensor<2x4xi64>) -> tensor<2x1x1x4xi64>
  %r = "temporal.reshape"(%ib) : (tensor<4x3xi64>) -> tensor<1x1x4x3xi64>
  %iw = "temporal.matmul"(%l, %r) : (tensor<2x1x1x4xi64>, tensor<1x1x4x3xi64>) -> tensor<2x1x1x3xi64>
  %out = "temporal.reshape"(%iw) : (tensor<2x1x1x3xi64>) -> tensor<2x3xi64>
  "gpu.yield"(%out) : (tensor<2x3xi64>) -> ()
}) {when = affine_set<(t, h)[T, H] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
