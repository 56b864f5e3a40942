// Columns a register tile leaves over, and B read transposed.
// y = x @ w with N = 80 and M = 8: panels of three vectors (48 columns),
// then the 32 columns left over in panels of one vector (tiles of eight
// rows of one vector, the step the vector width), no scalar loop (16
// divides 80). z = x @ transpose(u) (u is [80, 24]: a weight read
// transposed, as in a backward pass): B has no unit column stride, and
// with 8 rows of A it is first copied into a row-major buffer (alloc, a
// copy in 16 x 16 tiles, since the source is contiguous along its rows'
// dimension and the buffer along its columns', dealloc) and read with
// vector loads, not gathers. Compiled
// results are bit-exact with the interpreter's.
// RUN: tempo-opt %s "--lower-temporal-to-loops=vector-bits=512 vector-registers=32" | FileCheck %s
// RUN: tempo-run %s --bound T=3 --seed 5 > %t.compiled
// RUN: tempo-run %s --bound T=3 --seed 5 --interpret > %t.interpreted
// RUN: diff %t.compiled %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 5 --disable-pass fusion | diff - %t.interpreted
// RUN: tempo-run %s --bound T=3 --seed 5 --threads 2 | diff - %t.interpreted

// CHECK-LABEL: func.func
// CHECK: %[[VW:.*]] = arith.constant 16 : index
// CHECK: %[[NFULL:.*]] = arith.subi
// CHECK: %[[NVEC:.*]] = arith.subi
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[NFULL]] step
// CHECK: vector.load
// CHECK: scf.for %{{.*}} = %[[NFULL]] to %[[NVEC]] step
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[VW]] {
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK-NOT: iter_args({{.*}}) -> (f32)
// CHECK: memref.transpose
// CHECK: %[[PACKED:.*]] = memref.alloc() : memref<24x80xf32>
// CHECK: scf.for %[[I0:.*]] = %{{.*}} to %{{.*}} step %[[TILE:c16.*]] {
// CHECK: scf.for %[[J0:.*]] = %{{.*}} to %{{.*}} step %[[TILE]] {
// CHECK: %[[IEND:.*]] = arith.minui
// CHECK: scf.for %[[I:.*]] = %[[I0]] to %[[IEND]]
// CHECK: %[[JEND:.*]] = arith.addi %[[J0]], %[[TILE]]
// CHECK: scf.for %[[J:.*]] = %[[J0]] to %[[JEND]]
// CHECK: %[[X:.*]] = memref.load %{{.*}}[%[[I]], %[[J]]] : memref<24x80xf32, strided<[1, 24], offset: ?>>
// CHECK: memref.store %[[X]], %[[PACKED]][%[[I]], %[[J]]]
// CHECK-NOT: vector.gather
// CHECK: vector.load %[[PACKED]]
// CHECK: memref.dealloc

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%a = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<8x24xf32>} : () -> !temporal.rtensor
%w = "temporal.input"() {sym_name = "w", domain = [], element = tensor<24x80xf32>} : () -> !temporal.rtensor
%u = "temporal.input"() {sym_name = "u", domain = [], element = tensor<80x24xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<8x80xf32>} : () -> !temporal.rtensor
%z = "temporal.tensor"() {sym_name = "z", domain = ["t"], element = tensor<8x80xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %x = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x24xf32>
  %m = "temporal.read"(%w) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<24x80xf32>
  %s = "temporal.matmul"(%x, %m) : (tensor<8x24xf32>, tensor<24x80xf32>) -> tensor<8x80xf32>
  "gpu.yield"(%s) : (tensor<8x80xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%z) ({
  %x = "temporal.read"(%a) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<8x24xf32>
  %m = "temporal.read"(%u) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<80x24xf32>
  %mt = "temporal.permute"(%m) {permutation = [1, 0]} : (tensor<80x24xf32>) -> tensor<24x80xf32>
  %s = "temporal.matmul"(%x, %mt) : (tensor<8x24xf32>, tensor<24x80xf32>) -> tensor<8x80xf32>
  "gpu.yield"(%s) : (tensor<8x80xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
"temporal.output"(%z) : (!temporal.rtensor) -> ()
