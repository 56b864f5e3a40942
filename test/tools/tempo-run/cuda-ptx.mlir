// Every example (MLIR files, and the programs the Rust examples build,
// printed with --mlir) and every corpus program compiles for the CUDA
// target, and NVIDIA's ptxas assembles the PTX of every kernel, for sm_90
// (sm_80 and -O3 in cuda-ptx-long.mlir, tools/test.sh --long). No GPU is
// needed: tools/setup-cuda.sh installs ptxas and libdevice.
// RUN: rm -rf %t && mkdir -p %t/rust
// RUN: %example_bin/gpt --layers 2 --heads 2 --width 16 --mlir > %t/rust/gpt.mlir
// RUN: %example_bin/gpt --layers 2 --heads 2 --width 16 --window 4 --mlir > %t/rust/gpt_window.mlir
// RUN: %example_bin/gpt --layers 2 --heads 2 --width 16 --batch 2 --batch-dim --mlir > %t/rust/gpt_batch_dim.mlir
// RUN: %example_bin/attention --mlir > %t/rust/attention.mlir
// RUN: %example_bin/attention --mlir --window > %t/rust/attention_window.mlir
// RUN: %example_bin/rnn --mlir > %t/rust/rnn.mlir
// RUN: %example_bin/discounted_returns --mlir > %t/rust/discounted_returns.mlir
// RUN: %example_bin/environment --mlir > %t/rust/environment.mlir
// RUN: %example_bin/recurrences --mlir > %t/rust/recurrences.mlir
// RUN: %python %S/Inputs/check_ptx.py %ptxas %t/sm_90 sm_90 %examples %examples/corpus %t/rust | FileCheck %s
// CHECK: examples/causal_attention.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: examples/rnn.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/contractions.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/heap_tree.mlir: refused for the GPU target (not yet)
// CHECK: corpus/rotary_positions.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/zoo_llama.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: rust/gpt.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: 45 programs, {{[0-9]+}} kernels accepted by ptxas (sm_90); 4 refused
