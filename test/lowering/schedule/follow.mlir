// lower-temporal-to-loops follows a schedule written by hand in
// @tempo_schedule: here d gets a loop of its own before s's, so d is read
// from another nest and is stored in full (the scheduler alone would fuse
// the two loops and keep d in one point). The schedule function is gone
// from the result.
// RUN: tempo-opt %s --lower-temporal-to-loops | FileCheck %s
// RUN: tempo-opt %s --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=PRINT
// And it runs, with the same result as the scheduler's own order.
// RUN: tempo-run %s --bound T=5 --seed 1 > %t.compiled
// RUN: tempo-run %s --bound T=5 --seed 1 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: FileCheck %s --check-prefix=OUT < %t.compiled

// CHECK-NOT: tempo_schedule
// CHECK: %[[D:.*]] = "store.alloc"(%{{.*}}) {extent = 0 : i64, kind = "full"}
// CHECK: affine.for
// CHECK: "store.write"(%[[D]]
// CHECK: }
// CHECK: affine.for
// CHECK: "store.read"(%[[D]]
// CHECK: "store.free"(%[[D]])
// CHECK-NOT: tempo_schedule

// PRINT:      schedule:
// PRINT-NEXT:   for t = 0 up to T-1:
// PRINT-NEXT:     d[t]  store: full
// PRINT-NEXT:   for t = 0 up to T-1:
// PRINT-NEXT:     s[t]  store: output

// OUT: s: float64[5] = [{{.*}}]
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%d = "temporal.tensor"() {sym_name = "d", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%d) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %two = "temporal.add"(%v, %v) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%two) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %first = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%first) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %prev = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %now = "temporal.read"(%d) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %sum = "temporal.add"(%prev, %now) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%sum) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%s) : (!temporal.rtensor) -> ()
func.func @tempo_schedule(%T: index) {
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "d"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  affine.for %t = 0 to %T {
    "temporal.compute"(%t) {tensor = "s"} : (index) -> ()
  } {tempo.dim = "t", tempo.direction = "forward"}
  return
}
