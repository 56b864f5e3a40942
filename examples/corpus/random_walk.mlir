// bounds: B=2 T=7
// Seeded random numbers: a noisy walk per sequence, w[b, t] = w[b, t-1] + noise[b, t],
// with normal noise and a uniform start; values depend only on seed and point.
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["b", "t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%u = "temporal.tensor"() {sym_name = "u", domain = ["b", "t"], element = tensor<2x2xf64>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %start = "temporal.random"() {seed = 7 : i64, distribution = "uniform"} : () -> tensor<3xf32>
  "gpu.yield"(%start) : (tensor<3xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %prev = "temporal.read"(%w) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
  %noise = "temporal.random"() {seed = 11 : i64, distribution = "normal"} : () -> tensor<3xf32>
  %next = "temporal.add"(%prev, %noise) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%next) : (tensor<3xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%u) ({
  %n = "temporal.random"() {seed = -3 : i64, distribution = "normal"} : () -> tensor<2x2xf64>
  "gpu.yield"(%n) : (tensor<2x2xf64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%u) : (!temporal.rtensor) -> ()
