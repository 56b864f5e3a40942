#!/usr/bin/env bash
# Installs, idempotently, what the CUDA target needs on any machine (no GPU
# or driver required): NVIDIA's ptxas (to check generated PTX) and libdevice
# (the CUDA math library, linked into kernels), from the PyPI package
# nvidia-cuda-nvcc-cu12, into target/cuda-tools. Running on a GPU also
# needs the NVIDIA driver (libcuda.so), which this does not install.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/target/cuda-tools"
ptxas="$tools/nvidia/cuda_nvcc/bin/ptxas"
libdevice="$tools/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"

if [ -x "$ptxas" ] && [ -f "$libdevice" ]; then
  exit 0
fi
mkdir -p "$tools"
if [ ! -x "$tools/venv/bin/pip" ]; then
  python3 -m venv "$tools/venv"
fi
echo "setup-cuda: installing nvidia-cuda-nvcc-cu12 (ptxas, libdevice) into $tools" >&2
"$tools/venv/bin/pip" install --quiet --target "$tools" nvidia-cuda-nvcc-cu12
if [ ! -x "$ptxas" ] || [ ! -f "$libdevice" ]; then
  echo "setup-cuda: $ptxas or $libdevice is missing after installation" >&2
  exit 1
fi
