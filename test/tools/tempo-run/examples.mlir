// Every bundled example compiles and runs end to end.
// RUN: tempo-run %examples/counter.mlir --bound T=10 | FileCheck %s --check-prefix=COUNTER
// RUN: tempo-run %examples/fibonacci.mlir --bound T=12 | FileCheck %s --check-prefix=FIB
// RUN: tempo-run %examples/fibonacci.mlir --bound T=12 --format json | FileCheck %s --check-prefix=JSON
// RUN: tempo-run %examples/counter.mlir --bound T=0 | FileCheck %s --check-prefix=EMPTY
// RUN: tempo-run %examples/rnn.mlir --bound T=3 --seed 7 | FileCheck %s --check-prefix=RNN

// Inputs round-trip through .npy: write a running sum, feed it back as x.
// RUN: rm -rf %t && mkdir -p %t
// RUN: tempo-run %examples/running_sum.mlir --bound T=4 --seed 3 --output-dir %t/first
// RUN: tempo-run %examples/running_sum.mlir --bound T=4 --input x=%t/first/s.npy --output-dir %t/second | FileCheck %s --check-prefix=SUM
// RUN: tempo-run %examples/counter.mlir --bound T=4 --output-dir %t/counter
// RUN: tempo-run %examples/running_sum.mlir --bound T=4 --input x=%t/first/s.npy | FileCheck %s --check-prefix=SUM

// COUNTER: x: int64[10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
// FIB: y: int64[12] = [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89]
// JSON: {"name":"y","dtype":"int64","shape":[12],"values":[0,1,1,2,3,5,8,13,21,34,55,89]}
// EMPTY: x: int64[0] = []
// RNN: h: float32[3, 4] = {{\[\[}}
// SUM: s: float32[4, 3] = {{\[\[}}

// The reference interpreter gives the same results.
// RUN: tempo-run %examples/counter.mlir --bound T=10 --interpret | FileCheck %s --check-prefix=COUNTER
// RUN: tempo-run %examples/fibonacci.mlir --bound T=12 --interpret | FileCheck %s --check-prefix=FIB
// RUN: tempo-run %examples/rnn.mlir --bound T=3 --seed 7 > %t/rnn-compiled.txt
// RUN: tempo-run %examples/rnn.mlir --bound T=3 --seed 7 --interpret > %t/rnn-interpreted.txt
// RUN: diff %t/rnn-compiled.txt %t/rnn-interpreted.txt

// A backward recurrence and a two-dimensional program agree with the interpreter.
// RUN: tempo-run %examples/returns.mlir --bound T=7 --seed 4 > %t/returns-compiled.txt
// RUN: tempo-run %examples/returns.mlir --bound T=7 --seed 4 --interpret > %t/returns-interpreted.txt
// RUN: diff %t/returns-compiled.txt %t/returns-interpreted.txt
// RUN: tempo-run %examples/batched_max.mlir --bound B=3 --bound T=5 --seed 4 > %t/max-compiled.txt
// RUN: tempo-run %examples/batched_max.mlir --bound B=3 --bound T=5 --seed 4 --interpret > %t/max-interpreted.txt
// RUN: diff %t/max-compiled.txt %t/max-interpreted.txt
// RUN: FileCheck %s --check-prefix=MAX < %t/max-compiled.txt
// MAX: m: float32[3, 5] =
// MAX: last: float32[3] =

// Range reads: causal and windowed attention and a suffix sum agree with the interpreter.
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 5 > %t/causal-compiled.txt
// RUN: tempo-run %examples/causal_attention.mlir --bound T=6 --seed 5 --interpret > %t/causal-interpreted.txt
// RUN: diff %t/causal-compiled.txt %t/causal-interpreted.txt
// RUN: tempo-run %examples/windowed_attention.mlir --bound T=6 --seed 5 > %t/window-compiled.txt
// RUN: tempo-run %examples/windowed_attention.mlir --bound T=6 --seed 5 --interpret > %t/window-interpreted.txt
// RUN: diff %t/window-compiled.txt %t/window-interpreted.txt
// RUN: tempo-run %examples/suffix_sum.mlir --bound T=6 --seed 5 > %t/suffix-compiled.txt
// RUN: tempo-run %examples/suffix_sum.mlir --bound T=6 --seed 5 --interpret > %t/suffix-interpreted.txt
// RUN: diff %t/suffix-compiled.txt %t/suffix-interpreted.txt

// A range over the tensor's own past sits on a cycle and still runs forward.
// RUN: tempo-run %examples/prefix_recurrence.mlir --bound T=10 | FileCheck %s --check-prefix=PREFIX
// RUN: tempo-run %examples/prefix_recurrence.mlir --bound T=10 --interpret | FileCheck %s --check-prefix=PREFIX
// PREFIX: y: int64[10] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]

// --stats: each tensor's store and the peak bytes of live stores, which stay
// 24 bytes (a point and a ring of two f64) whatever T is.
// RUN: tempo-run %examples/cumulative_sum.mlir --bound T=10 --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// RUN: tempo-run %examples/cumulative_sum.mlir --bound T=100000 --stats --format none 2>&1 | FileCheck %s --check-prefix=STATS
// STATS: tempo-run: stores:
// STATS-NEXT:   x: point (8 bytes)
// STATS-NEXT:   s: ring<2> (16 bytes)
// STATS-NEXT:   total: output
// STATS-NEXT: tempo-run: peak bytes of live stores: 24
