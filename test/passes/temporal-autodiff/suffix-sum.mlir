// The adjoint of a prefix sum: s[t] = (sum x[0:t+1])^2 reads every x[q]
// at the steps t >= q, so x's gradient at q is a sum over x[q:T] of s's
// cotangents, a suffix sum. At -O2 it stays a range read (exact: the
// interpreter's order); at -O3 temporal-lift-recurrences turns it into a
// recurrence run backward (one addition per point, a ring of two points),
// as it turns the forward prefix sum into one at every level. Values agree
// with the interpreter bit for bit at -O2, within 1e-12 at -O3.
// RUN: tempo-opt %s -O2 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=O2
// RUN: tempo-opt %s -O3 --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=O3
// RUN: tempo-run %s --bound T=9 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=9 --seed 1 --interpret --format json > %t.json
// RUN: tempo-run %s --bound T=9 --seed 1 -O 3 --format json > %t.o3.json
// RUN: %python %S/Inputs/close.py %t.json %t.o3.json 1e-12

// O2: for t = 0 up to T-1:
// O2:   x_prefix_sum[t]  store: ring<2>
// O2:   g$f$s$0[t]  store: full
// O2: for t = 0 up to T-1:
// O2:   g$a$s$0$0$0[t]  store: point

// O3: for t = 0 up to T-1:
// O3:   x_prefix_sum[t]  store: ring<2>
// O3: for t = T-1 down to 0:
// O3:   g$f$s$0_suffix_sum[t]  store: ring<2>
// O3:   g$a$s$0$0$0[t]  store: point

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
%s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%s) ({
  %v = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %r = "temporal.reduce_sum"(%v) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  %q = "temporal.mul"(%r, %r) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  "gpu.yield"(%q) : (tensor<f64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.grad"(%s, %x) {sym_name = "g"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.output"(%g) : (!temporal.rtensor) -> ()
