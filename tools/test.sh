#!/usr/bin/env bash
# Builds everything and runs every test: cargo tests (unit, snapshot and
# end-to-end) and the lit suite under test/.
#
#   tools/test.sh          the README's test command (what CI runs): each
#                          randomized suite at a small count, 300 fuzz cases
#   tools/test.sh --long   before closing an issue: the randomized suites
#                          (differential, gradients, models, dynamic
#                          structure) at ten times their counts, the tests
#                          marked long (#[ignore]: long training runs), and
#                          TEMPO_FUZZ_CASES (default 5000) fuzz cases of a
#                          seed taken from the clock unless TEMPO_FUZZ_SEED
#                          is set (printed, to reproduce)
#
# The cargo tests are built in the release profile: the binaries and the
# libraries the tests link are the ones `cargo build --release` made, and
# the long randomized runs do not crawl through unoptimized code.
set -euo pipefail
cd "$(dirname "$0")/.."
long=false
case "${1:-}" in
  --long) long=true ;;
  "") ;;
  *) echo "usage: tools/test.sh [--long]" >&2; exit 2 ;;
esac
ignored=()
if $long; then
  # Ten times the default counts of the randomized suites.
  export TEMPO_RANDOM_PROGRAMS="${TEMPO_RANDOM_PROGRAMS:-1200}"
  export TEMPO_MODEL_PROGRAMS="${TEMPO_MODEL_PROGRAMS:-300}"
  export TEMPO_GRADIENT_PROGRAMS="${TEMPO_GRADIENT_PROGRAMS:-120}"
  export TEMPO_DYNAMIC_PROGRAMS="${TEMPO_DYNAMIC_PROGRAMS:-240}"
  export TEMPO_COLLECTIVE_PROGRAMS="${TEMPO_COLLECTIVE_PROGRAMS:-300}"
  export TEMPO_PACK_PROGRAMS="${TEMPO_PACK_PROGRAMS:-40}"
  export TEMPO_PASS_SAMPLE="${TEMPO_PASS_SAMPLE:-80}"
  export TEMPO_PTX_SAMPLE="${TEMPO_PTX_SAMPLE:-200}"
  export TEMPO_GPU_LOOPS_PROGRAMS="${TEMPO_GPU_LOOPS_PROGRAMS:-400}"
  export TEMPO_FUZZ_CASES="${TEMPO_FUZZ_CASES:-5000}"
  export TEMPO_FUZZ_SEED="${TEMPO_FUZZ_SEED:-$(date +%s)}"
  export TEMPO_PY_FUZZ_CASES="${TEMPO_PY_FUZZ_CASES:-1000}"
  export TEMPO_PY_FUZZ_SEED="${TEMPO_PY_FUZZ_SEED:-$TEMPO_FUZZ_SEED}"
  echo "tools/test.sh --long: fuzz seed $TEMPO_FUZZ_SEED"
  ignored=(--include-ignored)
  # lit: the tests marked `REQUIRES: long` too.
  export TEMPO_LONG=1
fi
# The compilation cache: a fresh directory for this run, removed at the
# end (tests never share state with the user's ~/.cache/tempo or another
# run; lit gives each of its runs its own, lit.cfg).
TEMPO_CACHE_DIR="$(mktemp -d)"
export TEMPO_CACHE_DIR
trap 'rm -rf "$TEMPO_CACHE_DIR"' EXIT
# ptxas and libdevice for the CUDA target's tests (no GPU needed).
tools/setup-cuda.sh
# The libraries too: libTempoCAPI.so (the C API, the mlir-opt plug-in).
cargo build --workspace --lib --bins --examples --release --quiet
cargo test --workspace --release --quiet -- "${ignored[@]}"
# (With the 2-process tests of collectives under Open MPI's mpirun,
# test/tools/tempo-run/mpi-two-processes.mlir, a few seconds.)
/usr/lib/llvm-22/bin/lit -sv test
# A crate outside the repository depending on tempo with only the
# configuration the README gives.
tools/check-dependent.sh
# The Python package as a user installs it: a fresh venv, `pip install
# ./python` (maturin's PEP 517 backend, reusing target/: incremental), its
# tests and the Python examples run from outside the repository. pytest
# exits 5 when it collects nothing: that fails too.
tools/test-python.sh
# Fuzzing: a few hundred generated hostile inputs against the release
# binaries; fails on any panic, signal, hang or compiled/interpreted
# disagreement (reproducers in target/fuzz/failures).
# For a long run: target/release/tempo-fuzz --cases 10000 --seed N
target/release/tempo-fuzz --cases "${TEMPO_FUZZ_CASES:-300}" --seed "${TEMPO_FUZZ_SEED:-1}"
# The GPU stage, where a GPU is present (CI has none): every example and
# corpus program compiled for --target cuda against the interpreter
# (tools/gpu/run.sh runs this and the GPU benchmarks on a GPU machine).
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  python3 tools/gpu/check_programs.py target/gpu-check examples examples/corpus --jobs 4
fi
