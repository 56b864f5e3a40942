// Every example (MLIR files, and the programs the Rust examples build,
// printed with --mlir) and every corpus program compiles for the CUDA
// target, and NVIDIA's ptxas assembles the PTX of every kernel, for sm_90
// and (--gpu-arch) sm_80. No GPU is needed: tools/setup-cuda.sh installs
// ptxas and libdevice.
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
// RUN: %python %S/Inputs/check_ptx.py %ptxas %t/sm_80 sm_80 %examples %examples/corpus %t/rust | FileCheck %s --check-prefix=SM80
// At -O3 too (attention tiled into temporal.attention, a thread per row):
// RUN: %python %S/Inputs/check_ptx.py %ptxas %t/o3 sm_90 -O 3 %examples %examples/corpus %t/rust | FileCheck %s --check-prefix=O3
// CHECK: examples/causal_attention.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: examples/rnn.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/contractions.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/heap_tree.mlir: refused for the GPU target (not yet)
// CHECK: corpus/rotary_positions.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: corpus/zoo_llama.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: rust/gpt.mlir: {{[1-9][0-9]*}} kernels, ptxas ok
// CHECK: 43 programs, {{[0-9]+}} kernels accepted by ptxas (sm_90); 4 refused
// O3: 43 programs, {{[0-9]+}} kernels accepted by ptxas (sm_90); 4 refused
// SM80: 43 programs, {{[0-9]+}} kernels accepted by ptxas (sm_80); 4 refused
