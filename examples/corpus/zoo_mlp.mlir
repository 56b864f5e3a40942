// bounds: T=7
// Model zoo: an MLP applied at every step (width 16 -> 32 -> 12 -> 8):
// GELU and ReLU layers, products in both orientations (vector times matrix,
// matrix times vector), and an output layer with a low-rank adapter whose
// two products chain. The end-to-end test `zoo` checks it against a plain
// f64 reference. (The matrix-times-vector layer has fewer than 16 rows, so
// the CUDA target's lowering runs on the CPU too; 16 rows or more take the
// shared-memory matrix kernel, which only a GPU runs.)
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
%W1 = "temporal.input"() {sym_name = "W1", domain = [], element = tensor<16x32xf32>} : () -> !temporal.rtensor
%b1 = "temporal.input"() {sym_name = "b1", domain = [], element = tensor<32xf32>} : () -> !temporal.rtensor
%W2 = "temporal.input"() {sym_name = "W2", domain = [], element = tensor<12x32xf32>} : () -> !temporal.rtensor
%b2 = "temporal.input"() {sym_name = "b2", domain = [], element = tensor<12xf32>} : () -> !temporal.rtensor
%W3 = "temporal.input"() {sym_name = "W3", domain = [], element = tensor<12x8xf32>} : () -> !temporal.rtensor
%b3 = "temporal.input"() {sym_name = "b3", domain = [], element = tensor<8xf32>} : () -> !temporal.rtensor
%A = "temporal.input"() {sym_name = "A", domain = [], element = tensor<12x4xf32>} : () -> !temporal.rtensor
%B = "temporal.input"() {sym_name = "B", domain = [], element = tensor<4x8xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
// h1 = gelu(x W1 + b1)            vector times matrix, GELU (tanh form)
// h2 = relu(W2 h1 + b2)           matrix (12 x 32) times vector
// y  = h2 W3 + b3 + 0.5 (h2 A) B  a layer with a rank-4 adapter (LoRA):
//                                 a product feeding a product, both
//                                 meeting the main product elementwise
"temporal.define"(%y) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<16xf32>
  %W11 = "temporal.read"(%W1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x32xf32>
  %xw1 = "temporal.matmul"(%xt, %W11) : (tensor<16xf32>, tensor<16x32xf32>) -> tensor<32xf32>
  %b11 = "temporal.read"(%b1) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<32xf32>
  %a1 = "temporal.add"(%xw1, %b11) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %h1_c3 = "temporal.constant"() {value = dense<0.044715> : tensor<f32>} : () -> tensor<f32>
  %h1_x2 = "temporal.mul"(%a1, %a1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %h1_x3 = "temporal.mul"(%h1_x2, %a1) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %h1_a = "temporal.mul"(%h1_x3, %h1_c3) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %h1_in = "temporal.add"(%a1, %h1_a) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %h1_k = "temporal.constant"() {value = dense<0.7978845608028654> : tensor<f32>} : () -> tensor<f32>
  %h1_s = "temporal.mul"(%h1_in, %h1_k) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %h1_th = "temporal.tanh"(%h1_s) : (tensor<32xf32>) -> tensor<32xf32>
  %h1_one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %h1_1p = "temporal.add"(%h1_th, %h1_one) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %h1_half = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %h1_hx = "temporal.mul"(%a1, %h1_half) : (tensor<32xf32>, tensor<f32>) -> tensor<32xf32>
  %h1 = "temporal.mul"(%h1_hx, %h1_1p) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
  %W21 = "temporal.read"(%W2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<12x32xf32>
  %w2h = "temporal.matmul"(%W21, %h1) : (tensor<12x32xf32>, tensor<32xf32>) -> tensor<12xf32>
  %b21 = "temporal.read"(%b2) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<12xf32>
  %a2 = "temporal.add"(%w2h, %b21) : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
  %h2 = "temporal.relu"(%a2) : (tensor<12xf32>) -> tensor<12xf32>
  %W31 = "temporal.read"(%W3) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<12x8xf32>
  %hw3 = "temporal.matmul"(%h2, %W31) : (tensor<12xf32>, tensor<12x8xf32>) -> tensor<8xf32>
  %b31 = "temporal.read"(%b3) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<8xf32>
  %main = "temporal.add"(%hw3, %b31) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %A1 = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<12x4xf32>
  %ha = "temporal.matmul"(%h2, %A1) : (tensor<12xf32>, tensor<12x4xf32>) -> tensor<4xf32>
  %B1 = "temporal.read"(%B) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x8xf32>
  %hab = "temporal.matmul"(%ha, %B1) : (tensor<4xf32>, tensor<4x8xf32>) -> tensor<8xf32>
  %scale = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %lora = "temporal.mul"(%hab, %scale) : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  %y1 = "temporal.add"(%main, %lora) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  "gpu.yield"(%y1) : (tensor<8xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

