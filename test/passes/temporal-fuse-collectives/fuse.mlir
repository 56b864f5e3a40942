// temporal-fuse-collectives: the reported loss of iteration i (a mean
// over the processes) needs the parameters of i, made from the gradients
// of i - 1, so it travels in the gradients' buffer of i: one all-reduce of
// 1 + 8 values. `scaled` needs the report of its own iteration (it stays a
// collective of its own, after the buffer) and `peak` is a maximum (not a
// mean): 3 all-reduces per iteration instead of 4. Results are those of
// the program without the pass, interpreted, compiled, and under mpirun
// with two processes (rank-dependent values), where each process makes 3
// all-reduces per iteration with the pass and 4 without.
// RUN: tempo-opt %s --temporal-autodiff --temporal-fuse-collectives | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff --temporal-fuse-collectives | grep -c temporal.all_reduce | FileCheck %s --check-prefix=COUNT
// RUN: tempo-opt %s -O2 | grep -c temporal.all_reduce | FileCheck %s --check-prefix=COUNT
// RUN: tempo-run %s --bound I=3 --bound T=2 --seed 1 --interpret -O0 > %t.interpreted
// RUN: tempo-run %s --bound I=3 --bound T=2 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound I=3 --bound T=2 --seed 1 --interpret | diff - %t.interpreted
// RUN: rm -rf %t.dir && mkdir -p %t.dir
// RUN: env TEMPO_MPI_STATS=1 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t.dir/fused tempo-run %s --bound I=3 --bound T=2 --seed 1 > /dev/null 2> %t.dir/fused.err
// RUN: env TEMPO_MPI_STATS=1 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t.dir/apart tempo-run %s --bound I=3 --bound T=2 --seed 1 --disable-pass temporal-fuse-collectives > /dev/null 2> %t.dir/apart.err
// RUN: diff %t.dir/fused/1/rank.1/stdout %t.dir/apart/1/rank.1/stdout
// RUN: diff %t.dir/fused/1/rank.0/stdout %t.dir/apart/1/rank.0/stdout
// RUN: FileCheck %s --check-prefix=FUSED < %t.dir/fused.err
// RUN: FileCheck %s --check-prefix=APART < %t.dir/apart.err

// CHECK-DAG: %[[REPORT:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<f64>, sym_name = "report"}
// CHECK-DAG: %[[OPERAND:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<f64>, sym_name = "report$operand"}
// CHECK-DAG: %[[GRADS:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<8xf64>, sym_name = "gw$all_reduce$operand"}
// CHECK-DAG: %[[BUF:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<9xf64>, sym_name = "report$fused"}
// The report reads its part of the buffer; the gradients' buffer is
// this process's gradients, no longer all-reduced.
// CHECK: "temporal.define"(%[[REPORT]]) ({
// CHECK-NEXT: %[[R:.*]] = "temporal.read"(%[[BUF]])
// CHECK-NEXT: %[[S:.*]] = "temporal.slice"(%[[R]]) {offsets = [0]} : (tensor<9xf64>) -> tensor<1xf64>
// CHECK-NEXT: "temporal.reshape"(%[[S]]) : (tensor<1xf64>) -> tensor<f64>
// CHECK: "temporal.define"(%[[GRADS]]) ({
// CHECK: "temporal.concat"
// CHECK-NOT: temporal.all_reduce
// CHECK: gpu.yield
// The buffer: the report's value, then the gradients'.
// CHECK: "temporal.define"(%[[BUF]]) ({
// CHECK-NEXT: %[[L:.*]] = "temporal.read"(%[[OPERAND]]) {{.*}} -> tensor<f64>
// CHECK-NEXT: %[[LF:.*]] = "temporal.reshape"(%[[L]]) : (tensor<f64>) -> tensor<1xf64>
// CHECK-NEXT: %[[G:.*]] = "temporal.read"(%[[GRADS]]) {{.*}} -> tensor<8xf64>
// CHECK-NEXT: %[[C:.*]] = "temporal.concat"(%[[LF]], %[[G]]) {axis = 0 : i64} : (tensor<1xf64>, tensor<8xf64>) -> tensor<9xf64>
// CHECK-NEXT: "temporal.all_reduce"(%[[C]]) {reduction = "mean"} : (tensor<9xf64>) -> tensor<9xf64>
// COUNT: 3

