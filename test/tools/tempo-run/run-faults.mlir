// Runs the system refuses end with a message and a non-zero exit, not an
// abort or a crash: a swap file that cannot grow (a file size limit, as a
// full disk; SIGXFSZ ignored so the write fails with EFBIG) and an
// allocation refused (TEMPO_TEST_FAIL_ALLOCATION=N refuses the run's N-th
// allocation as the system would). tests/faults.rs checks in one process
// that what the run held is freed and that the next run works.
// RUN: not bash -c "trap '' XFSZ; ulimit -f 64; tempo-run %S/../../lowering/temporal-to-loops/swap.mlir --bound I=2 --bound T=60000 --memory-budget 100000" 2>&1 | FileCheck %s --check-prefix=SWAP
// RUN: env TEMPO_TEST_FAIL_ALLOCATION=0 not tempo-run %S/../../lowering/temporal-to-loops/swap.mlir --bound I=2 --bound T=600 2>&1 | FileCheck %s --check-prefix=ALLOC
// RUN: env TEMPO_TEST_FAIL_ALLOCATION=3 not tempo-run %S/../../lowering/temporal-to-loops/swap.mlir --bound I=2 --bound T=60000 --memory-budget 100000 2>&1 | FileCheck %s --check-prefix=COMMIT

// SWAP: error: the swap file of a store could not be made, written or read back: File too large
// SWAP-NOT: z:
// ALLOC: error: out of memory: an allocation of {{[0-9]+}} bytes failed (Cannot allocate memory
// COMMIT: error: out of memory: {{.*}} (Cannot allocate memory
