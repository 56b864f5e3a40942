// fast-math on the CPU: exp, tanh and sigmoid on f32 become polynomial
// code (lowering/src/temporal_to_loops/approximations.rs) that vectorizes
// with its loop, instead of libm calls; without fast-math they stay
// math.exp / math.tanh (libm, bit-exact with the interpreter). Checked
// over 4,096 points of [-20, 20] and the edges (overflow to +inf past
// 88.72, subnormals and 0 below -87.3, tanh's tiny and saturated ranges,
// NaN) against the interpreter (libm): within a few ulps, alone and fused
// in a chain (measured: exp 2.7, tanh 4.5, sigmoid 2.6, the chain 5.9).
// RUN: tempo-opt %s --lower-temporal-to-loops=fast-math=true | FileCheck %s --check-prefix=FAST
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=EXACT
// RUN: %python %S/Inputs/approximations.py write %t.x.npy
// RUN: tempo-run %s --input x=%t.x.npy --interpret --format json > %t.reference
// RUN: tempo-run %s --input x=%t.x.npy --fast-math --format json > %t.fast
// RUN: %python %S/Inputs/approximations.py check %t.fast %t.reference 8 | FileCheck %s --check-prefix=ULPS
// RUN: tempo-run %s --input x=%t.x.npy --format json | diff - %t.reference

// FAST-NOT: math.exp
// FAST-NOT: math.tanh
// FAST: math.roundeven
// EXACT: math.exp
// EXACT: math.tanh

// ULPS: e: largest error {{[0-7]}}.{{[0-9]}} ulps
// ULPS: th: largest error {{[0-7]}}.{{[0-9]}} ulps
// ULPS: sg: largest error {{[0-7]}}.{{[0-9]}} ulps
// ULPS: chain: largest error {{[0-7]}}.{{[0-9]}} ulps

%x = "temporal.input"() {sym_name = "x", domain = [], element = tensor<4096xf32>} : () -> !temporal.rtensor
%e = "temporal.tensor"() {sym_name = "e", domain = [], element = tensor<4096xf32>} : () -> !temporal.rtensor
%th = "temporal.tensor"() {sym_name = "th", domain = [], element = tensor<4096xf32>} : () -> !temporal.rtensor
%sg = "temporal.tensor"() {sym_name = "sg", domain = [], element = tensor<4096xf32>} : () -> !temporal.rtensor
%chain = "temporal.tensor"() {sym_name = "chain", domain = [], element = tensor<4096xf32>} : () -> !temporal.rtensor
"temporal.define"(%e) ({
  %v = "temporal.read"(%x) {index = affine_map<()[] -> ()>} : (!temporal.rtensor) -> tensor<4096xf32>
  %r = "temporal.exp"(%v) : (tensor<4096xf32>) -> tensor<4096xf32>
  "gpu.yield"(%r) : (tensor<4096xf32>) -> ()
}) {when = affine_set<()[] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%th) ({
  %v = "temporal.read"(%x) {index = affine_map<()[] -> ()>} : (!temporal.rtensor) -> tensor<4096xf32>
  %r = "temporal.tanh"(%v) : (tensor<4096xf32>) -> tensor<4096xf32>
  "gpu.yield"(%r) : (tensor<4096xf32>) -> ()
}) {when = affine_set<()[] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%sg) ({
  %v = "temporal.read"(%x) {index = affine_map<()[] -> ()>} : (!temporal.rtensor) -> tensor<4096xf32>
  %r = "temporal.sigmoid"(%v) : (tensor<4096xf32>) -> tensor<4096xf32>
  "gpu.yield"(%r) : (tensor<4096xf32>) -> ()
}) {when = affine_set<()[] : (0 == 0)>} : (!temporal.rtensor) -> ()
// An LSTM cell's shape: sigmoid(x) * tanh(x), fused in one loop.
"temporal.define"(%chain) ({
  %v = "temporal.read"(%x) {index = affine_map<()[] -> ()>} : (!temporal.rtensor) -> tensor<4096xf32>
  %s = "temporal.sigmoid"(%v) : (tensor<4096xf32>) -> tensor<4096xf32>
  %t = "temporal.tanh"(%v) : (tensor<4096xf32>) -> tensor<4096xf32>
  %r = "temporal.mul"(%s, %t) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  "gpu.yield"(%r) : (tensor<4096xf32>) -> ()
}) {when = affine_set<()[] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%e) : (!temporal.rtensor) -> ()
"temporal.output"(%th) : (!temporal.rtensor) -> ()
"temporal.output"(%sg) : (!temporal.rtensor) -> ()
"temporal.output"(%chain) : (!temporal.rtensor) -> ()
