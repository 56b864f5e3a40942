// Products that meet in one elementwise chain: the gate shapes of real
// models (`x A * x B` as in SwiGLU, `x Wx + h Wh` as in every LSTM, GRU
// and RNN cell), a chain whose epilogue uses another product (silu of one
// product plus tanh of another), and products feeding products. Only one
// product of a chain carries it as its kernel's epilogue; every other
// product of the chain is computed first, into a buffer of its own, which
// the epilogue reads. (Before, each product claimed the chain, and the
// epilogue read a product that was never computed: generated code that
// did not parse, at every -O level but -O0.) Levels 0 to 2, fused or not,
// agree bit for bit with the interpreter; -O3 within float rounding (its
// inexact rules reassociate the product of the time-parallel x[t] A,
// split out of the recurrence, with the weight that follows it).
// RUN: tempo-opt %s "--lower-temporal-to-loops=vector-bits=512 vector-registers=32" | FileCheck %s
// RUN: tempo-run %s --bound T=4 --seed 3 --interpret > %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 3 -O 0 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 3 -O 1 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 3 -O 2 | diff - %t.interpreted
// RUN: tempo-run %s --bound T=4 --seed 3 --interpret --format json > %t.json
// RUN: tempo-run %s --bound T=4 --seed 3 -O 3 --format json > %t.o3.json
// RUN: %python %S/../../passes/temporal-autodiff/Inputs/close.py %t.json %t.o3.json 1e-5
// RUN: tempo-run %s --bound T=4 --seed 3 --disable-pass fusion | diff - %t.interpreted

// gate = (x A) * (x B): x B into its own buffer, then x A's kernel
// multiplies each sum by it before the store into the output.
// CHECK-LABEL: func.func @tempo_main
// CHECK: %[[OUT:.*]] = memref.subview %arg6
// CHECK: %[[A:.*]] = memref.cast %arg1
// CHECK: %[[B:.*]] = memref.cast %arg2
// CHECK: memref.load %[[B]]
// CHECK: memref.store %{{.*}}, %[[XB:.*]][%{{.*}}]
// CHECK: %[[SUM:.*]] = scf.for
// CHECK:   memref.load %[[A]]
// CHECK: %[[OTHER:.*]] = memref.load %[[XB]]
// CHECK: %[[P:.*]] = arith.mulf %[[SUM]], %[[OTHER]] : f32
// CHECK: memref.store %[[P]], %[[OUT]]
module {
  "temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
  %A = "temporal.input"() {sym_name = "A", domain = [], element = tensor<4x6xf32>} : () -> !temporal.rtensor
  %B = "temporal.input"() {sym_name = "B", domain = [], element = tensor<4x6xf32>} : () -> !temporal.rtensor
  %C = "temporal.input"() {sym_name = "C", domain = [], element = tensor<6x5xf32>} : () -> !temporal.rtensor
  %Wh = "temporal.input"() {sym_name = "Wh", domain = [], element = tensor<6x6xf32>} : () -> !temporal.rtensor
  %x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<4xf32>} : () -> !temporal.rtensor
  %gate = "temporal.tensor"() {sym_name = "gate", domain = ["t"], element = tensor<6xf32>} : () -> !temporal.rtensor
  %mixed = "temporal.tensor"() {sym_name = "mixed", domain = ["t"], element = tensor<6xf32>} : () -> !temporal.rtensor
  %chained = "temporal.tensor"() {sym_name = "chained", domain = ["t"], element = tensor<5xf32>} : () -> !temporal.rtensor
  %h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<6xf32>} : () -> !temporal.rtensor
  "temporal.define"(%gate) ({
    %a = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %b = "temporal.read"(%B) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xa = "temporal.matmul"(%xt, %a) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %xb = "temporal.matmul"(%xt, %b) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %p = "temporal.mul"(%xa, %xb) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    "gpu.yield"(%p) : (tensor<6xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%mixed) ({
    %a = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %b = "temporal.read"(%B) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xa = "temporal.matmul"(%xt, %a) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %xb = "temporal.matmul"(%xt, %b) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %s = "temporal.sigmoid"(%xa) : (tensor<6xf32>) -> tensor<6xf32>
    %g = "temporal.mul"(%xa, %s) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %t2 = "temporal.tanh"(%xb) : (tensor<6xf32>) -> tensor<6xf32>
    %p = "temporal.add"(%g, %t2) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    "gpu.yield"(%p) : (tensor<6xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%chained) ({
    %a = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %c = "temporal.read"(%C) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<6x5xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xa = "temporal.matmul"(%xt, %a) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %r = "temporal.tanh"(%xa) : (tensor<6xf32>) -> tensor<6xf32>
    %rc = "temporal.matmul"(%r, %c) : (tensor<6xf32>, tensor<6x5xf32>) -> tensor<5xf32>
    %xac = "temporal.matmul"(%xa, %c) : (tensor<6xf32>, tensor<6x5xf32>) -> tensor<5xf32>
    %p = "temporal.sub"(%rc, %xac) : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
    "gpu.yield"(%p) : (tensor<5xf32>) -> ()
  }) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %a = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %xa = "temporal.matmul"(%xt, %a) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %h0 = "temporal.tanh"(%xa) : (tensor<6xf32>) -> tensor<6xf32>
    "gpu.yield"(%h0) : (tensor<6xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
  "temporal.define"(%h) ({
    %a = "temporal.read"(%A) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<4x6xf32>
    %wh = "temporal.read"(%Wh) {index = affine_map<(t)[T] -> ()>} : (!temporal.rtensor) -> tensor<6x6xf32>
    %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<4xf32>
    %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<6xf32>
    %xa = "temporal.matmul"(%xt, %a) : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
    %hw = "temporal.matmul"(%prev, %wh) : (tensor<6xf32>, tensor<6x6xf32>) -> tensor<6xf32>
    %pre = "temporal.add"(%xa, %hw) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    %next = "temporal.tanh"(%pre) : (tensor<6xf32>) -> tensor<6xf32>
    "gpu.yield"(%next) : (tensor<6xf32>) -> ()
  }) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
  "temporal.output"(%gate) : (!temporal.rtensor) -> ()
  "temporal.output"(%mixed) : (!temporal.rtensor) -> ()
  "temporal.output"(%chained) : (!temporal.rtensor) -> ()
  "temporal.output"(%h) : (!temporal.rtensor) -> ()
}
