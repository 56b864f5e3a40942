// Collectives (temporal.all_reduce) are reached by every process in the
// same order, so none may sit where the points computed depend on data: in
// a tensor over a dimension a stop ends, in a tensor whose branch
// conditions use such a dimension's bound, or in one whose points are
// needed through a read through data. Each is refused at the op, as are
// bad operands, reductions and types.
// RUN: not tempo-opt --split-input-file %s --temporal-verify 2>&1 | FileCheck %s

// A collective in the tensor a stop ends (the loop over t may run a
// different number of steps on each process).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<f32>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: a collective in 'done', which is over 't': 'done' stops 't' where the data decides, so processes could compute different numbers of its points (every process must reach the same collectives in the same order)
  %s = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<f32>) -> tensor<f32>
  %z = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %d = "temporal.cmp"(%s, %z) {predicate = "gt"} : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "gpu.yield"(%d) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
"temporal.output"(%done) : (!temporal.rtensor) -> ()

// -----

// A collective in a branch taken where the stopped dimension's bound says
// (which branch defines i's points depends on where t stopped).
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
"temporal.dim"() {sym_name = "i", bound = "I"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
%done = "temporal.tensor"() {sym_name = "done", domain = ["t"], element = tensor<i1>} : () -> !temporal.rtensor
"temporal.define"(%done) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T, I] -> (t)>} : (!temporal.rtensor) -> tensor<i1>
  "gpu.yield"(%v) : (tensor<i1>) -> ()
}) {when = affine_set<(t)[T, I] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.stop"(%done) {dim = "t"} : (!temporal.rtensor) -> ()
%y = "temporal.tensor"() {sym_name = "y", domain = ["i"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: a collective in 'y', whose branch conditions use the bound T of 't', which 'done' stops where the data decides: which branch defines a point depends on the data (every process must reach the same collectives in the same order)
  %s = "temporal.all_reduce"(%c) {reduction = "max"} : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[T, I] : (T - 1 - i >= 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%y) ({
  %c = "temporal.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  "gpu.yield"(%c) : (tensor<f32>) -> ()
}) {when = affine_set<(i)[T, I] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%y) : (!temporal.rtensor) -> ()

// -----

// A collective whose points are needed through a read through data (which
// of w's points are computed depends on the coordinates in `k`).
"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%k = "temporal.input"() {sym_name = "k", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%w = "temporal.tensor"() {sym_name = "w", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%w) ({
  %p = "temporal.position"() {dim = "n"} : () -> tensor<f32>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: a collective in 'w', whose points are needed through a read through data (temporal.read_at in 'g'): which points are computed depends on the data (every process must reach the same collectives in the same order)
  %s = "temporal.all_reduce"(%p) {reduction = "sum"} : (tensor<f32>) -> tensor<f32>
  "gpu.yield"(%s) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
%g = "temporal.tensor"() {sym_name = "g", domain = ["n"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%g) ({
  %i = "temporal.read"(%k) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %v = "temporal.read_at"(%w, %i) {index = affine_map<(n, c)[N] -> (c)>} : (!temporal.rtensor, tensor<i64>) -> tensor<f32>
  "gpu.yield"(%v) : (tensor<f32>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: temporal.all_reduce: unknown reduction 'prod' ("sum", "mean", "max" or "min")
  %s = "temporal.all_reduce"(%v) {reduction = "prod"} : (tensor<3xi64>) -> tensor<3xi64>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: temporal.all_reduce "mean" needs floats, got tensor<3xi64>
  %m = "temporal.all_reduce"(%v) {reduction = "mean"} : (tensor<3xi64>) -> tensor<3xi64>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: temporal.all_reduce of tensor<3xi64> gives tensor<3xi64>, not tensor<3xi32>
  %w = "temporal.all_reduce"(%v) {reduction = "sum"} : (tensor<3xi64>) -> tensor<3xi32>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  %c = "temporal.cast"(%v) : (tensor<3xi64>) -> tensor<3xi1>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: temporal.all_reduce reduces numbers (f32, f64, i32, i64), not booleans (tensor<3xi1>): cast them first
  %b = "temporal.all_reduce"(%c) {reduction = "max"} : (tensor<3xi1>) -> tensor<3xi1>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  %r = "temporal.read_range"(%x) {lower = [affine_map<(t)[T] -> (0)>], upper = [affine_map<(t)[T] -> (t + 1)>], caps = [affine_map<(t)[T] -> ()>]} : (!temporal.rtensor) -> tensor<?x3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: temporal.all_reduce needs a value of static shape (every process reduces as many elements), got tensor<?x3xi64>
  %d = "temporal.all_reduce"(%r) {reduction = "sum"} : (tensor<?x3xi64>) -> tensor<?x3xi64>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.rank' gives a scalar number (tensor<i64>, tensor<f32>, ...), not tensor<3xi64>
  %k = "temporal.rank"() : () -> tensor<3xi64>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// Bad operands, reductions and types.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
%a = "temporal.tensor"() {sym_name = "a", domain = ["t"], element = tensor<3xi64>} : () -> !temporal.rtensor
"temporal.define"(%a) ({
  %v = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xi64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: 'temporal.world_size' gives a scalar number (tensor<i64>, tensor<f32>, ...), not tensor<i1>
  %n = "temporal.world_size"() : () -> tensor<i1>
  "gpu.yield"(%v) : (tensor<3xi64>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%a) : (!temporal.rtensor) -> ()

// -----

// The coordinates of a read through data may not come from a collective
// (it would run once more for them).
"temporal.dim"() {sym_name = "n", bound = "N"} : () -> ()
%k = "temporal.input"() {sym_name = "k", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
%g = "temporal.tensor"() {sym_name = "g", domain = ["n"], element = tensor<i64>} : () -> !temporal.rtensor
"temporal.define"(%g) ({
  %i = "temporal.read"(%k) {index = affine_map<(n)[N] -> (n)>} : (!temporal.rtensor) -> tensor<i64>
  %m = "temporal.all_reduce"(%i) {reduction = "min"} : (tensor<i64>) -> tensor<i64>
  // CHECK: collectives-errors.mlir:[[# @LINE + 1]]:8: error: the coordinates of a read through data come from 'temporal.all_reduce': they may not come from a read through data, an external call or a collective
  %v = "temporal.read_at"(%k, %m) {index = affine_map<(n, c)[N] -> (c)>} : (!temporal.rtensor, tensor<i64>) -> tensor<i64>
  "gpu.yield"(%v) : (tensor<i64>) -> ()
}) {when = affine_set<(n)[N] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%g) : (!temporal.rtensor) -> ()
