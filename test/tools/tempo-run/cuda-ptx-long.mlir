// cuda-ptx.mlir's programs for sm_80 (--gpu-arch) and at -O3 (attention
// tiled into temporal.attention, a thread per row): ptxas assembles every
// kernel. A minute of ptxas: run by tools/test.sh --long.
// REQUIRES: long
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
// RUN: %python %S/Inputs/check_ptx.py %ptxas %t/sm_80 sm_80 %examples %examples/corpus %t/rust | FileCheck %s --check-prefix=SM80
// RUN: %python %S/Inputs/check_ptx.py %ptxas %t/o3 sm_90 -O 3 %examples %examples/corpus %t/rust | FileCheck %s --check-prefix=O3
// O3: {{[0-9]+}} programs, {{[0-9]+}} kernels accepted by ptxas (sm_90); 4 refused
// SM80: {{[0-9]+}} programs, {{[0-9]+}} kernels accepted by ptxas (sm_80); 4 refused
