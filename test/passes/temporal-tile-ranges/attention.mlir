// temporal-tile-ranges replaces softmax attention over a range that grows
// with t (a KV cache k[0:t+1]) by one temporal.attention op, which the
// lowering runs `block` keys at a time with a running maximum and sum, so
// no buffer as long as the range is allocated.
//
// Two queries per step: the first scores key t highest (1000 t), the
// second key 0 (-1000 t); the softmax is one-hot (exp underflows to 0), so
// o[t] = [v[t], v[0]] = [[2t, 2t], [0, 0]] exactly, compiled with blocks
// of 2 (the maximum moves to a new block each time: the running sum and
// accumulator are rescaled by exp(-2000) = 0) and of 64 (one masked
// block), and interpreted.
// RUN: tempo-opt %s --temporal-tile-ranges=block=2 | FileCheck %s
// RUN: tempo-opt %s --temporal-tile-ranges=block=2 | tempo-run - --bound T=5 --seed 0 -O0 | FileCheck %s --check-prefix=OUT
// RUN: tempo-opt %s --temporal-tile-ranges | tempo-run - --bound T=5 --seed 0 -O0 | FileCheck %s --check-prefix=OUT
// RUN: tempo-opt %s --temporal-tile-ranges=block=2 | tempo-run - --bound T=5 --seed 0 --interpret | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 -O3 | FileCheck %s --check-prefix=OUT
// RUN: tempo-run %s --bound T=5 --seed 0 -O0 | FileCheck %s --check-prefix=OUT
// RUN: not tempo-opt %s "--temporal-tile-ranges=block=0" 2>&1 | FileCheck %s --check-prefix=BLOCK
// An ill-formed program gets the verifier's located diagnostic.
// RUN: not tempo-opt %S/../../tools/tempo-run/Inputs/zero-cycle.mlir --temporal-tile-ranges 2>&1 | FileCheck %s --check-prefix=INVALID

// RUN: tempo-opt %S/Inputs/not-attention.mlir --temporal-tile-ranges | FileCheck %s --check-prefix=NONE

// CHECK-LABEL: "temporal.define"(%{{.*}}) ({
// CHECK: temporal.read_range
// CHECK: temporal.read_range
// CHECK-NOT: temporal.reduce_max
// CHECK-NOT: temporal.exp
// CHECK: "temporal.attention"({{.*}}) {block = 2 : i64, combine = "qn,na->qa", score = "qd,nd->qn"} : (tensor<2x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<1x1xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: gpu.yield

// OUT: o: float32[5, 2, 2] = {{\[}}{{\[}}[0.0, 0.0], [0.0, 0.0]], {{\[}}[2.0, 2.0], [0.0, 0.0]], {{\[}}[4.0, 4.0], [0.0, 0.0]], {{\[}}[6.0, 6.0], [0.0, 0.0]], {{\[}}[8.0, 8.0], [0.0, 0.0]]]

// BLOCK: attention.mlir:{{[0-9]+}}:1: error: block must be an integer from 1 to 65536, got '0'
// INVALID: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// NONE-NOT: temporal.attention

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
