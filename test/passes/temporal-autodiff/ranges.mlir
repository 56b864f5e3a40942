// temporal-autodiff through reads of ranges: causal attention over a
// growing cache (keys k[0:t+1] computed from x, values v[0:t+1] a
// recurrence over t). The gradient of a key or value at q gathers what
// every later step's softmax did with it: a tensor over k's domain (the
// element frame) recomputes the branch's per-element values at q from
// k[q] and v[q], and reads, as a range over the reader steps t >= q that
// read q, the row values it needs (the query, the maximum, the sum) and
// the cotangents of the nodes that collapse the range, from tensors over
// t ('$f$'); the sum over t is the backward sweep's own sum over that
// dimension. The same program written with temporal.attention (Inputs/
// attention-fused.mlir) has the same gradients bit for bit: the adjoint
// takes the fused op apart in the interpreter's order. Compiled and
// interpreted agree bit for bit at -O0..-O2; finite differences are in
// tests/gradients.rs (causal_attention_over_a_growing_cache, GPT block);
// -O3, whose tiled softmax is exact only in real arithmetic, within 1e-13.
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff --temporal-verify > /dev/null
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s --check-prefix=READER
// RUN: tempo-run %s --bound T=6 --seed 3 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 3 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 3 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 3 | diff - %t.interpreted
// -O3 tiles the forward attention (online softmax: not bit for bit).
// RUN: tempo-run %s --bound T=6 --seed 3 --interpret --format json > %t.json
// RUN: tempo-run %s --bound T=6 --seed 3 -O 3 --format json > %t.o3.json
// RUN: %python %S/Inputs/close.py %t.json %t.o3.json 1e-13
// RUN: tempo-run %s --bound T=6 --seed 3 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %S/Inputs/attention-fused.mlir --bound T=6 --seed 3 --interpret | diff - %t.interpreted
// The fused op compiles to the online softmax, so within 1e-13.
// RUN: tempo-run %S/Inputs/attention-fused.mlir --bound T=6 --seed 3 --format json > %t.fused.json
// RUN: %python %S/Inputs/close.py %t.json %t.fused.json 1e-13
// RUN: tempo-run %s --bound T=1 --seed 3 --interpret > %t.one
// RUN: tempo-run %s --bound T=1 --seed 3 | diff - %t.one

// CHECK-NOT: temporal.grad
// The reader steps that read q: t in [q, T).
// CHECK-DAG: #[[FROM:map[0-9]*]] = affine_map<(d0)[s0] -> (d0)>
// CHECK-DAG: #[[TO:map[0-9]+]] = affine_map<(d0)[s0] -> (s0)>
// The element frame of k's range read (node 3 of o's branch), over k's
// domain, and the query, one of the row values stashed over t once for
// both range reads: 11 values per step (the query, the softmax's maximum
// and sum, sum(P * dP) and the output's cotangent), computed by o's own
// backward sweep beside the cotangents of its point reads (Wq and x: 20
// values) in one tensor, each also in a tensor of its own for reads of
// ranges of it.
// CHECK-DAG: "temporal.tensor"() {domain = ["t"], element = tensor<31xf64>, sym_name = "gx$c$o$0$0"}
// The element frame also differentiates v's read of the same range (v
// has k's domain): one sweep, the scores and weights computed once, both
// cotangents side by side (k's 4, then v's 4).
// CHECK-DAG: %[[A:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<8xf64>, sym_name = "gx$a$o$0$3$0"}
// CHECK-DAG: %[[Q:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<4xf64>, sym_name = "gx$f$o$0$0"}
// CHECK: "temporal.define"(%[[A]])
// CHECK: %[[QS:.*]] = "temporal.read_range"(%[[Q]]) {caps = [#map], lower = [#[[FROM]]], upper = [#[[TO]]]} : (!temporal.rtensor) -> tensor<?x4xf64>
// k[q] itself, and the scores of every step t >= q with it.
// CHECK: %[[KQ:.*]] = "temporal.read"(%{{.*}}) {index = #map1} : (!temporal.rtensor) -> tensor<4xf64>
// CHECK: "temporal.einsum"(%[[KQ]], %[[QS]]) {spec = "k,Rk->R"} : (tensor<4xf64>, tensor<?x4xf64>) -> tensor<?xf64>
// The softmax differentiated as one unit (FlashAttention's backward):
// P = exp(s - max) / sum from the stashed row values, dP = dO . v[q],
// dS = P * (dP - D) with D = sum(P * dP) stashed per step; no cotangent
// through the maximum (no comparison with it) or the sum.
// CHECK-NOT: "temporal.cmp"
// CHECK: %[[P:.*]] = "temporal.div"
// CHECK: %[[DP:.*]] = "temporal.einsum"(%{{.*}}, %{{.*}}) {spec = "Ra,a->R"}
// CHECK: %[[DIFF:.*]] = "temporal.sub"(%[[DP]], %{{.*}})
// CHECK: "temporal.mul"(%[[P]], %[[DIFF]])
// CHECK-NOT: "temporal.cmp"
// CHECK: %[[DK:.*]] = "temporal.einsum"({{.*}}) {spec = "R,Rk->k"}
// CHECK: "temporal.concat"(%[[DK]], %{{.*}}) {axis = 0 : i64} : (tensor<4xf64>, tensor<4xf64>) -> tensor<8xf64>
// CHECK: gpu.yield

