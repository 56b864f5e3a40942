"""Compile and run time of the CPU cases of bench/compile/run.py, this
tree's tempo-run against another build's (an earlier commit), interleaved:
one run of each per round, the order alternating; medians over the rounds.

    git worktree add /tmp/old REV && (cd /tmp/old && CARGO_TARGET_DIR=/tmp/old-target cargo build --release --bins --examples)
    bench/.venv/bin/python bench/compile/before_after.py --before /tmp/old-target/release [--repeat N] [--cases lstm,gpt]

Both compile cold (ours with TEMPO_CACHE=0), with `--fast-math --threads 2
--seed 1`, and run the program 3 times after a warm-up run (`--repeat 3`:
the execution time is their median), so the run times compare the
generated code. Results: bench/compile/before_after.json and a markdown
table on standard output.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as compile_bench  # noqa: E402  (bench/compile/run.py: the cases)


def measure(tempo_run, program, bounds):
    command = [tempo_run, program, "--fast-math", "--seed", "1", "--threads", "2", "--format", "none", "--timings",
               "--repeat", "3"]
    for k, v in bounds.items():
        command += ["--bound", f"{k}={v}"]
    p = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, TEMPO_CACHE="0"))
    if p.returncode != 0:
        raise RuntimeError(p.stderr[-1000:])
    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", p.stderr)
    return float(m.group(1)) / 1e3, float(m.group(2)) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True, help="the other build's release directory (with tempo-run)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", help="case names (default: every CPU case)")
    a = ap.parse_args()
    systems = {"before": os.path.join(a.before, "tempo-run"), "after": compile_bench.TEMPO_RUN}
    cases = [c for c in compile_bench.CASES if c[4] == "cpu" and (not a.cases or c[0] in a.cases.split(","))]
    samples = {(c[0], s): [] for c in cases for s in systems}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        for c in cases:
            with open(os.path.join(directory, c[0] + ".mlir"), "w") as f:
                subprocess.run(c[2], stdout=f, check=True)
        for r in range(a.repeat):
            for c in cases:
                order = list(systems.items()) if r % 2 == 0 else list(reversed(systems.items()))
                for system, binary in order:
                    compile_s, execute_s = measure(binary, os.path.join(directory, c[0] + ".mlir"), c[3])
                    samples[(c[0], system)].append((compile_s, execute_s))
                    print(f"round {r + 1}: {c[0]} {system}: compile {compile_s:.2f} s, execute {execute_s:.3f} s",
                          flush=True)
    rows = []
    for c in cases:
        row = dict(case=c[0], label=c[1], bounds=c[3])
        for s in systems:
            row[s] = dict(compile_s=statistics.median(x[0] for x in samples[(c[0], s)]),
                          execute_s=statistics.median(x[1] for x in samples[(c[0], s)]))
        rows.append(row)
    results = dict(machine=dict(cpus=os.cpu_count(), load_before=load_before, load_after=os.getloadavg()[0],
                                repeat=a.repeat, revision=compile_bench.revision(), before=a.before), rows=rows)
    with open(os.path.join(HERE, "before_after.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(f"\nMedian of {a.repeat} interleaved rounds, {os.cpu_count()} CPUs (load average {load_before:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after); cold compile (s) and execution (s, median of 3 runs after a warm-up).\n")
    print("| program | bounds | compile before | compile after | speed-up | execute before | execute after | ratio |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        b, f = r["before"], r["after"]
        bounds = ", ".join(f"{k} {v}" for k, v in r["bounds"].items())
        print(f"| {r['label']} | {bounds} | {b['compile_s']:.2f} | {f['compile_s']:.2f} | "
              f"{b['compile_s'] / f['compile_s']:.2f}x | {b['execute_s']:.3f} | {f['execute_s']:.3f} | "
              f"{f['execute_s'] / b['execute_s']:.2f} |")


if __name__ == "__main__":
    sys.exit(main())
