// A C host of libTempoCAPI.so (Inputs/host.c): built here with gcc against
// Debian's MLIR C headers and include/tempo-c/Tempo.h, linked with the
// library and MLIR's C API (libMLIR-C.so), it loads the dialects, runs the
// project's passes by name, compiles the counter and causal attention once
// and runs them several times with DLPack tensors (one executable from
// four threads at once too), and checks that bad input (NULL shapes and
// arrays, a NULL source, a destroyed executable) gets messages.
// RUN: gcc -std=c11 -Wall -Werror -pthread %S/Inputs/host.c -o %t -I%tempo_include -I/usr/lib/llvm-22/include -L%tool_dir -lTempoCAPI -L%tool_dir/mlir-c -lMLIR-C -lm -Wl,-rpath,%tool_dir:%tool_dir/mlir-c:/usr/lib/llvm-22/lib
// RUN: %t %examples | FileCheck %s
// CHECK-NOT: FAILED
// CHECK: {{^[0-9]+}} passed, 0 failed
