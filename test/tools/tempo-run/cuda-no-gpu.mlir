// On a machine without a CUDA device (the lit configuration checks with
// nvidia-smi), running on the CUDA target compiles the program, then stops
// with an error naming what is missing (the driver or a device), never a
// crash.
// UNSUPPORTED: cuda-device
// RUN: not tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --target cuda 2>&1 | FileCheck %s
// CHECK: error: --target cuda: {{no CUDA driver on this machine|no CUDA device|the CUDA driver does not start}}
