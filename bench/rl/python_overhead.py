"""The Python front end's overhead on the RL benchmark (issue 43):
examples/python/ppo.py --env trivial (the program built from Python, the
environment's two steps computed by NumPy functions that the compiled
program calls once per step) against the Rust example, examples/ppo.rs
--env trivial (the environment in the program), at the benchmark's base
configuration (512 environments, T 250, 2 x 64, obs 3,4,4, float32,
--fast-math, 2 threads). Interleaved rounds; per round each side's
seconds per iteration (execution divided by the iterations, compile
apart, as both print); medians. Also checks that both print the same
returns (the same program, the environment in NumPy).

    python bench/rl/python_overhead.py [--rounds 5] [--iterations 6] [--python PYTHON]
        [--bin target/release/examples/ppo]

PYTHON is an interpreter with tempo and NumPy installed (default: this
one). Prints a table and writes python_overhead.json beside this file.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BASE = ["--env", "trivial", "--envs", "512", "--steps", "250", "--layers", "2", "--width", "64", "--obs", "3,4,4",
        "--lr", "1e-4", "--dtype", "f32", "--fast-math", "--threads", "2"]
LINE = re.compile(r"^iteration \d+ mean_return (-?[\d.]+) seconds ([\d.]+)$", re.M)


def run(command):
    p = subprocess.run(command, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{command[0]} failed:\n{p.stderr[-2000:]}")
    found = LINE.findall(p.stdout)
    compile_s = float(re.search(r"compile ([\d.]+) s", p.stderr).group(1))
    return [float(r) for r, _ in found], sum(float(s) for _, s in found) / len(found), compile_s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "examples", "ppo"))
    a = ap.parse_args()
    flags = BASE + ["--iterations", str(a.iterations)]
    rust_cmd = [a.bin, *flags]
    python_cmd = [a.python, os.path.join(ROOT, "examples", "python", "ppo.py"), *flags]
    load_before = os.getloadavg()[0]
    rounds = []
    for k in range(a.rounds):
        pair = [("rust", rust_cmd), ("python", python_cmd)]
        if k % 2:
            pair.reverse()
        row = {}
        for side, command in pair:
            returns, per_iteration, compile_s = run(command)
            row[side] = dict(seconds_per_iteration=per_iteration, compile_s=compile_s, returns=returns)
        if row["rust"]["returns"] != row["python"]["returns"]:
            raise RuntimeError(f"different returns: {row['rust']['returns']} vs {row['python']['returns']}")
        rounds.append(row)
        print(f"round {k}: rust {row['rust']['seconds_per_iteration'] * 1e3:.1f} ms/iter, "
              f"python {row['python']['seconds_per_iteration'] * 1e3:.1f} ms/iter", flush=True)
    median = {side: statistics.median(r[side]["seconds_per_iteration"] for r in rounds) for side in ("rust", "python")}
    best = {side: min(r[side]["seconds_per_iteration"] for r in rounds) for side in ("rust", "python")}
    ratios = [r["python"]["seconds_per_iteration"] / r["rust"]["seconds_per_iteration"] for r in rounds]
    result = dict(
        configuration="512 envs, T 250, 2 x 64, obs 3,4,4, f32, --fast-math, 2 threads, lr 1e-4",
        iterations=a.iterations, rounds=rounds, median_seconds_per_iteration=median,
        best_seconds_per_iteration=best, median_ratio=statistics.median(ratios),
        load_average=dict(before=load_before, after=os.getloadavg()[0]),
        when=time.strftime("%Y-%m-%d %H:%M"), cpu=cpu_name(), commit=git_head())
    json.dump(result, open(os.path.join(HERE, "python_overhead.json"), "w"), indent=1)
    print(f"| | Rust example | Python (NumPy environment) | overhead |")
    print(f"| --- | ---: | ---: | ---: |")
    print(f"| ms per iteration, median of {a.rounds} | {median['rust'] * 1e3:.1f} | {median['python'] * 1e3:.1f} | "
          f"{(median['python'] / median['rust'] - 1) * 100:+.1f}% |")
    print(f"| ms per iteration, best round | {best['rust'] * 1e3:.1f} | {best['python'] * 1e3:.1f} | "
          f"{(best['python'] / best['rust'] - 1) * 100:+.1f}% |")
    print(f"| median of the rounds' ratios | | | {(statistics.median(ratios) - 1) * 100:+.1f}% |")


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def git_head():
    p = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    return p.stdout.strip()[:80]


if __name__ == "__main__":
    main()
