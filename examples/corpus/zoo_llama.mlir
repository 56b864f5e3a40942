// bounds: T=8
// Model zoo: a Llama-style decoder block decoding greedily: embedding
// gather of the previous token (argmax feedback of the logits), RMS norms,
// rotary position embeddings (sin/cos of a float position counter),
// grouped-query attention (4 query heads sharing 2 key-value heads, an
// einsum over the growing cache k[0:t+1]), a SwiGLU MLP, and an LM head
// (matrix times vector). Vocabulary 32, width 16, head width 4, MLP 32.
// The end-to-end test `zoo` checks it against a plain f64 reference.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%E = "temporal.input"() {sym_name = "E", domain = [], element = tensor<32x16xf32>} : () -> !temporal.rtensor
%g_attn = "temporal.input"() {sym_name = "g_attn", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%Wq = "temporal.input"() {sym_name = "Wq", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<16x8xf32>} : () -> !temporal.rtensor
%Wv = "temporal.input"() {sym_name = "Wv", domain = [], element = tensor<16x8xf32>} : () -> !temporal.rtensor
%Wo = "temporal.input"() {sym_name = "Wo", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%g_mlp = "temporal.input"() {sym_name = "g_mlp", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%W1 = "temporal.input"() {sym_name = "W1", domain = [], element = tensor<16x32xf32>} : () -> !temporal.rtensor
%W3 = "temporal.input"() {sym_name = "W3", domain = [], element = tensor<16x32xf32>} : () -> !temporal.rtensor
%W2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<32x16xf32>} : () -> !temporal.rtensor
%g_final = "temporal.input"() {sym_name = "g_final", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%W_lm = "temporal.input"() {sym_name = "W_lm", domain = [], element = tensor<32x16xf32>} : () -> !temporal.rtensor
%pos = "temporal.tensor"() {sym_name = "pos", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%tok = "temporal.tensor"() {sym_name = "tok", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%xn = "temporal.tensor"() {sym_name = "xn", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%logits = "temporal.tensor"() {sym_name = "logits", domain = ["t"], element = tensor<32xf32>} : () -> !temporal.rtensor
// The position as a float counter: pos[0] = 0, pos[t] = pos[t-1] + 1.
"temporal.define"(%pos) ({
  %zero = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%zero) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%pos) ({
  %prev = "temporal.read"(%pos) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %next = "temporal.add"(%prev, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%next) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Token 1 starts; then greedy decoding: argmax of the previous logits.
"temporal.define"(%tok) ({
  %start = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%start) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%tok) ({
  %prev = "temporal.read"(%logits) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<32xf32>
  %next = "temporal.argmax"(%prev) {axis = 0 : i64} : (tensor<32xf32>) -> tensor<i64>
  "gpu.yield"(%next) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The embedding of the current token.
"temporal.define"(%x) ({
  %table = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32x16xf32>
  %id = "temporal.read"(%tok) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %x1 = "temporal.gather"(%table, %id) : (tensor<32x16xf32>, tensor<i64>) -> tensor<16xf32>
  "gpu.yield"(%x1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// RMS norm before attention: x / sqrt(mean(x^2) + 1e-5) * g_attn.
"temporal.define"(%xn) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %gain = "temporal.read"(%g_attn) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xn_sq = "temporal.mul"(%xt, %xt) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %xn_ms = "temporal.reduce_mean"(%xn_sq) {axis = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
  %xn_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %xn_var = "temporal.add"(%xn_ms, %xn_eps) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %xn_rms = "temporal.sqrt"(%xn_var) : (tensor<f32>) -> tensor<f32>
  %xn_n = "temporal.div"(%xt, %xn_rms) : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %xn1 = "temporal.mul"(%xn_n, %gain) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%xn1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Keys: RoPE of xn Wk, 2 key-value heads of width 4 (a growing cache, read as k[0:t+1]).
"temporal.define"(%k) ({
  %xn1 = "temporal.read"(%xn) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wk1 = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xk = "temporal.matmul"(%xn1, %Wk1) : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
  %kh = "temporal.reshape"(%xk) : (tensor<8xf32>) -> tensor<2x4xf32>
  %pos1 = "temporal.read"(%pos) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %k_i = "temporal.arange"() : () -> tensor<2xf32>
  %k_c = "temporal.constant"() {value = dense<-4.605170185988092> : tensor<f32>} : () -> tensor<f32>
  %k_e = "temporal.mul"(%k_i, %k_c) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %k_invf = "temporal.exp"(%k_e) : (tensor<2xf32>) -> tensor<2xf32>
  %k_freqs = "temporal.mul"(%pos1, %k_invf) : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %k_angle = "temporal.concat"(%k_freqs, %k_freqs) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  %k_cos = "temporal.cos"(%k_angle) : (tensor<4xf32>) -> tensor<4xf32>
  %k_sin = "temporal.sin"(%k_angle) : (tensor<4xf32>) -> tensor<4xf32>
  %k_x1 = "temporal.slice"(%kh) {offsets = [0, 0]} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %k_x2 = "temporal.slice"(%kh) {offsets = [0, 2]} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  %k_nx2 = "temporal.neg"(%k_x2) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %k_rot = "temporal.concat"(%k_nx2, %k_x1) {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  %k_qc = "temporal.mul"(%kh, %k_cos) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %k_rs = "temporal.mul"(%k_rot, %k_sin) : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %k1 = "temporal.add"(%k_qc, %k_rs) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%k1) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Values: xn Wv as 2 heads of width 4.
"temporal.define"(%v) ({
  %xn1 = "temporal.read"(%xn) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wv1 = "temporal.read"(%Wv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xv = "temporal.matmul"(%xn1, %Wv1) : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
  %vh = "temporal.reshape"(%xv) : (tensor<8xf32>) -> tensor<2x4xf32>
  "gpu.yield"(%vh) : (tensor<2x4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Grouped-query attention: 4 query heads in 2 groups, each group sharing one
// key-value head (head h reads kv head h / 2, as repeat_kv does), causal over
// the cache k[0:t+1], v[0:t+1]; scores scaled by 1/sqrt(4); a = x + attn Wo.
"temporal.define"(%a) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %xn1 = "temporal.read"(%xn) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wq1 = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %xq = "temporal.matmul"(%xn1, %Wq1) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
  %qh = "temporal.reshape"(%xq) : (tensor<16xf32>) -> tensor<4x4xf32>
  %pos1 = "temporal.read"(%pos) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %q_i = "temporal.arange"() : () -> tensor<2xf32>
  %q_c = "temporal.constant"() {value = dense<-4.605170185988092> : tensor<f32>} : () -> tensor<f32>
  %q_e = "temporal.mul"(%q_i, %q_c) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %q_invf = "temporal.exp"(%q_e) : (tensor<2xf32>) -> tensor<2xf32>
  %q_freqs = "temporal.mul"(%pos1, %q_invf) : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %q_angle = "temporal.concat"(%q_freqs, %q_freqs) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  %q_cos = "temporal.cos"(%q_angle) : (tensor<4xf32>) -> tensor<4xf32>
  %q_sin = "temporal.sin"(%q_angle) : (tensor<4xf32>) -> tensor<4xf32>
  %q_x1 = "temporal.slice"(%qh) {offsets = [0, 0]} : (tensor<4x4xf32>) -> tensor<4x2xf32>
  %q_x2 = "temporal.slice"(%qh) {offsets = [0, 2]} : (tensor<4x4xf32>) -> tensor<4x2xf32>
  %q_nx2 = "temporal.neg"(%q_x2) : (tensor<4x2xf32>) -> tensor<4x2xf32>
  %q_rot = "temporal.concat"(%q_nx2, %q_x1) {axis = 1 : i64} : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x4xf32>
  %q_qc = "temporal.mul"(%qh, %q_cos) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %q_rs = "temporal.mul"(%q_rot, %q_sin) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %q = "temporal.add"(%q_qc, %q_rs) : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %qg = "temporal.reshape"(%q) : (tensor<4x4xf32>) -> tensor<2x2x4xf32>
  %keys = "temporal.read_range"(%k) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %scores = "temporal.einsum"(%qg, %keys) {spec = "gqd,ngd->gqn"} : (tensor<2x2x4xf32>, tensor<?x2x4xf32>) -> tensor<2x2x?xf32>
  %scale = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %scaled = "temporal.mul"(%scores, %scale) : (tensor<2x2x?xf32>, tensor<f32>) -> tensor<2x2x?xf32>
  %p_max = "temporal.reduce_max"(%scaled) {axis = 2 : i64} : (tensor<2x2x?xf32>) -> tensor<2x2xf32>
  %p_maxk = "temporal.reshape"(%p_max) : (tensor<2x2xf32>) -> tensor<2x2x1xf32>
  %p_d = "temporal.sub"(%scaled, %p_maxk) : (tensor<2x2x?xf32>, tensor<2x2x1xf32>) -> tensor<2x2x?xf32>
  %p_e = "temporal.exp"(%p_d) : (tensor<2x2x?xf32>) -> tensor<2x2x?xf32>
  %p_z = "temporal.reduce_sum"(%p_e) {axis = 2 : i64} : (tensor<2x2x?xf32>) -> tensor<2x2xf32>
  %p_zk = "temporal.reshape"(%p_z) : (tensor<2x2xf32>) -> tensor<2x2x1xf32>
  %p = "temporal.div"(%p_e, %p_zk) : (tensor<2x2x?xf32>, tensor<2x2x1xf32>) -> tensor<2x2x?xf32>
  %values = "temporal.read_range"(%v) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x4xf32>
  %o = "temporal.einsum"(%p, %values) {spec = "gqn,ngd->gqd"} : (tensor<2x2x?xf32>, tensor<?x2x4xf32>) -> tensor<2x2x4xf32>
  %heads = "temporal.reshape"(%o) : (tensor<2x2x4xf32>) -> tensor<16xf32>
  %Wo1 = "temporal.read"(%Wo) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %proj = "temporal.matmul"(%heads, %Wo1) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
  %a1 = "temporal.add"(%xt, %proj) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%a1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// SwiGLU MLP after an RMS norm: y = a + (silu(an W1) * (an W3)) W2.
"temporal.define"(%y) ({
  %at = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %gain = "temporal.read"(%g_mlp) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %an_sq = "temporal.mul"(%at, %at) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %an_ms = "temporal.reduce_mean"(%an_sq) {axis = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
  %an_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %an_var = "temporal.add"(%an_ms, %an_eps) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %an_rms = "temporal.sqrt"(%an_var) : (tensor<f32>) -> tensor<f32>
  %an_n = "temporal.div"(%at, %an_rms) : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %an = "temporal.mul"(%an_n, %gain) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %W11 = "temporal.read"(%W1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x32xf32>
  %h1 = "temporal.matmul"(%an, %W11) : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32>
  %gate_sig = "temporal.sigmoid"(%h1) : (tensor<32xf32>) -> tensor<32xf32>
  %gate = "temporal.mul"(%h1, %gate_sig) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %W31 = "temporal.read"(%W3) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x32xf32>
  %h3 = "temporal.matmul"(%an, %W31) : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32>
  %hidden = "temporal.mul"(%gate, %h3) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %W21 = "temporal.read"(%W2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32x16xf32>
  %down = "temporal.matmul"(%hidden, %W21) : (tensor<32xf32>, tensor<32x16xf32>) -> tensor<16xf32>
  %y1 = "temporal.add"(%at, %down) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%y1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The LM head: logits = Wlm rmsnorm(y) (matrix times vector).
"temporal.define"(%logits) ({
  %yt = "temporal.read"(%y) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %gain = "temporal.read"(%g_final) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %yn_sq = "temporal.mul"(%yt, %yt) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %yn_ms = "temporal.reduce_mean"(%yn_sq) {axis = 0 : i64} : (tensor<16xf32>) -> tensor<f32>
  %yn_eps = "temporal.constant"() {value = dense<1.0e-05> : tensor<f32>} : () -> tensor<f32>
  %yn_var = "temporal.add"(%yn_ms, %yn_eps) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %yn_rms = "temporal.sqrt"(%yn_var) : (tensor<f32>) -> tensor<f32>
  %yn_n = "temporal.div"(%yt, %yn_rms) : (tensor<16xf32>, tensor<f32>) -> tensor<16xf32>
  %yn = "temporal.mul"(%yn_n, %gain) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %W_lm1 = "temporal.read"(%W_lm) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32x16xf32>
  %logits1 = "temporal.matmul"(%W_lm1, %yn) : (tensor<32x16xf32>, tensor<16xf32>) -> tensor<32xf32>
  "gpu.yield"(%logits1) : (tensor<32xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%tok) : (!temporal.rtensor) -> ()
"temporal.output"(%logits) : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

