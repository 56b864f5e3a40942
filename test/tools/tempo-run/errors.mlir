// Bad runs get a clear error and a non-zero exit: bounds, inputs, .npy
// files, and points that are read out of bounds or never defined.
// RUN: rm -rf %t && mkdir -p %t
// RUN: not tempo-run %examples/counter.mlir 2>&1 | FileCheck %s --check-prefix=NO-BOUND
// RUN: not tempo-run %examples/counter.mlir --bound T=-3 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not tempo-run %examples/counter.mlir --bound T=ten 2>&1 | FileCheck %s --check-prefix=NOT-INT
// RUN: not tempo-run %examples/counter.mlir --bound T=3 --bound B=2 2>&1 | FileCheck %s --check-prefix=UNKNOWN-BOUND
// RUN: not tempo-run %examples/counter.mlir --bound T 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not tempo-run %examples/rnn.mlir --bound T=3 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// RUN: echo garbage > %t/bad.npy
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/bad.npy 2>&1 | FileCheck %s --check-prefix=BAD-NPY
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/none.npy 2>&1 | FileCheck %s --check-prefix=MISSING-NPY
// A header shorter than the 12 bytes read first, and data shorter than the header says: errors, not panics.
// RUN: %python -c "open('%t/short-header.npy', 'wb').write(b'\x93NUMPY\x01\x00\x00\x00' + bytes(20))"
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/short-header.npy 2>&1 | FileCheck %s --check-prefix=SHORT-HEADER --implicit-check-not=panic
// RUN: %python -c "h = str(dict(descr='<f4', fortran_order=False, shape=(3, 3))).encode() + b'\n'; open('%t/short-data.npy', 'wb').write(b'\x93NUMPY\x01\x00' + bytes([len(h), 0]) + h + bytes(7))"
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/short-data.npy 2>&1 | FileCheck %s --check-prefix=SHORT-DATA --implicit-check-not=panic
// RUN: tempo-run %examples/running_sum.mlir --bound T=4 --seed 1 --output-dir %t/four
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/four/s.npy 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: tempo-run %examples/counter.mlir --bound T=3 --output-dir %t/ints
// RUN: not tempo-run %examples/running_sum.mlir --bound T=3 --input x=%t/ints/x.npy 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not tempo-run %examples/counter.mlir --bound T=3 --input y=%t/ints/x.npy 2>&1 | FileCheck %s --check-prefix=NOT-INPUT
// RUN: not tempo-run %s --bound T=3 2>&1 | FileCheck %s --check-prefix=OUT-OF-BOUNDS
// RUN: not tempo-run %S/Inputs/undefined-point.mlir --bound T=5 2>&1 | FileCheck %s --check-prefix=UNDEFINED
// RUN: tempo-run %S/Inputs/undefined-point.mlir --bound T=3 | FileCheck %s --check-prefix=DEFINED
// RUN: not tempo-run %S/Inputs/zero-cycle.mlir --bound T=3 2>&1 | FileCheck %s --check-prefix=CYCLE
// RUN: not tempo-run %s.missing --bound T=3 2>&1 | FileCheck %s --check-prefix=NO-FILE

// NO-BOUND: error: missing bound T (give it with --bound T=N)
// NEGATIVE: error: bound T = -3 must be >= 0
// NOT-INT: error: bound T: 'ten' is not an integer
// UNKNOWN-BOUND: error: unknown bound 'B' (the program's bounds: T)
// SYNTAX: error: --bound expects NAME=VALUE, got 'T'
// NO-INPUT: error: missing input 'W' (float32[4, 4]): give it with --input W=FILE.npy or pass --seed N for random values
// BAD-NPY: error: input 'x': '{{.*}}bad.npy' is not a valid .npy file
// MISSING-NPY: error: input 'x': cannot read '{{.*}}none.npy'
// SHORT-HEADER: error: input 'x': '{{.*}}short-header.npy' is not a valid .npy file: the header does not end with a newline
// SHORT-DATA: error: input 'x': '{{.*}}short-data.npy' is not a valid .npy file: the shape [3, 3] of '<f4' needs 36 data bytes, but the file holds 7
// SHAPE: error: input 'x' must be float32[3, 3], got float32[4, 3]
// DTYPE: error: input 'x' must be float32[3, 3], got int64[3]
// NOT-INPUT: error: 'y' is not an input of the program (inputs: none)
// OUT-OF-BOUNDS: error: read x[t - 1] at x[t=0] is out of bounds: t = -1 is outside 0..3 (T = 3)
// UNDEFINED: error: point y[t=3] is needed but no branch of 'y' defines it (bounds: T=5)
// DEFINED: y: float32[3] = [1.0, 1.0, 1.0]
// CYCLE: zero-cycle.mlir:6:8: error: zero-distance cycle: y -> y
// NO-FILE: error: cannot read '{{.*}}errors.mlir.missing'

