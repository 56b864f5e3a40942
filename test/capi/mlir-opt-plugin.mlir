// Stock mlir-opt runs the project's passes and pipelines from
// libTempoCAPI.so as a pass plug-in (--load-pass-plugin; the library's
// mlirGetPassPluginInfo registers them by name), on the temporal and store
// dialects loaded from their IRDL text (--irdl-file): no binary of ours runs
// the passes. The results are tempo-opt's.
// RUN: tempo-opt --emit-irdl > %t.irdl
// RUN: mlir-opt --irdl-file=%t.irdl --load-pass-plugin=%tempo_capi --pass-pipeline='builtin.module(temporal-to-llvm)' %s | FileCheck %s --check-prefix=LLVM
// RUN: mlir-opt --irdl-file=%t.irdl --load-pass-plugin=%tempo_capi --pass-pipeline='builtin.module(temporal-to-llvm)' %s > %t.plugin.mlir
// RUN: tempo-opt %s -p 'builtin.module(temporal-to-llvm)' > %t.tempo.mlir
// RUN: diff %t.plugin.mlir %t.tempo.mlir
// Passes one by one, with options as tempo-opt parses them.
// RUN: mlir-opt --irdl-file=%t.irdl --load-pass-plugin=%tempo_capi --pass-pipeline='builtin.module(temporal-verify, temporal-optimize, temporal-schedule, lower-temporal-to-loops{fuse=false}, canonicalize)' %s | FileCheck %s --check-prefix=LOOPS
// A bad option and a bad program are refused with messages, not a crash.
// RUN: not mlir-opt --irdl-file=%t.irdl --load-pass-plugin=%tempo_capi --pass-pipeline='builtin.module(lower-temporal-to-loops{fuse=maybe})' %s 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not mlir-opt --irdl-file=%t.irdl --load-pass-plugin=%tempo_capi --pass-pipeline='builtin.module(temporal-verify)' %S/Inputs/bad-read.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// The plug-in lists its passes with mlir-opt's own.
// RUN: mlir-opt --load-pass-plugin=%tempo_capi --help | FileCheck %s --check-prefix=HELP

// LLVM: llvm.func @tempo_main(
// LLVM-NOT: temporal.
// LLVM-NOT: store.
// LOOPS: "store.alloc"
// LOOPS: affine.for
// LOOPS: "store.free"
// OPTION: option fuse of pass 'lower-temporal-to-loops' takes true or false, got 'maybe'
// BAD: bad-read.mlir:{{[0-9]+}}:{{[0-9]+}}: error:
// HELP-DAG: --lower-temporal-to-loops
// HELP-DAG: --temporal-to-llvm

module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %s = "temporal.tensor"() {sym_name = "s", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  "temporal.define"(%h) ({
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    "gpu.yield"(%xt) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %sum = "temporal.add"(%prev, %xt) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %next = "temporal.tanh"(%sum) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%next) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%s) ({
    %ht = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %e = "temporal.exp"(%ht) : (tensor<4xf32>) -> tensor<4xf32>
    "gpu.yield"(%e) : (tensor<4xf32>) -> ()
  }) {when = affine_set<(t)[T] : ()>} : (!temporal.rtensor) -> ()
  "temporal.output"(%s) : (!temporal.rtensor) -> ()
}
