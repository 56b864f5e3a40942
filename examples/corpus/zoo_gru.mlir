// bounds: T=9
// Model zoo: a GRU over an input sequence (PyTorch's nn.GRU cell, input
// width 8, hidden 16, separate weights per gate): in one branch body six
// matrix-times-vector products meet in elementwise gates (Wr x + Ur h, ...,
// r * (Un h + bhn)), the new state mixes n with h[t-1]; then a
// matrix-times-vector readout. The end-to-end test `zoo` checks it against
// a plain f64 reference.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
%Wr = "temporal.input"() {sym_name = "Wr", domain = [], element = tensor<16x8xf32>} : () -> !temporal.rtensor
%Wz = "temporal.input"() {sym_name = "Wz", domain = [], element = tensor<16x8xf32>} : () -> !temporal.rtensor
%Wn = "temporal.input"() {sym_name = "Wn", domain = [], element = tensor<16x8xf32>} : () -> !temporal.rtensor
%Ur = "temporal.input"() {sym_name = "Ur", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%Uz = "temporal.input"() {sym_name = "Uz", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%Un = "temporal.input"() {sym_name = "Un", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
%bir = "temporal.input"() {sym_name = "bir", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%biz = "temporal.input"() {sym_name = "biz", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%bin = "temporal.input"() {sym_name = "bin", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%bhr = "temporal.input"() {sym_name = "bhr", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%bhz = "temporal.input"() {sym_name = "bhz", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%bhn = "temporal.input"() {sym_name = "bhn", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
%Wy = "temporal.input"() {sym_name = "Wy", domain = [], element = tensor<4x16xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
// PyTorch's nn.GRU cell (weights stored as PyTorch does, [out, in]), h[-1] = 0:
//   r = sigmoid(Wr x + bir + Ur h + bhr), z = sigmoid(Wz x + biz + Uz h + bhz)
//   n = tanh(Wn x + bin + r * (Un h + bhn)), h' = (1 - z) * n + z * h
"temporal.define"(%h) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8xf32>
  %Wr1 = "temporal.read"(%Wr) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xr = "temporal.matmul"(%Wr1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %bir1 = "temporal.read"(%bir) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xrb = "temporal.add"(%xr, %bir1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhr1 = "temporal.read"(%bhr) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %pre_r = "temporal.add"(%xrb, %bhr1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = "temporal.sigmoid"(%pre_r) : (tensor<16xf32>) -> tensor<16xf32>
  %Wz1 = "temporal.read"(%Wz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xz = "temporal.matmul"(%Wz1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %biz1 = "temporal.read"(%biz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xzb = "temporal.add"(%xz, %biz1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhz1 = "temporal.read"(%bhz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %pre_z = "temporal.add"(%xzb, %bhz1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %z = "temporal.sigmoid"(%pre_z) : (tensor<16xf32>) -> tensor<16xf32>
  %Wn1 = "temporal.read"(%Wn) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xn = "temporal.matmul"(%Wn1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %bin1 = "temporal.read"(%bin) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xnb = "temporal.add"(%xn, %bin1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhn1 = "temporal.read"(%bhn) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %rhn = "temporal.mul"(%r, %bhn1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %pre_n = "temporal.add"(%xnb, %rhn) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %n = "temporal.tanh"(%pre_n) : (tensor<16xf32>) -> tensor<16xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %keep_new = "temporal.sub"(%one, %z) : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %new = "temporal.mul"(%keep_new, %n) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%new) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8xf32>
  %hprev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<16xf32>
  %Wr1 = "temporal.read"(%Wr) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xr = "temporal.matmul"(%Wr1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %bir1 = "temporal.read"(%bir) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xrb = "temporal.add"(%xr, %bir1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhr1 = "temporal.read"(%bhr) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %Ur1 = "temporal.read"(%Ur) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %hr = "temporal.matmul"(%Ur1, %hprev) : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %hrb = "temporal.add"(%hr, %bhr1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %pre_r = "temporal.add"(%xrb, %hrb) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %r = "temporal.sigmoid"(%pre_r) : (tensor<16xf32>) -> tensor<16xf32>
  %Wz1 = "temporal.read"(%Wz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xz = "temporal.matmul"(%Wz1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %biz1 = "temporal.read"(%biz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xzb = "temporal.add"(%xz, %biz1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhz1 = "temporal.read"(%bhz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %Uz1 = "temporal.read"(%Uz) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %hz = "temporal.matmul"(%Uz1, %hprev) : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %hzb = "temporal.add"(%hz, %bhz1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %pre_z = "temporal.add"(%xzb, %hzb) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %z = "temporal.sigmoid"(%pre_z) : (tensor<16xf32>) -> tensor<16xf32>
  %Wn1 = "temporal.read"(%Wn) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x8xf32>
  %xn = "temporal.matmul"(%Wn1, %xt) : (tensor<16x8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %bin1 = "temporal.read"(%bin) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %xnb = "temporal.add"(%xn, %bin1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %bhn1 = "temporal.read"(%bhn) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
  %Un1 = "temporal.read"(%Un) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
  %hn = "temporal.matmul"(%Un1, %hprev) : (tensor<16x16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %hnb = "temporal.add"(%hn, %bhn1) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %rhn = "temporal.mul"(%r, %hnb) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %pre_n = "temporal.add"(%xnb, %rhn) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %n = "temporal.tanh"(%pre_n) : (tensor<16xf32>) -> tensor<16xf32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %keep_new = "temporal.sub"(%one, %z) : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  %new = "temporal.mul"(%keep_new, %n) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %old = "temporal.mul"(%z, %hprev) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %h1 = "temporal.add"(%new, %old) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  "gpu.yield"(%h1) : (tensor<16xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// A readout, matrix times vector: y[t] = Wy h[t] (Wy is 4 x 16).
"temporal.define"(%y) ({
  %Wy1 = "temporal.read"(%Wy) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x16xf32>
  %h1 = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %y1 = "temporal.matmul"(%Wy1, %h1) : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4xf32>
  "gpu.yield"(%y1) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

