#!/usr/bin/env bash
# Set-up of the TreeLSTM (dynamic batching) baselines: bench/.venv, shared
# with the other benchmarks, with PyTorch CPU, NumPy and matplotlib from
# PyPI, plus DyNet from PyPI as `dynet38` (a re-distribution of DyNet 2.1
# with manylinux wheels for CPython 3.8-3.12; the official `dyNET` 2.1.2
# has a source distribution only), after the project's toolchain
# (tools/setup.sh). Idempotent: what is present is kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$root/tools/setup.sh"
venv="$root/bench/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import torch, numpy, matplotlib' 2>/dev/null; then
    "$venv/bin/pip" install --quiet --upgrade pip
    # The CPU-only index (download.pytorch.org) is not always reachable; PyPI is.
    "$venv/bin/pip" install --quiet --index-url https://download.pytorch.org/whl/cpu torch 2>/dev/null \
        || "$venv/bin/pip" install --quiet torch
    "$venv/bin/pip" install --quiet numpy matplotlib
fi
if ! "$venv/bin/python" -c 'import dynet_config' 2>/dev/null; then
    "$venv/bin/pip" install --quiet "dynet38==2.1"
fi
"$venv/bin/python" - <<'EOF'
import sys, importlib.metadata as m
import numpy, torch
print("python", sys.version.split()[0], "torch", torch.__version__, "numpy", numpy.__version__,
      "dynet38", m.version("dyNET38"))
EOF
