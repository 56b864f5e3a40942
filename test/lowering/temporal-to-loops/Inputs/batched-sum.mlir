// s[b, t] = s[b, t-1] + x[b, t], total[b] = s[b, T-1].
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["b", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = ["b"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %now = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%now) : (tensor<f64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %last = "temporal.read"(%s) {index = affine_map<(b)[B, T] -> (b, T - 1)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%last) : (tensor<f64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
