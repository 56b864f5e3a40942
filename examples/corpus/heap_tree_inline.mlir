// bounds: N=13
// heap_tree.mlir with the children's numbers computed in the node's own
// definition (2n + 1 from the node's position) and the right child read at
// an offset from the left one (coordinate k + 1): the compiled code computes
// those coordinates for every node before ordering the nodes by depth,
// then computes the nodes one by one (a coordinate other than the operand
// itself has no batched form yet). Integer points: exact both ways.
module {
  "temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<i32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
  "temporal.define"(%s) ({
    %v = "temporal.read"(%x) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i32>
    %w = "temporal.cast"(%v) : (tensor<i32>) -> tensor<i64>
    "gpu.yield"(%w) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (n * 2 + 2 - N >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %p = "temporal.position"() {dim = "n"} : () -> tensor<i32>
    %two = "temporal.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %one = "temporal.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %d = "temporal.mul"(%p, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %l = "temporal.add"(%d, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %a = "temporal.read_at"(%s, %l) {index = affine_map<(n, k)[N] -> (k)>} : (!temporal.rtensor, tensor<i32>) -> tensor<i64>
    %b = "temporal.read_at"(%s, %l) {index = affine_map<(n, k)[N] -> (k + 1)>} : (!temporal.rtensor, tensor<i32>) -> tensor<i64>
    %three = "temporal.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
    %a3 = "temporal.mul"(%a, %three) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %z = "temporal.sub"(%a3, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "gpu.yield"(%z) : (tensor<i64>) -> ()
  }) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
