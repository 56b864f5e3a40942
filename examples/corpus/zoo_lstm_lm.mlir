// bounds: T=10
// Model zoo: an LSTM language model decoding greedily (PyTorch's nn.LSTM
// cell): embedding gather of the previous token, gates x Wx + h[t-1] Wh + b
// (two vector-times-matrix products meeting elementwise), the c and h
// recurrences reading t-1, an LM head, and argmax feedback of the logits
// into the next token. Vocabulary 24, embedding and hidden width 16. The
// end-to-end test `zoo` checks it against a plain f64 reference.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%E = "temporal.input"() {sym_name = "E", domain = [], element = tensor<24x16xf32>} : () -> !temporal.rtensor
%Wx = "temporal.input"() {sym_name = "Wx", domain = [], element = tensor<16x64xf32>} : () -> !temporal.rtensor
%Wh = "temporal.input"() {sym_name = "Wh", domain = [], element = tensor<16x64xf32>} : () -> !temporal.rtensor
%b = "temporal.input"() {sym_name = "b", domain = [], element = tensor<64xf32>} : () -> !temporal.rtensor
%Wout = "temporal.input"() {sym_name = "Wout", domain = [], element = tensor<16x24xf32>} : () -> !temporal.rtensor
%bout = "temporal.input"() {sym_name = "bout", domain = [], element = tensor<24xf32>} : () -> !temporal.rtensor
%tok = "temporal.tensor"() {sym_name = "tok", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%gates = "temporal.tensor"() {sym_name = "gates", domain = ["t"], element = tensor<64xf32>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%logits = "temporal.tensor"() {sym_name = "logits", domain = ["t"], element = tensor<24xf32>} : () -> !temporal.rtensor
// The first token is 1 (a start symbol); then greedy decoding: the argmax
// of the previous step's logits.
"temporal.define"(%tok) ({
  %start = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%start) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%tok) ({
  %prev = "temporal.read"(%logits) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<24xf32>
  %next = "temporal.argmax"(%prev) {axis = 0 : i64} : (tensor<24xf32>) -> tensor<i64>
  "gpu.yield"(%next) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Gates (i, f, g, o stacked, PyTorch's order): x Wx + h[t-1] Wh + b, with
// h[-1] = 0 at the first step.
"temporal.define"(%gates) ({
  %E1 = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<24x16xf32>
  %id = "temporal.read"(%tok) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %x = "temporal.gather"(%E1, %id) : (tensor<24x16xf32>, tensor<i64>) -> tensor<16xf32>
  %Wx1 = "temporal.read"(%Wx) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x64xf32>
  %xw = "temporal.matmul"(%x, %Wx1) : (tensor<16xf32>, tensor<16x64xf32>) -> tensor<64xf32>
  %b1 = "temporal.read"(%b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<64xf32>
  %pre = "temporal.add"(%xw, %b1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  "gpu.yield"(%pre) : (tensor<64xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%gates) ({
  %E1 = "temporal.read"(%E) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<24x16xf32>
  %id = "temporal.read"(%tok) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %x = "temporal.gather"(%E1, %id) : (tensor<24x16xf32>, tensor<i64>) -> tensor<16xf32>
  %hprev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wx1 = "temporal.read"(%Wx) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x64xf32>
  %xw = "temporal.matmul"(%x, %Wx1) : (tensor<16xf32>, tensor<16x64xf32>) -> tensor<64xf32>
  %Wh1 = "temporal.read"(%Wh) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x64xf32>
  %hw = "temporal.matmul"(%hprev, %Wh1) : (tensor<16xf32>, tensor<16x64xf32>) -> tensor<64xf32>
  %sum = "temporal.add"(%xw, %hw) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  %b1 = "temporal.read"(%b) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<64xf32>
  %pre = "temporal.add"(%sum, %b1) : (tensor<64xf32>, tensor<64xf32>) -> tensor<64xf32>
  "gpu.yield"(%pre) : (tensor<64xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// c[t] = sigmoid(f) * c[t-1] + sigmoid(i) * tanh(g), c[-1] = 0.
"temporal.define"(%c) ({
  %gates1 = "temporal.read"(%gates) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
  %i_pre = "temporal.slice"(%gates1) {offsets = [0]} : (tensor<64xf32>) -> tensor<16xf32>
  %i = "temporal.sigmoid"(%i_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %g_pre = "temporal.slice"(%gates1) {offsets = [32]} : (tensor<64xf32>) -> tensor<16xf32>
  %g = "temporal.tanh"(%g_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %ig = "temporal.mul"(%i, %g) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%ig) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %gates1 = "temporal.read"(%gates) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
  %i_pre = "temporal.slice"(%gates1) {offsets = [0]} : (tensor<64xf32>) -> tensor<16xf32>
  %i = "temporal.sigmoid"(%i_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %f_pre = "temporal.slice"(%gates1) {offsets = [16]} : (tensor<64xf32>) -> tensor<16xf32>
  %f = "temporal.sigmoid"(%f_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %g_pre = "temporal.slice"(%gates1) {offsets = [32]} : (tensor<64xf32>) -> tensor<16xf32>
  %g = "temporal.tanh"(%g_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %cprev = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<16xf32>
  %fc = "temporal.mul"(%f, %cprev) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %ig = "temporal.mul"(%i, %g) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %c1 = "temporal.add"(%fc, %ig) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%c1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// h[t] = sigmoid(o) * tanh(c[t]).
"temporal.define"(%h) ({
  %gates1 = "temporal.read"(%gates) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<64xf32>
  %o_pre = "temporal.slice"(%gates1) {offsets = [48]} : (tensor<64xf32>) -> tensor<16xf32>
  %o = "temporal.sigmoid"(%o_pre) : (tensor<16xf32>) -> tensor<16xf32>
  %c1 = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %tc = "temporal.tanh"(%c1) : (tensor<16xf32>) -> tensor<16xf32>
  %h1 = "temporal.mul"(%o, %tc) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%h1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The LM head: logits[t] = h[t] Wout + bout.
"temporal.define"(%logits) ({
  %h1 = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wout1 = "temporal.read"(%Wout) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x24xf32>
  %hw = "temporal.matmul"(%h1, %Wout1) : (tensor<16xf32>, tensor<16x24xf32>) -> tensor<24xf32>
  %bout1 = "temporal.read"(%bout) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<24xf32>
  %logits1 = "temporal.add"(%hw, %bout1) : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
  "gpu.yield"(%logits1) : (tensor<24xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%tok) : (!temporal.rtensor) -> ()
"temporal.output"(%logits) : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()

