// The program of ../ragged-stop.mlir over (t, b): the stopped loop outside the batch.
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t", "b"], element = tensor<i64>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t", "b"], element = tensor<i1>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
%last = "temporal.tensor"() {sym_name = "last", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.position"() {dim = "b"} : () -> tensor<i64>
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.add"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t, b)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(t, b)[B, T] -> (t - 1, b)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.mul"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t, b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t, b)[B, T] -> (t, b)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<100> : tensor<i64>} : () -> tensor<i64>
  %d = "temporal.cmp"(%v, %c) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(t, b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(b)[B, T] -> (0)>, affine_map<(b)[B, T] -> (b)>], upper = [affine_map<(b)[B, T] -> (T)>, affine_map<(b)[B, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xi64>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
  "gpu.yield"(%s) : (tensor<i64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%last) ({
  %v = "temporal.read"(%x) {index = affine_map<(b)[B, T] -> (T - 1, b)>} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
"temporal.output"(%last) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
