// Collectives of every kind and type: x[t] = c * (rank + t) (2x3, f32);
// its sum and mean (in f64) over the processes; the max of c * rank (i64)
// over t and the min (i32, with an unused sum beside it), the rank and the
// world size. With W processes: sum = c * (W(W-1)/2 + W t), mean = that / W,
// max = c * (W-1) where c > 0 (0 where c < 0), min the reverse.
// Then gradients through all-reduces of values that differ per process:
// p = w * (x[t] + rank), loss[t] = sum(all_reduce(p)). The loss of the run
// is the sum of the processes' losses, so on rank q, with W processes:
// through the sum, gs = W * sum_t (x[t] + q); through the mean,
// gm = sum_t (x[t] + q). x[t] = [t, 2t, 3t], exact in f64.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %r = "temporal.rank"() : () -> tensor<f32>
  %p = "temporal.position"() {dim = "t"} : () -> tensor<f32>
  %c = "temporal.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %a = "temporal.add"(%r, %p) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %v = "temporal.mul"(%c, %a) : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  "gpu.yield"(%v) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%s = "temporal.tensor"() {sym_name = "sum", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %y = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%y) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%m = "temporal.tensor"() {sym_name = "mean", domain = ["t"], element = tensor<2x3xf64>} : () -> !temporal.rtensor
"temporal.define"(%m) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %w = "temporal.cast"(%v) : (tensor<2x3xf32>) -> tensor<2x3xf64>
  %y = "temporal.all_reduce"(%w) {reduction = "mean"} : (tensor<2x3xf64>) -> tensor<2x3xf64>
  "gpu.yield"(%y) : (tensor<2x3xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%mx = "temporal.tensor"() {sym_name = "max", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%mx) ({
  %r = "temporal.rank"() : () -> tensor<i64>
  %c = "temporal.constant"() {value = dense<[10, -20, 30]> : tensor<3xi64>} : () -> tensor<3xi64>
  %v = "temporal.mul"(%c, %r) : (tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %y = "temporal.all_reduce"(%v) {reduction = "max"} : (tensor<3xi64>) -> tensor<3xi64>
  "gpu.yield"(%y) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%mn = "temporal.tensor"() {sym_name = "min", domain = [], element = tensor<3xi32>} : () -> !temporal.rtensor
"temporal.define"(%mn) ({
  %r = "temporal.rank"() : () -> tensor<i32>
  %c = "temporal.constant"() {value = dense<[10, -20, 30]> : tensor<3xi32>} : () -> tensor<3xi32>
  %v = "temporal.mul"(%c, %r) : (tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  %y = "temporal.all_reduce"(%v) {reduction = "min"} : (tensor<3xi32>) -> tensor<3xi32>
  %unused = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<3xi32>) -> tensor<3xi32>
  "gpu.yield"(%y) : (tensor<3xi32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%ws = "temporal.tensor"() {sym_name = "ranks", domain = [], element = tensor<2xi64>} : () -> !temporal.rtensor
"temporal.define"(%ws) ({
  %r = "temporal.rank"() : () -> tensor<i64>
  %w = "temporal.world_size"() : () -> tensor<i64>
  %r1 = "temporal.reshape"(%r) : (tensor<i64>) -> tensor<1xi64>
  %w1 = "temporal.reshape"(%w) : (tensor<i64>) -> tensor<1xi64>
  %v = "temporal.concat"(%r1, %w1) {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  "gpu.yield"(%v) : (tensor<2xi64>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
"temporal.output"(%m) : (!temporal.rtensor) -> ()
"temporal.output"(%mx) : (!temporal.rtensor) -> ()
"temporal.output"(%mn) : (!temporal.rtensor) -> ()
"temporal.output"(%ws) : (!temporal.rtensor) -> ()
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<3xf64>} : () -> !temporal.rtensor
%xg = "temporal.tensor"() {sym_name = "xg", domain = ["t"], element = tensor<3xf64>} : () -> !temporal.rtensor
"temporal.define"(%xg) ({
  %p = "temporal.position"() {dim = "t"} : () -> tensor<f64>
  %c = "temporal.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf64>} : () -> tensor<3xf64>
  %v = "temporal.mul"(%c, %p) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  "gpu.yield"(%v) : (tensor<3xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%ls = "temporal.tensor"() {sym_name = "ls", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%ls) ({
  %wv = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf64>
  %xv = "temporal.read"(%xg) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %r = "temporal.rank"() : () -> tensor<f64>
  %xr = "temporal.add"(%xv, %r) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %p = "temporal.mul"(%wv, %xr) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %ar = "temporal.all_reduce"(%p) {reduction = "sum"} : (tensor<3xf64>) -> tensor<3xf64>
  %l = "temporal.reduce_sum"(%ar) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%lm = "temporal.tensor"() {sym_name = "lm", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%lm) ({
  %wv = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf64>
  %xv = "temporal.read"(%xg) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %r = "temporal.rank"() : () -> tensor<f64>
  %xr = "temporal.add"(%xv, %r) : (tensor<3xf64>, tensor<f64>) -> tensor<3xf64>
  %p = "temporal.mul"(%wv, %xr) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  %ar = "temporal.all_reduce"(%p) {reduction = "mean"} : (tensor<3xf64>) -> tensor<3xf64>
  %l = "temporal.reduce_sum"(%ar) {axis = 0 : i64} : (tensor<3xf64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gs = "temporal.grad"(%ls, %w) {sym_name = "gs"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gm = "temporal.grad"(%lm, %w) {sym_name = "gm"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%gs) : (!temporal.rtensor) -> ()
"temporal.output"(%gm) : (!temporal.rtensor) -> ()
