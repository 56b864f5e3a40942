#!/usr/bin/env bash
# Builds everything and runs every test: cargo tests (unit, snapshot and
# end-to-end) and the lit suite under test/.
set -euo pipefail
cd "$(dirname "$0")/.."
# ptxas and libdevice for the CUDA target's tests (no GPU needed).
tools/setup-cuda.sh
# The libraries too: libTempoCAPI.so (the C API, the mlir-opt plug-in).
cargo build --workspace --lib --bins --examples --release --quiet
cargo test --workspace --quiet
/usr/lib/llvm-22/bin/lit -sv test
# A crate outside the repository depending on tempo with only the
# configuration the README gives.
tools/check-dependent.sh
# The Python package: the wheel (maturin, into target/wheels), installed in
# python/.venv, and its tests (from outside python/, so that the installed
# package is the one imported). pytest exits 5 when it collects nothing:
# that fails too.
python/build.sh
root="$PWD"
(cd /tmp && "$root/python/.venv/bin/pytest" -q -p no:cacheprovider "$root/python/tests")
# Fuzzing: a few hundred generated hostile inputs against the release
# binaries; fails on any panic, signal, hang or compiled/interpreted
# disagreement (reproducers in target/fuzz/failures).
# For a long run: target/release/tempo-fuzz --cases 10000 --seed N
target/release/tempo-fuzz --cases "${TEMPO_FUZZ_CASES:-400}" --seed "${TEMPO_FUZZ_SEED:-1}"
