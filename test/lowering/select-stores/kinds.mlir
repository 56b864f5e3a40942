// temporal-select-stores records each tensor's loop nest and store kind.
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-select-stores | FileCheck %s --check-prefix=CUMSUM
// RUN: tempo-opt %examples/windowed_attention.mlir --temporal-select-stores | FileCheck %s --check-prefix=WINDOW
// RUN: tempo-opt %examples/causal_attention.mlir --temporal-select-stores | FileCheck %s --check-prefix=CAUSAL
// RUN: tempo-opt %examples/returns.mlir --temporal-select-stores | FileCheck %s --check-prefix=RETURNS
// RUN: tempo-opt %examples/corpus/layered_stores.mlir --temporal-select-stores | FileCheck %s --check-prefix=LAYERED
// RUN: tempo-opt %s --temporal-select-stores | FileCheck %s

// Read only at the present point: one point. Read at t-1: a ring of 2. The
// total reads s[T-1] after the loop, which the ring still holds.
// CUMSUM: sym_name = "x", tempo.loops = "t+", tempo.nest = 0 : i64, tempo.store = "point"
// CUMSUM: sym_name = "s", tempo.loops = "t+", tempo.nest = 0 : i64, tempo.store = "ring<2>"
// CUMSUM: sym_name = "total", tempo.loops = "", tempo.nest = 1 : i64, tempo.store = "output"

// Ranges max(0, t-2):t+1: a window of 3 (6 slots).
// WINDOW: sym_name = "k", {{.*}}tempo.store = "window<3>"
// WINDOW: sym_name = "v", {{.*}}tempo.store = "window<3>"

// Prefixes 0:t+1 in a forward loop: blocks committed as t grows.
// CAUSAL: sym_name = "k", {{.*}}tempo.store = "blocks<256>"

// Layers as a dimension, t outside l: a store of several dimensions runs
// along the dimension read back (t) and keeps every layer (l): a window of
// 3 per layer for k[l, max(0, t-2):t+1], blocks per layer for v[0:t+1, l]
// (domain order does not matter), a ring of 2 per layer for r[l, t-1].
// LAYERED: sym_name = "h", tempo.loops = "t+ l+", tempo.nest = 0 : i64, tempo.store = "point"
// LAYERED: sym_name = "k", {{.*}}tempo.store = "window<3> along t per l"
// LAYERED: sym_name = "v", {{.*}}tempo.store = "blocks<256> along t per l"
// LAYERED: sym_name = "r", {{.*}}tempo.store = "ring<2> along t per l"

// Returns run backward.
// RETURNS: tempo.loops = "t-"

// Two dimensions: a point store for a value consumed in the same iteration;
// h, read at h[b, t-1] inside the b-outer nest, needs only its last two
// points along t: a ring of 2 along t, one slice of b at a time (not B * T points).
"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: sym_name = "h", tempo.loops = "b+ t+", tempo.nest = 0 : i64, tempo.store = "ring<2> along t"
%h = "temporal.tensor"() {sym_name = "h", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: sym_name = "g", tempo.loops = "b+ t+", tempo.nest = 0 : i64, tempo.store = "point"
%g = "temporal.tensor"() {sym_name = "g", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: sym_name = "r", tempo.loops = "b+ t+", tempo.nest = 0 : i64, tempo.store = "output"
%r = "temporal.tensor"() {sym_name = "r", domain = ["b", "t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %p = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.neg"(%p) : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %p = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.exp"(%p) : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%r) ({
  %p = "temporal.read"(%h) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
  %s = "temporal.read"(%g) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<f32>
  %q = "temporal.add"(%p, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%q) : (tensor<f32>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%r) : (!temporal.rtensor) -> ()

// A program the scheduler cannot order gets its located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-select-stores 2>&1 | FileCheck %s --check-prefix=ERROR
// ERROR: zero-cycle.mlir:{{[0-9]+}}:{{[0-9]+}}: error: zero-distance cycle
