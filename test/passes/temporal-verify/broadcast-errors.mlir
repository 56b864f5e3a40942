// Elementwise results under NumPy broadcasting (dialects/README.md,
// "Broadcasting"): the result type is the broadcast shape, and a size that
// is the length of a range read is `?` in it. A result type that states a
// static size there is refused at the op: the interpreter refused such
// programs at run time (a branch value of shape [3, 3] where the points
// have [1, 3]) while compiled code, sized for the stated 1, wrote past its
// buffers (heap corruption) or returned the first row. Found by generating
// operand shapes (size-1 dimensions, rank differences, scalars, ranges of
// several forms) for add, cmp and select.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<1x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (t)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %b = "temporal.constant"() {value = dense<1.5> : tensor<1x3xf32>} : () -> tensor<1x3xf32>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.add' gives dimension 0 of its result the length of a range read, but its type tensor<1x3xf32> states 1; write ? there
  %r = "temporal.add"(%a, %b) : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
  "gpu.yield"(%r) : (tensor<1x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// A scalar and a range, the range on the right.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3x1xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.constant"() {value = dense<1.5> : tensor<3x1xf32>} : () -> tensor<3x1xf32>
  %b = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?xf32>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.mul' gives dimension 1 of its result the length of a range read, but its type tensor<3x1xf32> states 1; write ? there
  %r = "temporal.mul"(%a, %b) : (tensor<3x1xf32>, tensor<?xf32>) -> tensor<3x1xf32>
  "gpu.yield"(%r) : (tensor<3x1xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// cmp and select.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %b = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.cmp' gives dimension 0 of its result the length of a range read, but its type tensor<1x3xi1> states 1; write ? there
  %c = "temporal.cmp"(%a, %b) {predicate = "lt"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<1x3xi1>
  "gpu.yield"(%b) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<1x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (T)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %b = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %c = "temporal.cmp"(%a, %b) {predicate = "lt"} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xi1>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.select' gives dimension 0 of its result the length of a range read, but its type tensor<1x3xf32> states 1; write ? there
  %r = "temporal.select"(%c, %a, %b) : (tensor<?x3xi1>, tensor<?x3xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  "gpu.yield"(%r) : (tensor<1x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// The same rule for every op whose result sizes follow its operands: a
// unary op, and a concatenation along a range's dimension.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.neg' gives dimension 0 of its result the length of a range read, but its type tensor<2x3xf32> states 2; write ? there
  %n = "temporal.neg"(%a) : (tensor<?x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%n) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<4x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x3xf32>
  %b = "temporal.constant"() {value = dense<1.5> : tensor<3x3xf32>} : () -> tensor<3x3xf32>
  // CHECK: broadcast-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.concat' gives dimension 0 of its result the length of a range read, but its type tensor<4x3xf32> states 4; write ? there
  %c = "temporal.concat"(%a, %b) {axis = 0 : i64} : (tensor<?x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  "gpu.yield"(%c) : (tensor<4x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
