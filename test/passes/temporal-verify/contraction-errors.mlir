// The contraction and shape ops of issue 14 refuse ill-formed uses with
// located diagnostics: einsum specs and sizes, slices at point-dependent
// offsets, batched matmul shapes, reshapes and expands of dynamic sizes.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: einsum spec 'ij,jk' needs '->'
  %e = "temporal.einsum"(%a, %a) {spec = "ij,jk"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: einsum spec 'ii,jk->ik': label 'i' appears twice in operand 0 (diagonals are not supported)
  %e = "temporal.einsum"(%a, %a) {spec = "ii,jk->ik"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: einsum 'ij,jk->ik': label 'j' has sizes 3 and 2
  %e = "temporal.einsum"(%a, %a) {spec = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.einsum' takes one or two operands, got 3
  %e = "temporal.einsum"(%a, %a, %a) {spec = "ij,ij,ij->ij"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.einsum' 'ij,kj->ik' of tensor<2x3xf32>, tensor<2x3xf32> cannot give tensor<3x3xf32>
  %e = "temporal.einsum"(%a, %a) {spec = "ij,kj->ik"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: slice offsets must map the reader's 1 domain variables and 1 bounds to 2 offsets (one per dimension of tensor<2x3xf32>)
  %e = "temporal.dynamic_slice"(%a) {offsets = affine_map<(t)[T] -> (t)>} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.dynamic_slice' takes a static box of tensor<3x3xf32> out of a static tensor<2x3xf32>
  %e = "temporal.dynamic_slice"(%a) {offsets = affine_map<(t)[T] -> (t, 0)>} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.matmul' cannot multiply tensor<2x3x2xf32> by tensor<2x3x2xf32> into tensor<2x3x2xf32>
  %e = "temporal.matmul"(%m, %m) : (tensor<2x3x2xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.reshape': reshape keeps the elements: static shapes with as many elements, or one dynamic dimension in each with the same static sizes around it; not tensor<?x2x3xf32> to tensor<2x?x3xf32>
  %e = "temporal.reshape"(%r) : (tensor<?x2x3xf32>) -> tensor<2x?x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
%y = "temporal.tensor"() {sym_name = "y", domain = ["t"], element = tensor<2x3xf32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %a = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<2x3xf32>
  %m = "temporal.constant"() {value = dense<1.0> : tensor<2x3x2xf32>} : () -> tensor<2x3x2xf32>
  %r = "temporal.read_range"(%x) {caps = [], lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>]} : (!temporal.rtensor) -> tensor<?x2x3xf32>
  // CHECK: errors.mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: 'temporal.expand': tensor<2x3xf32> does not broadcast to tensor<?x2x3xf32> (a dynamic dimension stays itself; size 1 stretches to a static size)
  %e = "temporal.expand"(%a) : (tensor<2x3xf32>) -> tensor<?x2x3xf32>
  "gpu.yield"(%a) : (tensor<2x3xf32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()
