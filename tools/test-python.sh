#!/usr/bin/env bash
# The Python package as a user installs it (issue 43): a fresh virtual
# environment, `pip install ./python` (maturin's PEP 517 backend builds the
# wheel; python/build.rs puts libMLIR-C.so into it), pytest and Gymnasium
# from PyPI, then the tests and the examples run from outside the
# repository, so the installed package is the one imported (about 1.5
# minutes on 2 cores, 30 s of it the installation).
#
# The cargo build inside pip reuses the workspace's target directory
# (CARGO_TARGET_DIR, the release profile tools/test.sh built), so it is
# incremental; pip takes maturin, NumPy, pytest and Gymnasium from its
# cache after the first run. Prints how long the installation took.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s)
python3 -m venv "$work/venv"
bin="$work/venv/bin"
pip=("$bin/pip" install -q --disable-pip-version-check)
CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}" "${pip[@]}" "$root/python"
"${pip[@]}" pytest gymnasium
echo "tools/test-python.sh: fresh venv and pip install ./python in $(( $(date +%s) - start )) s"
cd "$work"
"$bin/python" - "$root" <<'PY'
import pathlib, sys, tempo
where = pathlib.Path(tempo.__file__).resolve()
assert pathlib.Path(sys.argv[1]).resolve() not in where.parents, f"tempo imported from the repository: {where}"
assert (where.parent / "mlir-c" / "libMLIR-C.so").exists(), "the wheel carries libMLIR-C.so"
print(f"tempo from {where.parent}")
PY
"$bin/pytest" -q -p no:cacheprovider "$root/python/tests"
# The examples from outside the repository: the tests run
# examples/python/ppo.py and train_lstm.py from a temporary directory
# (test_ppo.py, test_train.py, against the Rust examples); gpt.py here.
"$bin/python" "$root/examples/python/gpt.py" --steps 4
