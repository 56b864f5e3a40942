// Data-dependent stops (temporal.stop): x doubles from 1 and t ends where
// x first reaches 100, at t = 7; outputs have the points up to the stop, a
// range x[0:T] read after the loop ends there too, and a bound smaller
// than the stop ends the dimension at the bound. Compiled (every level,
// the loop guarded after the stop, later nests bounded by the length) and
// interpreted alike. What decides a stop may not use the bound or read
// ahead (Inputs/stop-errors.mlir).
// RUN: tempo-run %s --bound T=20 --interpret | FileCheck %s
// RUN: tempo-run %s --bound T=20 -O 0 | FileCheck %s
// RUN: tempo-run %s --bound T=20 -O 1 | FileCheck %s
// RUN: tempo-run %s --bound T=20 | FileCheck %s
// RUN: tempo-run %s --bound T=20 -O 3 | FileCheck %s
// RUN: tempo-run %s --bound T=5 | FileCheck %s --check-prefix=SHORT
// RUN: tempo-run %s --bound T=5 --interpret | FileCheck %s --check-prefix=SHORT
// RUN: tempo-run %S/Inputs/stop-bound-after.mlir --bound T=20 | FileCheck %s --check-prefix=AFTER
// RUN: tempo-run %S/Inputs/stop-bound-after.mlir --bound T=20 -O 0 | FileCheck %s --check-prefix=AFTER
// RUN: tempo-run %S/Inputs/stop-bound-after.mlir --bound T=20 --interpret | FileCheck %s --check-prefix=AFTER
// RUN: tempo-opt %s --temporal-dce --temporal-verify | FileCheck %s --check-prefix=KEPT
// RUN: not tempo-opt --split-input-file %S/Inputs/stop-errors.mlir --temporal-verify 2>&1 | FileCheck %S/Inputs/stop-errors.mlir

// CHECK: x: int64[8] = [1, 2, 4, 8, 16, 32, 64, 128]
// CHECK-NEXT: total: int64[] = 255
// SHORT: x: int64[5] = [1, 2, 4, 8, 16]
// SHORT-NEXT: total: int64[] = 31
// AFTER: r: int64[8] = [8, 9, 10, 11, 12, 13, 14, 15]
// AFTER-NEXT: x: int64[8] = [1, 2, 4, 8, 16, 32, 64, 128]
// KEPT: "temporal.stop"(%{{.*}}) {dim = "t"}

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<i64>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = [], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  "gpu.yield"(%c) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.mul"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<100> : tensor<i64>} : () -> tensor<i64>
  %d = "temporal.cmp"(%v, %c) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<()[T] -> (0)>], upper = [affine_map<()[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xi64>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
  "gpu.yield"(%s) : (tensor<i64>) -> ()
}) {when = affine_set<()[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
