#!/usr/bin/env bash
# Builds the tempo wheel (target/wheels/tempo-*.whl) with maturin from a
# virtual environment of its own (python/.venv: maturin, NumPy, pytest and
# Gymnasium, for the tests and examples/python/ppo.py, from PyPI), and
# installs it there. MLIR's C API library (libMLIR-C.so) goes into the
# wheel beside the extension (python/build.rs puts it there). A shortcut
# for developers: `pip install ./python` builds and installs the same
# package into any environment.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
venv="$here/.venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check "maturin>=1.8,<2" numpy pytest gymnasium
cd "$here"
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" "$venv/bin/maturin" build --release --quiet --out "$root/target/wheels"
"$venv/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$root"/target/wheels/tempo-*.whl
