"""The Python front end's overhead on the RL benchmark (issue 43):
examples/python/ppo.py --env trivial (the program built from Python, the
environment's two steps computed by NumPy functions that the compiled
program calls once per step) against the Rust example, examples/ppo.rs
--env trivial (the environment in the program), at the benchmark's base
configuration (512 environments, T 250, 2 x 64, obs 3,4,4, float32,
--fast-math, 2 threads). Interleaved rounds; per round each side's
seconds per iteration (execution divided by the iterations, compile
apart, as both print); medians. Also checks that both print the same
returns (the same program, the environment in NumPy). On a shared
machine the two runs' difference is noisy, so each round also times what
the Python front end adds by itself: a program of only the environment's
two calls at the base configuration's shapes (512 environments, 250
steps), run in this process, the NumPy functions and the boundary
(arguments to NumPy, the GIL, results back) per iteration.

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

from run import cpu_name  # bench/rl/run.py, beside this file

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


def calls_alone(steps=250, iterations=6, envs=512):
    """Seconds per iteration of a program that only calls the trivial
    environment's two NumPy functions (examples/python/ppo.py's) at every
    step, as the training program does, actions given as an input."""
    sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
    import numpy as np
    import ppo
    import tempo

    p = tempo.Program()
    t = p.dim("t", "T")
    s = p.tensor("s", [t], [envs, 1])
    a = p.input("a", [t], [envs])
    r = p.tensor("r", [t], [envs])
    p.define(s, t == 0, 0.5)
    p.otherwise(s, p.call("trivial_step", ppo.trivial_step, [s[t - 1], a[t - 1]], [envs, 1]))
    p.otherwise(r, p.call("trivial_reward", ppo.trivial_reward, [s[t], a[t]], [envs]))
    p.output(r)
    exe = p.compile(threads=2)
    actions = np.random.default_rng(0).standard_normal((steps * iterations, envs)).astype(np.float32)
    exe.run(T=steps, a=actions[:steps])
    start = time.perf_counter()
    exe.run(T=steps * iterations, a=actions)
    return (time.perf_counter() - start) / iterations


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
        row["calls_alone"] = dict(seconds_per_iteration=calls_alone())
        if row["rust"]["returns"] != row["python"]["returns"]:
            raise RuntimeError(f"different returns: {row['rust']['returns']} vs {row['python']['returns']}")
        rounds.append(row)
        print(f"round {k}: rust {row['rust']['seconds_per_iteration'] * 1e3:.1f} ms/iter, "
              f"python {row['python']['seconds_per_iteration'] * 1e3:.1f} ms/iter, "
              f"the environment's calls alone {row['calls_alone']['seconds_per_iteration'] * 1e3:.1f} ms/iter",
              flush=True)
    sides = ("rust", "python", "calls_alone")
    median = {side: statistics.median(r[side]["seconds_per_iteration"] for r in rounds) for side in sides}
    best = {side: min(r[side]["seconds_per_iteration"] for r in rounds) for side in sides}
    ratios = [r["python"]["seconds_per_iteration"] / r["rust"]["seconds_per_iteration"] for r in rounds]
    result = dict(
        configuration="512 envs, T 250, 2 x 64, obs 3,4,4, f32, --fast-math, 2 threads, lr 1e-4",
        iterations=a.iterations, rounds=rounds, median_seconds_per_iteration=median,
        best_seconds_per_iteration=best, median_ratio=statistics.median(ratios),
        load_average=dict(before=load_before, after=os.getloadavg()[0]),
        when=time.strftime("%Y-%m-%d %H:%M"), cpu=cpu_name(), commit=git_head())
    json.dump(result, open(os.path.join(HERE, "python_overhead.json"), "w"), indent=1)
    print("| | Rust example | Python (NumPy environment) | overhead | the environment's calls alone | "
          "their share of the Rust example's time |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for what, v in ((f"median of {a.rounds}", median), ("best round", best)):
        print(f"| ms per iteration, {what} | {v['rust'] * 1e3:.1f} | {v['python'] * 1e3:.1f} | "
              f"{(v['python'] / v['rust'] - 1) * 100:+.1f}% | {v['calls_alone'] * 1e3:.1f} | "
              f"{v['calls_alone'] / v['rust'] * 100:.1f}% |")
    print(f"| median of the rounds' ratios | | | {(statistics.median(ratios) - 1) * 100:+.1f}% | | |")


def git_head():
    p = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    return p.stdout.strip()[:80]


if __name__ == "__main__":
    main()
