// Copies and elementwise loops on the CPU (lower-temporal-to-loops):
// where the source is contiguous along another dimension than the
// result's last (a transposition), both are visited in 16 x 16 tiles, so
// that neither side strides through memory one element per cache line;
// with `parallel`, a result of 2^16 elements or more spreads the loops
// outside the tile (or outside the last dimension) over threads as one
// scf.parallel. y: tanh of a 320 x 256 point (81,920 elements: rows in
// parallel), then its transposition (tiles in parallel); z: exp of a
// transposed 40 x 100 read (4,000 elements: tiled, on one thread, the
// last tile of 100 rows cut at 100). Results are the interpreter's bit for
// bit, on one thread or two.
// RUN: tempo-opt %s --lower-temporal-to-loops=parallel | FileCheck %s
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=SERIAL
// RUN: tempo-run %s --bound T=2 --seed 4 --interpret --format json > %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 4 --format json | diff - %t.interpreted
// RUN: tempo-run %s --bound T=2 --seed 4 --threads 2 --format json | diff - %t.interpreted

// CHECK-LABEL: func.func @tempo_main
// CHECK: scf.parallel (%[[R:.*]]) = (%{{.*}}) to (%c320{{.*}}) step
// CHECK: math.tanh
// CHECK: scf.parallel (%[[I0:.*]], %[[J0:.*]]) = (%{{.*}}, %{{.*}}) to (%c256{{.*}}, %c320{{.*}}) step (%[[TILE:c16.*]], %[[TILE]])
// CHECK: %[[IEND:.*]] = arith.addi %[[I0]], %[[TILE]]
// CHECK: scf.for %[[I:.*]] = %[[I0]] to %[[IEND]]
// CHECK: %[[JEND:.*]] = arith.addi %[[J0]], %[[TILE]]
// CHECK: scf.for %[[J:.*]] = %[[J0]] to %[[JEND]]
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[J]], %[[I]]]
// CHECK: memref.store %[[X]], %{{.*}}[%[[I]], %[[J]]]
// CHECK: %[[T:.*]] = memref.transpose
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[K0:.*]] = %{{.*}} to %c100{{.*}} step %[[TILE2:c16.*]] {
// CHECK: scf.for %[[L0:.*]] = %{{.*}} to %c40{{.*}} step %[[TILE2]] {
// CHECK: arith.minui
// CHECK: scf.for %[[K:.*]] = %[[K0]] to
// CHECK: arith.minui
// CHECK: scf.for %[[L:.*]] = %[[L0]] to
// CHECK: memref.load %[[T]][%[[K]], %[[L]]]
// CHECK: math.exp
// SERIAL-NOT: scf.parallel

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<320x256xf32>} : () -> !temporal.rtensor
%s = "temporal.input"() {sym_name = "s", domain = ["t"], element = tensor<40x100xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<256x320xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<100x40xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<320x256xf32>
  %e = "temporal.tanh"(%a) : (tensor<320x256xf32>) -> tensor<320x256xf32>
  %p = "temporal.permute"(%e) {permutation = [1, 0]} : (tensor<320x256xf32>) -> tensor<256x320xf32>
  "gpu.yield"(%p) : (tensor<256x320xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %a = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<40x100xf32>
  %b = "temporal.permute"(%a) {permutation = [1, 0]} : (tensor<40x100xf32>) -> tensor<100x40xf32>
  %c = "temporal.exp"(%b) : (tensor<100x40xf32>) -> tensor<100x40xf32>
  "gpu.yield"(%c) : (tensor<100x40xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