// FUSED-DAG: tempo: rank 0 of 2: 9 all-reduces
// FUSED-DAG: tempo: rank 1 of 2: 9 all-reduces
// APART-DAG: tempo: rank 0 of 2: 12 all-reduces
// APART-DAG: tempo: rank 1 of 2: 12 all-reduces

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["i", "t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%w0 = "temporal.input"() {sym_name = "w0", domain = [], element = tensor<2x3xf64>} : () -> !temporal.rtensor
%b0 = "temporal.input"() {sym_name = "b0", domain = [], element = tensor<2xf64>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<2x3xf64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i"], element = tensor<2xf64>} : () -> !temporal.rtensor
%loss = "temporal.tensor"() {sym_name = "loss", domain = ["i", "t"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%loss) ({
  %wv = "temporal.read"(%w) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<2x3xf64>
  %bv = "temporal.read"(%b) {index = affine_map<(i, t)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<2xf64>
  %xv = "temporal.read"(%x) {index = affine_map<(i, t)[I, T] -> (i, t)>} : (!temporal.rtensor) -> tensor<3xf64>
  %p = "temporal.mul"(%wv, %xv) : (tensor<2x3xf64>, tensor<3xf64>) -> tensor<2x3xf64>
  %s = "temporal.reduce_sum"(%p) {axis = 1 : i64} : (tensor<2x3xf64>) -> tensor<2xf64>
  %q = "temporal.add"(%s, %bv) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %sq = "temporal.mul"(%q, %q) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %l = "temporal.reduce_sum"(%sq) {axis = 0 : i64} : (tensor<2xf64>) -> tensor<f64>
  "gpu.yield"(%l) : (tensor<f64>) -> ()
}) {when = affine_set<(i, t)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
%gw = "temporal.grad"(%loss, %w) {sym_name = "gw", all_reduce = "mean"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
%gb = "temporal.grad"(%loss, %b) {sym_name = "gb", all_reduce = "mean"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
"temporal.define"(%w) ({
  %v = "temporal.read"(%w0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<2x3xf64>
  "gpu.yield"(%v) : (tensor<2x3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%w) ({
  %v = "temporal.read"(%w) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<2x3xf64>
  %g = "temporal.read"(%gw) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<2x3xf64>
  %sg = "temporal.stop_gradient"(%g) : (tensor<2x3xf64>) -> tensor<2x3xf64>
  %lr = "temporal.constant"() {value = dense<1.000000e-01> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<2x3xf64>, tensor<f64>) -> tensor<2x3xf64>
  %n = "temporal.sub"(%v, %step) : (tensor<2x3xf64>, tensor<2x3xf64>) -> tensor<2x3xf64>
  "gpu.yield"(%n) : (tensor<2x3xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %v = "temporal.read"(%b0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<2xf64>
  "gpu.yield"(%v) : (tensor<2xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (i == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%b) ({
  %v = "temporal.read"(%b) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<2xf64>
  %g = "temporal.read"(%gb) {index = affine_map<(i)[I, T] -> (i - 1)>} : (!temporal.rtensor) -> tensor<2xf64>
  %sg = "temporal.stop_gradient"(%g) : (tensor<2xf64>) -> tensor<2xf64>
  %lr = "temporal.constant"() {value = dense<1.000000e-01> : tensor<f64>} : () -> tensor<f64>
  %step = "temporal.mul"(%sg, %lr) : (tensor<2xf64>, tensor<f64>) -> tensor<2xf64>
  %n = "temporal.sub"(%v, %step) : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  "gpu.yield"(%n) : (tensor<2xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
// The loss of each iteration over every process, for the report: it
// reads the parameters of i, made from the gradients of i - 1, so it may
// travel with the gradients of i.
%report = "temporal.tensor"() {sym_name = "report", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%report) ({
  %l = "temporal.read_range"(%loss) {lower = [affine_map<(i)[I, T] -> (i)>, affine_map<(i)[I, T] -> (0)>], upper = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> (T)>], caps = [affine_map<(i)[I, T] -> ()>, affine_map<(i)[I, T] -> ()>]} : (!temporal.rtensor) -> tensor<?xf64>
  %m = "temporal.reduce_mean"(%l) {axis = 0 : i64} : (tensor<?xf64>) -> tensor<f64>
  %y = "temporal.all_reduce"(%m) {reduction = "mean"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Needs the report of its own iteration: a collective after it.
%scaled = "temporal.tensor"() {sym_name = "scaled", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%scaled) ({
  %r = "temporal.read"(%report) {index = affine_map<(i)[I, T] -> (i)>} : (!temporal.rtensor) -> tensor<f64>
  %k = "temporal.rank"() : () -> tensor<f64>
  %v = "temporal.mul"(%r, %k) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  %y = "temporal.all_reduce"(%v) {reduction = "mean"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
// Another reduction: a collective of its own.
%peak = "temporal.tensor"() {sym_name = "peak", domain = ["i"], element = tensor<f64>} : () -> !temporal.rtensor
"temporal.define"(%peak) ({
  %l = "temporal.read"(%loss) {index = affine_map<(i)[I, T] -> (i, 0)>} : (!temporal.rtensor) -> tensor<f64>
  %y = "temporal.all_reduce"(%l) {reduction = "max"} : (tensor<f64>) -> tensor<f64>
  "gpu.yield"(%y) : (tensor<f64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%report) : (!temporal.rtensor) -> ()
"temporal.output"(%scaled) : (!temporal.rtensor) -> ()
"temporal.output"(%peak) : (!temporal.rtensor) -> ()
