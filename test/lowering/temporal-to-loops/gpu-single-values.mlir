// For the GPU, work whose result is a single value runs in a loop of one
// point (a kernel of one thread once mapped), so that host code never
// touches the data of stores and they can live in device memory: here a
// scalar product, the sum of a window of scalars (a reduction to one value)
// and the copy that seals a point of the window store. Constants are
// copied once, at entry, into memory kernels can read (kernels cannot read
// the host's globals). After lower-loops-to-gpu, host code loads and stores
// no f32 data.
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}' | FileCheck %s
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}' | FileCheck %s --check-prefix=SEAL
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops{gpu=true}, lower-store-to-memref{gpu=true}, lower-loops-to-gpu' | FileCheck %s --check-prefix=HOST
// RUN: tempo-opt %s -p 'temporal-verify, temporal-schedule, lower-temporal-to-loops, lower-store-to-memref' | FileCheck %s --check-prefix=CPU-SEAL

// CHECK: func.func @tempo_main
// CHECK: %[[GLOBAL:.*]] = memref.get_global @__tempo_constant_{{[0-9]+}} : memref<f32>
// CHECK-NEXT: %[[COPY:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: memref.copy %[[GLOBAL]], %[[COPY]]
// CHECK: affine.for
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = []
// CHECK: arith.mulf
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
// CHECK: scf.for {{.*}} iter_args
// CHECK: arith.addf
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{.*}}) step
// CHECK: arith.addf
// CHECK: memref.dealloc %[[COPY]]

// (The seal's loop: from 0 to 1 step 1, the same constant.)
// SEAL: scf.parallel (%{{.*}}) = (%c0{{.*}}) to (%[[ONE:c1_[0-9]+]]) step (%[[ONE]])
// SEAL-NEXT: linalg.copy ins(%{{.*}} : memref<f32, strided<[], offset: ?>>) outs(%{{.*}} : memref<f32, strided<[], offset: ?>>)
// (On the CPU, no loops of one point: the seal copies in place.)
// CPU-SEAL-NOT: scf.parallel
// CPU-SEAL: linalg.copy ins(%{{.*}} : memref<f32, strided<[], offset: ?>>) outs(%{{.*}} : memref<f32, strided<[], offset: ?>>)

// HOST: func.func @tempo_main
// HOST-NOT: memref.load {{.*}}f32
// HOST-NOT: memref.store {{.*}}f32
// HOST: gpu.module

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  %c = "temporal.tensor"() {sym_name = "c", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
  "temporal.define"(%y) ({
    %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    %b = "temporal.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%b) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %w = "temporal.read_range"(%y) {caps = [], lower = [affine_map<(t)[T] -> (0, t - 2)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?xf32>
    %r = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?xf32>) -> tensor<f32>
    "gpu.yield"(%r) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%c) ({
    %a = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
    %one = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    %b = "temporal.add"(%a, %one) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "gpu.yield"(%b) : (tensor<f32>) -> ()
  }) {when = affine_set<(t)[T] : (t >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%c) : (!temporal.rtensor) -> ()
}
