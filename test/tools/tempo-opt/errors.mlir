// Bad pipelines, bad input and bad options: a diagnostic and a non-zero exit.
// RUN: not tempo-opt %s -p 'no-such-pass' 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not tempo-opt %s -p 'canonicalize,,cse' 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not tempo-opt %s -p 'func.func(cse' 2>&1 | FileCheck %s --check-prefix=UNCLOSED
// RUN: not tempo-opt %s -p 'temporal-verify{bogus=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not tempo-opt %s -p 'canonicalize{bogus=1}' 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// RUN: not tempo-opt %s -p 'func.func(temporal-verify)' 2>&1 | FileCheck %s --check-prefix=ANCHOR
// RUN: not tempo-opt %s.missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tempo-opt %s --frobnicate-flag-x 2>&1 | FileCheck %s --check-prefix=UNKNOWN-FLAG
// RUN: not tempo-opt %S/../../dialects/temporal/Inputs/missing-attribute.mlir 2>&1 | FileCheck %s --check-prefix=VERIFY

// UNKNOWN: tempo-opt: error: unknown pass or pipeline 'no-such-pass' (see --list-passes)
// MALFORMED: tempo-opt: error: malformed pipeline at column 14: expected a pass or op name
// UNCLOSED: tempo-opt: error: malformed pipeline {{.*}} missing ')'
// OPTION: tempo-opt: error: unknown option 'bogus' for pass 'temporal-verify' (known: none)
// UPSTREAM-OPTION: tempo-opt: error: invalid pass 'canonicalize{bogus=1}'
// ANCHOR: tempo-opt: error: pass 'temporal-verify' runs on 'builtin.module' and cannot be nested under 'func.func'
// MISSING: tempo-opt: error: cannot read '{{.*}}errors.mlir.missing'
// UNKNOWN-FLAG: tempo-opt: error: unknown pass or pipeline 'frobnicate-flag-x'
// VERIFY: missing-attribute.mlir:4:8: error: 'temporal.read' op attribute "index" is expected but not provided

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
