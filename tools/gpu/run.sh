#!/usr/bin/env bash
# The GPU stage: everything the CUDA target is checked and measured with on a
# machine with an NVIDIA GPU, in one run that builds nothing (the machine may
# have no compiler and no network), writing logs and JSON results to OUT.
#
#   tools/gpu/run.sh OUT [BUDGET_SECONDS]     (default budget 420 s)
#
# Binaries and libraries come from .gpu/ (tools/gpu/pack.sh, for a machine
# without MLIR) when it is there, else from target/release (a GPU machine
# that builds the project: tools/test.sh runs the program checks this way).
# Stages, each with a share of the budget and skipped past it:
#   1. the machine: nvidia-smi, the libraries the binaries lack (ldd), PyTorch
#   2. every example and corpus program, the Rust examples' programs (training
#      steps and PPO included) and generated random programs, compiled for
#      --target cuda and run, against the interpreter (check_programs.py)
#   3. GPT-2 small decode against PyTorch eager (bench/gpt/run.py --gpu)
#   4. the training step and PPO against PyTorch (train_rl.py)
#   5. (only when asked for) kernel profiles of a decode, the LSTM training
#      step and PPO (kernel_profile.py, TEMPO_CUDA_PROFILE)
# TEMPO_GPU_TARGET=cpu TEMPO_GPU_TORCH_DEVICE=cpu runs the same stages on the
# CPU, to test this script on a machine without a GPU. TEMPO_GPU_STAGES picks
# stages 2 to 5 and their order (default "2 3 4"; e.g. "4 3" measures the
# training step and PPO first and checks no programs); stage 1 always runs.
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="${1:?usage: tools/gpu/run.sh OUT [BUDGET_SECONDS]}"
budget="${2:-420}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
start=$(date +%s)
left() { echo $((budget - ($(date +%s) - start))); }
# share P: seconds a stage may start rows for, P percent of the budget (at
# most what is left, less a margin for the stages' own ends)
share() { local s=$((budget * $1 / 100)) l=$(($(left) - 40)); echo $((s < l ? s : l)); }
log="$out/log.txt"
say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$log"; }
python="${PYTHON:-python3}"
target="${TEMPO_GPU_TARGET:-cuda}"

# Binaries: wrappers that give only our processes the carried libraries
# (PyTorch's process keeps the machine's own).
work="${TMPDIR:-/tmp}/tempo-gpu"
rm -rf "$work"
mkdir -p "$work/bin"
if [ -f .gpu/bundle.tar.xz ]; then
  say "unpacking .gpu/ (libraries and binaries)"
  tar xJf .gpu/libs.tar.xz -C "$work" && tar xJf .gpu/bundle.tar.xz -C "$work" || { say "unpacking failed"; exit 1; }
  real="$work/bundle/bin"
  libs="$work/lib"
  export TEMPO_LIBDEVICE="$work/bundle/libdevice.10.bc"
  programs="$work/bundle/programs"
else
  real="$work/real"
  mkdir -p "$real"
  ln -s "$root/target/release/tempo-run" "$real/tempo-run"
  for e in gpt bench_train ppo; do ln -s "$root/target/release/examples/$e" "$real/$e"; done
  libs=""
  programs=""
fi
for b in tempo-run gpt bench_train ppo; do
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' "$libs" "$real/$b" >"$work/bin/$b"
  chmod +x "$work/bin/$b"
done
bin="$work/bin"

