// bounds: T=7
// Conditions on the bound and on parity; a domain-less tensor reads the last point.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<i32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<i32>} : () -> !temporal.rtensor
%last = "temporal.tensor"() {sym_name = "last", domain = [], element = tensor<i32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<100> : tensor<i32>} : () -> tensor<i32>
  "gpu.yield"(%c) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (T - 1 - t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i32>
  %n = "temporal.neg"(%v) : (tensor<i32>) -> tensor<i32>
  "gpu.yield"(%n) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (t mod 2 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t floordiv 2)>} : (!temporal.rtensor) -> tensor<i32>
  "gpu.yield"(%v) : (tensor<i32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%last) ({
  %v = "temporal.read"(%y) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<i32>
  %w = "temporal.read"(%y) {index = affine_map<()[T] -> (0)>} : (!temporal.rtensor) -> tensor<i32>
  %s = "temporal.sub"(%v, %w) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  "gpu.yield"(%s) : (tensor<i32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%last) : (!temporal.rtensor) -> ()
