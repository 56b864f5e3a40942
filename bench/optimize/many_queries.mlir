// Attention of 64 queries per step over a cache that grows with t (as in
// chunked prefill or multi-query decoding): per step the scores, their
// exponentials and the weights are [64, t+1] (64 * 4 bytes per cached
// position each), while the cache itself is 2 * 16 * 4 bytes per position.
//   k[t] = x[t] Wk,  v[t] = x[t] Wv
//   o[t] = softmax(q[t] k[0:t+1]^T / 4) v[0:t+1]
// Run: tempo-run bench/optimize/many_queries.mlir --bound T=1000 --seed 0
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = [], element = tensor<16xf32>} : () -> !temporal.rtensor
  %q = "temporal.input"() {sym_name = "q", domain = [], element = tensor<64x16xf32>} : () -> !temporal.rtensor
  %Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
  %Wv = "temporal.input"() {sym_name = "Wv", domain = [], element = tensor<16x16xf32>} : () -> !temporal.rtensor
  %k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<16xf32>} : () -> !temporal.rtensor
  %o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<64x16xf32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = [], element = tensor<64x16xf32>} : () -> !temporal.rtensor
  "temporal.define"(%k) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
    %w = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
    %r = "temporal.matmul"(%xt, %w) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
    %s = "temporal.tanh"(%r) : (tensor<16xf32>) -> tensor<16xf32>
    "gpu.yield"(%s) : (tensor<16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%v) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16xf32>
    %w = "temporal.read"(%Wv) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<16x16xf32>
    %r = "temporal.matmul"(%xt, %w) : (tensor<16xf32>, tensor<16x16xf32>) -> tensor<16xf32>
    "gpu.yield"(%r) : (tensor<16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%o) ({
    %qt = "temporal.read"(%q) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<64x16xf32>
    %keys = "temporal.read_range"(%k) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %values = "temporal.read_range"(%v) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x16xf32>
    %scores = "temporal.einsum"(%qt, %keys) {spec = "qd,nd->qn"} : (tensor<64x16xf32>, tensor<?x16xf32>) -> tensor<64x?xf32>
    %c = "temporal.constant"() {value = dense<0.25> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
    %scaled = "temporal.mul"(%scores, %c) : (tensor<64x?xf32>, tensor<1x1xf32>) -> tensor<64x?xf32>
    %m = "temporal.reduce_max"(%scaled) {axis = 1 : i64} : (tensor<64x?xf32>) -> tensor<64xf32>
    %m1 = "temporal.reshape"(%m) : (tensor<64xf32>) -> tensor<64x1xf32>
    %d = "temporal.sub"(%scaled, %m1) : (tensor<64x?xf32>, tensor<64x1xf32>) -> tensor<64x?xf32>
    %e = "temporal.exp"(%d) : (tensor<64x?xf32>) -> tensor<64x?xf32>
    %s = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<64x?xf32>) -> tensor<64xf32>
    %s1 = "temporal.reshape"(%s) : (tensor<64xf32>) -> tensor<64x1xf32>
    %p = "temporal.div"(%e, %s1) : (tensor<64x?xf32>, tensor<64x1xf32>) -> tensor<64x?xf32>
    %out = "temporal.einsum"(%p, %values) {spec = "qn,nd->qd"} : (tensor<64x?xf32>, tensor<?x16xf32>) -> tensor<64x16xf32>
    "gpu.yield"(%out) : (tensor<64x16xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%y) ({
    %last = "temporal.read"(%o) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<64x16xf32>
    "gpu.yield"(%last) : (tensor<64x16xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%y) : (!temporal.rtensor) -> ()
}
