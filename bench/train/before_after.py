"""Before/after on the training benchmark: ours at an earlier commit
(`tempo-run` built in a worktree, `--before DIR`, default /tmp/wt, see
bench/README.md) and at this checkout, on the benchmark's programs and
data (bench/train/run.py), interleaved per case (the order alternating by
round), median of 3 rounds, 2 threads, --fast-math. `--warm`: each timing
is `tempo-run --repeat 3` (the median of 3 runs after a warm-up one, as
bench/train/run.py now times ours); `--models gpt` (or lstm) keeps one
model's cases. Run it with `TEMPO_CACHE=0` for the compile times (both
builds have the compilation cache). `--before same --before-env NAME=VALUE`
compares this build with and without a runtime setting, `--before same
--before-args '--disable-pass P'` with and without a pass. Prints one JSON line per case and
writes /tmp/ab.json (the committed copies: bench/train/before_after*.json)."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run
cases = [("lstm", b, w, T, n) for (b, w) in [(16, 64), (64, 64), (16, 256), (64, 256)] for (T, n) in [(64, 7 if (b, w) == (16, 64) else 2), (256, 2)]]
cases += [("gpt", 16, 64, T, 2) for T in (64, 256)] + [("gpt", 16, 256, T, 2) for T in (64, 256)]
parser = argparse.ArgumentParser()
parser.add_argument("--before", default="/tmp/wt")
parser.add_argument("--warm", action="store_true")
parser.add_argument("--models", default="lstm,gpt")
parser.add_argument("--before-env", action="append", default=[],
                    help="NAME=VALUE set for the before runs only; with --before same, the before runs use this checkout's "
                         "build, so the pair compares one runtime setting (e.g. TEMPO_HOST_CACHE_BYTES=0)")
parser.add_argument("--before-args", default="",
                    help="tempo-run arguments for the before runs only (with --before same: this build with passes "
                         "left out, e.g. '--disable-pass temporal-pack-products')")
args = parser.parse_args()
cases = [c for c in cases if c[0] in args.models.split(",")]
after_bin = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "tempo-run")
bins = {"before": after_bin if args.before == "same" else os.path.join(args.before, "target", "release", "tempo-run"), "after": after_bin}
envs = {"before": dict(os.environ, **dict(e.split("=", 1) for e in args.before_env)), "after": dict(os.environ)}
out = []
for model, b, w, T, n in cases:
    c = dict(model=model, batch=b, width=w, layers=2, heads=4, seqs=[T])
    d = f"/tmp/ab_{model}_{b}_{w}_{T}"; os.makedirs(d, exist_ok=True)
    run.write_data(d, c, T, 0)
    prog = run.write_program(d, c, "loop")
    cmd = run.tempo_command(prog, d, c, T, "loop", n, 2) + ["--format", "none"] + (["--repeat", "3"] if args.warm else [])
    res = {"before": [], "after": []}
    comp = {"before": [], "after": []}
    for r in range(3):
        for k in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
            extra = args.before_args.split() if k == "before" else []
            p = subprocess.run([bins[k]] + cmd[1:] + extra, capture_output=True, text=True, env=envs[k])
            m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", p.stderr)
            res[k].append(float(m.group(2)) / n); comp[k].append(float(m.group(1)))
    row = dict(model=model, batch=b, width=w, T=T, before=statistics.median(res["before"]), after=statistics.median(res["after"]),
               compile_before=statistics.median(comp["before"]), compile_after=statistics.median(comp["after"]), load=os.getloadavg()[0])
    print(json.dumps(row), flush=True)
    out.append(row)
json.dump(out, open("/tmp/ab.json", "w"), indent=1)
