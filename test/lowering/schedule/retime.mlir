// Retiming (lowering/src/schedule.rs, `Nest::lags`): g[t] sums the window
// r[t : min(t+3, T)] ahead of it, so no loop direction computes it with
// the forward recurrence h that r comes from. Computed two iterations
// late, it joins that loop, which runs two iterations past T: r keeps a
// window of 3 points and h a ring of 3 (p reads h[t]), instead of every
// point of h and r for a second loop; the running sum p rides along, also
// two late, and total reads its last point after the loop. The schedule
// level writes the lags as `lag` attributes and reads them back, checking
// them like the rest (a hand-made lag too small is refused at the read it
// breaks). Compiled and interpreted agree bit for bit, with T shorter and
// longer than the window.
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-opt %s --temporal-schedule | FileCheck %s --check-prefix=IR
// RUN: tempo-opt %s --temporal-schedule | sed 's/lag = 2 : i64, tensor = "g"/lag = 1 : i64, tensor = "g"/' | not tempo-opt - --temporal-print-schedule 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: tempo-run %s --bound T=9 --seed 3 --interpret > %t.9
// RUN: tempo-run %s --bound T=9 --seed 3 -O 0 | diff - %t.9
// RUN: tempo-run %s --bound T=9 --seed 3 | diff - %t.9
// RUN: tempo-opt %s --temporal-schedule | tempo-run - --bound T=9 --seed 3 | diff - %t.9
// RUN: tempo-run %s --bound T=2 --seed 3 --interpret > %t.2
// RUN: tempo-run %s --bound T=2 --seed 3 | diff - %t.2
// RUN: tempo-run %s --bound T=1 --seed 3 --interpret > %t.1
// RUN: tempo-run %s --bound T=1 --seed 3 | diff - %t.1

// CHECK:      schedule:
// CHECK-NEXT:   for t = 0 up to T-1+2:
// CHECK-NEXT:     h[t]  store: ring<3>
// CHECK-NEXT:     r[t]  store: window<3>
// CHECK-NEXT:     g[t]  store: point  late: 2
// CHECK-NEXT:     p[t]  store: ring<2>  late: 2
// CHECK-NEXT:   total[]  store: output

// IR:      affine.for %[[T:.*]] = 0 to #{{.*}}()[%{{.*}}] {
// IR-NEXT:   "temporal.compute"(%[[T]]) {tensor = "h"}
// IR-NEXT:   "temporal.compute"(%[[T]]) {tensor = "r"}
// IR-NEXT:   "temporal.compute"(%[[T]]) {lag = 2 : i64, tensor = "g"}
// IR-NEXT:   "temporal.compute"(%[[T]]) {lag = 2 : i64, tensor = "p"}
// IR-NEXT: } {tempo.dim = "t", tempo.direction = "forward"}

// BAD: error: the schedule runs 't' forward but read a range of 'r' by 'g' then reaches a point not yet computed

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%r = "temporal.tensor"() {sym_name = "r", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%p = "temporal.tensor"() {sym_name = "p", domain = ["t"], element = tensor<4xf64>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<4xf64>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  "gpu.yield"(%xt) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sum = "temporal.add"(%prev, %xt) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %next = "temporal.tanh"(%sum) : (tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%next) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%r) ({
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %sq = "temporal.mul"(%ht, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%sq) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%g) ({
  %w = "temporal.read_range"(%r) {caps = [affine_map<(t)[T] -> ()>], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (t + 3, T)>]} : (!temporal.rtensor) -> tensor<?x4xf64>
  %s = "temporal.reduce_sum"(%w) {axis = 0 : i64} : (tensor<?x4xf64>) -> tensor<4xf64>
  "gpu.yield"(%s) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%p) ({
  %gt = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %c = "temporal.mul"(%gt, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%c) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%p) ({
  %prev = "temporal.read"(%p) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  %gt = "temporal.read"(%g) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf64>
  %c = "temporal.mul"(%gt, %ht) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  %n = "temporal.add"(%prev, %c) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  "gpu.yield"(%n) : (tensor<4xf64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %last = "temporal.read"(%p) {index = affine_map<()[T] -> (T - 1)>} : (!temporal.rtensor) -> tensor<4xf64>
  "gpu.yield"(%last) : (tensor<4xf64>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
