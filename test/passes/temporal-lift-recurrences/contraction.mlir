// Incrementalization of contractions over a range: an einsum summing only
// the range's label (gradient accumulation, sum over t of outer(x[t], g[t]))
// read after the loop becomes the last point of a running recurrence of
// the einsum of the points, P[t] = P[t-1] + outer(x[t], g[t]), so neither
// x nor g is stored whole. An operand without the label may be a point of
// an input the same everywhere (b). The einsum sums the products from zero
// in the order of t, as the recurrence does: bit-exact at T = 200 and
// T = 0. A running sum of squares over the prefix x[0:t+1] is lifted too.
// An einsum summing two labels (t and i) adds in another order than a
// recurrence would: it stays.
// RUN: tempo-opt %s --temporal-lift-recurrences | FileCheck %s
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=200 --seed 3 > %t.lifted
// RUN: tempo-run %s --bound T=200 --seed 3 -O0 > %t.original
// RUN: diff %t.lifted %t.original
// RUN: tempo-opt %s --temporal-lift-recurrences | tempo-run - --bound T=0 --seed 3 > %t.lifted0
// RUN: tempo-run %s --bound T=0 --seed 3 -O0 > %t.original0
// RUN: diff %t.lifted0 %t.original0
// RUN: tempo-run %s --bound T=200 --seed 3 -O0 --stats --format none 2>&1 | FileCheck %s --check-prefix=BEFORE
// RUN: tempo-run %s --bound T=200 --seed 3 --stats --format none 2>&1 | FileCheck %s --check-prefix=AFTER

// CHECK: %[[X:[0-9]+]] = "temporal.tensor"() {{.*}}sym_name = "x"
// CHECK: %[[G:[0-9]+]] = "temporal.tensor"() {{.*}}sym_name = "g"
// CHECK-DAG: sym_name = "x_mapped_prefix_sum"
// CHECK-DAG: sym_name = "x_mapped_prefix_sum_"
// The einsum summing t and i keeps its range reads.
// CHECK: "temporal.read_range"(%[[X]])
// CHECK-NEXT: "temporal.einsum"({{.*}}) {spec = "ti,ti->"}
// The recurrence of the gradient: the points of x and g, their outer
// product, added to the previous point.
// CHECK: "temporal.read"(%[[X]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<8xf32>
// CHECK-NEXT: "temporal.read"(%[[G]]) {index = #{{.*}}} : (!temporal.rtensor) -> tensor<4xf32>
// CHECK-NEXT: "temporal.einsum"({{.*}}) {spec = "i,j->ij"} : (tensor<8xf32>, tensor<4xf32>) -> tensor<8x4xf32>
// CHECK-NEXT: "temporal.add"
// BEFORE: g: full ({{[0-9]+}} bytes)
// AFTER-NOT: g: full
// AFTER: peak

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %a = "temporal.input"() {sym_name = "a", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
  %e = "temporal.input"() {sym_name = "e", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %b = "temporal.input"() {sym_name = "b", domain = [], element = tensor<3xf32>} : () -> !temporal.rtensor
  %x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
  %g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %grad = "temporal.tensor"() {sym_name = "grad", domain = [], element = tensor<8x4xf32>} : () -> !temporal.rtensor
  %biased = "temporal.tensor"() {sym_name = "biased", domain = [], element = tensor<8x3xf32>} : () -> !temporal.rtensor
  %squares = "temporal.tensor"() {sym_name = "squares", domain = ["t"], element = tensor<8xf32>} : () -> !temporal.rtensor
  %total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%x) ({
    %v = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8xf32>
    %r = "temporal.tanh"(%v) : (tensor<8xf32>) -> tensor<8xf32>
    "gpu.yield"(%r) : (tensor<8xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%g) ({
    %v = "temporal.read"(%e) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %r = "temporal.add"(%v, %v) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%r) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%grad) ({
    %xs = "temporal.read_range"(%x) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x8xf32>
    %gs = "temporal.read_range"(%g) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
    %r = "temporal.einsum"(%xs, %gs) {spec = "ti,tj->ij"} : (tensor<?x8xf32>, tensor<?x4xf32>) -> tensor<8x4xf32>
    "gpu.yield"(%r) : (tensor<8x4xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%biased) ({
    %xs = "temporal.read_range"(%x) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x8xf32>
    %bv = "temporal.read"(%b) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<3xf32>
    %r = "temporal.einsum"(%xs, %bv) {spec = "ti,j->ij"} : (tensor<?x8xf32>, tensor<3xf32>) -> tensor<8x3xf32>
    "gpu.yield"(%r) : (tensor<8x3xf32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%squares) ({
    %xs = "temporal.read_range"(%x) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x8xf32>
    %r = "temporal.einsum"(%xs, %xs) {spec = "ti,ti->i"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<8xf32>
    "gpu.yield"(%r) : (tensor<8xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%total) ({
    %xs = "temporal.read_range"(%x) {caps = [affine_map<()[T] -> ()>], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x8xf32>
    %r = "temporal.einsum"(%xs, %xs) {spec = "ti,ti->"} : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<f32>
    "gpu.yield"(%r) : (tensor<f32>) -> ()
  }) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%grad) : (!temporal.rtensor) -> ()
  "temporal.output"(%biased) : (!temporal.rtensor) -> ()
  "temporal.output"(%squares) : (!temporal.rtensor) -> ()
  "temporal.output"(%total) : (!temporal.rtensor) -> ()
}