// The reader's own sweep (FlashAttention-2's dQ: dS = P * (dO . v - D),
// dq = dS k) computes the row values the element frames read in the same
// pass: one maximum and one sum along the range, the reads' cotangents
// (16 + 4 values) then the stash (the query, the maximum, the sum,
// sum(P * dP), dO) side by side.
// READER: %[[C:.*]] = "temporal.tensor"() {domain = ["t"], element = tensor<31xf64>, sym_name = "gx$c$o$0$0"}
// READER: "temporal.define"(%[[C]])
// READER: "temporal.reduce_max"
// READER-NOT: "temporal.reduce_max"
// READER: "temporal.concat"({{.*}}) -> tensor<20xf64>
// READER: "temporal.concat"({{.*}}) -> tensor<31xf64>
// READER-NEXT: gpu.yield

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%Wq = "temporal.input"() {sym_name = "Wq", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%Wk = "temporal.input"() {sym_name = "Wk", domain = [], element = tensor<4x4xf64>} : () -> !temporal.rtensor
%k = "temporal.tensor"() {sym_name = "k", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%v = "temporal.tensor"() {sym_name = "v", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%k) ({
  %w = "temporal.read"(%Wk) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %r = "temporal.matmul"(%w, %xt) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The values: a recurrence (v[t] = tanh(v[t-1] + x[t])), so the gradient
// through the range reaches x through time too.
"temporal.define"(%v) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %r = "temporal.tanh"(%xt) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%v) ({
  %p = "temporal.read"(%v) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %s = "temporal.add"(%p, %xt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.tanh"(%s) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%r) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%o) ({
  %w = "temporal.read"(%Wq) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %q = "temporal.matmul"(%w, %xt) : (tensor<4x4xf64>, tensor<4xf64>) -> tensor<4xf64>
    %keys = "temporal.read_range"(%k) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf64>
    %values = "temporal.read_range"(%v) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf64>
    %scores = "temporal.matmul"(%keys, %q) : (tensor<?x4xf64>, tensor<4xf64>) -> tensor<?xf64>
    %scale = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
    %scaled = "temporal.mul"(%scores, %scale) : (tensor<?xf64>, tensor<f64>) -> tensor<?xf64>
    %m = "temporal.reduce_max"(%scaled) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
    %m1 = "temporal.reshape"(%m) : (tensor<f64>) -> tensor<1xf64>
    %shifted = "temporal.sub"(%scaled, %m1) : (tensor<?xf64>, tensor<1xf64>) -> tensor<?xf64>
    %e = "temporal.exp"(%shifted) : (tensor<?xf64>) -> tensor<?xf64>
    %z = "temporal.reduce_sum"(%e) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
    %z1 = "temporal.reshape"(%z) : (tensor<f64>) -> tensor<1xf64>
    %weights = "temporal.div"(%e, %z1) : (tensor<?xf64>, tensor<1xf64>) -> tensor<?xf64>
    %out = "temporal.einsum"(%weights, %values) {spec = "n,na->a"} : (tensor<?xf64>, tensor<?x4xf64>) -> tensor<4xf64>
  "gpu.yield"(%out) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %ot = "temporal.read"(%o) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %s = "temporal.sin"(%ot) : (tensor<4xf64>) -> tensor<4xf64>
  %r = "temporal.reduce_sum"(%s) {axis = 0 : i64} : (tensor<4xf64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gx = "temporal.grad"(%loss, %x) {sym_name = "gx"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gWq = "temporal.grad"(%loss, %Wq) {sym_name = "gWq"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gWk = "temporal.grad"(%loss, %Wk) {sym_name = "gWk"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%gx) : (!temporal.rtensor) -> ()
"temporal.output"(%gWq) : (!temporal.rtensor) -> ()
"temporal.output"(%gWk) : (!temporal.rtensor) -> ()
