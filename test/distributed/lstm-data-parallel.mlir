// Data-parallel training of the LSTM (examples/train_lstm.rs
// --data-parallel) under Open MPI's mpirun: two processes with half of a
// batch of 4 each end with the parameters of one process with the whole
// batch, within 1e-9 relative (f64; the sums of the gradient over the
// batch are ordered differently), every rank holding the same parameters
// (checksums compared); a run on half the batch alone does not (so the
// comparison can fail). Rank 0 prints the whole batch's loss, the same as
// one process's; rank 1 prints nothing. Each process makes ONE all-reduce
// per iteration: every gradient (the fused buffer: 57 characters, hidden
// 8: 57*32 + 8*32 + 32 + 8*57 + 57 = 2625 f64, 21000 bytes) and the
// reported loss (8 bytes), which temporal-fuse-collectives puts in the
// same buffer: 5 iterations, 5 all-reduces of 105040 bytes
// (TEMPO_MPI_STATS).
// RUN: rm -rf %t && mkdir -p %t
// RUN: %example_bin/train_lstm --iterations 5 --hidden 8 --seq-len 6 --batch 4 --params %t/one > %t/one.out
// RUN: %example_bin/train_lstm --iterations 5 --hidden 8 --seq-len 6 --batch 2 --params %t/half > /dev/null
// RUN: env TEMPO_MPI_TIMEOUT=120 TEMPO_MPI_STATS=1 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/train_lstm --iterations 5 --hidden 8 --seq-len 6 --batch 4 --data-parallel --params %t/two > %t/two.out 2> %t/two.err
// RUN: FileCheck %s --check-prefix=STATS < %t/two.err
// RUN: %python %S/Inputs/compare_params.py %t/one %t/two.rank0 %t/two.rank1 --rtol 1e-9 --differs %t/half | FileCheck %s
// RUN: %python %S/Inputs/compare_lines.py %t/one.out %t/two.out loss 1e-9
// RUN: FileCheck %s --check-prefix=LINES < %t/two.out
// Interpreted across the two processes (the runtime's MPI_Allreduce): the
// compiled run's parameters, bit for bit.
// RUN: mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/train_lstm --iterations 2 --hidden 4 --seq-len 3 --batch 2 --data-parallel --interpret --params %t/interpreted > /dev/null
// RUN: mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/train_lstm --iterations 2 --hidden 4 --seq-len 3 --batch 2 --data-parallel --params %t/compiled > /dev/null 2>&1
// RUN: diff %t/interpreted.rank0 %t/compiled.rank0
// RUN: diff %t/interpreted.rank1 %t/compiled.rank1

// CHECK: ranks: 2, checksums equal: True
// CHECK-NEXT: parameters: 5, within rtol: True
// CHECK-NEXT: the other run differs: True

// LINES: iteration 0 loss
// LINES-NEXT: iteration 1 loss
// LINES-NEXT: iteration 2 loss
// LINES-NEXT: iteration 3 loss
// LINES-NEXT: iteration 4 loss
// LINES-NOT: iteration

// STATS-DAG: tempo: rank 0 of 2: 5 all-reduces, 105040 bytes, {{[0-9.]+}} s in them
// STATS-DAG: tempo: rank 1 of 2: 5 all-reduces, 105040 bytes, {{[0-9.]+}} s in them
