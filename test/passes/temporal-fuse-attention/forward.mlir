// temporal-fuse-attention replaces softmax attention over a range (a KV
// cache k[0:t+1]) by one temporal.flash_attention in canonical shapes
// (queries [1, G, R, Dk], keys and values [?, G, D]), whose packed result
// holds the output, then the softmax's maximum and sum; temporal-vectorize
// then batches it over every step with the band ":1" (each query position
// sees keys up to its own: the causal lower triangle, computed in blocks
// by the runtime's kernel with the blocks above the diagonal skipped).
//
// Two queries per step: the first scores key t highest (1000 t), the
// second key 0 (-1000 t); the softmax is one-hot (exp underflows to 0), so
// o[t] = [v[t], v[0]] = [[2t, 2t], [0, 0]] exactly, however the kernel
// blocks and rescales: interpreted, compiled per step and batched.
// RUN: tempo-opt %s --temporal-fuse-attention | FileCheck %s
// RUN: tempo-opt %s --temporal-fuse-attention "--temporal-vectorize=bounds=T=5" | FileCheck %s --check-prefix=BATCHED
// RUN: tempo-opt %s --temporal-fuse-attention | tempo-run - --bound T=5 --seed 0 --interpret | FileCheck %s --check-prefix=OUT
// RUN: tempo-opt %s --temporal-fuse-attention | tempo-run - --bound T=5 --seed 0 -O0 | FileCheck %s --check-prefix=OUT
// RUN: tempo-opt %s --temporal-fuse-attention "--temporal-vectorize=bounds=T=5" | tempo-run - --bound T=5 --seed 0 -O0 | FileCheck %s --check-prefix=OUT
// RUN: tempo-opt %s --temporal-fuse-attention "--temporal-vectorize=bounds=T=5" | tempo-run - --bound T=5 --seed 0 --interpret | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 -O3 | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 --fast-math | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 --fast-math --threads 1 | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 | FileCheck %s --check-prefix=OUT
// A window k[max(0, t-1):t+1] is the band "-1:1":
// RUN: tempo-opt %S/Inputs/window.mlir --temporal-fuse-attention "--temporal-vectorize=bounds=T=5" | FileCheck %s --check-prefix=WINDOW
// (there the second query's highest score is the window's first key):
// RUN: tempo-run %S/Inputs/window.mlir --bound T=5 --seed 0 --fast-math | FileCheck %s --check-prefix=WOUT
// RUN: tempo-run %S/Inputs/window.mlir --bound T=5 --seed 0 --interpret | FileCheck %s --check-prefix=WOUT
// Weights read outside the chain: the chain stays as written.
// RUN: tempo-opt %S/Inputs/weights-read.mlir --temporal-fuse-attention | FileCheck %s --check-prefix=NONE
// An ill-formed program gets the verifier's located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-fuse-attention 2>&1 | FileCheck %s --check-prefix=INVALID

// CHECK-LABEL: "temporal.define"(%{{.*}}) ({
// CHECK-NOT: temporal.reduce_max
// CHECK-NOT: temporal.exp
// CHECK: "temporal.flash_attention"({{.*}}) {band = ":"} : (tensor<1x1x2x2xf32>, tensor<?x1x2xf32>, tensor<?x1x2xf32>, tensor<1x1xf32>) -> tensor<1x1x2x4xf32>
// CHECK-NEXT: "temporal.slice"({{.*}}) {offsets = [0, 0, 0, 0]} : (tensor<1x1x2x4xf32>) -> tensor<1x1x2x2xf32>
// CHECK-NOT: temporal.exp
// CHECK: gpu.yield

// BATCHED: "temporal.flash_attention"({{.*}}) {band = ":1"} : (tensor<5x1x2x2xf32>, tensor<5x1x2xf32>, tensor<5x1x2xf32>, tensor<1x1xf32>) -> tensor<5x1x2x4xf32>

// OUT: o: float32[5, 2, 2] = {{\[}}{{\[}}[0.0, 0.0], [0.0, 0.0]], {{\[}}[2.0, 2.0], [0.0, 0.0]], {{\[}}[4.0, 4.0], [0.0, 0.0]], {{\[}}[6.0, 6.0], [0.0, 0.0]], {{\[}}[8.0, 8.0], [0.0, 0.0]]]

// WOUT: o: float32[5, 2, 2] = {{\[}}{{\[}}[0.0, 0.0], [0.0, 0.0]], {{\[}}[2.0, 2.0], [0.0, 0.0]], {{\[}}[4.0, 4.0], [2.0, 2.0]], {{\[}}[6.0, 6.0], [4.0, 4.0]], {{\[}}[8.0, 8.0], [6.0, 6.0]]]
// WINDOW: "temporal.flash_attention"({{.*}}) {band = "-1:1"} : (tensor<5x1x2x2xf32>

// NONE-NOT: temporal.flash_attention
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<2xf32>} : () -> !temporal.rtensor
  %o = "temporal.tensor"() {sym_name = "o", domain = ["t"], element = tensor<2x2xf32>} : () -> !temporal.rtensor
  // c[t] = [t, t]
  "temporal.define"(%c) ({
    %z = "temporal.constant"() {value = dense<0.0> : tensor<2xf32>} : () -> tensor<2xf32>
    "gpu.yield"(%z) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%c) ({
    %p = "temporal.read"(%c) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<2xf32>
    %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %n = "temporal.add"(%p, %one) : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
    "gpu.yield"(%n) : (tensor<2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%o) ({
    %q = "temporal.constant"() {value = dense<[[1.0, 0.0], [-1.0, 0.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
    %keys = "temporal.read_range"(%c) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %cache = "temporal.read_range"(%c) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2xf32>
    %two = "temporal.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    %values = "temporal.mul"(%cache, %two) : (tensor<?x2xf32>, tensor<f32>) -> tensor<?x2xf32>
    %s = "temporal.einsum"(%q, %keys) {spec = "qd,nd->qn"} : (tensor<2x2xf32>, tensor<?x2xf32>) -> tensor<2x?xf32>
    %scale = "temporal.constant"() {value = dense<1000.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
    %x = "temporal.mul"(%scale, %s) : (tensor<1x1xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
    %m = "temporal.reduce_max"(%x) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
    %mk = "temporal.reshape"(%m) : (tensor<2xf32>) -> tensor<2x1xf32>
    %d = "temporal.sub"(%x, %mk) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
    %e = "temporal.exp"(%d) : (tensor<2x?xf32>) -> tensor<2x?xf32>
    %z = "temporal.reduce_sum"(%e) {axis = 1 : i64} : (tensor<2x?xf32>) -> tensor<2xf32>
    %zk = "temporal.reshape"(%z) : (tensor<2xf32>) -> tensor<2x1xf32>
    %p = "temporal.div"(%e, %zk) : (tensor<2x?xf32>, tensor<2x1xf32>) -> tensor<2x?xf32>
    %r = "temporal.einsum"(%values, %p) {spec = "nb,an->ab"} : (tensor<?x2xf32>, tensor<2x?xf32>) -> tensor<2x2xf32>
    "gpu.yield"(%r) : (tensor<2x2xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%o) : (!temporal.rtensor) -> ()
}
