// Cumulative sum of a stream, in constant memory: x[t] is a seeded random
// value made at step t, s[t] = s[t-1] + x[t], and only the total s[T-1] is
// an output. The compiler keeps x in a single point and s in a ring of two
// points, so the stores take 2*8 + 8 = 24 bytes whatever T is.
// Run: tempo-run examples/cumulative_sum.mlir --bound T=10000000 --stats
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
  %total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<f64>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %u = "temporal.random"() {seed = 11 : i64, distribution = "uniform"} : () -> tensor<f64>
    "gpu.yield"(%u) : (tensor<f64>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %first = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
    "gpu.yield"(%first) : (tensor<f64>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
    %now = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
    %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
    "gpu.yield"(%sum) : (tensor<f64>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%total) ({
    %last = "temporal.read"(%s) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<f64>
    "gpu.yield"(%last) : (tensor<f64>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%total) : (!temporal.rtensor) -> ()
}
