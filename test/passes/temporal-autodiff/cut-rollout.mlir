// A rollout whose state is driven by the parameter only through
// stop_gradient (as sampled actions drive an environment): the state's
// reads of w pass no gradient, so temporal-autodiff gives the state no
// adjoint and no backward recurrence; the gradient is that through the
// loss's own read of w. Compiled and interpreted agree bit for bit.
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=SCHEDULE
// RUN: tempo-run %s --bound T=6 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=6 --seed 1 | diff - %t.interpreted

// CHECK-NOT: $d$s
// CHECK: sym_name = "g$d$w"
// CHECK-NOT: $d$s

// SCHEDULE: for t = 0 up to T-1:
// SCHEDULE-NEXT: s[t]
// SCHEDULE-NOT: $d$s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<f64>} : () -> !temporal.rtensor
%x = "temporal.input"() {sym_name = "x", domain = [], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<f64>
  "gpu.yield"(%v) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%s) ({
  %p = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f64>
  %wv = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<f64>
  %a = "temporal.mul"(%wv, %p) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %cut = "temporal.stop_gradient"(%a) : (tensor<f64>) -> tensor<f64>
  %n = "temporal.sin"(%cut) : (tensor<f64>) -> tensor<f64>
  %r = "temporal.add"(%p, %n) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%r) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%loss) ({
  %st = "temporal.read"(%s) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f64>
  %wv = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<f64>
  %m = "temporal.mul"(%wv, %st) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %q = "temporal.mul"(%m, %m) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%q) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%loss, %w) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()
