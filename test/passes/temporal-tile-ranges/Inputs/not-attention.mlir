// Chains temporal-tile-ranges leaves alone:
// - w: the weights are also an output of the branch's value (used twice);
// - s: the range is static (0:4), nothing grows;
// - a: the softmax runs along the query axis, not the summed key axis.
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %w = "temporal.tensor"() {sym_name = "w", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<2x2xf32>} : () -> !temporal.rtensor
  "temporal.define"(%w) ({
    %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %q = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
    %sc = "temporal.matmul"(%k, %q) : (tensor<?x2xf32>, tensor<2xf32>) -> tensor<?xf32>
    %m = "temporal.reduce_max"(%sc) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %d = "temporal.sub"(%sc, %m) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %e = "temporal.exp"(%d) : (tensor<?xf32>) -> tensor<?xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %p = "temporal.div"(%e, %z) : (tensor<?xf32>, tensor<f32>) -> tensor<?xf32>
    %o = "temporal.matmul"(%p, %k) : (tensor<?xf32>, tensor<?x2xf32>) -> tensor<2xf32>
    %pm = "temporal.reduce_max"(%p) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    %r = "temporal.add"(%o, %pm) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    "gpu.yield"(%r) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (4)>]} : (!temporal.rtensor) -> tensor<4x2xf32>
    %q = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2xf32>
    %sc = "temporal.matmul"(%k, %q) : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4xf32>
    %m = "temporal.reduce_max"(%sc) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<f32>
    %d = "temporal.sub"(%sc, %m) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %e = "temporal.exp"(%d) : (tensor<4xf32>) -> tensor<4xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<f32>
    %p = "temporal.div"(%e, %z) : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    %o = "temporal.matmul"(%p, %k) : (tensor<4xf32>, tensor<4x2xf32>) -> tensor<2xf32>
    "gpu.yield"(%o) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%a) ({
    %k = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %q = "temporal.constant"() {value = dense<[[1.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
    %sc = "temporal.einsum"(%q, %k) {spec = "qd,nd->qn"} : (tensor<2x2xf32>, tensor<?x2xf32>) -> tensor<2x?xf32>
    %m = "temporal.reduce_max"(%sc) {axis = 0 : i64} : (tensor<2x?xf32>) -> tensor<?xf32>
    %d = "temporal.sub"(%sc, %m) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
    %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<2x?xf32>) -> tensor<?xf32>
    %p = "temporal.div"(%e, %z) : (tensor<2x?xf32>, tensor<?xf32>) -> tensor<2x?xf32>
    %o = "temporal.einsum"(%p, %k) {spec = "qn,nd->qd"} : (tensor<2x?xf32>, tensor<?x2xf32>) -> tensor<2x2xf32>
    "gpu.yield"(%o) : (tensor<2x2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%w) : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
  "temporal.output"(%a) : (!temporal.rtensor) -> ()
}
