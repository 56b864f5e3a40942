// tempo-run --timings reports compile time by phase (their names and
// order; the numbers vary); --pass-timings adds MLIR's execution time
// report of each pipeline, every temporal and upstream pass named (the
// lowering follows the schedule the runtime checked and wrote into the
// module: no temporal-schedule pass of its own; the temporal optimizations
// run on one program model, reported in the same form); tempo-opt
// --mlir-timing prints MLIR's report for its pipeline.
// RUN: env TEMPO_CACHE=0 tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --format none --timings 2>&1 | FileCheck %s
// RUN: tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --format none --pass-timings 2>&1 | FileCheck %s --check-prefix=PASSES
// RUN: tempo-opt %examples/rnn.mlir -O2 --mlir-timing 2>&1 >/dev/null | FileCheck %s --check-prefix=OPT
// --verify-each verifies the IR after every pass of the compilation
// (without it, once after each pipeline): slower, the same results.
// RUN: env TEMPO_CACHE=0 tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --format json --verify-each > %t.each
// RUN: env TEMPO_CACHE=0 tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --format json > %t.once
// RUN: diff %t.each %t.once

// CHECK: tempo-run: compile {{[0-9.]+}} ms, execute {{[0-9.]+}} ms
// CHECK-NEXT: tempo-run: compile phases: gradients {{[0-9.]+}} ms, verification and schedule {{[0-9.]+}} ms, temporal optimizations {{[0-9.]+}} ms, lowering (MLIR passes) {{[0-9.]+}} ms, LLVM IR translation {{[0-9.]+}} ms, LLVM optimization and code generation {{[0-9.]+}} ms, linking {{[0-9.]+}} ms

// PASSES: Execution time report (temporal passes on one program model)
// PASSES: temporal-dedup
// PASSES: Execution time report
// PASSES-NOT: temporal-schedule
// PASSES: lower-temporal-to-loops
// PASSES: lower-store-to-memref
// PASSES: outline-loop-nests
// PASSES: Total

// OPT: Execution time report
// OPT: temporal-lift-recurrences
// OPT: Total
