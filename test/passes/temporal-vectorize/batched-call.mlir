// An external call marked `batched` (its function takes a batch of points
// as well as one, `Expr::call_batched`, Python's `p.call(...,
// batched=True)`) is batched with its dimension: temporal-vectorize{bounds=B=3}
// computes s[b, t] as s_batched[t] of [3, 2], and the call takes the batch's rows
// (the shared argument k repeated for each) and returns [3, 2]. A call
// without the attribute keeps b a loop (Inputs/unbatched-call.mlir): one
// call per point. tests/externals.rs runs both against the interpreter.
// RUN: tempo-opt %s "--temporal-vectorize=bounds=B=3" | FileCheck %s
// RUN: tempo-opt %S/Inputs/unbatched-call.mlir "--temporal-vectorize=bounds=B=3" | FileCheck %s --check-prefix=UNBATCHED

// CHECK: {domain = ["t"], element = tensor<3x2xf32>, sym_name = "s_batched"}
// CHECK: "temporal.expand"({{.*}}) : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: "temporal.call"
// CHECK-NEXT: gpu.yield {{.*}} : tensor<3x2xf32>, tensor<3xf32>
// CHECK-NEXT: }) {batched, callee = "step"} : () -> tensor<3x2xf32>
// UNBATCHED-NOT: s_batched
// UNBATCHED: "temporal.call"
// UNBATCHED-NEXT: gpu.yield {{.*}} : tensor<2xf32>, tensor<f32>
// UNBATCHED-NEXT: }) {callee = "step"} : () -> tensor<2xf32>

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["b"], element = tensor<2xf32>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["b", "t"], element = tensor<2xf32>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b)>} : (!temporal.rtensor) -> tensor<2xf32>
  "gpu.yield"(%v) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %p = "temporal.read"(%s) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
  %k = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
  %n = "temporal.call"() ({
    "gpu.yield"(%p, %k) : (tensor<2xf32>, tensor<f32>) -> ()
  }) {callee = "step", batched} : () -> tensor<2xf32>
  "gpu.yield"(%n) : (tensor<2xf32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
