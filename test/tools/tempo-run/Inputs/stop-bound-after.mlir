// A tensor outside the stop's cone using the bound (r[t] = t + T) runs after the stop and sees its length (../stop.mlir).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
%r = "temporal.tensor"() {sym_name = "r", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%r) ({
  %p = "temporal.position"() {dim = "t"} : () -> tensor<i64>
  %n = "temporal.bound"() {dim = "t"} : () -> tensor<i64>
  %e = "temporal.add"(%p, %n) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%e) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%r) : (!temporal.rtensor) -> ()
%total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%c) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.mul"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<100> : tensor<i64>} : () -> tensor<i64>
  %d = "temporal.cmp"(%v, %c) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xi64>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
  "gpu.yield"(%s) : (tensor<i64>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