// Every branch reads x[t-1], but no branch excludes t = 0.
"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.tensor"() {sym_name = "x", domain = ["t"], element = tensor<f32>} : () -> !temporal.rtensor
"temporal.define"(%x) ({
  %p = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<f32>
  "gpu.yield"(%p) : (tensor<f32>) -> ()
}) {when = affine_set<(t)[T] : (0 == 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%x) : (!temporal.rtensor) -> ()
// RUN: not tempo-run %examples/counter.mlir --bound T=99999999999999999 2>&1 | FileCheck %s --check-prefix=TOO-BIG
// TOO-BIG: error: this run needs 799999999999999992 bytes ({{.*}}), but only {{[0-9]+}} bytes are available; the largest part is output 'x' (int64[99999999999999999])
// The interpreter reports the same errors.
// RUN: not tempo-run %s --bound T=3 --interpret 2>&1 | FileCheck %s --check-prefix=OUT-OF-BOUNDS
// RUN: not tempo-run %S/Inputs/undefined-point.mlir --bound T=5 --interpret 2>&1 | FileCheck %s --check-prefix=INTERP-UNDEFINED
// INTERP-UNDEFINED: error: point y[t=3] is needed but no branch of 'y' defines it

// An external call needs a registered callback (tempo-run registers none).
// RUN: not tempo-run %S/Inputs/external.mlir --bound T=3 2>&1 | FileCheck %s --check-prefix=EXTERNAL
// EXTERNAL: external.mlir:6:8: error: external function 'env_step' is not registered
//
// The code-generation options: an object file that cannot be written, and
// thread counts out of range, are errors with a non-zero exit.
// RUN: not tempo-run %examples/counter.mlir --bound T=3 --dump-object %t-missing/dir/x.o 2>&1 | FileCheck %s --check-prefix=DUMP
// DUMP: error: --dump-object: cannot write '{{.*}}x.o'
// RUN: not tempo-run %examples/counter.mlir --bound T=3 --threads 5000 2>&1 | FileCheck %s --check-prefix=THREADS
// THREADS: error: invalid value '5000' for '--threads <THREADS>': 5000 is not in 0..=1024
// RUN: tempo-run %examples/counter.mlir --bound T=3 --threads 2 --dump-object %t.o 2>&1 | FileCheck %s --check-prefix=DUMPED
// DUMPED: object code written to {{.*}}.o (tempo_main at 0x
// DUMPED: x: int64[3] = [0, 1, 2]

// The optimization options: an unknown pass to leave out, a level out of
// range, and tempo-opt's --disable-pass without a level are errors.
// RUN: not tempo-run %examples/counter.mlir --bound T=3 --disable-pass nope 2>&1 | FileCheck %s --check-prefix=DISABLE
// DISABLE: error: 'nope' is not a temporal optimization pass (one of temporal-dce, temporal-dedup, temporal-lift-recurrences, temporal-drop-pinned-dims, temporal-split-recurrences, temporal-split-products, temporal-fuse-attention, temporal-vectorize, temporal-tile-ranges, temporal-pack-products, temporal-simplify, temporal-share-values, temporal-fuse-collectives)
// RUN: not tempo-run %examples/counter.mlir --bound T=3 -O 7 2>&1 | FileCheck %s --check-prefix=LEVEL
// LEVEL: error: invalid value '7' for '-O <OPT_LEVEL>': 7 is not in 0..=3
// RUN: not tempo-opt %examples/counter.mlir --disable-pass=temporal-dce 2>&1 | FileCheck %s --check-prefix=OPT-DISABLE
// OPT-DISABLE: tempo-opt: error: --disable-pass leaves a pass out of an -O level; give one (-O1, -O2 or -O3)
// Every level runs the program to the same result.
// RUN: tempo-run %examples/counter.mlir --bound T=3 -O 0 | FileCheck %s --check-prefix=LEVELS
// RUN: tempo-run %examples/counter.mlir --bound T=3 -O 3 --disable-pass temporal-dce | FileCheck %s --check-prefix=LEVELS
// LEVELS: x: int64[3] = [0, 1, 2]
