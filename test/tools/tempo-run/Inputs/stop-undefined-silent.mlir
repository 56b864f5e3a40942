// A stop over a tensor no branch defines, in a program without outputs:
// nothing is demanded, so neither mode evaluates the stop (a fuzz case
// once rejected by the interpreter and run by the compiled code).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  %z = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %c = "temporal.cmp"(%v, %z) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "gpu.yield"(%c) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (-t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
