"""Both implementations learn: examples/ppo.rs (A2C as the Tempo artifact
runs it, the whole training run one compiled program) against the
CleanRL-style PyTorch baseline (baseline.py --env cartpole) on CartPole,
the same configuration (environments, steps, layers, width, learning rate,
iterations, seeds) for both; the mean return of each iteration (the mean
over the iteration's episodes, as both define it), per seed.

    bench/.venv/bin/python bench/rl/cartpole_learning.py [--seeds 5] [--iterations 200]
    bench/.venv/bin/python bench/rl/cartpole_learning.py --redraw

Ours runs from a copy of the release example (--ppo, default /tmp/ppo-bin,
so that rebuilds do not change it under a run; made from
target/release/examples/ppo when missing). CartPole's program is f64 in
ours (ppo refuses --dtype f32 for it), so the baseline runs in float64 too.
Writes cartpole.json, cartpole.md (also into bench/README.md between the
cartpole markers) and cartpole.png.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CONFIG = dict(envs=64, steps=200, layers=2, width=64, lr=1e-3)
CHECKPOINTS = (1, 10, 25, 50, 75, 100, 125, 150, 175, 200, 250, 300)
LINE = re.compile(r"^iteration (\d+) mean_return (\S+) seconds (\S+)$", re.M)


def common(c, iterations, seed):
    return ["--envs", str(c["envs"]), "--steps", str(c["steps"]), "--layers", str(c["layers"]), "--width",
            str(c["width"]), "--iterations", str(iterations), "--lr", str(c["lr"]), "--seed", str(seed)]


def commands(ppo, c, iterations, seed, threads):
    ours = [ppo, "--env", "cartpole", *common(c, iterations, seed), "--fast-math", "--threads", str(threads)]
    torch = [sys.executable, os.path.join(HERE, "baseline.py"), "--env", "cartpole", *common(c, iterations, seed),
             "--dtype", "float64", "--threads", str(threads)]
    return dict(ours=ours, torch=torch)


def run(command):
    """The mean returns, seconds per iteration as printed, wall seconds and
    stderr of `command`."""
    start = time.perf_counter()
    p = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    lines = LINE.findall(p.stdout)
    returns = [float(r) for _, r, _ in lines]
    if any(r != r for r in returns):
        raise RuntimeError(f"{' '.join(command)}: NaN mean return")
    return dict(returns=returns, seconds=[float(s) for _, _, s in lines], wall_s=wall, stderr=p.stderr.strip()[-500:])


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def git_head():
    p = subprocess.run(["git", "log", "-1", "--format=%h"], cwd=ROOT, capture_output=True, text=True)
    return p.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ppo", default="/tmp/ppo-bin")
    ap.add_argument("--redraw", action="store_true")
    a = ap.parse_args()
    path = os.path.join(HERE, "cartpole.json")
    if a.redraw:
        publish(json.load(open(path)))
        return
    if not os.path.exists(a.ppo):
        built = os.path.join(ROOT, "target", "release", "examples", "ppo")
        if not os.path.exists(built):
            subprocess.run(["cargo", "build", "--release", "--example", "ppo"], cwd=ROOT, check=True)
        shutil.copy(built, a.ppo)
    binary = dict(path=a.ppo, sha256=hashlib.sha256(open(a.ppo, "rb").read()).hexdigest()[:16],
                  modified=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.path.getmtime(a.ppo))))
    import torch
    load_before = os.getloadavg()
    runs = dict(ours=[], torch=[])
    for seed in range(1, a.seeds + 1):
        cmds = commands(a.ppo, CONFIG, a.iterations, seed, a.threads)
        for system in ("ours", "torch"):  # interleaved, seed by seed
            r = run(cmds[system])
            r.update(seed=seed, command=" ".join(cmds[system]).replace(ROOT + "/", ""))
            m = re.search(r"compile ([\d.]+) s", r["stderr"])
            if m:
                r["compile_s"] = float(m.group(1))
            runs[system].append(r)
            print(f"{system:5} seed {seed}: first {r['returns'][0]:.1f}, last 10 {statistics.mean(r['returns'][-10:]):.1f}, "
                  f"wall {r['wall_s']:.1f} s", flush=True)
    results = dict(machine=cpu_name(), cores=os.cpu_count(), threads=a.threads, config=CONFIG,
                   iterations=a.iterations, seeds=a.seeds, torch=torch.__version__, python=sys.version.split()[0],
                   tempo=git_head(), ppo_binary=binary, load_before=load_before, load_after=os.getloadavg(),
                   ours_options="f64 (CartPole's program), --fast-math --threads 2",
                   baseline_options="float64, torch.set_num_threads(2)", runs=runs)
    json.dump(results, open(path, "w"), indent=1)
    publish(results)


def mean_curve(runs):
    return [statistics.mean(xs) for xs in zip(*(r["returns"] for r in runs))]


def smooth(xs, k=5):
    """The mean of the last `k` values up to each point."""
    return [statistics.mean(xs[max(0, i - k + 1): i + 1]) for i in range(len(xs))]


def first_reaching(curve, level):
    """The first iteration (1-based) whose 5-iteration running mean reaches `level`."""
    for i, v in enumerate(smooth(curve)):
        if v >= level:
            return str(i + 1)
    return "never"


def markdown(r):
    c, n = r["config"], r["iterations"]
    ours, torch = mean_curve(r["runs"]["ours"]), mean_curve(r["runs"]["torch"])
    per_seed = lambda rs, k: [statistics.mean(x["returns"][-k:]) for x in rs]
    wall = lambda rs: statistics.mean(x["wall_s"] for x in rs)
    per_iter = lambda rs: statistics.median(s for x in rs for s in x["seconds"]) * 1e3
    compile_s = statistics.mean(x.get("compile_s", 0.0) for x in r["runs"]["ours"])
    lines = [
        f"{c['envs']} environments, T {c['steps']} steps per iteration (the longest episode an iteration can "
        f"count), {c['layers']} x {c['width']} tanh trunks, Adam lr {c['lr']:g}, {n} iterations, seeds 1-{r['seeds']} "
        f"(the same numbers, not the same random streams: each side has its own generator); both in float64 on "
        f"{r['threads']} threads. Machine: {r['machine']}, {r['cores']} cores, load average "
        f"{r['load_before'][0]:.2f} before and {r['load_after'][0]:.2f} after; PyTorch {r['torch']}; ours: "
        f"examples/ppo.rs (release build, HEAD `{r['tempo']}` when run; `--fast-math`). Mean return per iteration (the mean over its "
        f"episodes), mean over the seeds (min-max across seeds in brackets).",
        "",
        "| iteration | ours | PyTorch, CleanRL-style |",
        "| ---: | ---: | ---: |",
    ]
    span = lambda rs, i: f"{min(x['returns'][i] for x in rs):.0f}-{max(x['returns'][i] for x in rs):.0f}"
    for k in CHECKPOINTS:
        if k <= n:
            lines.append(f"| {k} | {ours[k - 1]:.1f} ({span(r['runs']['ours'], k - 1)}) | "
                         f"{torch[k - 1]:.1f} ({span(r['runs']['torch'], k - 1)}) |")
    fmt = lambda xs: f"{statistics.mean(xs):.1f} (seeds: {', '.join(f'{x:.0f}' for x in xs)})"
    lines += [
        "",
        "| | ours | PyTorch, CleanRL-style |",
        "| --- | ---: | ---: |",
    ]
    for k in (n // 4, 10):
        lines.append(f"| final level: mean of the last {k} iterations ({n - k + 1}-{n}) | "
                     f"{fmt(per_seed(r['runs']['ours'], k))} | {fmt(per_seed(r['runs']['torch'], k))} |")
    for level in (50, 100, 150):
        lines.append(f"| first iteration where the seeds' mean (5-iteration running mean) reaches {level} | "
                     f"{first_reaching(ours, level)} | {first_reaching(torch, level)} |")
    lines += [
        f"| wall time per run (s), mean over seeds | {wall(r['runs']['ours']):.1f} (compile {compile_s:.1f}) | "
        f"{wall(r['runs']['torch']):.1f} |",
        f"| ms per iteration: median (ours: each run's time divided evenly; PyTorch: each iteration timed, fastest "
        f"in brackets) | {per_iter(r['runs']['ours']):.0f} | {per_iter(r['runs']['torch']):.0f} "
        f"({min(s for x in r['runs']['torch'] for s in x['seconds']) * 1e3:.0f}) |",
    ]
    return "\n".join(lines) + "\n"


def publish(r):
    table = markdown(r)
    open(os.path.join(HERE, "cartpole.md"), "w").write(table)
    readme = os.path.join(ROOT, "bench", "README.md")
    text = open(readme).read()
    start, end = "<!-- cartpole -->", "<!-- /cartpole -->"
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end):]
        open(readme, "w").write(text)
    plot(r)
    print(table)


def plot(r):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for system, color, name in (("ours", "C0", "ours (tempo)"), ("torch", "C1", "PyTorch, CleanRL-style")):
        runs = r["runs"][system]
        x = range(1, len(runs[0]["returns"]) + 1)
        for run in runs:
            ax.plot(x, run["returns"], color=color, alpha=0.25, linewidth=0.8)
        ax.plot(x, mean_curve(runs), color=color, linewidth=2, label=f"{name}, mean of {len(runs)} seeds")
    c = r["config"]
    ax.axhline(c["steps"], color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean return of the iteration's episodes")
    ax.set_title(f"A2C on CartPole: {c['envs']} envs, T {c['steps']}, {c['layers']} x {c['width']}, lr {c['lr']:g}")
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "cartpole.png"), dpi=110)


if __name__ == "__main__":
    main()
