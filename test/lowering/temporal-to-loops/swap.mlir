// Swap planning under a memory budget (back-propagation through time):
// x[i, t] is computed by a forward loop and read back point by point by
// the backward loop of y; every point of x is kept for it (960,000 bytes
// at T = 60000). With memory-budget, x becomes blocks of 1024 points
// (16 KiB) along t with a swap space (peak store bytes 32,800): the forward loop spills each block once its own
// read (x[t-1], one step back) is past it, the backward loop reloads each
// spilled block before its first read and discards each block after its
// last. Results are exact (equal to the interpreter's).
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=KEEP
// RUN: tempo-opt %s --temporal-print-schedule='memory-budget=100000 bounds=T=60000,I=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAN
// RUN: tempo-opt %s --temporal-print-schedule='memory-budget=100000 bounds=T=2000,I=2' 2>&1 >/dev/null | FileCheck %s --check-prefix=SHORT
// RUN: tempo-opt %s -p 'lower-temporal-to-loops{memory-budget=100000 bounds=T=60000,I=2}' | FileCheck %s --check-prefix=LOOPS
// RUN: tempo-run %s --bound I=2 --bound T=60000 --memory-budget 100000 --stats > %t.swapped 2> %t.stats
// RUN: FileCheck %s --check-prefix=STATS < %t.stats
// RUN: tempo-run %s --bound I=2 --bound T=60000 --interpret > %t.interpreted
// RUN: diff %t.swapped %t.interpreted
// RUN: not tempo-opt %s -p 'lower-temporal-to-loops{memory-budget=lots}' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not tempo-opt %s -p 'lower-temporal-to-loops{bounds=T=3}' 2>&1 | FileCheck %s --check-prefix=NOBUDGET

// KEEP: x[i, t]  store: ring<1> along i per t
// KEEP-NOT: swapped

// PLAN: for t = 0 up to T-1:
// PLAN-NEXT: x[i, t]  store: blocks<1024> along t  swapped to a file in blocks of 1024 (about 49152 bytes resident, 960000 without)
// PLAN-NEXT: for t = T-1 down to 0:
// PLAN-NEXT: y[i, t]  store: ring<2> along t

// Fewer than three blocks' worth (32,000 bytes): swapping would not save
// memory.
// SHORT: x[i, t]  store: ring<1> along i per t
// SHORT-NOT: swapped

// LOOPS: %[[X:.*]] = "store.alloc"(%{{.*}}) {extent = 1024 : i64, kind = "blocks", swap_space = "file"}
// LOOPS: affine.for
// LOOPS: affine.for %[[T:.*]] = 0 to
// LOOPS: "store.write"(%[[X]], %[[T]])
// LOOPS: affine.if #{{.*}}(%[[T]])[%{{.*}}] {
// LOOPS-NEXT: %[[LO:.*]] = affine.apply #{{.*}}(%[[T]])[%{{.*}}]
// LOOPS-NEXT: %[[HI:.*]] = affine.apply #{{.*}}(%[[T]])[%{{.*}}]
// LOOPS-NEXT: "store.spill"(%[[X]], %[[LO]], %[[HI]])
// LOOPS: affine.for
// LOOPS: "store.reload"(%[[X]],
// LOOPS: "store.read"(%[[X]],
// LOOPS: "store.discard"(%[[X]],

// STATS: x: blocks<1024> along t, swapped to a file (49152 bytes)
// STATS: peak bytes of live stores: 32800

// BAD: tempo-opt: error: option memory-budget of pass 'lower-temporal-to-loops' takes a non-negative integer, got 'lots'
// NOBUDGET: error: bounds are given for memory-budget, which is missing

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["i", "t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["i"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>} : () -> tensor<4xf32>
  "gpu.yield"(%c) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (-i == 0, -t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %c = "temporal.read"(%z) {index = affine_map<(i, t)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%c) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (i - 1 >= 0, -t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %a = "temporal.constant"() {value = dense<0.999> : tensor<4xf32>} : () -> tensor<4xf32>
  %b = "temporal.constant"() {value = dense<0.25> : tensor<4xf32>} : () -> tensor<4xf32>
  %q = "temporal.mul"(%p, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s = "temporal.sin"(%q) : (tensor<4xf32>) -> tensor<4xf32>
  %r = "temporal.add"(%q, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %u = "temporal.sub"(%r, %s) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%u) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %p = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%p) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - 1 - t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %n = "temporal.read"(%y) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<4xf32>
  %p = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<4xf32>
  %h = "temporal.constant"() {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %m = "temporal.mul"(%n, %h) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = "temporal.cos"(%p) : (tensor<4xf32>) -> tensor<4xf32>
  %s = "temporal.add"(%m, %c) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "gpu.yield"(%s) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - 2 - t >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %p = "temporal.read"(%y) {index = affine_map<(i)[I, T] -> (i, 0)>} : (!temporal.rtensor) -> tensor<4xf32>
  "gpu.yield"(%p) : (tensor<4xf32>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
