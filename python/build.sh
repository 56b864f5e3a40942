#!/usr/bin/env bash
# Builds the tempo wheel (target/wheels/tempo-*.whl) with maturin from a
# virtual environment of its own (python/.venv, maturin, numpy and pytest
# from PyPI), and installs it there. MLIR's C API library (libMLIR-C.so,
# made by the Rust build) goes into the wheel beside the extension.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.8,<2" numpy pytest
# libMLIR-C.so of the release build (cargo build --release makes it).
cargo build --release -q -p tempo-dialects --manifest-path "$root/Cargo.toml"
mkdir -p "$here/tempo/mlir-c"
cp "$root/target/release/mlir-c/libMLIR-C.so" "$here/tempo/mlir-c/"
cd "$here"
CARGO_TARGET_DIR="$root/target" "$venv/bin/maturin" build --release --quiet --out "$root/target/wheels"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$root"/target/wheels/tempo-*.whl
