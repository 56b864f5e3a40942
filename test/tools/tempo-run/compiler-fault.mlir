// tempo-run reports a compiler fault at the op of the user's file it was
// lowering (here examples/rnn.mlir, line 14: the tanh of the first step),
// exits non-zero, and writes the generated module to the --dump-on-error
// directory instead of printing it. The fault is injected through
// TEMPO_TEST_FAULT (the lowering's test-fault option).
// RUN: rm -rf %t && mkdir %t
// RUN: env TEMPO_TEST_FAULT=verify:temporal.tanh not tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --dump-on-error %t 2> %t/err
// RUN: FileCheck %s < %t/err
// RUN: not grep -q "func.func" %t/err
// RUN: grep -q 'sym_name = "tempo_main"' %t/tempo-fault-*.mlir
// CHECK: rnn.mlir:14:11: error: compiler fault while lowering 'temporal.tanh': the generated code is not valid MLIR ('arith.constant' op failed to verify that all of {value, result} have same type; the code is in {{.*}}tempo-fault-{{[0-9]+}}-0.mlir); please report it with the input program
// CHECK: error: compilation failed
