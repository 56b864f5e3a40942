// x is internal and read only at t-1: it lives in a ring of 2 points.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %zero = "temporal.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%zero) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %prev = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %next = "temporal.add"(%prev, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%next) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %sq = "temporal.mul"(%now, %now) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%sq) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
