// Programs that reached execution before and misbehaved there (found by
// tempo-fuzz): each is refused by temporal-verify with a located error.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

// A matmul of two ranges whose lengths cannot be proven equal (t+1 and T):
// the compiled code read out of bounds.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %b = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x4xf32>
  %s = "temporal.reduce_sum"(%b) {axis = 1 : i64} : (tensor<?x4xf32>) -> tensor<?xf32>
  // CHECK: robustness.mlir:[[# @LINE + 1]]:8: error: matmul inner dimensions: cannot prove that the sizes agree
  %r = "temporal.matmul"(%s, %a) : (tensor<?xf32>, tensor<?x4xf32>) -> tensor<4xf32>
  "gpu.yield"(%r) : (tensor<4xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// Ranges of equal length written differently (t:T and 0:T-t) are proven
// equal; a range and a static size are not.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %b = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (T - t)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %c = "temporal.add"(%a, %b) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  %k = "temporal.constant"() {value = dense<1.0> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  // CHECK: robustness.mlir:[[# @LINE + 1]]:8: error: elementwise operands, dimension 0: cannot prove that the sizes agree (the length of a range read vs 2)
  %d = "temporal.add"(%c, %k) : (tensor<?x3xf32>, tensor<2x3xf32>) -> tensor<?x3xf32>
  %r = "temporal.reduce_sum"(%d) {axis = 0 : i64} : (tensor<?x3xf32>) -> tensor<3xf32>
  "gpu.yield"(%r) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// Names are identifiers: empty names and NULs reached string handling that
// panicked; no follow-up errors for the refused declarations.
// CHECK: robustness.mlir:[[# @LINE + 1]]:1: error: dimension name '\u{0}' is not an identifier
"temporal.dim"() {sym_name = "\00", bound = "T"} : () -> ()
// CHECK: robustness.mlir:[[# @LINE + 1]]:6: error: tensor name must not be empty
%x = "temporal.tensor"() {sym_name = "", domain = [], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: robustness.mlir:[[# @LINE + 1]]:6: error: tensor name '../x' is not an identifier
%y = "temporal.tensor"() {sym_name = "../x", domain = [], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK-NOT: operand is not the handle
"temporal.output"(%x) : (!temporal.rtensor) -> ()

// -----

// Huge static shapes overflowed sizes; now refused where they are declared.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  // CHECK: robustness.mlir:[[# @LINE + 1]]:8: error: 'temporal.constant': tensor<4611686018427387904xf32> is too large
  %c = "temporal.constant"() {value = dense<1.0> : tensor<4611686018427387904xf32>} : () -> tensor<4611686018427387904xf32>
  "gpu.yield"(%c) : (tensor<4611686018427387904xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// Ops that are not part of a temporal program are refused at module level
// (a stray store.alloc crashed the JIT; a lowered function ran with the
// wrong arguments).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
// CHECK: robustness.mlir:[[# @LINE + 1]]:6: error: 'store.alloc' is not part of a temporal program
%s = "store.alloc"() {kind = "point", extent = 1 : i64} : () -> memref<f32>
// CHECK: robustness.mlir:[[# @LINE + 1]]:1: error: 'func.func' is not part of a temporal program{{.*}}already lowered
func.func @tempo_main(%T: index) attributes {tempo.bounds = ["T"]} {
  return
}

// -----

// Division by a non-positive constant in a condition: the lowering failed
// while the interpreter, with nothing to evaluate, succeeded.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: robustness.mlir:[[# @LINE + 1]]:1: error: condition of 'x': floordiv by 0: mod, floordiv and ceildiv need a positive constant on the right
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t floordiv 0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%x) ({
  // CHECK: robustness.mlir:[[# @LINE + 1]]:8: error: read index: mod by -2
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t mod -2)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()

// -----

// Affine constants near the i64 limits made the generated code unparsable
// (`d0 - -9223372036854775808`).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
// CHECK: robustness.mlir:[[# @LINE + 1]]:1: error: condition of 'x': the constant -9223372036854775808 is out of range
"temporal.define"(%x) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 9223372036854775807)>} : (!temporal.rtensor) -> ()

// -----

// A slice whose offset plus size overflows i64 (found by tempo-fuzz seed
// 60417 in the model zoo's Llama block: the interpreter panicked).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x4xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x2xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x4xf32>
  // CHECK: robustness.mlir:[[# @LINE + 1]]:8: error: 'temporal.slice': slice needs static shapes and 'offsets' with the box of tensor<2x2xf32> inside tensor<2x4xf32>
  %s = "temporal.slice"(%v) {offsets = [9223372036854775807, 0]} : (tensor<2x4xf32>) -> tensor<2x2xf32>
  "gpu.yield"(%s) : (tensor<2x2xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
