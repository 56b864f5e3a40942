// bounds: T=8
// Model zoo: a GPT-2 block over a stream of input embeddings (rows 1 x 16):
// a learned position embedding gathered at an integer position counter,
// layer norms, a fused QKV projection sliced into heads, causal attention
// (2 heads of width 8) over the growing cache k[0:t+1], a GELU MLP with
// residuals, a final layer norm and an LM head (vocabulary 24). The
// end-to-end test `zoo` checks it against a plain f64 reference.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<1x16xf32>} : () -> !temporal.rtensor
%Wpe = "temporal.input"() {sym_name = "Wpe", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%ln1_g = "temporal.input"() {sym_name = "ln1_g", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%ln1_b = "temporal.input"() {sym_name = "ln1_b", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%Wqkv = "temporal.input"() {sym_name = "Wqkv", domain = [], element = tensor<16x48xf32>} : () -> !temporal.rtensor
%bqkv = "temporal.input"() {sym_name = "bqkv", domain = [], element = tensor<48xf32>} : () -> !temporal.rtensor
%Wo = "temporal.input"() {sym_name = "Wo", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%bo = "temporal.input"() {sym_name = "bo", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%ln2_g = "temporal.input"() {sym_name = "ln2_g", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%ln2_b = "temporal.input"() {sym_name = "ln2_b", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%W1 = "temporal.input"() {sym_name = "W1", domain = [], element = tensor<16x32xf32>} : () -> !temporal.rtensor
%b1 = "temporal.input"() {sym_name = "b1", domain = [], element = tensor<32xf32>} : () -> !temporal.rtensor
%W2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<32x16xf32>} : () -> !temporal.rtensor
%b2 = "temporal.input"() {sym_name = "b2", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%lnf_g = "temporal.input"() {sym_name = "lnf_g", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%lnf_b = "temporal.input"() {sym_name = "lnf_b", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%W_head = "temporal.input"() {sym_name = "W_head", domain = [], element = tensor<16x24xf32>} : () -> !temporal.rtensor
%pos = "temporal.tensor"() {sym_name = "pos", domain = ["t"], element = tensor<1xi64>} : () -> !temporal.rtensor
%h0 = "temporal.tensor"() {sym_name = "h0", domain = ["t"], element = tensor<1x16xf32>} : () -> !temporal.rtensor
%qkv = "temporal.tensor"() {sym_name = "qkv", domain = ["t"], element = tensor<1x48xf32>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<2x8xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<2x8xf32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<1x16xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<1x16xf32>} : () -> !temporal.rtensor
%logits = "temporal.tensor"() {sym_name = "logits", domain = ["t"], element = tensor<1x24xf32>} : () -> !temporal.rtensor
// The position as an integer counter: pos[0] = 0, pos[t] = pos[t-1] + 1.
"temporal.define"(%pos) ({
  %zero = "temporal.constant"() {value = dense<[0]> : tensor<1xi64>} : () -> tensor<1xi64>
  "gpu.yield"(%zero) : (tensor<1xi64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%pos) ({
  %prev = "temporal.read"(%pos) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<1xi64>
  %one = "temporal.constant"() {value = dense<[1]> : tensor<1xi64>} : () -> tensor<1xi64>
  %next = "temporal.add"(%prev, %one) : (tensor<1xi64>, tensor<1xi64>) -> tensor<1xi64>
  "gpu.yield"(%next) : (tensor<1xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The input embedding plus a learned position embedding (a gather at pos[t]).
"temporal.define"(%h0) ({
  %table = "temporal.read"(%Wpe) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %p = "temporal.read"(%pos) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1xi64>
  %pe = "temporal.gather"(%table, %p) : (tensor<16x16xf32>, tensor<1xi64>) -> tensor<1x16xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x16xf32>
  %h01 = "temporal.add"(%xt, %pe) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  "gpu.yield"(%h01) : (tensor<1x16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Layer norm, then the fused query-key-value projection (a row times a matrix).
"temporal.define"(%qkv) ({
  %h = "temporal.read"(%h0) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x16xf32>
  %g = "temporal.read"(%ln1_g) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %b = "temporal.read"(%ln1_b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %n1_mu = "temporal.reduce_mean"(%h) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %n1_mucol = "temporal.reshape"(%n1_mu) : (tensor<1xf32>) -> tensor<1x1xf32>
  %n1_xc = "temporal.sub"(%h, %n1_mucol) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %n1_sq = "temporal.mul"(%n1_xc, %n1_xc) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %n1_var = "temporal.reduce_mean"(%n1_sq) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %n1_varcol = "temporal.reshape"(%n1_var) : (tensor<1xf32>) -> tensor<1x1xf32>
  %n1_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %n1_ve = "temporal.add"(%n1_varcol, %n1_eps) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %n1_sd = "temporal.sqrt"(%n1_ve) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %n1_n = "temporal.div"(%n1_xc, %n1_sd) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %n1_g = "temporal.mul"(%n1_n, %g) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %n1 = "temporal.add"(%n1_g, %b) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %W = "temporal.read"(%Wqkv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x48xf32>
  %proj = "temporal.matmul"(%n1, %W) : (tensor<1x16xf32>, tensor<16x48xf32>) -> tensor<1x48xf32>
  %bias = "temporal.read"(%bqkv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<48xf32>
  %qkv1 = "temporal.add"(%proj, %bias) : (tensor<1x48xf32>, tensor<48xf32>) -> tensor<1x48xf32>
  "gpu.yield"(%qkv1) : (tensor<1x48xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Keys and values: columns 16..31 and 32..47 of qkv as 2 heads of width 8.
"temporal.define"(%k) ({
  %qkv1 = "temporal.read"(%qkv) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x48xf32>
  %cols = "temporal.slice"(%qkv1) {offsets = [0, 16]} : (tensor<1x48xf32>) -> tensor<1x16xf32>
  %heads = "temporal.reshape"(%cols) : (tensor<1x16xf32>) -> tensor<2x8xf32>
  "gpu.yield"(%heads) : (tensor<2x8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %qkv1 = "temporal.read"(%qkv) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x48xf32>
  %cols = "temporal.slice"(%qkv1) {offsets = [0, 32]} : (tensor<1x48xf32>) -> tensor<1x16xf32>
  %heads = "temporal.reshape"(%cols) : (tensor<1x16xf32>) -> tensor<2x8xf32>
  "gpu.yield"(%heads) : (tensor<2x8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Causal multi-head attention over k[0:t+1], v[0:t+1], scores scaled by
// 1/sqrt(8), then the output projection and the residual.
"temporal.define"(%a) ({
  %qkv1 = "temporal.read"(%qkv) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x48xf32>
  %qcols = "temporal.slice"(%qkv1) {offsets = [0, 0]} : (tensor<1x48xf32>) -> tensor<1x16xf32>
  %q = "temporal.reshape"(%qcols) : (tensor<1x16xf32>) -> tensor<2x1x8xf32>
  %keys = "temporal.read_range"(%k) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x8xf32>
  %scores = "temporal.einsum"(%q, %keys) {spec = "hqd,nhd->hqn"} : (tensor<2x1x8xf32>, tensor<?x2x8xf32>) -> tensor<2x1x?xf32>
  %scale = "temporal.constant"() {value = dense<0.35355339059327373> : tensor<f32>} : () -> tensor<f32>
  %scaled = "temporal.mul"(%scores, %scale) : (tensor<2x1x?xf32>, tensor<f32>) -> tensor<2x1x?xf32>
  %p_max = "temporal.reduce_max"(%scaled) {axis = 2 : i64} : (tensor<2x1x?xf32>) -> tensor<2x1xf32>
  %p_maxk = "temporal.reshape"(%p_max) : (tensor<2x1xf32>) -> tensor<2x1x1xf32>
  %p_d = "temporal.sub"(%scaled, %p_maxk) : (tensor<2x1x?xf32>, tensor<2x1x1xf32>) -> tensor<2x1x?xf32>
  %p_e = "temporal.exp"(%p_d) : (tensor<2x1x?xf32>) -> tensor<2x1x?xf32>
  %p_z = "temporal.reduce_sum"(%p_e) {axis = 2 : i64} : (tensor<2x1x?xf32>) -> tensor<2x1xf32>
  %p_zk = "temporal.reshape"(%p_z) : (tensor<2x1xf32>) -> tensor<2x1x1xf32>
  %p = "temporal.div"(%p_e, %p_zk) : (tensor<2x1x?xf32>, tensor<2x1x1xf32>) -> tensor<2x1x?xf32>
  %values = "temporal.read_range"(%v) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x8xf32>
  %o = "temporal.einsum"(%p, %values) {spec = "hqn,nhd->hqd"} : (tensor<2x1x?xf32>, tensor<?x2x8xf32>) -> tensor<2x1x8xf32>
  %heads = "temporal.reshape"(%o) : (tensor<2x1x8xf32>) -> tensor<1x16xf32>
  %Wo1 = "temporal.read"(%Wo) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %out = "temporal.matmul"(%heads, %Wo1) : (tensor<1x16xf32>, tensor<16x16xf32>) -> tensor<1x16xf32>
  %bo1 = "temporal.read"(%bo) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %proj = "temporal.add"(%out, %bo1) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %h = "temporal.read"(%h0) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x16xf32>
  %a1 = "temporal.add"(%h, %proj) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  "gpu.yield"(%a1) : (tensor<1x16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The MLP after a layer norm: y = a + gelu(n2 W1 + b1) W2 + b2 (GELU, tanh form).
"temporal.define"(%y) ({
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x16xf32>
  %g = "temporal.read"(%ln2_g) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %b = "temporal.read"(%ln2_b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %n2_mu = "temporal.reduce_mean"(%at) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %n2_mucol = "temporal.reshape"(%n2_mu) : (tensor<1xf32>) -> tensor<1x1xf32>
  %n2_xc = "temporal.sub"(%at, %n2_mucol) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %n2_sq = "temporal.mul"(%n2_xc, %n2_xc) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %n2_var = "temporal.reduce_mean"(%n2_sq) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %n2_varcol = "temporal.reshape"(%n2_var) : (tensor<1xf32>) -> tensor<1x1xf32>
  %n2_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %n2_ve = "temporal.add"(%n2_varcol, %n2_eps) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %n2_sd = "temporal.sqrt"(%n2_ve) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %n2_n = "temporal.div"(%n2_xc, %n2_sd) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %n2_g = "temporal.mul"(%n2_n, %g) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %n2 = "temporal.add"(%n2_g, %b) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %W11 = "temporal.read"(%W1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x32xf32>
  %n2w1 = "temporal.matmul"(%n2, %W11) : (tensor<1x16xf32>, tensor<16x32xf32>) -> tensor<1x32xf32>
  %b11 = "temporal.read"(%b1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32xf32>
  %up = "temporal.add"(%n2w1, %b11) : (tensor<1x32xf32>, tensor<32xf32>) -> tensor<1x32xf32>
  %h_c3 = "temporal.constant"() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
  %h_x2 = "temporal.mul"(%up, %up) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %h_x3 = "temporal.mul"(%h_x2, %up) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %h_a = "temporal.mul"(%h_x3, %h_c3) : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %h_in = "temporal.add"(%up, %h_a) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %h_k = "temporal.constant"() {value = dense<0.7978845608028654> : tensor<f32>} : () -> tensor<f32>
  %h_s = "temporal.mul"(%h_in, %h_k) : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %h_th = "temporal.tanh"(%h_s) : (tensor<1x32xf32>) -> tensor<1x32xf32>
  %h_one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %h_1p = "temporal.add"(%h_th, %h_one) : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %h_half = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %h_hx = "temporal.mul"(%up, %h_half) : (tensor<1x32xf32>, tensor<f32>) -> tensor<1x32xf32>
  %h = "temporal.mul"(%h_hx, %h_1p) : (tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<1x32xf32>
  %W21 = "temporal.read"(%W2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32x16xf32>
  %down = "temporal.matmul"(%h, %W21) : (tensor<1x32xf32>, tensor<32x16xf32>) -> tensor<1x16xf32>
  %b21 = "temporal.read"(%b2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %m = "temporal.add"(%down, %b21) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %y1 = "temporal.add"(%at, %m) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  "gpu.yield"(%y1) : (tensor<1x16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The final layer norm and the LM head.
"temporal.define"(%logits) ({
  %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<1x16xf32>
  %g = "temporal.read"(%lnf_g) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %b = "temporal.read"(%lnf_b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %nf_mu = "temporal.reduce_mean"(%yt) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %nf_mucol = "temporal.reshape"(%nf_mu) : (tensor<1xf32>) -> tensor<1x1xf32>
  %nf_xc = "temporal.sub"(%yt, %nf_mucol) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %nf_sq = "temporal.mul"(%nf_xc, %nf_xc) : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %nf_var = "temporal.reduce_mean"(%nf_sq) {axis = 1 : i64} : (tensor<1x16xf32>) -> tensor<1xf32>
  %nf_varcol = "temporal.reshape"(%nf_var) : (tensor<1xf32>) -> tensor<1x1xf32>
  %nf_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %nf_ve = "temporal.add"(%nf_varcol, %nf_eps) : (tensor<1x1xf32>, tensor<f32>) -> tensor<1x1xf32>
  %nf_sd = "temporal.sqrt"(%nf_ve) : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %nf_n = "temporal.div"(%nf_xc, %nf_sd) : (tensor<1x16xf32>, tensor<1x1xf32>) -> tensor<1x16xf32>
  %nf_g = "temporal.mul"(%nf_n, %g) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %nf = "temporal.add"(%nf_g, %b) : (tensor<1x16xf32>, tensor<16xf32>) -> tensor<1x16xf32>
  %W = "temporal.read"(%W_head) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x24xf32>
  %logits1 = "temporal.matmul"(%nf, %W) : (tensor<1x16xf32>, tensor<16x24xf32>) -> tensor<1x24xf32>
  "gpu.yield"(%logits1) : (tensor<1x24xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%logits) : (!temporal.rtensor) -> ()

