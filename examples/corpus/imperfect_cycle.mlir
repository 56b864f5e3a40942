// bounds: I=4 T=5
// A cycle between tensors of nested domains: w[i] = x[i-1, T-1] + 1 and
// x[i, t] = x[i, t-1] + w[i] (x[i, 0] = w[i]). The schedule nests t inside i
// with w placed before the t loop: for i { w[i]; for t { x[i, t] } }.
"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor
%x = "temporal.tensor"() {sym_name = "x", domain = ["i", "t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %p = "temporal.read"(%x) {index = affine_map<(i)[I, T] -> (i - 1, T - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %s = "temporal.add"(%p, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %prev = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %p = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f32>
  %s = "temporal.add"(%prev, %p) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
