// bounds: T=12
// A walk clipped to [-1, 1] with where/compare, and the count of clipped steps as an integer.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%n = "temporal.tensor"() {sym_name = "n", domain = ["t"], element = tensor<i32>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%p, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %m1 = "temporal.neg"(%one) : (tensor<f64>) -> tensor<f64>
  %hi = "temporal.cmp"(%s, %one) {predicate = "gt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %c1 = "temporal.select"(%hi, %one, %s) : (tensor<i1>, tensor<f64>, tensor<f64>) -> tensor<f64>
  %lo = "temporal.cmp"(%c1, %m1) {predicate = "lt"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %c2 = "temporal.select"(%lo, %m1, %c1) : (tensor<i1>, tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%c2) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%n) ({
  %zero = "temporal.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  "gpu.yield"(%zero) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%n) ({
  %prev = "temporal.read"(%n) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i32>
  %v = "temporal.read"(%w) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %a = "temporal.abs"(%v) : (tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %at = "temporal.cmp"(%a, %one) {predicate = "eq"} : (tensor<f64>, tensor<f64>) -> tensor<i1>
  %k = "temporal.cast"(%at) : (tensor<i1>) -> tensor<i32>
  %s = "temporal.add"(%prev, %k) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  "gpu.yield"(%s) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%n) : (!temporal.rtensor) -> ()
