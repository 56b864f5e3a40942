#!/usr/bin/env bash
# Set-up of the training benchmark: the project's toolchain (tools/setup.sh)
# and bench/.venv (shared with bench/gpt) holding the baseline from PyPI:
# PyTorch (CPU), NumPy and matplotlib. Idempotent: what is present is kept.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$root/tools/setup.sh"
# GNU time measures each run's peak RSS.
if [ ! -x /usr/bin/time ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get install -y -qq time >/dev/null
fi
venv="$root/bench/.venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c 'import torch, jax, numpy, matplotlib' 2>/dev/null; then
    "$venv/bin/pip" install --quiet --upgrade pip
    # The CPU-only index (download.pytorch.org) is not always reachable; PyPI is.
    "$venv/bin/pip" install --quiet --index-url https://download.pytorch.org/whl/cpu torch 2>/dev/null \
        || "$venv/bin/pip" install --quiet torch
    "$venv/bin/pip" install --quiet "jax[cpu]" numpy matplotlib
fi
"$venv/bin/python" -c 'import torch, jax; print("torch", torch.__version__, "jax", jax.__version__, "threads", torch.get_num_threads())'
