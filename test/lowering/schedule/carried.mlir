// A cycle carried by an outer loop alone, the shape of back-propagation
// through time inside a training run (without the gradients): the
// parameter w[i] reads b[i-1, 0], the forward recurrence a[i, t] reads
// a[i, t-1] and w[i], the backward one b[i, t] reads b[i, t+1] and a[i, t].
// No one direction of t suits the whole cycle, but every read going around
// it moves strictly along i. So i is the outer loop, and in one iteration
// the reads at i's present point are scheduled again: w, then a forward
// loop over t, then a backward one (a loop over i whose body is a
// sequence of nests).
// RUN: tempo-opt %s --temporal-schedule | FileCheck %s
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT
// Read back from @tempo_schedule, the schedule and its stores are the same.
// RUN: tempo-opt %s --temporal-schedule --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT
// RUN: tempo-opt %s --temporal-select-stores | FileCheck %s --check-prefix=STORES
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s --check-prefix=LOOPS
// Compiled and interpreted agree bit for bit at every level.
// RUN: tempo-run %s --bound I=5 --bound T=4 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=4 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=4 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=4 -O 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=5 --bound T=4 --disable-pass fusion | diff - %t.interpreted
// RUN: FileCheck %s --check-prefix=OUT < %t.interpreted
// The stores do not grow with I: a keeps the T points of one iteration.
// RUN: tempo-run %s --bound I=1000 --bound T=4 --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS

// CHECK:      func.func @tempo_schedule(%[[I:.*]]: index, %[[T:.*]]: index) {
// CHECK-NEXT:   affine.for %[[i:.*]] = 0 to %[[I]] {
// CHECK-NEXT:     "temporal.compute"(%[[i]]) {tensor = "w"} : (index) -> ()
// CHECK-NEXT:     affine.for %[[t:.*]] = 0 to %[[T]] {
// CHECK-NEXT:       "temporal.compute"(%[[i]], %[[t]]) {tensor = "a"} : (index, index) -> ()
// CHECK-NEXT:     } {tempo.dim = "t", tempo.direction = "forward"}
// CHECK-NEXT:     affine.for %[[s:.*]] = 0 to %[[T]] {
// CHECK-NEXT:       %[[r:.*]] = affine.apply #{{.*}}(%[[s]])[%[[T]]]
// CHECK-NEXT:       "temporal.compute"(%[[i]], %[[r]]) {tensor = "b"} : (index, index) -> ()
// CHECK-NEXT:     } {tempo.dim = "t", tempo.direction = "backward"}
// CHECK-NEXT:   } {tempo.dim = "i", tempo.direction = "forward"}
// CHECK-NEXT:   return

// a is read in its own loop (a[i, t-1]) and by b's loop (a[i, t]): one
// slice of T points along t, overwritten by each iteration (a ring of one
// along i); b keeps two slices, since w[i] reads b[i-1, 0].
// PRINT:      schedule:
// PRINT-NEXT:   for i = 0 up to I-1:
// PRINT-NEXT:     w[i]  store: output
// PRINT-NEXT:     for t = 0 up to T-1:
// PRINT-NEXT:       a[i, t]  store: ring<1> along i per t
// PRINT-NEXT:     for t = T-1 down to 0:
// PRINT-NEXT:       b[i, t]  store: ring<2> along i per t
// PRINT-EMPTY:

// STORES: sym_name = "w", tempo.loops = "i+ t+", tempo.nest = 0 : i64, tempo.store = "output"
// STORES: sym_name = "a", tempo.loops = "i+ t+", tempo.nest = 0 : i64, tempo.store = "ring<1> along i per t"
// STORES: sym_name = "b", tempo.loops = "i+ t-", tempo.nest = 0 : i64, tempo.store = "ring<2> along i per t"

// LOOPS:      %[[A:.*]] = "store.alloc"(%{{.*}}) {extent = 1 : i64, kind = "ring"} : (index) -> memref<1x?xf64>
// LOOPS-NEXT: %[[B:.*]] = "store.alloc"(%{{.*}}) {extent = 2 : i64, kind = "ring"} : (index) -> memref<2x?xf64>
// LOOPS:      affine.for %[[i:.*]] = 0 to
// LOOPS:        "store.read"(%[[B]]
// LOOPS:        affine.for
// LOOPS:          "store.write"(%[[A]], %[[i]]
// LOOPS:        affine.for
// LOOPS:          "store.write"(%[[B]], %[[i]]
// LOOPS:          "store.read"(%[[A]], %[[i]]
// LOOPS:      "store.free"(%[[A]])
// LOOPS-NEXT: "store.free"(%[[B]])

// OUT: w: float64[5] = [0.5, 0.448125, 0.39936175219616543, 0.35329979215954954, 0.3096075899266977]

// STATS:      a: ring<1> along i per t (32 bytes)
// STATS-NEXT: b: ring<2> along i per t (64 bytes)
// STATS-NEXT: peak bytes of live stores: 96

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %c = "temporal.constant"() {value = dense<0.5> : tensor<f64>} : () -> tensor<f64>
  "gpu.yield"(%c) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %p = "temporal.read"(%w) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %q = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1, 0)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.constant"() {value = dense<0.01> : tensor<f64>} : () -> tensor<f64>
  %m = "temporal.mul"(%q, %k) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %s = "temporal.sub"(%p, %m) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (i - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %p = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  %m = "temporal.mul"(%p, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %one = "temporal.constant"() {value = dense<1.0> : tensor<f64>} : () -> tensor<f64>
  %s = "temporal.add"(%m, %one) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%a) ({
  %x = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %n = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i, t + 1)>} : (!temporal.rtensor) -> tensor<f64>
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  %s = "temporal.add"(%n, %x) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%s) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (T - t - 2 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %x = "temporal.read"(%a) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%x) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
