// Reads through data (temporal.read_at): two forests numbered out of order
// (a parent may come before its children, a node may have two parents),
// read through a cycle of two tensors: c reads c and h at the children
// `left[n]` and `right[n]`, h reads c at its own point. The compiled code
// orders the nodes by depth at run time and computes every node of one
// depth together (or one by one, with depth batching off), and agrees with
// the interpreter at every level. `out` reads the roots through data, off
// the cycle. Coordinates out of bounds and cycles in the data are errors at
// the read, compiled and interpreted.
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy --interpret > %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy | diff - %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy -O 3 | diff - %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy --disable-pass depth-batching | diff - %t.interpreted
// RUN: tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots.npy --disable-pass fusion | diff - %t.interpreted
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left-cycle.npy --input roots=%S/Inputs/trees/roots.npy 2>&1 | FileCheck %s --check-prefix=CYCLE
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left-cycle.npy --input roots=%S/Inputs/trees/roots.npy --interpret 2>&1 | FileCheck %s --check-prefix=CYCLE-I
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left-far.npy --input roots=%S/Inputs/trees/roots.npy 2>&1 | FileCheck %s --check-prefix=FAR
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left-far.npy --input roots=%S/Inputs/trees/roots.npy --interpret 2>&1 | FileCheck %s --check-prefix=FAR-I
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots-far.npy 2>&1 | FileCheck %s --check-prefix=ROOT
// RUN: not tempo-run %s --bound N=11 --bound NL=6 --bound R=2 --input x=%S/Inputs/trees/x.npy --input right=%S/Inputs/trees/right.npy --input left=%S/Inputs/trees/left.npy --input roots=%S/Inputs/trees/roots-far.npy --interpret 2>&1 | FileCheck %s --check-prefix=ROOT-I
// A forest without nodes (N = 0) read at its roots: the same error, not a
// crash (the compiled read has no point to clamp its coordinate to, so the
// run ends at it).
// RUN: not tempo-run %s --bound N=0 --bound NL=0 --bound R=2 --input roots=%S/Inputs/trees/roots.npy --seed 3 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not tempo-run %s --bound N=0 --bound NL=0 --bound R=2 --input roots=%S/Inputs/trees/roots.npy --seed 3 --interpret 2>&1 | FileCheck %s --check-prefix=EMPTY-I

// EMPTY: reads-through-data.mlir:{{[0-9]+}}:8: error: a read through data names coordinate {{-?[0-9]+}} (of the source's dimension 0), outside [0, 0)
// EMPTY-I: reads-through-data.mlir:{{[0-9]+}}:8: error: read through data of 'h' at out[r=0] is out of bounds: n = {{-?[0-9]+}} is outside 0..0 (N = 0)

// CHECK: h: float32[11] =
// CHECK: out: float32[2] =

// CYCLE: reads-through-data.mlir:[[@LINE+24]]:8: error: point {{[67]}} needs itself through reads through data
// CYCLE-I: error: point {{.*}} depends on itself through reads through data
// FAR: reads-through-data.mlir:[[@LINE+22]]:8: error: at point 10: the read through data names point 11, outside [0, 11)
// FAR-I: reads-through-data.mlir:[[@LINE+21]]:8: error: read through data of 'c' at c[n=10] is out of bounds: n = 11 is outside 0..11
// ROOT: reads-through-data.mlir:[[@LINE+40]]:8: error: a read through data names coordinate -1 (of the source's dimension 0), outside [0, 11)
// ROOT-I: reads-through-data.mlir:[[@LINE+39]]:8: error: read through data of 'h' at out[r=1] is out of bounds: n = -1 is outside 0..11

"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
"temporal.dim"() {sym_name = "leaf", bound = "NL"} : () -> ()
"temporal.dim"() {sym_name = "r", bound = "R"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%left = "temporal.input"() {sym_name = "left", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%right = "temporal.input"() {sym_name = "right", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%roots = "temporal.input"() {sym_name = "roots", domain = ["r"], element = tensor<i64>} : () -> !temporal.rtensor
%c = "temporal.tensor"() {sym_name = "c", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
%out = "temporal.tensor"() {sym_name = "out", domain = ["r"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%c) ({
  %v = "temporal.read"(%x) {index = affine_map<(n)[N, NL, R] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N, NL, R] : (NL - n - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%c) ({
  %l = "temporal.read"(%left) {index = affine_map<(n)[N, NL, R] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %r = "temporal.read"(%right) {index = affine_map<(n)[N, NL, R] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %a = "temporal.read_at"(%c, %l) {index = affine_map<(n, k)[N, NL, R] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  %b = "temporal.read_at"(%h, %r) {index = affine_map<(n, k)[N, NL, R] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  %v = "temporal.read"(%x) {index = affine_map<(n)[N, NL, R] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  %half = "temporal.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
  %ah = "temporal.mul"(%a, %half) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %s = "temporal.add"(%ah, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %w = "temporal.add"(%s, %v) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%w) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N, NL, R] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %v = "temporal.read"(%c) {index = affine_map<(n)[N, NL, R] -> (n)>} : (!temporal.rtensor) -> tensor<f32>
  %t = "temporal.tanh"(%v) : (tensor<f32>) -> tensor<f32>
  %p = "temporal.position"() {dim = "n"} : () -> tensor<f32>
  %k = "temporal.constant"() {value = dense<0.01> : tensor<f32>} : () -> tensor<f32>
  %pk = "temporal.mul"(%p, %k) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %y = "temporal.add"(%t, %pk) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  "gpu.yield"(%y) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N, NL, R] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%out) ({
  %k = "temporal.read"(%roots) {index = affine_map<(r)[N, NL, R] -> (r)>} : (!temporal.rtensor) -> tensor<i64>
  %v = "temporal.read_at"(%h, %k) {index = affine_map<(r, k)[N, NL, R] -> (k)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(r)[N, NL, R] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
"temporal.output"(%out) : (!temporal.rtensor) -> ()
