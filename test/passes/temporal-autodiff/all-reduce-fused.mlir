// Data-parallel gradients (temporal.grad's all_reduce = "mean", which
// Program::data_parallel writes): the gradients of one loss over one
// domain travel in ONE all-reduce per point, of their values flattened and
// concatenated (Horovod's tensor fusion): here gw (2x3) and gb (2) of
// iteration i in one tensor<8xf64> buffer; each gradient reads its part
// back. gu has no path to the loss (zero on every process): it stays out
// of the buffer. Lowered, the program holds one mpi.allreduce (one per
// iteration), in place on a flat memref<8xf64>.
// One process (no mpirun): the all-reduce is the identity, so the
// parameters are those of the program without all_reduce, compiled and
// interpreted.
// RUN: tempo-opt %s --temporal-autodiff | FileCheck %s
// RUN: tempo-opt %s --temporal-autodiff | grep -c temporal.all_reduce | FileCheck %s --check-prefix=COUNT
// RUN: tempo-opt %s --temporal-autodiff --lower-temporal-to-loops='mpi-implementation=OpenMPI' | FileCheck %s --check-prefix=LOWER
// RUN: tempo-run %s --bound I=3 --bound T=2 --seed 1 --interpret > %t.interpreted
// RUN: tempo-run %s --bound I=3 --bound T=2 --seed 1 | diff - %t.interpreted
// RUN: sed 's/, all_reduce = "mean"//' %s | tempo-run - --bound I=3 --bound T=2 --seed 1 --interpret | diff - %t.interpreted
// RUN: sed 's/all_reduce = "mean"/all_reduce = "max"/' %s | not tempo-opt --temporal-autodiff 2>&1 | FileCheck %s --check-prefix=MAX

// The gradients read their parts of the buffer; gu is zero.
// CHECK: %[[GW:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2x3xf64>, sym_name = "gw"}
// CHECK: %[[GB:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2xf64>, sym_name = "gb"}
// CHECK: %[[GU:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2xf64>, sym_name = "gu"}
// CHECK: %[[WL:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2x3xf64>, sym_name = "gw$local"}
// CHECK: %[[BL:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<2xf64>, sym_name = "gb$local"}
// CHECK: %[[BUF:.*]] = "temporal.tensor"() {domain = ["i"], element = tensor<8xf64>, sym_name = "gw$all_reduce"}
// CHECK: "temporal.define"(%[[GW]]) ({
// CHECK-NEXT: %[[R:.*]] = "temporal.read"(%[[BUF]])
// CHECK-NEXT: %[[S:.*]] = "temporal.slice"(%[[R]]) {offsets = [0]} : (tensor<8xf64>) -> tensor<6xf64>
// CHECK-NEXT: "temporal.reshape"(%[[S]]) : (tensor<6xf64>) -> tensor<2x3xf64>
// CHECK: "temporal.define"(%[[GB]]) ({
// CHECK-NEXT: %[[R:.*]] = "temporal.read"(%[[BUF]])
// CHECK-NEXT: "temporal.slice"(%[[R]]) {offsets = [6]} : (tensor<8xf64>) -> tensor<2xf64>
// CHECK: "temporal.define"(%[[GU]]) ({
// CHECK-NEXT: "temporal.constant"() {value = dense<0.000000e+00> : tensor<f64>}
// The buffer: this process's gradients flattened side by side, one all-reduce.
// CHECK: "temporal.define"(%[[BUF]]) ({
// CHECK-NEXT: %[[W:.*]] = "temporal.read"(%[[WL]]) {{.*}} -> tensor<2x3xf64>
// CHECK-NEXT: %[[WF:.*]] = "temporal.reshape"(%[[W]]) : (tensor<2x3xf64>) -> tensor<6xf64>
// CHECK-NEXT: %[[B:.*]] = "temporal.read"(%[[BL]]) {{.*}} -> tensor<2xf64>
// CHECK-NEXT: %[[C:.*]] = "temporal.concat"(%[[WF]], %[[B]]) {axis = 0 : i64} : (tensor<6xf64>, tensor<2xf64>) -> tensor<8xf64>
// CHECK-NEXT: "temporal.all_reduce"(%[[C]]) {reduction = "mean"} : (tensor<8xf64>) -> tensor<8xf64>
// CHECK-NOT: temporal.grad
// COUNT: 1

// LOWER: module attributes {dlti.map = #dlti.map<"MPI:Implementation" = "OpenMPI">}
// LOWER-NOT: mpi.allreduce
// LOWER: affine.for %{{.*}} = 0 to %arg0 {
// LOWER-NOT: mpi.allreduce
// LOWER: mpi.allreduce(%[[BUF:.*]], %[[BUF]], MPI_SUM, %{{.*}}) : memref<8xf64>, memref<8xf64>
// LOWER-NOT: mpi.allreduce

// MAX: error: 'gw': all_reduce must be the string "mean" or "sum" (how the processes' gradients combine), got "max"

"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["i", "t"], element = tensor<3xf64>} : () -> !temporal.rtensor
%w0 = "temporal.input"() {sym_name = "w0", domain = [], element = tensor<2x3xf64>} : () -> !temporal.rtensor
%b0 = "temporal.input"() {sym_name = "b0", domain = [], element = tensor<2xf64>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["i"], element = tensor<2x3xf64>} : () -> !temporal.rtensor
%b = "temporal.tensor"() {sym_name = "b", domain = ["i"], element = tensor<2xf64>} : () -> !temporal.rtensor
%u = "temporal.tensor"() {sym_name = "u", domain = ["i"], element = tensor<2xf64>} : () -> !temporal.rtensor
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
%gu = "temporal.grad"(%loss, %u) {sym_name = "gu", all_reduce = "mean"} : (!temporal.rtensor, !temporal.rtensor) -> !temporal.rtensor
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
"temporal.define"(%u) ({
  %v = "temporal.read"(%b0) {index = affine_map<(i)[I, T] -> ()>} : (!temporal.rtensor) -> tensor<2xf64>
  "gpu.yield"(%v) : (tensor<2xf64>) -> ()
}) {when = affine_set<(i)[I, T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%w) : (!temporal.rtensor) -> ()
"temporal.output"(%b) : (!temporal.rtensor) -> ()
"temporal.output"(%gu) : (!temporal.rtensor) -> ()
