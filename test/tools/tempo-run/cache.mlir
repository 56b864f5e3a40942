// The compilation cache (runtime/src/cache.rs): a second process compiling
// the same program with the same options loads the compiled code (a hit:
// no gradients, optimizations, lowering or LLVM in its phases), with the
// same outputs; anything in the key changing (a bound, fast math, the
// optimization level, the program) misses. Seeds and inputs are not part
// of what is compiled. TEMPO_CACHE=0 turns it off.
// RUN: rm -rf %t.cache
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 2 --timings 2>&1 | FileCheck %s --check-prefix=HIT
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 2 > %t.hit
// RUN: tempo-run %s --bound T=4 --seed 2 --interpret > %t.interpreted
// RUN: diff %t.hit %t.interpreted
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=5 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 1 --fast-math --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 1 -O1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %examples/rnn.mlir --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE=0 TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=OFF
//
// A corrupt entry (every entry's bytes flipped) is ignored, rebuilt and
// stored again; the run is still right.
// RUN: %python -c "import os,sys; d=sys.argv[1]; [open(os.path.join(d,f),'r+b').write(b'garbage') for f in os.listdir(d)]" %t.cache
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 2 --timings 2>%t.err > %t.rebuilt
// RUN: FileCheck %s --check-prefix=MISS < %t.err
// RUN: diff %t.rebuilt %t.interpreted
// RUN: env TEMPO_CACHE_DIR=%t.cache tempo-run %s --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=HIT
//
// Bounded size: with room for nothing, each entry is evicted as soon as it
// is stored, so the next process misses again.
// RUN: rm -rf %t.small
// RUN: env TEMPO_CACHE_DIR=%t.small TEMPO_CACHE_MAX_BYTES=1 tempo-run %s --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
// RUN: env TEMPO_CACHE_DIR=%t.small TEMPO_CACHE_MAX_BYTES=1 tempo-run %s --bound T=4 --seed 1 --timings 2>&1 | FileCheck %s --check-prefix=MISS
//
// A hit of a program whose collectives come from its gradients (a
// temporal.grad's all_reduce, an op only after temporal-autodiff) opens
// the run's processes for the cached program and links MPI's symbols:
// before, the second run failed with "Symbols not found: [ MPI_Allreduce,
// tempo_mpi_world_size ]" (found by tempo-fuzz, seed 2026112813). The key
// names the MPI the code calls for such a program too: under mpirun (Open
// MPI) the entry a lone process stored (MPICH's ABI, no library) is a
// miss, not a crash (it was a segmentation fault); then a hit.
// RUN: rm -rf %t.grads
// RUN: env TEMPO_CACHE_DIR=%t.grads tempo-run %S/../../passes/temporal-autodiff/all-reduce-fused.mlir --bound I=2 --bound T=2 --seed 3 > %t.grads-miss
// RUN: env TEMPO_CACHE_DIR=%t.grads tempo-run %S/../../passes/temporal-autodiff/all-reduce-fused.mlir --bound I=2 --bound T=2 --seed 3 --timings 2> %t.grads-err > %t.grads-hit
// RUN: FileCheck %s --check-prefix=HIT < %t.grads-err
// RUN: diff %t.grads-miss %t.grads-hit
// RUN: env TEMPO_CACHE_DIR=%t.grads mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t.grads-mpi tempo-run %S/../../passes/temporal-autodiff/all-reduce-fused.mlir --bound I=2 --bound T=2 --seed 3 > /dev/null
// RUN: env TEMPO_CACHE_DIR=%t.grads mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t.grads-mpi-hit tempo-run %S/../../passes/temporal-autodiff/all-reduce-fused.mlir --bound I=2 --bound T=2 --seed 3 > /dev/null
// RUN: diff %t.grads-mpi/1/rank.0/stdout %t.grads-mpi-hit/1/rank.0/stdout
//
// Concurrent writers: eight processes compiling at once leave one whole
// entry, which a ninth hits.
// RUN: %python %S/Inputs/cache_processes.py %t.concurrent %s 8 --bound T=4 --seed 1 | FileCheck %s --check-prefix=PROCESSES

// MISS: tempo-run: compile phases: cache lookup {{[0-9.]+}} ms, gradients
// MISS-SAME: LLVM optimization and code generation
// MISS: tempo-run: compile cache: miss, stored ({{.*}}.tempo)
// HIT: tempo-run: compile phases: cache lookup {{[0-9.]+}} ms, verification and schedule {{[0-9.]+}} ms, loading {{[0-9.]+}} ms, linking {{[0-9.]+}} ms
// HIT-NEXT: tempo-run: compiled to 1 object
// HIT-NEXT: tempo-run: compile cache: hit ({{.*}}.tempo)
// OFF: tempo-run: compile phases: gradients
// OFF-NOT: compile cache
// PROCESSES: 8 processes, one entry, outputs agree

"temporal.dim"() {sym_name = "t", bound = "T"} : () -> ()
%x = "temporal.input"() {sym_name = "x", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
%h = "temporal.tensor"() {sym_name = "h", domain = ["t"], element = tensor<3xf32>} : () -> !temporal.rtensor
"temporal.define"(%h) ({
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  "gpu.yield"(%xt) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t == 0)>} : (!temporal.rtensor) -> ()
"temporal.define"(%h) ({
  %prev = "temporal.read"(%h) {index = affine_map<(t)[T] -> (t - 1)>} : (!temporal.rtensor) -> tensor<3xf32>
  %xt = "temporal.read"(%x) {index = affine_map<(t)[T] -> (t)>} : (!temporal.rtensor) -> tensor<3xf32>
  %s = "temporal.add"(%prev, %xt) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %y = "temporal.tanh"(%s) : (tensor<3xf32>) -> tensor<3xf32>
  "gpu.yield"(%y) : (tensor<3xf32>) -> ()
}) {when = affine_set<(t)[T] : (t - 1 >= 0)>} : (!temporal.rtensor) -> ()
"temporal.output"(%h) : (!temporal.rtensor) -> ()
