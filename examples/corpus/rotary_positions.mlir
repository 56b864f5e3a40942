// bounds: T=7 L=3
// Positions and bounds as values: a rotary-style rotation of x[t] by the
// angle 0.3 t (cos/sin of the step), scaled per layer by (l + 1) / L, with
// an integer step counter k[t, l] = 10 t + l beside it.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  "temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %k = "temporal.tensor"() {sym_name = "k", domain = ["t", "l"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t, l)[T, L] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %t = "temporal.position"() {dim = "t"} : () -> tensor<f32>
    %rate = "temporal.constant"() {value = dense<0.3> : tensor<f32>} : () -> tensor<f32>
    %angle = "temporal.mul"(%t, %rate) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %c = "temporal.cos"(%angle) : (tensor<f32>) -> tensor<f32>
    %s = "temporal.sin"(%angle) : (tensor<f32>) -> tensor<f32>
    %a = "temporal.mul"(%xt, %c) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %b = "temporal.mul"(%xt, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %r = "temporal.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %l = "temporal.position"() {dim = "l"} : () -> tensor<f32>
    %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %l1 = "temporal.add"(%l, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %n = "temporal.bound"() {dim = "l"} : () -> tensor<f32>
    %w = "temporal.div"(%l1, %n) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %out = "temporal.mul"(%r, %w) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    "gpu.yield"(%out) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%k) ({
    %t = "temporal.position"() {dim = "t"} : () -> tensor<i64>
    %ten = "temporal.constant"() {value = dense<10> : tensor<i64>} : () -> tensor<i64>
    %tt = "temporal.mul"(%t, %ten) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %l = "temporal.position"() {dim = "l"} : () -> tensor<i64>
    %v = "temporal.add"(%tt, %l) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%v) : (tensor<i64>) -> ()
  }) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
  "temporal.output"(%k) : (!temporal.rtensor) -> ()
}
