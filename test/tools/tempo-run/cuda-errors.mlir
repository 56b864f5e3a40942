// The CUDA target's errors. Without a GPU (or without a driver), a run
// stops with a clear error and a non-zero exit after compiling; --emit-ptx
// still works there (no GPU needed). Bad options are refused up front.
// RUN: not tempo-run %examples/rnn.mlir --target cuda --gpu-arch sm_9 2>&1 | FileCheck %s --check-prefix=ARCH
// ARCH: tempo-run: error: --gpu-arch: 'sm_9' is not a GPU architecture like sm_90
// RUN: not tempo-run %examples/rnn.mlir --target cuda --gpu-block 0 2>&1 | FileCheck %s --check-prefix=BLOCK
// BLOCK: tempo-run: error: --gpu-block: 0 threads per block is outside 1..1024
// RUN: not tempo-run %examples/rnn.mlir --emit-ptx %t 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: tempo-run: error: --emit-ptx needs --target cuda
// RUN: env TEMPO_LIBDEVICE=%t/none.bc not tempo-run %examples/rnn.mlir --bound T=3 --seed 1 --target cuda 2>&1 | FileCheck %s --check-prefix=LIBDEVICE
// LIBDEVICE: error: --target cuda needs libdevice (the CUDA math library, libdevice.10.bc): run tools/setup-cuda.sh or set TEMPO_LIBDEVICE
// RUN: rm -rf %t && tempo-run %examples/rnn.mlir --target cuda --emit-ptx %t 2>&1 | FileCheck %s --check-prefix=PTX
// PTX: tempo-run: 4 kernels written to
// RUN: ls %t | FileCheck %s --check-prefix=FILES
// FILES: tempo_main_kernel.ptx
// RUN: not tempo-run %examples/rnn.mlir --bound T=3 --target cuda --interpret 2>&1 | FileCheck %s --check-prefix=INTERPRET
// INTERPRET: tempo-run: error: --interpret evaluates on the host; it does not take --target cuda
