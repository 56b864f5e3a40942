#!/usr/bin/env bash
# Set-up of the RL benchmark: the project's toolchain and bench/.venv with
# PyTorch, NumPy and matplotlib from PyPI (shared with bench/train), then
# the PPO example built. Idempotent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
"$root/bench/train/setup.sh"
(cd "$root" && cargo build --release --example ppo)
