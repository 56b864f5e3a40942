#!/bin/bash
# Checks that this tree's build generates the same code as another build's
# (an earlier commit built in a worktree), for changes meant not to change
# it (refactorings):
#
#   git worktree add /tmp/old REV
#   (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release --workspace --bins --examples)
#   tools/same-code.sh /tmp/old-target/release
#
# Three comparisons, each old against new:
#   1. tempo-opt's output over the examples' and corpus's programs at -O1,
#      -O2, -O3, temporal-to-llvm, temporal-to-cuda (libdevice's path and
#      the PTX's timing property aside), autodiff + schedule, and the loop
#      lowering with fast math;
#   2. tempo-run's object code (--dump-object) and outputs over the same
#      programs (every bound 6, random inputs of seed 7) under 8 option
#      sets; programs both refuse alike (other bounds needed) are counted
#      apart;
#   3. the modules the Rust API builds for the Rust examples' programs
#      (`--mlir`) and bench_train's, in generic form with locations.
# Prints the count of identical comparisons of each and the ones that
# differ; exits non-zero if any differs. Scratch files: $TMPDIR/same-code.
set -u
OLD=${1:?usage: tools/same-code.sh OLD_RELEASE_DIR}
NEW=$(cd "$(dirname "$0")/.." && pwd)/target/release
cd "$(dirname "$0")/.."
WORK=${TMPDIR:-/tmp}/same-code
rm -rf "$WORK" && mkdir -p "$WORK"
export TEMPO_CACHE=0
status=0
programs=(examples/*.mlir examples/corpus/*.mlir)
# Paths and times that differ between builds and runs.
normalize() { sed -E 's@/[^"]*/cuda-tools/@CUDA/@g; s@LLVMIRToISATimeInMs = [0-9]+@T@g; s/ at 0x[0-9a-f]+//; s@[^ ]*\.(old|new)\.o@OBJ@'; }

same=0 n=0 differ=""
for f in "${programs[@]}"; do
  for v in "-O1" "-O2" "-O3" "-p temporal-to-llvm" "-p temporal-to-cuda" "--temporal-autodiff --temporal-schedule" \
    "-p temporal-autodiff,temporal-verify,temporal-schedule,lower-temporal-to-loops{fast-math=true}"; do
    key=$WORK/opt_$(basename "$f" .mlir)_$(echo "$v" | md5sum | cut -c1-6)
    # shellcheck disable=SC2086
    "$OLD/tempo-opt" "$f" $v 2>&1 | normalize > "$key.old"
    # shellcheck disable=SC2086
    "$NEW/tempo-opt" "$f" $v 2>&1 | normalize > "$key.new"
    n=$((n + 1))
    if cmp -s "$key.old" "$key.new"; then same=$((same + 1)); else differ="$differ
  $f $v"; fi
  done
done
echo "tempo-opt: $same of $n identical$differ"
[ "$same" -eq "$n" ] || status=1

same=0 n=0 refused=0 differ=""
for f in "${programs[@]}"; do
  bounds=$(grep -o 'bound = "[A-Za-z_0-9]*"' "$f" | sort -u | sed -E 's/bound = "(.*)"/--bound \1=6/' | tr '\n' ' ')
  for v in "-O 0" "-O 1" "-O 2" "-O 3" "--fast-math" "--threads 1" "--memory-budget 4096" "--fast-math --threads 2"; do
    key=$WORK/run_$(basename "$f" .mlir)_$(echo "$v" | md5sum | cut -c1-6)
    # shellcheck disable=SC2086
    "$OLD/tempo-run" "$f" $bounds --seed 7 $v --dump-object "$key.old.o" 2>&1 | normalize > "$key.old"
    ro=${PIPESTATUS[0]}
    # shellcheck disable=SC2086
    "$NEW/tempo-run" "$f" $bounds --seed 7 $v --dump-object "$key.new.o" 2>&1 | normalize > "$key.new"
    rn=${PIPESTATUS[0]}
    if [ "$ro" -ne 0 ] && [ "$rn" -ne 0 ] && cmp -s "$key.old" "$key.new"; then refused=$((refused + 1)); continue; fi
    n=$((n + 1))
    if [ "$ro" -eq "$rn" ] && cmp -s "$key.old" "$key.new" && cmp -s "$key.old.o" "$key.new.o"; then
      same=$((same + 1))
    else differ="$differ
  $f $v"; fi
  done
done
echo "tempo-run objects and outputs: $same of $n identical ($refused refused alike by both)$differ"
[ "$same" -eq "$n" ] || status=1

same=0 n=0 differ=""
while read -r example args; do
  key=$WORK/api_$(echo "$example $args" | tr ' -' '__')
  for side in old new; do
    dir=$OLD; [ $side = new ] && dir=$NEW
    # shellcheck disable=SC2086
    "$dir/examples/$example" $args > "$key.$side.mlir" 2>&1
    "$NEW/tempo-opt" --mlir-print-op-generic --mlir-print-debuginfo "$key.$side.mlir" > "$key.$side" 2>&1
  done
  n=$((n + 1))
  if [ -s "$key.new" ] && cmp -s "$key.old" "$key.new"; then same=$((same + 1)); else differ="$differ
  $example $args"; fi
done <<'LIST'
rnn --mlir
birnn --mlir
tree_lstm --mlir
nested_rnn --mlir
attention --mlir
attention --mlir --window
environment --mlir
decode_until_eos --mlir
decode_until_eos --mlir --masked
discounted_returns --mlir
early_exit --mlir
recurrences --mlir
gpt --mlir
ppo --mlir
reinforce --mlir
train_lstm --mlir
bench_train gpt
bench_train lstm
bench_train gpt --iterations 3
bench_train lstm --iterations 3
LIST
echo "Rust API modules: $same of $n identical$differ"
[ "$same" -eq "$n" ] || status=1
exit $status