say "stage 1: the machine"
{
  nvidia-smi 2>&1 | head -20
  echo "--- ldd tempo-run (with the carried libraries)"
  LD_LIBRARY_PATH="$libs" ldd "$real/tempo-run" 2>&1 | grep -E "not found|LLVM|MLIR|z3|xml" || true
  echo "--- python"
  "$python" -c "import sys, numpy, torch; print(sys.version.split()[0], 'numpy', numpy.__version__, 'torch', torch.__version__, 'cuda', torch.cuda.is_available())" 2>&1
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt" | tee -a "$log" | head -40
device="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
device="${device:-no GPU ($target target)}"

stage2() {
  say "stage 2: programs for --target $target against the interpreter"
  paths=(examples examples/corpus)
  [ -n "$programs" ] && paths+=("$programs/rust" "$programs/generated")
  timeout $(( $(left) > 60 ? $(left) : 60 )) "$python" tools/gpu/check_programs.py "$out/programs" "${paths[@]}" \
    --tempo-run "$bin/tempo-run" --target-flags "--target $target" --jobs 16 --timeout 90 \
    --deadline $(share 30) 2>&1 | tee -a "$log" | grep -v "^agree" || true
  # NCCL (issue 44): all-reduces (sum, mean, max) and the rank in one
  # process, the GPU run against the interpreter; libnccl from PyTorch's pip
  # package (nvidia-nccl-cu12) where the system has none.
  nccl="$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib"))' 2>/dev/null)"
  for how in "--target $target" "--interpret"; do
    LD_LIBRARY_PATH="${nccl:+$nccl:}${LD_LIBRARY_PATH:-}" timeout 60 "$bin/tempo-run" \
      test/lowering/temporal-to-loops/collectives.mlir --bound T=3 --seed 1 --format json $how \
      >"$out/nccl${how// /}.json" 2>>"$out/nccl.txt"
  done
  if cmp -s "$out/nccl--target$target.json" "$out/nccl--interpret.json"; then
    say "NCCL smoke test: the GPU run's all-reduces agree with the interpreter"
  else
    say "NCCL smoke test: differs or failed (nccl.txt, nccl*.json)"
  fi
  # Programs whose products disagree with the interpreter: the later stages
  # measure with the kernel without register tiles or split K instead.
  if grep -q '"outcome": "differ"' "$out/programs/programs.jsonl" 2>/dev/null && [ -z "${TEMPO_GPU_MATMUL:-}" ]; then
    export TEMPO_GPU_MATMUL=simple
    say "some programs differ: the later stages run with TEMPO_GPU_MATMUL=simple"
  fi
}
stage3() {
  if [ "$(left)" -gt 60 ]; then
    say "stage 3: GPT-2 small decode against PyTorch eager"
    TEMPO_GPU_TARGET="$target" timeout $(( $(left) - 30 )) "$python" bench/gpt/run.py --gpu --bin-dir "$bin" \
      --results "$out/gpt" --repeat 1 --run-timeout 90 --gpu-device "$device" \
      --deadline $(share 42) 2>&1 | tee -a "$log"
  fi
}
stage4() {
  if [ "$(left)" -gt 40 ]; then
    say "stage 4: training step and PPO against PyTorch"
    TEMPO_GPU_TARGET="$target" timeout $(( $(left) - 10 )) "$python" tools/gpu/train_rl.py "$out/train_rl" \
      --bin-dir "$bin" --device-name "$device" --timeout 100 --deadline $(( $(left) - 60 )) 2>&1 | tee -a "$log"
  fi
}
stage5() {
  if [ "$(left)" -gt 40 ]; then
    say "stage 5: kernel profiles (TEMPO_CUDA_PROFILE) of a decode, the LSTM training step and PPO"
    TEMPO_GPU_TARGET="$target" timeout $(( $(left) - 10 )) "$python" tools/gpu/kernel_profile.py "$out/profile" \
      --bin-dir "$bin" --timeout 60 --deadline $(( $(left) - 40 )) 2>&1 | tee -a "$log"
  fi
}
for stage in ${TEMPO_GPU_STAGES:-2 3 4}; do
  case "$stage" in
    2 | 3 | 4 | 5) "stage$stage" ;;
    *) say "TEMPO_GPU_STAGES: no stage $stage (2 to 5)" ;;
  esac
done
say "done ($(left) s of the budget left)"
