"""Compile time by phase of the benchmarks' programs (issue 42).

    cargo build --release --workspace --examples
    bench/.venv/bin/python bench/compile/run.py [--repeat N] [--quick] [--cases NAME,...]
    bench/.venv/bin/python bench/compile/run.py --redraw    # table and plot from results.json

For each program (the training steps of bench/train, PPO of bench/rl, the
GPT-2 small decode of bench/gpt) `tempo-run --timings` compiles and runs it
on the CPU with random inputs (`--seed 1`, `--fast-math`, 2 threads) and
reports its compile time by phase: cache lookup, gradients, verification
and schedule, temporal optimizations, lowering through MLIR's passes,
translation to LLVM IR, LLVM's optimization and code generation (one
thread per partition), linking, cache store. Cold: a fresh, empty
compilation cache (TEMPO_CACHE_DIR) each round; warm: a second process
with the same cache (a hit), its compile time and the wall clock of the
whole process (start, parse, load, run). The CUDA target's compile of
three of them (`--target cuda --emit-ptx`: no GPU needed) is timed as a
whole (wall clock of the process). All cases run interleaved, one of each
per round, the order rotating; figures are medians over the rounds; the
load average is recorded before and after.

Results: bench/compile/results.json, results.md, the table between the
`compile` markers of bench/README.md, the plot bench/compile/compile.png.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RELEASE = os.path.join(ROOT, "target", "release")
TEMPO_RUN = os.path.join(RELEASE, "tempo-run")
PHASES = [
    "cache lookup",
    "gradients",
    "verification and schedule",
    "temporal optimizations",
    "lowering (MLIR passes)",
    "LLVM IR translation",
    "LLVM optimization and code generation",
    "linking",
    "cache store",
]


def example(name):
    return os.path.join(RELEASE, "examples", name)


TRAIN = ["--vocab", "64", "--lr", "0.001", "--iterations", "1"]
PPO = ["--env", "trivial", "--envs", "512", "--steps", "250", "--width", "64", "--obs", "3,4,4", "--iterations", "2",
       "--lr", "1e-4", "--dtype", "f32", "--mlir"]

# name, label, program generator (argv), bounds, target ("cpu" or "cuda"), in --quick
CASES = [
    ("lstm", "LSTM training, batch 16, width 64", [example("bench_train"), "lstm", "--batch", "16", "--width", "64"] + TRAIN,
     {"T": 64, "I": 2}, "cpu", True),
    ("gpt", "GPT training, 2 layers x 4 heads, batch 16, width 64",
     [example("bench_train"), "gpt", "--batch", "16", "--width", "64", "--layers", "2", "--heads", "4"] + TRAIN,
     {"T": 64, "I": 2}, "cpu", True),
    ("ppo", "PPO base, 512 envs, 2 x 64", [example("ppo"), "--layers", "2"] + PPO, {"T": 250, "I": 2}, "cpu", True),
    ("ppo16", "PPO, 16 layers x 64", [example("ppo"), "--layers", "16"] + PPO, {"T": 250, "I": 2}, "cpu", False),
    ("gpt2", "GPT-2 small decode", [example("gpt"), "--layers", "12", "--heads", "12", "--width", "768", "--mlir"],
     {"T": 4, "L": 12}, "cpu", True),
    ("lstm-cuda", "LSTM training, batch 64, width 256 (CUDA)",
     [example("bench_train"), "lstm", "--batch", "64", "--width", "256"] + TRAIN, {"T": 64, "I": 10}, "cuda", True),
    ("gpt-cuda", "GPT training, 2 layers x 4 heads, batch 16, width 256 (CUDA)",
     [example("bench_train"), "gpt", "--batch", "16", "--width", "256", "--layers", "2", "--heads", "4"] + TRAIN,
     {"T": 64, "I": 10}, "cuda", True),
    ("ppo-cuda", "PPO base (CUDA)", [example("ppo"), "--layers", "2"] + PPO, {"T": 250, "I": 3}, "cuda", False),
]


def run_case(case, directory):
    name, _, generator, bounds, target, _ = case
    program = os.path.join(directory, name + ".mlir")
    if not os.path.exists(program):
        with open(program, "w") as f:
            subprocess.run(generator, stdout=f, check=True)
    command = [TEMPO_RUN, program, "--fast-math", "--seed", "1", "--threads", "2", "--format", "none"]
    for k, v in bounds.items():
        command += ["--bound", f"{k}={v}"]
    if target == "cuda":
        ptx = os.path.join(directory, name + "-ptx")
        shutil.rmtree(ptx, ignore_errors=True)
        command += ["--target", "cuda", "--emit-ptx", ptx]
    else:
        command += ["--timings"]
    cache = os.path.join(directory, name + "-cache")
    shutil.rmtree(cache, ignore_errors=True)
    environment = dict(os.environ, TEMPO_CACHE_DIR=cache)

    def timed():
        start = time.perf_counter()
        p = subprocess.run(command, capture_output=True, text=True, env=environment)
        wall = time.perf_counter() - start
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-1000:])
        return p, wall

    p, wall = timed()
    if target == "cuda":
        kernels = re.search(r"(\d+) kernels written", p.stderr)
        return dict(compile_s=wall, kernels=int(kernels.group(1)) if kernels else None)

    def parse(stderr):
        m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", stderr)
        phases = {}
        line = re.search(r"compile phases: (.*)", stderr)
        for item in line.group(1).split(", ") if line else []:
            phase, value, _ = item.rsplit(" ", 2)
            phases[phase] = float(value) / 1e3
        return float(m.group(1)) / 1e3, float(m.group(2)) / 1e3, phases

    compile_s, execute_s, phases = parse(p.stderr)
    if "compile cache: miss, stored" not in p.stderr:
        raise RuntimeError("the cold compile did not store a cache entry: " + p.stderr[-500:])
    warm, warm_wall = timed()
    if "compile cache: hit" not in warm.stderr:
        raise RuntimeError("the warm compile did not hit the cache: " + warm.stderr[-500:])
    warm_compile_s, _, _ = parse(warm.stderr)
    return dict(compile_s=compile_s, execute_s=execute_s, phases=phases, warm_compile_s=warm_compile_s,
                warm_process_s=warm_wall)


def revision():
    try:
        return subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()[:60]
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="leave out the slowest cases (PPO 16 layers, PPO on CUDA)")
    ap.add_argument("--cases", help="the cases to run, by name (default: all)")
    ap.add_argument("--redraw", action="store_true")
    a = ap.parse_args()
    if a.redraw:
        publish(json.load(open(os.path.join(HERE, "results.json"))))
        return
    cases = [c for c in CASES if (not a.quick or c[5]) and (not a.cases or c[0] in a.cases.split(","))]
    samples = {c[0]: [] for c in cases}
    errors = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as directory:
        for r in range(a.repeat):
            order = cases if r % 2 == 0 else list(reversed(cases))
            for c in order:
                if c[0] in errors:
                    continue
                try:
                    samples[c[0]].append(run_case(c, directory))
                    print(f"round {r + 1}: {c[0]} {samples[c[0]][-1]['compile_s']:.2f} s", flush=True)
                except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
                    errors[c[0]] = str(e)
                    print(f"{c[0]}: failed: {e}", flush=True)
    rows = []
    for name, label, _, bounds, target, _ in cases:
        row = dict(case=name, label=label, target=target, bounds=bounds)
        s = samples[name]
        if name in errors:
            row["error"] = errors[name]
        if s:
            row["compile_s"] = statistics.median(x["compile_s"] for x in s)
            if target == "cpu":
                row["execute_s"] = statistics.median(x["execute_s"] for x in s)
                row["warm_compile_s"] = statistics.median(x["warm_compile_s"] for x in s)
                row["warm_process_s"] = statistics.median(x["warm_process_s"] for x in s)
                row["phases"] = {p: statistics.median(x["phases"].get(p, 0.0) for x in s) for p in PHASES}
            else:
                row["kernels"] = s[-1].get("kernels")
        rows.append(row)
    results = dict(
        machine=dict(cpus=os.cpu_count(), load_before=load_before, load_after=os.getloadavg()[0], repeat=a.repeat,
                     revision=revision()),
        rows=rows,
    )
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    publish(results)


def markdown(results):
    m = results["machine"]
    lines = [
        f"Median of {m['repeat']} interleaved rounds, {m['cpus']} CPUs (load average {m['load_before']:.2f} before, "
        f"{m['load_after']:.2f} after), tempo at `{m['revision']}`; seconds. CPU: `tempo-run --timings` "
        "(`--fast-math --threads 2`, random inputs), cold (an empty compilation cache) with its phases in order, "
        "then warm (a second process, a cache hit): its compile time and the wall clock of the whole process; "
        "CUDA: the wall clock of `tempo-run --target cuda --emit-ptx` (the whole compile to PTX, no GPU, no cache).",
        "",
        "| program | bounds | target | cold compile s | warm compile s | warm process s | " + " | ".join(PHASES) + " |",
        "| --- | --- | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in PHASES) + " |",
    ]
    for r in results["rows"]:
        bounds = ", ".join(f"{k} {v}" for k, v in r["bounds"].items())
        if "compile_s" not in r:
            lines.append(f"| {r['label']} | {bounds} | {r['target']} | failed | | | " + " | ".join("" for _ in PHASES) + " |")
            continue
        if r["target"] == "cpu":
            cells = [f"{r['warm_compile_s']:.3f}", f"{r['warm_process_s']:.3f}"] + [f"{r['phases'][p]:.3f}" for p in PHASES]
        else:
            cells = ["", "", f"({r.get('kernels')} kernels)"] + ["" for _ in PHASES[1:]]
        lines.append(f"| {r['label']} | {bounds} | {r['target']} | {r['compile_s']:.2f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def publish(results):
    table = markdown(results)
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write(table)
    sys.path.insert(0, os.path.dirname(HERE))
    import readme  # noqa: E402  (bench/readme.py)

    readme.replace_table("compile", table)
    plot(results)
    print(table)


def plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["rows"] if "compile_s" in r]
    if not rows:
        return
    fig, ax = plt.subplots(figsize=(9, 0.5 * len(rows) + 1.5))
    labels = [r["label"] for r in rows]
    left = [0.0] * len(rows)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, phase in enumerate(PHASES):
        widths = [r["phases"][phase] if r["target"] == "cpu" else 0.0 for r in rows]
        ax.barh(labels, widths, left=left, label=phase, color=colors[k % len(colors)])
        left = [a + b for a, b in zip(left, widths)]
    cuda = [r["compile_s"] if r["target"] == "cuda" else 0.0 for r in rows]
    ax.barh(labels, cuda, left=left, label="CUDA: whole compile to PTX", color="grey", hatch="//")
    ax.set_xlabel("compile time (s)")
    ax.invert_yaxis()
    ax.legend(fontsize=7, loc="lower right")
    ax.tick_params(axis="y", labelsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "compile.png"), dpi=100)


if __name__ == "__main__":
    sys.exit(main())
