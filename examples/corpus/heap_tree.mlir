// bounds: N=15
// Reads through data over a tree whose shape the program computes: the
// heap numbering, node n's children 2n + 1 and 2n + 2 (numbers larger than
// the parent's, so a forward loop over n would be wrong), leaves where
// 2n + 2 >= N. The children's numbers are tensors of their own (computed
// before the tree, then read at the node), the node's value reads them
// through data: compiled depth by depth, leaves first, all nodes of one
// depth together.
module {
  "temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %lc = "temporal.tensor"() {sym_name = "lc", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
  %rc = "temporal.tensor"() {sym_name = "rc", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%lc) ({
    %p = "temporal.position"() {dim = "n"} : () -> tensor<i64>
    %two = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %d = "temporal.mul"(%p, %two) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %l = "temporal.add"(%d, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%l) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%rc) ({
    %l = "temporal.read"(%lc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %one = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %r = "temporal.add"(%l, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%r) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<4xf32>
    %t = "temporal.tanh"(%v) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%t) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(n)[N] : (n * 2 + 2 - N >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %l = "temporal.read"(%lc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %r = "temporal.read"(%rc) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
    %a = "temporal.read_at"(%s, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<4xf32>
    %b = "temporal.read_at"(%s, %r) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<4xf32>
    %W = "temporal.read"(%w) {index = affine_map<(n)[N] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %aw = "temporal.matmul"(%a, %W) : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
    %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<4xf32>
    %ab = "temporal.sub"(%aw, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %z = "temporal.add"(%ab, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "temporal.tanh"(%z) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%t) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
