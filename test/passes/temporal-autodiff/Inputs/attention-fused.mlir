// The program of ../ranges.mlir with the softmax attention as one op.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%Wq = "temporal.input"() {sym_name = "Wq", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%k) ({
  %w = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %r = "temporal.matmul"(%w, %xt) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The values: a recurrence (v[t] = tanh(v[t-1] + x[t])), so the gradient
// through the range reaches x through time too.
"temporal.define"(%v) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %r = "temporal.tanh"(%xt) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %p = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %s = "temporal.add"(%p, %xt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.tanh"(%s) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%o) ({
  %w = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %q = "temporal.matmul"(%w, %xt) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %keys = "temporal.read_range"(%k) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf64>
    %values = "temporal.read_range"(%v) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf64>
    %scale = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
    %out = "temporal.attention"(%q, %keys, %values, %scale) {block = 4 : i64, score = "d,nd->n", combine = "n,na->a"} : (tensor<4xf64>, tensor<?x4xf64>, tensor<?x4xf64>, tensor<f64>) -> tensor<4xf64>
  "gpu.yield"(%out) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %ot = "temporal.read"(%o) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %s = "temporal.sin"(%ot) : (tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.reduce_sum"(%s) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gx = "temporal.grad"(%loss, %x) {sym_name = "gx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gWq = "temporal.grad"(%loss, %Wq) {sym_name = "gWq"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gWk = "temporal.grad"(%loss, %Wk) {sym_name = "gWk"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
"temporal.output"(%gWq) : (!temporal.rtensor) -> ()
"temporal.output"(%gWk) : (!temporal.rtensor) -> ()
