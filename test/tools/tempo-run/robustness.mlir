// Regressions found by tempo-fuzz (tools/src/bin/tempo-fuzz.rs): the same
// results compiled and interpreted, quiet exits on closed pipes, errors
// instead of crashes for huge bounds, deep nesting and bad text.
// RUN: rm -rf %t && mkdir -p %t
//
// Inputs marked as outputs (compiled printed zeros, and zeros for the
// outputs computed from them).
// RUN: tempo-run %S/Inputs/output-of-input.mlir --bound T=3 --seed 1 | FileCheck %s --check-prefix=IN-OUT
// RUN: tempo-run %S/Inputs/output-of-input.mlir --bound T=3 --seed 1 --interpret | FileCheck %s --check-prefix=IN-OUT
// IN-OUT: x: float32[3, 2] = {{\[\[}}-0.3621168, 0.9801569], [0.63295364, -0.29478836], [-0.32039285, 0.08119345]]
// IN-OUT: c: int64[] = -10
//
// Saturating float-to-integer casts (fptosi was poison out of range).
// RUN: tempo-run %S/Inputs/saturating-cast.mlir --bound T=1 | FileCheck %s --check-prefix=CAST
// RUN: tempo-run %S/Inputs/saturating-cast.mlir --bound T=1 --interpret | FileCheck %s --check-prefix=CAST
// CAST: x: int32[1, 6] = {{\[\[}}2147483647, -2147483648, 0, 2147483647, -2, 2147483520]]
// CAST: y: int64[1, 6] = {{\[\[}}9223372036854775807, -9223372036854775808, 0, -9223372036854775808, 9223372036854774784, -9223372036854775808]]
//
// NaN and infinities in JSON are tokens Python's json module reads.
// RUN: tempo-run %S/Inputs/infinity.mlir --bound T=2 --format json | FileCheck %s --check-prefix=JSON
// JSON: {"name":"x","dtype":"float32","shape":[2],"values":[Infinity,Infinity]}
//
// An empty program: nothing to compute, both ways.
// RUN: tempo-run %S/Inputs/empty.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: tempo-run %S/Inputs/empty.mlir --interpret 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: note: the program marks no tensor with temporal.output
//
// A closed pipe ends the tools quietly with status 0 (lit runs pipelines
// with pipefail, so a failing tempo-run fails the test).
// RUN: tempo-run %examples/counter.mlir --bound T=300000 | head -c 12 | FileCheck %s --check-prefix=PIPE
// RUN: tempo-opt %examples/stacked_rnn.mlir --temporal-to-llvm | head -c 12 | FileCheck %s --check-prefix=PIPE-OPT
// PIPE: x: int64[30
// PIPE-OPT: {{.+}}
//
// Huge bounds: the tensor that does not fit is named, compiled and
// interpreted (the compiled run used to be killed, the interpreter to abort).
// RUN: not tempo-run %examples/counter.mlir --bound T=2147483648000 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not tempo-run %examples/counter.mlir --bound T=2147483648000 --interpret 2>&1 | FileCheck %s --check-prefix=HUGE-INTERP
// HUGE: error: this run needs 17179869184000 bytes (15.6 TiB), but only {{[0-9]+}} bytes are available; the largest part is output 'x' (int64[2147483648000])
// HUGE-INTERP: counter.mlir:4:8: error: the interpreter's store of every point of 'x' needs {{[0-9]+}} bytes
//
// A read reaching 2^31 steps back: a full store, not a ring of 2^31 slots.
// RUN: tempo-run %S/Inputs/far-read.mlir --bound T=3 --stats 2>&1 | FileCheck %s --check-prefix=FAR
// FAR: s: full (24 bytes)
// FAR: y: int64[3] = [7, 7, 7]
//
// Deep nesting and endless affine chains: located errors, no stack overflow.
// RUN: %python -c "print('module attributes {a = ' + '[' * 5000 + ']' * 5000 + '} {}')" > %t/deep.mlir
// RUN: not tempo-opt %t/deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: deep.mlir:1:{{[0-9]+}}: error: the input is nested more than 256 levels deep
// RUN: %python -c "print(open('%examples/counter.mlir').read().replace('(t - 1)', '(t' + ' + t mod 7' * 5000 + ')'))" > %t/chain.mlir
// RUN: not tempo-run %t/chain.mlir --bound T=3 2>&1 | FileCheck %s --check-prefix=CHAIN
// CHAIN: chain.mlir:10:{{[0-9]+}}: error: this affine literal is {{[0-9]+}} characters long
//
// Text that is not UTF-8, and arguments that are not.
// RUN: printf 'module {\n  \377\n}\n' > %t/latin1.mlir
// RUN: not tempo-opt %t/latin1.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// RUN: not tempo-run %t/latin1.mlir 2>&1 | FileCheck %s --check-prefix=UTF8
// UTF8: latin1.mlir:2:3: error: the input is not UTF-8 text
