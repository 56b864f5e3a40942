// Moving sums of integer event counts over the last 256 steps, as written:
// w additions per step. temporal-lift-recurrences makes them a difference
// of running sums (exact: integer sums wrap).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%c = "temporal.input"() {sym_name = "c", domain = ["t"], element = tensor<64xi64>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<64xi64>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %recent = "temporal.read_range"(%c) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0, t - 255)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x64xi64>
  %total = "temporal.reduce_sum"(%recent) {axis = 0 : i64} : (tensor<?x64xi64>) -> tensor<64xi64>
  "gpu.yield"(%total) : (tensor<64xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
