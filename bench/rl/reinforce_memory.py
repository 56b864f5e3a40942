"""REINFORCE's memory against the episode length: examples/reinforce.rs's
program (f32) with Monte-Carlo returns and with n-step returns (n = 1, 8,
64), run by tempo-run --fast-math --stats for T = 250 to 2000 (Monte-Carlo also
with --memory-budget 100000, which swaps the episode to a file); the peak
bytes of live stores (as the compiled code counts them), peak RSS and time
per iteration (median of 3 runs).

    bench/.venv/bin/python bench/rl/reinforce_memory.py [--redraw]

Writes reinforce.json, reinforce.md and the table into bench/README.md
between the reinforce markers.
"""
import json
import os
import re
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
REINFORCE = os.path.join(ROOT, "target", "release", "examples", "reinforce")
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
ENVS, WIDTH, LAYERS, ITERATIONS = 64, 32, 1, 2
STEPS = [250, 500, 1000, 2000]
RETURNS = ["mc", "1", "8", "64"]
# Monte-Carlo again under a memory budget: the compiler swaps the episode's
# states, actions and rewards to a file block by block (schedule/swaps.rs).
BUDGET = 100_000


def main():
    import sys
    if "--redraw" in sys.argv:
        publish(json.load(open(os.path.join(HERE, "reinforce.json"))))
        return
    subprocess.run(["cargo", "build", "--release", "--example", "reinforce", "--bin", "tempo-run"], cwd=ROOT, check=True)
    directory = tempfile.mkdtemp(prefix="tempo-reinforce-")
    rows = []
    for returns, budget in [(r, None) for r in RETURNS[:1]] + [("mc", BUDGET)] + [(r, None) for r in RETURNS[1:]]:
        program = os.path.join(directory, f"reinforce-{returns}.mlir")
        text = subprocess.run([REINFORCE, "--returns", returns, "--envs", str(ENVS), "--steps", str(max(STEPS)),
                               "--width", str(WIDTH), "--layers", str(LAYERS), "--iterations", str(ITERATIONS),
                               "--dtype", "f32", "--mlir"], capture_output=True, text=True, check=True).stdout
        open(program, "w").write(text)
        for T in STEPS:
            runs = []
            for _ in range(3):
                with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
                    p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M", TEMPO_RUN, program, "--bound",
                                        f"I={ITERATIONS}", "--bound", f"T={T}", "--seed", "1", "--fast-math", "--stats",
                                        "--timings", "--format", "none"]
                                       + (["--memory-budget", str(budget)] if budget else []),
                                       capture_output=True, text=True, check=True)
                    peak_rss = int(rss.read().strip().splitlines()[-1]) / 1024
                execute = float(re.search(r"execute ([\d.]+) ms", p.stderr).group(1))
                peak = int(re.search(r"peak bytes of live stores: (\d+)", p.stderr).group(1))
                runs.append((execute / ITERATIONS, peak, peak_rss))
            rows.append(dict(returns=returns, budget=budget, T=T, ms_per_iteration=statistics.median(r[0] for r in runs),
                             peak_store_bytes=runs[0][1], peak_rss_mib=statistics.median(r[2] for r in runs)))
            print(rows[-1], flush=True)
    results = dict(envs=ENVS, width=WIDTH, layers=LAYERS, rows=rows)
    json.dump(results, open(os.path.join(HERE, "reinforce.json"), "w"), indent=1)
    publish(results)


def publish(results):
    rows = results["rows"]
    lines = [f"{ENVS} environments, {LAYERS} layer of {WIDTH}, f32, `tempo-run --fast-math --stats`; peak bytes of "
             "live stores (the compiled code's count), peak RSS (whole process, compiler included), median of 3 runs.",
             "", "| returns | T | peak store bytes | bytes per step | peak RSS (MiB) | ms/iteration |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        first = next(x for x in rows if x["returns"] == r["returns"] and x.get("budget") == r.get("budget"))
        per = (r["peak_store_bytes"] - first["peak_store_bytes"]) / (r["T"] - first["T"]) if r["T"] != first["T"] else None
        name = "Monte-Carlo" if r["returns"] == "mc" else f"{r['returns']}-step"
        if r.get("budget"):
            name += f", `--memory-budget {r['budget']}`"
        per = "-" if per is None else f"{per:.0f}"
        lines.append(f"| {name} | {r['T']} | {r['peak_store_bytes']:,} | {per} | {r['peak_rss_mib']:.0f} | "
                     f"{r['ms_per_iteration']:.1f} |")
    table = "\n".join(lines) + "\n"
    open(os.path.join(HERE, "reinforce.md"), "w").write(table)
    readme = os.path.join(ROOT, "bench", "README.md")
    s = open(readme).read()
    start, end = "<!-- reinforce -->", "<!-- /reinforce -->"
    if start in s and end in s:
        s = s[: s.index(start) + len(start)] + "\n" + table + s[s.index(end):]
        open(readme, "w").write(s)
    print(table)


if __name__ == "__main__":
    main()
