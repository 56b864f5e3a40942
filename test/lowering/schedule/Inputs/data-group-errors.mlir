"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%left = "temporal.input"() {sym_name = "left", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %z = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%z) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (-n >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %l = "temporal.read"(%left) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read_at"(%h, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  %p = "temporal.read"(%h) {index = affine_map<(n)[N] -> (n - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %s = "temporal.add"(%a, %p) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%left = "temporal.input"() {sym_name = "left", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%c) ({
  %l = "temporal.read"(%left) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read_at"(%h, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %z = "temporal.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%z) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (-n >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %p = "temporal.read"(%c) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read_at"(%h, %p) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%a) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
