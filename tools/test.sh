#!/usr/bin/env bash
# Builds everything and runs every test: cargo tests (unit, snapshot and
# end-to-end) and the lit suite under test/.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --workspace --bins --release --quiet
cargo test --workspace --quiet
/usr/lib/llvm-22/bin/lit -sv test
