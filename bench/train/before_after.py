"""Before/after of issue 41's first part: ours at 079ee4b (built in a
worktree at /tmp/wt, see bench/README.md) and at this checkout, on the
training benchmark's programs and data (bench/train/run.py), interleaved
per case (the order alternating by round), median of 3 rounds, 2 threads,
--fast-math. Prints one JSON line per case and writes /tmp/ab.json (the
committed copy: bench/train/before_after.json)."""
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run
cases = [("lstm", b, w, T, n) for (b, w) in [(16, 64), (64, 64), (16, 256), (64, 256)] for (T, n) in [(64, 7 if (b, w) == (16, 64) else 2), (256, 2)]]
cases += [("gpt", 16, 64, 64, 2), ("gpt", 16, 256, 64, 2)]
bins = {"before": "/tmp/wt/target/release/tempo-run", "after": os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "target", "release", "tempo-run")}
out = []
for model, b, w, T, n in cases:
    c = dict(model=model, batch=b, width=w, layers=2, heads=4, seqs=[T])
    d = f"/tmp/ab_{model}_{b}_{w}_{T}"; os.makedirs(d, exist_ok=True)
    run.write_data(d, c, T, 0)
    prog = run.write_program(d, c, "loop")
    cmd = run.tempo_command(prog, d, c, T, "loop", n, 2) + ["--format", "none"]
    res = {"before": [], "after": []}
    comp = {"before": [], "after": []}
    for r in range(3):
        for k in (["before", "after"] if r % 2 == 0 else ["after", "before"]):
            p = subprocess.run([bins[k]] + cmd[1:], capture_output=True, text=True)
            m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", p.stderr)
            res[k].append(float(m.group(2)) / n); comp[k].append(float(m.group(1)))
    row = dict(model=model, batch=b, width=w, T=T, before=statistics.median(res["before"]), after=statistics.median(res["after"]),
               compile_before=statistics.median(comp["before"]), compile_after=statistics.median(comp["after"]), load=os.getloadavg()[0])
    print(json.dumps(row), flush=True)
    out.append(row)
json.dump(out, open("/tmp/ab.json", "w"), indent=1)
