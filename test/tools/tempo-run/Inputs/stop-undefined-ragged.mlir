// stop-undefined-point.mlir's ragged form: done[b, t] (never true) defined
// only for t < 2; each b's loop looks at done[b, 2].
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
  %two = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %c = "temporal.cmp"(%v, %two) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (-t + 1 >= 0)>} : (!temporal.rtensor) -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
