// temporal.flash_attention ops written directly over whole sequences (what
// temporal-fuse-attention and temporal-vectorize make of causal
// attention): each is one call of the runtime's tiled kernel per group
// (the ops' second axis), with the group's 37-word description in a row
// of a table made at entry; with `parallel` the groups are one
// scf.parallel loop (OpenMP threads), else an scf.for. Compiled and
// interpreted agree within float rounding: the kernel blocks the keys
// and rescales a running maximum. The GPU lowering has no such kernel and
// says so at the op.
// RUN: tempo-opt %s "--lower-temporal-to-loops=fast-math library-gemm parallel" | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=SERIAL
// RUN: tempo-run %s --bound T=1 --seed 5 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=1 --seed 5 --format json > %t.compiled
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.compiled 1e-5
// RUN: tempo-run %s --bound T=1 --seed 5 --threads 1 --format json > %t.one
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.interpreted %t.one 1e-5
// RUN: not tempo-opt %s --lower-temporal-to-loops=gpu 2>&1 | FileCheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @tempo_main
// CHECK: memref.alloc() : memref<3x37xi64>
// CHECK: scf.parallel
// CHECK: func.call @tempo_flash_attention(
// CHECK: scf.parallel
// CHECK: func.call @tempo_flash_attention(
// CHECK: scf.parallel
// CHECK: func.call @tempo_flash_attention(

// SERIAL-LABEL: func.func @tempo_main
// SERIAL-NOT: scf.parallel
// SERIAL: scf.for
// SERIAL: func.call @tempo_flash_attention(

// GPU: flash-attention.mlir:[[# @LINE + 16]]:{{[0-9]+}}: error: 'temporal.flash_attention' has no GPU lowering (it calls the CPU runtime's tiled kernels)

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%q = "temporal.input"() {sym_name = "q", domain = [], element = tensor<9x3x2x4xf32>} : () -> !temporal.rtensor
%k = "temporal.input"() {sym_name = "k", domain = [], element = tensor<9x3x4xf32>} : () -> !temporal.rtensor
%v = "temporal.input"() {sym_name = "v", domain = [], element = tensor<9x3x5xf32>} : () -> !temporal.rtensor
%do = "temporal.input"() {sym_name = "do", domain = [], element = tensor<9x3x2x5xf32>} : () -> !temporal.rtensor
%o = "temporal.tensor"() {sym_name = "o", domain = [], element = tensor<9x3x2x7xf32>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = [], element = tensor<9x3x2x12xf32>} : () -> !temporal.rtensor
%kv = "temporal.tensor"() {sym_name = "kv", domain = [], element = tensor<9x3x9xf32>} : () -> !temporal.rtensor
// A window of three keys up to the query's own position.
"temporal.define"(%o) ({
  %a = "temporal.read"(%q) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x4xf32>
  %b = "temporal.read"(%k) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x4xf32>
  %c = "temporal.read"(%v) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x5xf32>
  %s = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %r = "temporal.flash_attention"(%a, %b, %c, %s) {band = "-2:1"} : (tensor<9x3x2x4xf32>, tensor<9x3x4xf32>, tensor<9x3x5xf32>, tensor<f32>) -> tensor<9x3x2x7xf32>
  "gpu.yield"(%r) : (tensor<9x3x2x7xf32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The queries' half of the causal attention's backward pass.
"temporal.define"(%g) ({
  %a = "temporal.read"(%q) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x4xf32>
  %b = "temporal.read"(%k) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x4xf32>
  %c = "temporal.read"(%v) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x5xf32>
  %d = "temporal.read"(%do) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x5xf32>
  %s = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %r = "temporal.flash_attention_query_grad"(%a, %b, %c, %d, %s) {band = ":1"} : (tensor<9x3x2x4xf32>, tensor<9x3x4xf32>, tensor<9x3x5xf32>, tensor<9x3x2x5xf32>, tensor<f32>) -> tensor<9x3x2x12xf32>
  "gpu.yield"(%r) : (tensor<9x3x2x12xf32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// The keys' half, from the statistics the queries' half computed.
"temporal.define"(%kv) ({
  %a = "temporal.read"(%q) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x4xf32>
  %b = "temporal.read"(%k) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x4xf32>
  %c = "temporal.read"(%v) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x5xf32>
  %d = "temporal.read"(%do) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x5xf32>
  %gq = "temporal.read"(%g) {index = affine_map<()[T] -> ()>} : (!temporal.rtensor) -> tensor<9x3x2x12xf32>
  %m = "temporal.slice"(%gq) {offsets = [0, 0, 0, 5]} : (tensor<9x3x2x12xf32>) -> tensor<9x3x2x1xf32>
  %l = "temporal.slice"(%gq) {offsets = [0, 0, 0, 6]} : (tensor<9x3x2x12xf32>) -> tensor<9x3x2x1xf32>
  %dd = "temporal.slice"(%gq) {offsets = [0, 0, 0, 7]} : (tensor<9x3x2x12xf32>) -> tensor<9x3x2x1xf32>
  %m3 = "temporal.reshape"(%m) : (tensor<9x3x2x1xf32>) -> tensor<9x3x2xf32>
  %l3 = "temporal.reshape"(%l) : (tensor<9x3x2x1xf32>) -> tensor<9x3x2xf32>
  %d3 = "temporal.reshape"(%dd) : (tensor<9x3x2x1xf32>) -> tensor<9x3x2xf32>
  %s = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %r = "temporal.flash_attention_key_grad"(%a, %d, %m3, %l3, %d3, %b, %c, %s) {band = ":1"} : (tensor<9x3x2x4xf32>, tensor<9x3x2x5xf32>, tensor<9x3x2xf32>, tensor<9x3x2xf32>, tensor<9x3x2xf32>, tensor<9x3x4xf32>, tensor<9x3x5xf32>, tensor<f32>) -> tensor<9x3x9xf32>
  "gpu.yield"(%r) : (tensor<9x3x9xf32>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%o) : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
"temporal.output"(%kv) : (!temporal.rtensor) -> ()
