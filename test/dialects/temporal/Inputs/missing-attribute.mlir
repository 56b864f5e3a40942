"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%p) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
