// temporal-schedule writes the schedule as affine.for nests over the
// temporal dimensions, bounded by the bounds (function arguments), each
// loop marked with its dimension and direction, the tensors' work placed
// as temporal.compute ops in body order.
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-schedule | FileCheck %s --check-prefix=SUM
// RUN: tempo-opt %examples/returns.mlir --temporal-schedule | FileCheck %s --check-prefix=BACK
// RUN: tempo-opt %S/Inputs/layers.mlir --temporal-schedule | FileCheck %s --check-prefix=LAYERS
// RUN: tempo-opt %examples/corpus/sweep_two_ways.mlir --temporal-schedule | FileCheck %s --check-prefix=SWEEP
// RUN: tempo-opt %examples/corpus/clamped_lookahead.mlir --temporal-schedule | FileCheck %s --check-prefix=CLAMP
// The program itself stays; running the pass twice replaces the schedule.
// RUN: tempo-opt %examples/cumulative_sum.mlir --temporal-schedule --temporal-schedule | FileCheck %s --check-prefix=TWICE

// x and s form one loop (s[t] reads s[t-1] and x[t]; x first); total reads
// s[T-1] after it.
// SUM: "temporal.define"
// SUM: func.func @tempo_schedule(%[[T:.*]]: index) {
// SUM-NEXT:    affine.for %[[t:.*]] = 0 to %[[T]] {
// SUM-NEXT:      "temporal.compute"(%[[t]]) {tensor = "x"} : (index) -> ()
// SUM-NEXT:      "temporal.compute"(%[[t]]) {tensor = "s"} : (index) -> ()
// SUM-NEXT:    } {tempo.dim = "t", tempo.direction = "forward"}
// SUM-NEXT:    "temporal.compute"() {tensor = "total"} : () -> ()
// SUM-NEXT:    return

// G[t] = r[t] + g * G[t+1] runs backward: the variable is T - 1 - i.
// BACK: func.func @tempo_schedule(%[[T:.*]]: index) {
// BACK-NEXT:    affine.for %[[I:.*]] = 0 to %[[T]] {
// BACK-NEXT:      %[[t:.*]] = affine.apply #{{.*}}(%[[I]])[%[[T]]]
// BACK-NEXT:      "temporal.compute"(%[[t]]) {tensor = "G"} : (index) -> ()
// BACK-NEXT:    } {tempo.dim = "t", tempo.direction = "backward"}

// Layers inside time: t outer, l inner, both forward; y (over t only)
// follows the l loop inside the same t loop.
// LAYERS: func.func @tempo_schedule(%[[T:.*]]: index, %[[L:.*]]: index) {
// LAYERS-NEXT:    affine.for %[[t:.*]] = 0 to %[[T]] {
// LAYERS-NEXT:      affine.for %[[l:.*]] = 0 to %[[L]] {
// LAYERS-NEXT:        "temporal.compute"(%[[t]], %[[l]]) {tensor = "h"} : (index, index) -> ()
// LAYERS-NEXT:      } {tempo.dim = "l", tempo.direction = "forward"}
// LAYERS-NEXT:      "temporal.compute"(%[[t]]) {tensor = "y"} : (index) -> ()
// LAYERS-NEXT:    } {tempo.dim = "t", tempo.direction = "forward"}

// One loop per direction: b backward outside, t forward inside.
// SWEEP:        affine.for %[[B:.*]] = 0 to
// SWEEP-NEXT:     %[[b:.*]] = affine.apply
// SWEEP-NEXT:     affine.for %[[t:.*]] = 0 to
// SWEEP-NEXT:       "temporal.compute"(%[[b]], %[[t]]) {tensor = "h"}
// SWEEP-NEXT:     } {tempo.dim = "t", tempo.direction = "forward"}
// SWEEP-NEXT:   } {tempo.dim = "b", tempo.direction = "backward"}

// z[t] reads z[min(t+1, T-1)] where t <= T-2: the branch condition makes it
// t + 1, so z runs backward (and y joins the loop).
// CLAMP:      "temporal.compute"(%{{.*}}) {tensor = "z"}
// CLAMP-NEXT: "temporal.compute"(%{{.*}}) {tensor = "y"}
// CLAMP-NEXT: } {tempo.dim = "t", tempo.direction = "backward"}

// TWICE-COUNT-1: func.func @tempo_schedule
