"""The RL benchmark: examples/ppo.rs (A2C as the Tempo artifact runs it, the
whole training run one compiled program, in float32, run by tempo-run with
--fast-math) against a CleanRL-style PyTorch
implementation of the same algorithm (baseline.py), on the artifact's
trivial environment. Interleaved rounds, medians; time per iteration (ours:
execution divided by the iterations, compile apart; PyTorch: the mean of the
iterations after the first), peak RSS of the whole process, our compile time.

    bench/rl/setup.sh                             # once (shares bench/.venv)
    bench/.venv/bin/python bench/rl/run.py [--quick] [--repeat 3]
    bench/.venv/bin/python bench/rl/run.py --redraw

Writes results.json, results.md (also into bench/README.md between the rl
markers) and rl.png.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PPO = os.path.join(ROOT, "target", "release", "examples", "ppo")
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
BASE = dict(envs=512, steps=250, layers=2, width=64, obs="3,4,4")


def configs(quick):
    """The base configuration, then one parameter swept at a time."""
    out = [dict(BASE, sweep="base"), dict(BASE, sweep="base", duplicate=True)]
    if quick:
        return out
    for envs in (128, 2048):
        out.append(dict(BASE, envs=envs, sweep="envs"))
    for steps in (125, 500):
        out.append(dict(BASE, steps=steps, sweep="steps"))
    for layers in (1, 4):
        out.append(dict(BASE, layers=layers, sweep="layers"))
    for width in (16, 256):
        out.append(dict(BASE, width=width, sweep="width"))
    return out


def label(c):
    text = f"{c['envs']} envs, T {c['steps']}, {c['layers']} x {c['width']}, obs {c['obs']}"
    return text + (", forward written twice" if c.get("duplicate") else "")


def timed(command):
    """(stdout, stderr, peak RSS MiB) of `command` run under GNU time."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + command, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"{command[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
        lines = rss.read().strip().splitlines()
    return p.stdout, p.stderr, int(lines[-1]) / 1024


def run_ours(c, iterations, seed, threads, directory, extra=()):
    """examples/ppo.rs's program (f32, written once per configuration with
    --mlir) run by tempo-run with fast math on `threads` threads."""
    twice = bool(c.get("duplicate"))
    name = f"ppo-{c['envs']}-{c['steps']}-{c['layers']}-{c['width']}-{c['obs']}{'-twice' if twice else ''}.mlir"
    program = os.path.join(directory, name)
    if not os.path.exists(program):
        text = subprocess.run([PPO, "--env", "trivial", "--envs", str(c["envs"]), "--steps", str(c["steps"]),
                               "--layers", str(c["layers"]), "--width", str(c["width"]), "--obs", c["obs"],
                               "--iterations", str(iterations), "--lr", "1e-4", "--dtype", "f32", "--mlir"]
                              + (["--duplicate-forward"] if twice else []),
                              capture_output=True, text=True, check=True).stdout
        open(program, "w").write(text)
    command = [TEMPO_RUN, program, "--bound", f"I={iterations}", "--bound", f"T={c['steps']}", "--seed", str(seed),
               "--fast-math", "--threads", str(threads), "--timings", *extra]
    out, err, rss = timed(command)
    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", err)
    returns = re.search(r"mean_return: \S+ = \[([^\]]*)\]", out).group(1)
    return dict(seconds_per_iteration=float(m.group(2)) / 1e3 / iterations, compile_s=float(m.group(1)) / 1e3,
                peak_rss_mib=rss, returns=[float(x) for x in returns.split(",")])


def run_torch(c, iterations, seed, threads):
    command = [sys.executable, os.path.join(HERE, "baseline.py"), "--envs", str(c["envs"]), "--steps", str(c["steps"]),
               "--layers", str(c["layers"]), "--width", str(c["width"]), "--obs", c["obs"], "--iterations",
               str(iterations), "--threads", str(threads), "--seed", str(seed)]
    out, _, rss = timed(command)
    r = json.loads(out.strip().splitlines()[-1])
    after_first = r["seconds"][1:] or r["seconds"]
    return dict(seconds_per_iteration=statistics.mean(after_first), peak_rss_mib=rss, returns=r["returns"],
                torch=r["torch"])


def git_head():
    p = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True,
                           text=True)
    return dict(commit=p.stdout.strip()[:80], uncommitted_changes=bool(dirty.stdout.strip()))


def cpu_name():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--redraw", action="store_true")
    a = ap.parse_args()
    path = os.path.join(HERE, "results.json")
    if a.redraw:
        publish(json.load(open(path)))
        return
    subprocess.run(["cargo", "build", "--release", "--example", "ppo", "--bin", "tempo-run"], cwd=ROOT, check=True)
    directory = tempfile.mkdtemp(prefix="tempo-rl-")
    load_before = os.getloadavg()
    cases = []
    for c in configs(a.quick):
        ours, torch, nodedup = [], [], []
        for r in range(a.repeat):
            ours.append(run_ours(c, a.iterations, r + 1, a.threads, directory))
            torch.append(run_torch(c, a.iterations, seed=r + 1, threads=a.threads))
            # The rollout's forward and the loss's forward are the same
            # computation; temporal-dedup merges them. Without it:
            nodedup.append(run_ours(c, a.iterations, r + 1, a.threads, directory, ["--disable-pass", "temporal-dedup"]))
            print(f"{label(c):45} round {r}: ours {ours[-1]['seconds_per_iteration'] * 1e3:9.1f} ms "
                  f"(compile {ours[-1]['compile_s']:.1f} s, {ours[-1]['peak_rss_mib']:.0f} MiB), torch "
                  f"{torch[-1]['seconds_per_iteration'] * 1e3:9.1f} ms ({torch[-1]['peak_rss_mib']:.0f} MiB)",
                  flush=True)
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        cases.append(dict(config=c, label=label(c), rounds=dict(ours=ours, torch=torch, nodedup=nodedup),
                          nodedup_ms=med(nodedup, "seconds_per_iteration") * 1e3,
                          ours_ms=med(ours, "seconds_per_iteration") * 1e3,
                          torch_ms=med(torch, "seconds_per_iteration") * 1e3,
                          ours_rss=med(ours, "peak_rss_mib"), torch_rss=med(torch, "peak_rss_mib"),
                          compile_s=med(ours, "compile_s"), ours_returns=ours[0]["returns"],
                          torch_returns=torch[0]["returns"]))
    results = dict(machine=cpu_name(), cores=os.cpu_count(), threads=a.threads, repeat=a.repeat,
                   iterations=a.iterations, load_before=load_before, load_after=os.getloadavg(),
                   torch=cases[0]["rounds"]["torch"][0]["torch"], tempo=git_head(), cases=cases)
    json.dump(results, open(path, "w"), indent=1)
    publish(results)


def markdown(r):
    t = r["tempo"]
    lines = [
        f"Machine: {r['machine']}, {r['cores']} cores; {r['threads']} threads for both; load average {r['load_before'][0]:.2f} before and {r['load_after'][0]:.2f} "
        f"after; median of {r['repeat']} interleaved rounds of {r['iterations']} iterations; PyTorch {r['torch']} "
        f"(float32); ours: the program of examples/ppo.rs in float32 (`--dtype f32 --mlir`) run by `tempo-run --fast-math`; tempo at `{t['commit']}`"
        + (" (with uncommitted changes)." if t["uncommitted_changes"] else "."),
        "",
        "| configuration | ours ms/iter | ours without temporal-dedup | PyTorch ms/iter | speed-up | compile (s) | peak RSS ours / PyTorch (MiB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in r["cases"]:
        lines.append(f"| {c['label']} | {c['ours_ms']:.1f} | {c.get('nodedup_ms', float('nan')):.1f} | {c['torch_ms']:.1f} | {c['torch_ms'] / c['ours_ms']:.2f}x "
                     f"| {c['compile_s']:.1f} | {c['ours_rss']:.0f} / {c['torch_rss']:.0f} |")
    return "\n".join(lines) + "\n"


def publish(r):
    table = markdown(r)
    open(os.path.join(HERE, "results.md"), "w").write(table)
    readme = os.path.join(ROOT, "bench", "README.md")
    text = open(readme).read()
    start, end = "<!-- rl -->", "<!-- /rl -->"
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end):]
        open(readme, "w").write(text)
    plot(r)
    print(table)


def plot(r):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = r["cases"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    x = range(len(cases))
    ax1.bar([i - 0.2 for i in x], [c["ours_ms"] for c in cases], 0.4, label="ours (tempo)")
    ax1.bar([i + 0.2 for i in x], [c["torch_ms"] for c in cases], 0.4, label="PyTorch, CleanRL-style")
    ax1.set_yscale("log")
    ax1.set_ylabel("ms per iteration")
    ax2.bar([i - 0.2 for i in x], [c["ours_rss"] for c in cases], 0.4, label="ours")
    ax2.bar([i + 0.2 for i in x], [c["torch_rss"] for c in cases], 0.4, label="PyTorch")
    ax2.set_ylabel("peak RSS (MiB)")
    for ax in (ax1, ax2):
        ax.set_xticks(list(x))
        ax.set_xticklabels([c["label"].replace(", obs", "\nobs") for c in cases], rotation=60, ha="right", fontsize=7)
        ax.legend()
    fig.suptitle("A2C on the artifact's trivial environment: one training iteration")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "rl.png"), dpi=110)


if __name__ == "__main__":
    main()
