#!/usr/bin/env bash
# Packs what the GPU stage (tools/gpu/run.sh) needs on a GPU machine that
# has no compiler, no MLIR and no network, into .gpu/ (ignored by git):
#
#   .gpu/libs.tar.xz    MLIR and LLVM 22's shared libraries and the few
#                       Debian libraries they need that a CUDA image may lack
#                       (made once; delete it to remake it)
#   .gpu/bundle.tar.xz  the release binaries (tempo-run, and the gpt,
#                       bench_train and ppo examples), libdevice, and the
#                       programs to check: the Rust examples' programs and
#                       generated random programs, each with its bounds
#
# Two libraries LLVM links are replaced by stubs built here: libz3 (the
# static analyzer's constraint solver) and libxml2 (Windows manifests): no
# code path of ours calls them, and the real ones (with ICU's data) would
# double the bundle. A stub's functions abort if ever called.
#
#   tools/gpu/pack.sh [--programs N]     (N generated programs of each kind, default 30)
#
# Then, on the GPU machine, from the repository root with .gpu/ beside it:
#   tools/gpu/run.sh OUT [BUDGET_SECONDS]
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
count=30
if [ "${1:-}" = "--programs" ]; then count="$2"; fi
gpu="$root/.gpu"
mkdir -p "$gpu"
release="$root/target/release"
for b in tempo-run examples/gpt examples/bench_train examples/ppo; do
  [ -x "$release/$b" ] || { echo "pack.sh: $release/$b is missing: cargo build --release --bins --examples" >&2; exit 1; }
done

if [ ! -s "$gpu/libs.tar.xz" ]; then
  stage="$(mktemp -d)"
  mkdir -p "$stage/lib"
  llvm=/usr/lib/llvm-22/lib
  cp -L "$llvm/libMLIR.so.22.1" "$llvm/libLLVM.so.22.1" "$release/mlir-c/libMLIR-C.so" "$stage/lib/"
  for l in libedit.so.2 libffi.so.8 libtinfo.so.6 libbsd.so.0 libmd.so.0; do
    cp -L "/lib/x86_64-linux-gnu/$l" "$stage/lib/"
  done
  imports() { nm -D --undefined-only "$llvm/libLLVM.so.22.1" | awk -v p="$1" '$2 ~ p {print $2}'; }
  { echo '#include <stdlib.h>'; imports '^Z3_' | sed 's/@.*//' | sort -u | sed 's/.*/void &(void) { abort(); }/'; } >"$stage/z3.c"
  {
    echo '#include <stdlib.h>'
    echo 'void *xmlFree = 0;'
    imports '^xml' | sed 's/@.*//' | grep -v '^xmlFree$' | sort -u | sed 's/.*/void &(void) { abort(); }/'
  } >"$stage/xml2.c"
  {
    for v in $(imports '^xml' | sed -n 's/.*@//p' | sort -u); do
      echo "$v { global:"
      imports '^xml' | grep "@$v\$" | sed 's/@.*/;/'
      echo "};"
    done
  } >"$stage/xml2.map"
  gcc -shared -fPIC -O1 -o "$stage/lib/libz3.so.4" -Wl,-soname,libz3.so.4 "$stage/z3.c"
  gcc -shared -fPIC -O1 -o "$stage/lib/libxml2.so.2" -Wl,-soname,libxml2.so.2 \
    -Wl,--version-script,"$stage/xml2.map" "$stage/xml2.c"
  (cd "$stage" && tar cf - lib | xz -T0 -9 >"$gpu/libs.tar.xz.part")
  mv "$gpu/libs.tar.xz.part" "$gpu/libs.tar.xz"
  rm -rf "$stage"
fi

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bundle/bin" "$stage/bundle/programs/rust" "$stage/bundle/programs/generated"
cp "$release/tempo-run" "$release/examples/gpt" "$release/examples/bench_train" "$release/examples/ppo" "$stage/bundle/bin/"
libdevice="$(ls "$root"/target/cuda-tools/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc 2>/dev/null || true)"
if [ -z "$libdevice" ]; then tools/setup-cuda.sh; libdevice="$root/target/cuda-tools/nvidia/cuda_nvcc/nvvm/libdevice/libdevice.10.bc"; fi
cp "$libdevice" "$stage/bundle/"

# The Rust examples' programs, each with the bounds its inputs fix.
rust="$stage/bundle/programs/rust"
emit() { # NAME BOUNDS COMMAND...
  local name="$1" bounds="$2"
  shift 2
  { echo "// bounds: $bounds"; "$@"; } >"$rust/$name.mlir"
}
ex="$release/examples"
emit gpt "T=9 L=2" "$ex/gpt" --layers 2 --heads 2 --width 16 --mlir
emit gpt_window "T=9 L=2" "$ex/gpt" --layers 2 --heads 2 --width 16 --window 4 --mlir
emit gpt_batch_dim "T=6 L=2 B=2" "$ex/gpt" --layers 2 --heads 2 --width 16 --batch 2 --batch-dim --mlir
emit attention "T=9" "$ex/attention" --mlir
emit attention_window "T=9" "$ex/attention" --mlir --window
emit rnn "T=7" "$ex/rnn" --mlir
emit discounted_returns "T=7 B=3" "$ex/discounted_returns" --mlir
emit recurrences "T=7" "$ex/recurrences" --mlir
emit train_lstm_step "T=5 I=2" "$ex/bench_train" lstm --batch 3 --width 8 --vocab 11 --lr 0.01 --iterations 1
emit train_gpt_step "T=5 I=2" "$ex/bench_train" gpt --batch 2 --width 8 --vocab 11 --lr 0.01 --layers 2 --heads 2 --iterations 1
emit ppo_small "I=2 T=6" "$ex/ppo" --env trivial --envs 4 --steps 6 --layers 2 --width 8 --obs 1,2,2 --iterations 2 --lr 1e-3 --dtype f32 --mlir
# Drop the bounds a program does not declare (the interpreter refuses unknown bounds).
for f in "$rust"/*.mlir; do
  python3 - "$f" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
head, body = text.split("\n", 1)
declared = set(re.findall(r'"temporal\.dim"\(\)\s*\{[^}]*bound\s*=\s*"(\w+)"', body))
kept = [b for b in head[len("// bounds:"):].split() if b.split("=")[0] in declared]
open(path, "w").write("// bounds: " + " ".join(kept) + "\n" + body)
EOF
done

TEMPO_WRITE_PROGRAMS="$stage/bundle/programs/generated" TEMPO_WRITE_COUNT="$count" \
  cargo test --release -q -p tempo-tools --test end_to_end write_generated_programs -- --ignored >/dev/null

(cd "$stage" && tar cf - bundle | xz -T0 -6 >"$gpu/bundle.tar.xz")
du -h "$gpu/libs.tar.xz" "$gpu/bundle.tar.xz"
