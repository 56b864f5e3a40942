// TEMPO_COMPILE_PARTITIONS=N splits the lowered module into N partitions
// (runtime/src/orc/partition.rs: the entry in the first, the loop nests
// spread by size), each optimized and compiled to an object on its own
// thread, the objects linked by ORC: the same code, so the same bits as
// one object (the default is one per core). A 1-layer GPT training run (two Adam
// iterations) has nests enough for three.
// RUN: %example_bin/bench_train gpt --layers 1 --heads 2 --width 32 --batch 4 --vocab 16 --iterations 2 > %t.mlir
// RUN: env TEMPO_CACHE=0 TEMPO_COMPILE_PARTITIONS=1 tempo-run %t.mlir --bound T=8 --bound I=2 --seed 1 --format json --timings 2>%t.err1 >%t.one
// RUN: FileCheck %s --check-prefix=ONE < %t.err1
// RUN: env TEMPO_CACHE=0 TEMPO_COMPILE_PARTITIONS=3 tempo-run %t.mlir --bound T=8 --bound I=2 --seed 1 --format json --timings 2>%t.err3 >%t.three
// RUN: FileCheck %s --check-prefix=THREE < %t.err3
// RUN: diff %t.one %t.three
// ONE: tempo-run: compiled to 1 object
// THREE: tempo-run: compiled to 3 objects
