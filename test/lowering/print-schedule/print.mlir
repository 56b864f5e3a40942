// temporal-print-schedule prints the loops (outer to inner, with their
// direction), the tensors placed in each nest in body order and the store
// each one gets. It follows @tempo_schedule when the module has one.
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-schedule --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s
// RUN: tempo-opt %S/../schedule/Inputs/layers.mlir --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=LAYERS
// RUN: tempo-opt %examples/causal_attention.mlir --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=CAUSAL
// RUN: tempo-opt %examples/stacked_rnn.mlir --temporal-print-schedule 2>&1 >/dev/null | FileCheck %s --check-prefix=STACKED

// CHECK:      schedule:
// CHECK-NEXT:   for t = 0 up to T-1:
// CHECK-NEXT:     x[t]  store: point
// CHECK-NEXT:     s[t]  store: ring<2>
// CHECK-NEXT:   total[]  store: output

// LAYERS:      schedule:
// LAYERS-NEXT:   for t = 0 up to T-1:
// LAYERS-NEXT:     for l = 0 up to L-1:
// LAYERS-NEXT:       h[t, l]  store: ring<2>
// LAYERS-NEXT:     y[t]  store: output

// CAUSAL:      for t = 0 up to T-1:
// CAUSAL-NEXT:   k[t]  store: blocks<256>
// CAUSAL-NEXT:   v[t]  store: blocks<256>
// CAUSAL-NEXT:   o[t]  store: output

// Layers inside time with the output after the layer loop: h keeps the
// layers of two steps, a layer's input one point.
// STACKED:      schedule:
// STACKED-NEXT:   for t = 0 up to T-1:
// STACKED-NEXT:     for l = 0 up to L-1:
// STACKED-NEXT:       in[t, l]  store: point
// STACKED-NEXT:       h[t, l]  store: ring<2>
// STACKED-NEXT:     y[t]  store: output
