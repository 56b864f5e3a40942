// Ragged stops (temporal.stop over done[b, t]): per sequence b, x doubles
// from b + 1 and t ends where x first reaches 100 (lengths 8, 7, 7, 6);
// per b, the range x[b, 0:T] and the point x[b, T-1] read after the loop
// see its own length, the output x holds zeros past it and is as long as
// the longest. Compiled (every level, both loop orders: the stopped loop
// inside or outside the batch's) and interpreted alike. What cannot give
// each b one length is refused (Inputs/ragged-stop-errors.mlir).
// RUN: tempo-run %s --bound B=4 --bound T=20 --interpret | FileCheck %s
// RUN: tempo-run %s --bound B=4 --bound T=20 -O 0 | FileCheck %s
// RUN: tempo-run %s --bound B=4 --bound T=20 -O 1 | FileCheck %s
// RUN: tempo-run %s --bound B=4 --bound T=20 | FileCheck %s
// RUN: tempo-run %s --bound B=4 --bound T=20 -O 3 | FileCheck %s
// RUN: tempo-run %s --bound B=4 --bound T=5 | FileCheck %s --check-prefix=SHORT
// RUN: tempo-run %s --bound B=4 --bound T=5 --interpret | FileCheck %s --check-prefix=SHORT
// RUN: tempo-run %s --bound B=0 --bound T=5 | FileCheck %s --check-prefix=EMPTY
// RUN: tempo-run %S/Inputs/ragged-stop-t-outer.mlir --bound B=4 --bound T=20 | FileCheck %s --check-prefix=OUTER
// RUN: tempo-run %S/Inputs/ragged-stop-t-outer.mlir --bound B=4 --bound T=20 --interpret | FileCheck %s --check-prefix=OUTER
// RUN: not tempo-opt --split-input-file %S/Inputs/ragged-stop-errors.mlir --temporal-verify 2>&1 | FileCheck %S/Inputs/ragged-stop-errors.mlir

// CHECK: x: int64[4, 8] = {{\[\[}}1, 2, 4, 8, 16, 32, 64, 128], [2, 4, 8, 16, 32, 64, 128, 0], [3, 6, 12, 24, 48, 96, 192, 0], [4, 8, 16, 32, 64, 128, 0, 0]]
// CHECK-NEXT: total: int64[4] = [255, 254, 381, 252]
// CHECK-NEXT: last: int64[4] = [128, 128, 192, 128]
// SHORT: x: int64[4, 5] = {{\[\[}}1, 2, 4, 8, 16], [2, 4, 8, 16, 32], [3, 6, 12, 24, 48], [4, 8, 16, 32, 64]]
// SHORT-NEXT: total: int64[4] = [31, 62, 93, 124]
// SHORT-NEXT: last: int64[4] = [16, 32, 48, 64]
// EMPTY: x: int64[0, 0] = []
// OUTER: x: int64[8, 4] = {{\[\[}}1, 2, 3, 4], [2, 4, 6, 8], [4, 8, 12, 16], [8, 16, 24, 32], [16, 32, 48, 64], [32, 64, 96, 128], [64, 128, 192, 0], [128, 0, 0, 0]]
// OUTER-NEXT: total: int64[4] = [255, 254, 381, 252]
// OUTER-NEXT: last: int64[4] = [128, 128, 192, 128]

"temporal.dim"() {sym_name = "b", bound = "B"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["b", "t"], element = tensor<i64>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["b", "t"], element = tensor<i1>} : () -> !temporal.rtensor
%total = "temporal.tensor"() {sym_name = "total", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
%last = "temporal.tensor"() {sym_name = "last", domain = ["b"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.position"() {dim = "b"} : () -> tensor<i64>
  %c = "temporal.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.add"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t - 1)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<2> : tensor<i64>} : () -> tensor<i64>
  %n = "temporal.mul"(%p, %c) : (tensor<i64>, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%n) : (tensor<i64>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(b, t)[B, T] -> (b, t)>} : (!temporal.rtensor) -> tensor<i64>
  %c = "temporal.constant"() {value = dense<100> : tensor<i64>} : () -> tensor<i64>
  %d = "temporal.cmp"(%v, %c) {predicate = "ge"} : (tensor<i64>, tensor<i64>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(b, t)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%total) ({
  %all = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(b)[B, T] -> (b)>, affine_map<(b)[B, T] -> (0)>], upper = [affine_map<(b)[B, T] -> ()>, affine_map<(b)[B, T] -> (T)>]} : (!temporal.rtensor) -> tensor<?xi64>
  %s = "temporal.reduce_sum"(%all) {axis = 0 : i64} : (tensor<?xi64>) -> tensor<i64>
  "gpu.yield"(%s) : (tensor<i64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%last) ({
  %v = "temporal.read"(%x) {index = affine_map<(b)[B, T] -> (b, T - 1)>} : (!temporal.rtensor) -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(b)[B, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
"temporal.output"(%total) : (!temporal.rtensor) -> ()
"temporal.output"(%last) : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
