// bounds: T=6
// Integer division never traps: q[t] = x[t] / d with d = [0, -1, 3, -2], and MIN / -1 = MIN.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xi64>} : () -> !temporal.rtensor
%q = "temporal.tensor"() {sym_name = "q", domain = ["t"], element = tensor<4xi64>} : () -> !temporal.rtensor
"temporal.define"(%q) ({
  %min = "temporal.constant"() {value = dense<-9223372036854775808> : tensor<4xi64>} : () -> tensor<4xi64>
  %d = "temporal.constant"() {value = dense<[0, -1, 3, -2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = "temporal.div"(%min, %d) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  "gpu.yield"(%r) : (tensor<4xi64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%q) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xi64>
  %d = "temporal.constant"() {value = dense<[0, -1, 3, -2]> : tensor<4xi64>} : () -> tensor<4xi64>
  %r = "temporal.div"(%v, %d) : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  "gpu.yield"(%r) : (tensor<4xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%q) : (!temporal.rtensor) -> ()
