// A stack of L layers run at every step t: h[t, l] = tanh(h[t, l-1] + h[t-1, l]),
// layer 0 reads the input, step 0 starts from the input too.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t", "l"], element = tensor<4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %below = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t, l - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %before = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t - 1, l)>} : (!temporal.rtensor) -> tensor<4xf32>
  %sum = "temporal.add"(%below, %before) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %h1 = "temporal.tanh"(%sum) : (tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%h1) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (t - 1 >= 0, l - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%x) {index = affine_map<(t, l)[T, L] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%v) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %top = "temporal.read"(%h) {index = affine_map<(t)[T, L] -> (t, L - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%top) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
