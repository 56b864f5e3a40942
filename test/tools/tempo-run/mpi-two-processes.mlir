// Two processes under Open MPI's mpirun (tools/setup.sh installs it): the
// runtime loads libmpi, initializes MPI once per process and reads each
// process's rank and the world size; all-reduces of every kind (sum and
// mean of f32 and f64 2x3 values, max of i64, min of i32) and gradients
// through sum and mean all-reduces (Inputs/collectives.mlir) give the
// expected values, the same compiled (the
// lowering's mpi.allreduce on a flat buffer, Open MPI's ABI) and
// interpreted (the runtime's MPI_Allreduce). Each rank's output is checked
// on its own (mpirun --output-filename).
// RUN: rm -rf %t && mkdir -p %t
// RUN: mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t/compiled tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 > /dev/null
// RUN: FileCheck %s --check-prefixes=CHECK,RANK0 < %t/compiled/1/rank.0/stdout
// RUN: FileCheck %s --check-prefixes=CHECK,RANK1 < %t/compiled/1/rank.1/stdout
// RUN: mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none --output-filename %t/interpreted tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 --interpret > /dev/null
// RUN: diff %t/compiled/1/rank.0/stdout %t/interpreted/1/rank.0/stdout
// RUN: diff %t/compiled/1/rank.1/stdout %t/interpreted/1/rank.1/stdout
// Under a launcher (its variable set, as mpirun sets it), an MPI library
// that cannot be loaded is an error with a message, compiled or not.
// RUN: env OMPI_COMM_WORLD_SIZE=2 TEMPO_MPI_LIBRARY=/nonexistent/libmpi.so not tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 2>&1 | FileCheck %s --check-prefix=NOLIB
// RUN: env OMPI_COMM_WORLD_SIZE=2 TEMPO_MPI_LIBRARY=/nonexistent/libmpi.so not tempo-run %S/Inputs/collectives.mlir --bound T=2 --seed 1 --interpret 2>&1 | FileCheck %s --check-prefix=NOLIB

// x = c * (rank + t), c = [[1, 2, 3], [4, 5, 6]]: summed over ranks 0 and 1,
// c at t = 0 and 3c at t = 1; the mean half of that.
// CHECK: sum: float32[2, 2, 3] = {{\[\[\[}}1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], {{\[\[}}3.0, 6.0, 9.0], [12.0, 15.0, 18.0]]]
// CHECK-NEXT: mean: float64[2, 2, 3] = {{\[\[\[}}0.5, 1.0, 1.5], [2.0, 2.5, 3.0]], {{\[\[}}1.5, 3.0, 4.5], [6.0, 7.5, 9.0]]]
// The max and min of [10, -20, 30] * rank.
// CHECK-NEXT: max: int64[2, 3] = {{\[\[}}10, 0, 30], [10, 0, 30]]
// CHECK-NEXT: min: int32[3] = [0, -20, 0]
// RANK0-NEXT: ranks: int64[2] = [0, 2]
// RANK1-NEXT: ranks: int64[2] = [1, 2]
// Gradients: gs = 2 * sum_t (x[t] + rank) with x[0] + x[1] = [1, 2, 3],
// gm = sum_t (x[t] + rank).
// RANK0-NEXT: gs: float64[3] = [2.0, 4.0, 6.0]
// RANK0-NEXT: gm: float64[3] = [1.0, 2.0, 3.0]
// RANK1-NEXT: gs: float64[3] = [6.0, 8.0, 10.0]
// RANK1-NEXT: gm: float64[3] = [3.0, 4.0, 5.0]

// NOLIB: error: this process was started by an MPI launcher (OMPI_COMM_WORLD_SIZE is set), but no MPI library could be loaded (/nonexistent/libmpi.so: cannot open shared object file: No such file or directory): install one (tools/setup.sh installs Open MPI) or set TEMPO_MPI_LIBRARY
