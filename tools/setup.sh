#!/usr/bin/env bash
# Installs what building and testing the project needs, idempotently: the
# Debian LLVM/MLIR 22 packages and one MPI, OpenMPI (`temporal.all_reduce`
# across processes under `mpirun`; the runtime loads libmpi at run time),
# quiet when already present. The build
# environment (MLIR prefixes, one shared MLIR) lives in .cargo/config.toml;
# MLIR's C API as a shared library (libMLIR-C.so, which Debian ships only
# as archives) is linked from these packages by the build itself
# (dialects/build.rs, into target/<profile>/mlir-c), so that `cargo clean`
# never leaves the project without it.
set -euo pipefail

packages=(
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools libclang-22-dev
  libpolly-22-dev libz3-dev libzstd-dev libxml2-dev zlib1g-dev python3 python3-venv libomp-22-dev
  openmpi-bin libopenmpi-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for tool in mlir-opt FileCheck lit not; do
  if [ ! -x "/usr/lib/llvm-22/bin/$tool" ]; then
    echo "setup: /usr/lib/llvm-22/bin/$tool is missing after installation" >&2
    exit 1
  fi
done
if ! command -v mpirun >/dev/null 2>&1; then
  echo "setup: mpirun is missing after installation (openmpi-bin)" >&2
  exit 1
fi
