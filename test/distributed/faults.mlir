// Faults of a data-parallel run end it with a message, never a hang:
// - a rank killed mid-run (SIGKILL: no MPI_Abort, no finalize): the
//   launcher notices and ends the others;
// - a rank stopped mid-run (SIGSTOP: alive, the launcher notices nothing):
//   the runtime's watchdog ends the rank waiting in an all-reduce after
//   TEMPO_MPI_TIMEOUT seconds with a message, and the launcher the run;
// - ranks running different programs (rank 1 with other bounds: 2
//   iterations against 50): refused at the start of the run, on every
//   rank, before any collective of the program;
// - an invalid TEMPO_MPI_TIMEOUT is refused.
// RUN: sh %S/Inputs/fails_within.sh 100 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none sh %S/Inputs/signal_rank1.sh KILL 4 %example_bin/train_lstm --iterations 1000000 --hidden 8 --seq-len 4 --batch 2 --data-parallel > %t.killed 2>&1
// RUN: FileCheck %s --check-prefix=KILLED < %t.killed
// RUN: env TEMPO_MPI_TIMEOUT=3 sh %S/Inputs/fails_within.sh 100 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none sh %S/Inputs/signal_rank1.sh STOP 4 %example_bin/train_lstm --iterations 1000000 --hidden 8 --seq-len 4 --batch 2 --data-parallel > %t.stopped 2>&1
// RUN: FileCheck %s --check-prefix=STOPPED < %t.stopped
// RUN: sh %S/Inputs/fails_within.sh 100 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none sh %S/Inputs/rank1_iterations.sh 50 2 %example_bin/train_lstm --hidden 8 --seq-len 4 --batch 2 --data-parallel > %t.mismatch 2>&1
// RUN: FileCheck %s --check-prefix=MISMATCH < %t.mismatch
// RUN: env TEMPO_MPI_TIMEOUT=soon sh %S/Inputs/fails_within.sh 100 mpirun -np 2 --allow-run-as-root --oversubscribe --bind-to none %example_bin/train_lstm --iterations 2 --hidden 8 --seq-len 4 --batch 2 --data-parallel 2>&1 | FileCheck %s --check-prefix=BADTIMEOUT

// KILLED: mpirun detected that one or more processes exited with non-zero status
// KILLED: failed (status {{[1-9][0-9]*}}) within 100 s

// STOPPED: error: rank 0: an all-reduce has waited {{[0-9.]+}} s for the other processes of the run (TEMPO_MPI_TIMEOUT): one of them has died, hangs, or runs another program (other bounds or collectives); ending this one
// STOPPED: failed (status {{[1-9][0-9]*}}) within 100 s

// MISMATCH: error: rank {{[01]}} of 2: the processes of this run do not run the same collectives (the bounds, or the all-reduces of the program, differ between processes): every process must run the same program with the same bounds
// MISMATCH: failed (status {{[1-9][0-9]*}}) within 100 s

// BADTIMEOUT: error: TEMPO_MPI_TIMEOUT: 'soon' is not a positive number of seconds
// BADTIMEOUT: failed (status {{[1-9][0-9]*}}) within 100 s
