// Collectives in a run of one process (no mpirun): the world size is 1, the
// rank 0, an all-reduce gives its operand (one unused is run too) and
// gradients through them are the plain gradients; no MPI library is loaded. Compiled at every level and interpreted alike. The
// same program across two processes: mpi-two-processes.mlir.
// RUN: tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 --interpret > %t.interpreted
// RUN: FileCheck %s < %t.interpreted
// RUN: tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 -O 0 | diff - %t.interpreted
// RUN: tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 | diff - %t.interpreted
// RUN: tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 -O 3 | diff - %t.interpreted

// CHECK: sum: float32[2, 2, 3] = {{\[\[\[}}0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], {{\[\[}}1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]
// CHECK-NEXT: mean: float64[2, 2, 3] = {{\[\[\[}}0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], {{\[\[}}1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]]
// CHECK-NEXT: max: int64[2, 3] = {{\[\[}}0, 0, 0], [0, 0, 0]]
// CHECK-NEXT: min: int32[3] = [0, 0, 0]
// CHECK-NEXT: ranks: int64[2] = [0, 1]
// CHECK-NEXT: gs: float64[3] = [1.0, 2.0, 3.0]
// CHECK-NEXT: gm: float64[3] = [1.0, 2.0, 3.0]
