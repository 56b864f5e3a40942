// A compiler fault (code the lowering built that does not verify, an op
// that fails to build, or a panic while lowering) is reported at the user's
// op being lowered, with this file's name, line and column, and says it is
// a compiler fault. The generated module stays out of the message: it is
// written to a file the message names (in the --dump-on-error directory).
// The faults are injected with the pass's test-fault option.
// RUN: rm -rf %t && mkdir %t
// RUN: not tempo-opt %s --dump-on-error %t --lower-temporal-to-loops=test-fault=verify:temporal.tanh 2> %t/verify.err
// RUN: FileCheck %s --check-prefix=VERIFY < %t/verify.err
// RUN: not grep -q "func.func" %t/verify.err
// The module written holds the function built, up to and with the bad op.
// RUN: grep -q '"func.func"' %t/tempo-fault-*.mlir
// RUN: grep -q '"arith.constant"() <{value = 1 : i32}> : () -> i64' %t/tempo-fault-*.mlir
// RUN: not tempo-opt %s --lower-temporal-to-loops=test-fault=panic:temporal.add 2>&1 | FileCheck %s --check-prefix=PANIC
// RUN: not tempo-opt %s --lower-temporal-to-loops=test-fault=build:temporal.matmul 2>&1 | FileCheck %s --check-prefix=BUILD
// RUN: not tempo-opt %s --lower-temporal-to-loops=test-fault=oops 2>&1 | FileCheck %s --check-prefix=OPTION

// OPTION: compiler-faults.mlir:[[# @LINE + 1]]:1: error: test-fault expects KIND:OP with KIND verify, build or panic, got 'oops'
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %W = "temporal.input"() {sym_name = "W", domain = [], element = tensor<4x4xf32>} : () -> !temporal.rtensor
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%h) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    "gpu.yield"(%xt) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %w = "temporal.read"(%W) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x4xf32>
    %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    // BUILD: compiler-faults.mlir:[[# @LINE + 1]]:11: error: compiler fault while lowering 'temporal.matmul': test fault injected while building the code of 'temporal.matmul'; please report it with the input program
    %wh = "temporal.matmul"(%w, %prev) : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4xf32>
    // PANIC: compiler-faults.mlir:[[# @LINE + 1]]:12: error: compiler fault in pass 'lower-temporal-to-loops' while lowering 'temporal.add': test fault injected while lowering 'temporal.add'; please report it with the input program
    %pre = "temporal.add"(%wh, %xt) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    // VERIFY: compiler-faults.mlir:[[# @LINE + 1]]:13: error: compiler fault while lowering 'temporal.tanh': the generated code is not valid MLIR ('arith.constant' op failed to verify that all of {value, result} have same type; the code is in {{.*}}tempo-fault-{{[0-9]+}}-0.mlir); please report it with the input program
    %next = "temporal.tanh"(%pre) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%next) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%h) : (!temporal.rtensor) -> ()
}
