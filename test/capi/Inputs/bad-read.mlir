// A read with two coordinates of a tensor over one dimension: refused by
// temporal-verify, at the read.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t, t)>} : (!temporal.rtensor) -> tensor<4xf32>
    "gpu.yield"(%xt) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : ()>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
