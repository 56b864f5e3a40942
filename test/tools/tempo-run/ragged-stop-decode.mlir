// Early exit per token in a decode (a ragged stop whose batch dimension is
// the decode's own): token t runs layers l until its state reaches 40
// (h doubles per layer from x[t]); its output is its state at its own
// exit layer (h[t, L-1]), and the next token's input reads it, so what
// decides where token t stops reads the length of token t-1 (allowed: only
// earlier tokens' lengths; the same token's is refused,
// Inputs/ragged-stop-errors.mlir). Compiled at every level and interpreted
// alike: per token 7, 2, 3, 2, 2, 3 layers (with at most 4 layers, every
// token after the first runs them all).
// RUN: tempo-run %s --bound T=6 --bound L=10 --interpret | FileCheck %s
// RUN: tempo-run %s --bound T=6 --bound L=10 -O 0 | FileCheck %s
// RUN: tempo-run %s --bound T=6 --bound L=10 -O 1 | FileCheck %s
// RUN: tempo-run %s --bound T=6 --bound L=10 | FileCheck %s
// RUN: tempo-run %s --bound T=6 --bound L=10 -O 3 | FileCheck %s
// RUN: tempo-run %s --bound T=6 --bound L=4 | FileCheck %s --check-prefix=SHORT
// RUN: tempo-run %s --bound T=6 --bound L=4 --interpret | FileCheck %s --check-prefix=SHORT

// CHECK: out: int64[6] = [64, 54, 68, 62, 50, 52]
// CHECK-NEXT: depth: int64[6] = [7, 2, 3, 2, 2, 3]
// SHORT: out: int64[6] = [8, -232, -2152, -17512, -140392, -1123432]
// SHORT-NEXT: depth: int64[6] = [4, 4, 4, 4, 4, 4]

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "l", bound = "L"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t", "l"], element = tensor<i64>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t", "l"], element = tensor<i1>} : () -> !temporal.rtensor
%out = "temporal.tensor"() {sym_name = "out", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%depth = "temporal.tensor"() {sym_name = "depth", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%c) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T, L] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%out) {index = affine_map<(t)[T, L] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<37> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.sub"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%x) {index = affine_map<(t, l)[T, L] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(t, l)[T, L] : (l == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %p = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t, l - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.mul"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%done) ({
  %v = "temporal.read"(%h) {index = affine_map<(t, l)[T, L] -> (t, l)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<40> : tensor<i64>} : () -> tensor<i64>
  %d = "temporal.cmp"(%v, %c) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(t, l)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%out) ({
  %v = "temporal.read"(%h) {index = affine_map<(t)[T, L] -> (t, L - 1)>} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%depth) ({
  %n = "temporal.bound"() {dim = "l"} : () -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T, L] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%out) : (!temporal.rtensor) -> ()
"temporal.output"(%depth) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "l"} : (!temporal.rtensor) -> ()
