// temporal-dedup merges identical body ops and tensors that hold the same
// values: h2 repeats the recurrence h1 (each reading itself one step back),
// g2 repeats g1 through h2; one of each remains, reads of the removed ones
// read the representative, and the output keeps its name. Results are
// unchanged, bit for bit.
// RUN: tempo-opt %s --temporal-dedup | FileCheck %s
// RUN: tempo-opt %s --temporal-dedup | tempo-run - --bound T=12 --seed 4 > %t.deduped
// RUN: tempo-run %s --bound T=12 --seed 4 > %t.original
// RUN: diff %t.deduped %t.original
// An ill-formed program gets the verifier's located diagnostic and a
// non-zero exit; the pass changes nothing.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir "--temporal-dedup" 2>&1 | FileCheck %s --check-prefix=INVALID
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y

// CHECK: %[[X:.*]] = "temporal.input"() {{.*}}sym_name = "x"
// CHECK: %[[H:.*]] = "temporal.tensor"() {{.*}}sym_name = "h1"
// CHECK-NOT: sym_name = "h2"
// CHECK: %[[G:.*]] = "temporal.tensor"() {{.*}}sym_name = "g1"
// CHECK-NOT: sym_name = "g2"
// CHECK: %[[Y:.*]] = "temporal.tensor"() {{.*}}sym_name = "y"
// The common subexpression tanh(x[t]) of y's body is computed once, and so
// is the read of g1 once g2 is merged into it:
// CHECK: "temporal.define"(%[[Y]])
// CHECK: "temporal.read"(%[[G]])
// CHECK-NOT: "temporal.read"(%[[G]])
// CHECK: "temporal.tanh"
// CHECK-NOT: "temporal.tanh"
// CHECK: gpu.yield
// CHECK: "temporal.output"(%[[Y]])

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%h1 = "temporal.tensor"() {sym_name = "h1", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%h2 = "temporal.tensor"() {sym_name = "h2", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%g1 = "temporal.tensor"() {sym_name = "g1", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%g2 = "temporal.tensor"() {sym_name = "g2", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%h1) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  "gpu.yield"(%a) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h1) ({
  %p = "temporal.read"(%h1) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %s = "temporal.add"(%p, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "temporal.tanh"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%r) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h2) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  "gpu.yield"(%a) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h2) ({
  %p = "temporal.read"(%h2) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %s = "temporal.add"(%p, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "temporal.tanh"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%r) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g1) ({
  %a = "temporal.read"(%h1) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %b = "temporal.exp"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%b) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g2) ({
  %a = "temporal.read"(%h2) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %b = "temporal.exp"(%a) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%b) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %a = "temporal.read"(%g1) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %b = "temporal.read"(%g2) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %x1 = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %c1 = "temporal.tanh"(%x1) : (tensor<3xf32>) -> tensor<3xf32>
  %x2 = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %c2 = "temporal.tanh"(%x2) : (tensor<3xf32>) -> tensor<3xf32>
  %s = "temporal.sub"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %u = "temporal.mul"(%c1, %c2) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %r = "temporal.add"(%s, %u) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%r) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
