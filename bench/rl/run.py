"""The RL benchmark: examples/ppo.rs (A2C as the Tempo artifact runs it, the
whole training run one compiled program, in float32, run by tempo-run with
--fast-math) against a CleanRL-style PyTorch
implementation of the same algorithm (baseline.py), on the artifact's
trivial environment. Interleaved rounds, medians; time per iteration (ours:
execution divided by the iterations, compile apart; PyTorch: the mean of the
iterations after the first), peak RSS of the whole process, our compile time
(as tempo-run reports it, and the whole run but the execution).

Then the memory sweep: larger observations (3,4,4 to 3,64,64) with 256
environments and T 1000, fewer iterations and one round; there the point is
peak RSS (the baseline stores all T x N observations: 12.6 GB of float32 at
3,64,64). Every run has its private writable memory limited (RLIMIT_DATA,
--memory-limit GiB, 16 by default); a run that exceeds it is recorded as out
of memory instead of taking the machine down.

    bench/rl/setup.sh                             # once (shares bench/.venv)
    bench/.venv/bin/python bench/rl/run.py [--quick] [--repeat 3] [--only timing|memory]
        [--bin-dir DIR]        # DIR/tempo-run and DIR/ppo (or $TEMPO_BENCH_BIN);
                               # default: cargo build, then target/release
    bench/.venv/bin/python bench/rl/run.py --redraw

Writes results.json, results.md (also into bench/README.md between the rl
markers) and rl.png; memory.json, memory.md (between the rl-memory markers)
and memory.png.
"""
import argparse
import json
import os
import re
import resource
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
MEMORY_BASE = dict(envs=256, steps=1000, layers=2, width=64)
MEMORY_OBS = ("3,4,4", "3,16,16", "3,32,32", "3,64,64")
# The private writable memory a run may take (RLIMIT_DATA: what malloc and
# anonymous mappings take; not the address space, of which PyTorch's CUDA
# build reserves some 3 GB it never touches).
MEMORY_LIMIT_GIB = 16
OOM = re.compile(r"can't allocate memory|Cannot allocate memory|MemoryError|bad_alloc|out of memory|"
                 r"memory allocation of \d+ bytes failed", re.I)


class OutOfMemory(Exception):
    pass


def configs(quick):
    """The base configuration, then one parameter swept at a time."""
    out = [dict(BASE, sweep="base"), dict(BASE, sweep="base", duplicate=True)]
    if quick:
        return out
    for envs in (128, 2048):
        out.append(dict(BASE, envs=envs, sweep="envs"))
    for steps in (125, 500, 2000):
        out.append(dict(BASE, steps=steps, sweep="steps"))
    for layers in (1, 4, 16):
        out.append(dict(BASE, layers=layers, sweep="layers"))
    for width in (16, 256):
        out.append(dict(BASE, width=width, sweep="width"))
    return out


def label(c):
    text = f"{c['envs']} envs, T {c['steps']}, {c['layers']} x {c['width']}, obs {c['obs']}"
    return text + (", forward written twice" if c.get("duplicate") else "")


def limit_memory():
    limit = MEMORY_LIMIT_GIB << 30
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def timed(command):
    """(stdout, stderr, peak RSS MiB, wall seconds) of `command` run under
    GNU time, its private writable memory limited; OutOfMemory where it ran
    out."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + command, capture_output=True, text=True,
                           preexec_fn=limit_memory)
        wall = time.perf_counter() - start
        lines = rss.read().strip().splitlines()
        if p.returncode != 0:
            if OOM.search(p.stderr):
                peak = int(lines[-1]) / 1024 if lines and lines[-1].strip().isdigit() else None
                raise OutOfMemory(dict(peak_rss_mib=peak, stderr=p.stderr[-1500:]))
            raise RuntimeError(f"{command[0]} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p.stdout, p.stderr, int(lines[-1]) / 1024, wall


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
    out, err, rss, wall = timed(command)
    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", err)
    returns = re.search(r"mean_return: \S+ = \[([^\]]*)\]", out).group(1)
    # tempo-run's "compile" counts the temporal optimizations, the lowering
    # and the JIT, not the gradients' expansion nor the checks and the
    # schedule before them; `startup_s` is everything but the execution.
    execute = float(m.group(2)) / 1e3
    return dict(seconds_per_iteration=execute / iterations, compile_s=float(m.group(1)) / 1e3,
                startup_s=wall - execute, peak_rss_mib=rss, returns=[float(x) for x in returns.split(",")])


def run_torch(c, iterations, seed, threads):
    command = [sys.executable, os.path.join(HERE, "baseline.py"), "--envs", str(c["envs"]), "--steps", str(c["steps"]),
               "--layers", str(c["layers"]), "--width", str(c["width"]), "--obs", c["obs"], "--iterations",
               str(iterations), "--threads", str(threads), "--seed", str(seed)]
    out, _, rss, _ = timed(command)
    r = json.loads(out.strip().splitlines()[-1])
    after_first = r["seconds"][1:] or r["seconds"]
    return dict(seconds_per_iteration=statistics.mean(after_first), peak_rss_mib=rss, returns=r["returns"],
                torch=r["torch"])


def attempt(run):
    """run(), or a record of its running out of memory."""
    try:
        return run()
    except OutOfMemory as e:
        return dict(out_of_memory=True, limit_gib=MEMORY_LIMIT_GIB, **e.args[0])


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
    global PPO, TEMPO_RUN, MEMORY_LIMIT_GIB
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--slow-iterations", type=int, default=None,
                    help="iterations for the slow configurations (T 2000, 16 layers); default --iterations")
    ap.add_argument("--memory-iterations", type=int, default=3)
    ap.add_argument("--memory-repeat", type=int, default=1)
    ap.add_argument("--memory-limit", type=int, default=MEMORY_LIMIT_GIB, help="GiB of private writable memory per run")
    ap.add_argument("--only", choices=["timing", "memory"], default=None)
    ap.add_argument("--bin-dir", default=os.environ.get("TEMPO_BENCH_BIN"),
                    help="a directory holding tempo-run and ppo (default: $TEMPO_BENCH_BIN, else cargo build and "
                         "target/release)")
    ap.add_argument("--bin-note", default=None, help="where the binaries came from, for the tables' header line")
    ap.add_argument("--redraw", action="store_true")
    a = ap.parse_args()
    MEMORY_LIMIT_GIB = a.memory_limit
    path, memory_path = os.path.join(HERE, "results.json"), os.path.join(HERE, "memory.json")
    if a.redraw:
        if a.only != "memory" and os.path.exists(path):
            publish(json.load(open(path)))
        if a.only != "timing" and os.path.exists(memory_path):
            publish_memory(json.load(open(memory_path)))
        return
    if a.bin_dir:
        PPO, TEMPO_RUN = os.path.join(a.bin_dir, "ppo"), os.path.join(a.bin_dir, "tempo-run")
    else:
        subprocess.run(["cargo", "build", "--release", "--example", "ppo", "--bin", "tempo-run"], cwd=ROOT, check=True)
    directory = tempfile.mkdtemp(prefix="tempo-rl-")
    a.tempo = git_head()  # at the start: the tree the binaries were built from, more likely than at the end
    if a.only != "memory":
        results = timing(a, directory)
        json.dump(results, open(path, "w"), indent=1)
        publish(results)
    if a.only != "timing" and not a.quick:
        results = memory(a, directory)
        json.dump(results, open(memory_path, "w"), indent=1)
        publish_memory(results)


def slow(c):
    return c["steps"] >= 2000 or c["layers"] >= 16


def header(a, load_before, cases):
    return dict(machine=cpu_name(), cores=os.cpu_count(), threads=a.threads, load_before=load_before,
                load_after=os.getloadavg(), torch=next((x["torch"] for c in cases for x in c["rounds"]["torch"]
                                                       if "torch" in x), "?"),
                tempo=a.tempo, binaries=os.path.dirname(TEMPO_RUN), bin_note=a.bin_note,
                memory_limit_gib=MEMORY_LIMIT_GIB,
                binaries_built=time.strftime("%Y-%m-%d %H:%M", time.localtime(os.path.getmtime(TEMPO_RUN)))
                if os.path.dirname(TEMPO_RUN) != os.path.join(ROOT, "target", "release") else None)


def timing(a, directory):
    load_before = os.getloadavg()
    cases = []
    for c in configs(a.quick):
        iterations = a.slow_iterations if a.slow_iterations and slow(c) else a.iterations
        ours, torch, nodedup = [], [], []
        for r in range(a.repeat):
            ours.append(run_ours(c, iterations, r + 1, a.threads, directory))
            torch.append(run_torch(c, iterations, seed=r + 1, threads=a.threads))
            # The rollout's forward and the loss's forward are the same
            # computation; temporal-dedup merges them. Without it:
            nodedup.append(run_ours(c, iterations, r + 1, a.threads, directory, ["--disable-pass", "temporal-dedup"]))
            ours[-1]["load"] = torch[-1]["load"] = nodedup[-1]["load"] = os.getloadavg()[0]
            print(f"{label(c):45} round {r}: ours {ours[-1]['seconds_per_iteration'] * 1e3:9.1f} ms "
                  f"(compile {ours[-1]['compile_s']:.1f} s of {ours[-1]['startup_s']:.1f} s, {ours[-1]['peak_rss_mib']:.0f} MiB), torch "
                  f"{torch[-1]['seconds_per_iteration'] * 1e3:9.1f} ms ({torch[-1]['peak_rss_mib']:.0f} MiB), "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        cases.append(dict(config=c, label=label(c), iterations=iterations,
                          rounds=dict(ours=ours, torch=torch, nodedup=nodedup),
                          nodedup_ms=med(nodedup, "seconds_per_iteration") * 1e3,
                          ours_ms=med(ours, "seconds_per_iteration") * 1e3,
                          torch_ms=med(torch, "seconds_per_iteration") * 1e3,
                          ours_rss=med(ours, "peak_rss_mib"), torch_rss=med(torch, "peak_rss_mib"),
                          compile_s=med(ours, "compile_s"), startup_s=med(ours, "startup_s"), ours_returns=ours[0]["returns"],
                          torch_returns=torch[0]["returns"]))
    return dict(header(a, load_before, cases), repeat=a.repeat, iterations=a.iterations, cases=cases)


def memory(a, directory):
    """Larger observations, 256 environments, T 1000: peak RSS and ms per
    iteration, one round of a few iterations; out of memory recorded."""
    load_before = os.getloadavg()
    cases = []
    for obs in MEMORY_OBS:
        c = dict(MEMORY_BASE, obs=obs, sweep="memory")
        ours, torch = [], []
        for r in range(a.memory_repeat):
            ours.append(attempt(lambda: run_ours(c, a.memory_iterations, r + 1, a.threads, directory)))
            torch.append(attempt(lambda: run_torch(c, a.memory_iterations, seed=r + 1, threads=a.threads)))
            ours[-1]["load"] = torch[-1]["load"] = os.getloadavg()[0]
            show = lambda x: ("out of memory" if x.get("out_of_memory") else
                              f"{x['seconds_per_iteration'] * 1e3:9.1f} ms ({x['peak_rss_mib']:.0f} MiB)")
            print(f"{label(c):45} round {r}: ours {show(ours[-1])}, torch {show(torch[-1])}, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)

        def med(xs, k, scale=1):
            ok = [x[k] for x in xs if not x.get("out_of_memory")]
            return statistics.median(ok) * scale if ok else "out of memory"
        channels, h, w = (int(x) for x in obs.split(","))
        cases.append(dict(config=c, label=label(c), rounds=dict(ours=ours, torch=torch),
                          observation_floats=channels * h * w,
                          stored_observations_mib=channels * h * w * c["envs"] * c["steps"] * 4 / 2 ** 20,
                          ours_ms=med(ours, "seconds_per_iteration", 1e3),
                          torch_ms=med(torch, "seconds_per_iteration", 1e3),
                          ours_rss=med(ours, "peak_rss_mib"), torch_rss=med(torch, "peak_rss_mib"),
                          compile_s=med(ours, "compile_s"), startup_s=med(ours, "startup_s")))
    return dict(header(a, load_before, cases), repeat=a.memory_repeat, iterations=a.memory_iterations,
                cases=cases)


def provenance(r):
    t = r["tempo"]
    head = f"`{t['commit']}`" + (" (with uncommitted changes)" if t["uncommitted_changes"] else "")
    if not r.get("binaries_built"):
        return f"tempo at {head}."
    note = f", {r['bin_note']}" if r.get("bin_note") else ""
    return f"tempo: binaries from `{r['binaries']}` (built {r['binaries_built']}{note}); the repository at {head} when the run began."


def markdown(r):
    counts = sorted({c.get("iterations", r["iterations"]) for c in r["cases"]}, reverse=True)
    iterations = f"{r['iterations']} iterations"
    if len(counts) > 1:
        fewer = [c["label"] for c in r["cases"] if c.get("iterations", r["iterations"]) != r["iterations"]]
        iterations += f" ({', '.join(str(k) for k in counts if k != r['iterations'])} for {'; '.join(fewer)})"
    lines = [
        f"Machine: {r['machine']}, {r['cores']} cores; {r['threads']} threads for both; load average {r['load_before'][0]:.2f} before and {r['load_after'][0]:.2f} "
        f"after; median of {r['repeat']} interleaved rounds of {iterations}, and in parentheses the best round (the "
        f"least disturbed by other load: PyTorch's two threads suffer most from it); PyTorch {r['torch']} "
        f"(float32); ours: the program of examples/ppo.rs in float32 (`--dtype f32 --mlir`) run by `tempo-run --fast-math`; "
        + provenance(r),
        "",
        "| configuration | ours ms/iter | ours without temporal-dedup | PyTorch ms/iter | speed-up | compile (s): reported / all but execution | peak RSS ours / PyTorch (MiB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in r["cases"]:
        best = {k: min(x["seconds_per_iteration"] for x in c["rounds"][k]) * 1e3 for k in ("ours", "torch", "nodedup")}
        lines.append(f"| {c['label']} | {c['ours_ms']:.1f} ({best['ours']:.1f}) | {c.get('nodedup_ms', float('nan')):.1f} "
                     f"({best['nodedup']:.1f}) | {c['torch_ms']:.1f} ({best['torch']:.1f}) | {c['torch_ms'] / c['ours_ms']:.2f}x "
                     f"({best['torch'] / best['ours']:.2f}x) | {c['compile_s']:.1f} / {startup(c)} | {c['ours_rss']:.0f} / {c['torch_rss']:.0f} |")
    return "\n".join(lines) + "\n"


def startup(c):
    x = c.get("startup_s")
    return "?" if x is None else number(x, ".1f")


def number(x, form):
    return "OOM" if isinstance(x, str) else format(x, form)


def memory_markdown(r):
    lines = [
        f"Machine: {r['machine']}, {r['cores']} cores; {r['threads']} threads for both; load average {r['load_before'][0]:.2f} before and "
        f"{r['load_after'][0]:.2f} after; {r['repeat']} round{'s' if r['repeat'] != 1 else ''} of {r['iterations']} iterations "
        f"(PyTorch's time: the mean of the iterations after the first); each run limited to {r['memory_limit_gib']} GiB of private "
        f"writable memory (RLIMIT_DATA), OOM where it ran out; PyTorch {r['torch']} (float32); ours: examples/ppo.rs's program in float32 run by `tempo-run --fast-math`; " + provenance(r),
        "",
        "| configuration | observations PyTorch stores (MiB) | ours ms/iter | PyTorch ms/iter | speed-up | compile (s): reported / all but execution | peak RSS ours (MiB) | peak RSS PyTorch (MiB) |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for c in r["cases"]:
        both = not isinstance(c["ours_ms"], str) and not isinstance(c["torch_ms"], str)
        lines.append(f"| {c['label']} | {c['stored_observations_mib']:,.0f} | {number(c['ours_ms'], '.1f')} | "
                     f"{number(c['torch_ms'], '.1f')} | {format(c['torch_ms'] / c['ours_ms'], '.2f') + 'x' if both else '-'} | "
                     f"{number(c['compile_s'], '.1f')} / {startup(c)} | {number(c['ours_rss'], ',.0f')} | {number(c['torch_rss'], ',.0f')} |")
    return "\n".join(lines) + "\n"


def into_readme(name, table):
    readme = os.path.join(ROOT, "bench", "README.md")
    text = open(readme).read()
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end):]
        open(readme, "w").write(text)


def publish(r):
    table = markdown(r)
    open(os.path.join(HERE, "results.md"), "w").write(table)
    into_readme("rl", table)
    plot(r)
    print(table)


def publish_memory(r):
    table = memory_markdown(r)
    open(os.path.join(HERE, "memory.md"), "w").write(table)
    into_readme("rl-memory", table)
    plot_memory(r)
    print(table)


def plot_memory(r):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = r["cases"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = [c["observation_floats"] for c in cases]
    for key, name, marker in (("ours", "ours (tempo)", "o"), ("torch", "PyTorch, CleanRL-style", "s")):
        for ax, field in ((ax1, f"{key}_rss"), (ax2, f"{key}_ms")):
            points = [(xi, c[field]) for xi, c in zip(x, cases) if not isinstance(c[field], str)]
            line, = ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, label=name)
            for xi, c in zip(x, cases):
                if isinstance(c[field], str):
                    # Out of memory: on the limit's line, or (time) at the foot.
                    at = (xi, r["memory_limit_gib"] * 1024) if ax is ax1 else (xi, 0.04 + 0.08 * (key == "ours"))
                    coords = "data" if ax is ax1 else ("data", "axes fraction")
                    ax.scatter([at[0]], [at[1]], marker="x", s=80, color=line.get_color(),
                               transform=ax.transData if ax is ax1 else ax.get_xaxis_transform())
                    ax.annotate(f"{name.split(',')[0]}: out of memory", at, xycoords=coords, textcoords="offset points",
                                xytext=(-110, -14 if ax is ax1 else 6), fontsize=8, color=line.get_color())
    ax1.plot(x, [c["stored_observations_mib"] for c in cases], ":", color="gray",
             label="T x N observations (float32)")
    ax1.axhline(r["memory_limit_gib"] * 1024, color="red", lw=0.8, ls="--", label=f"limit ({r['memory_limit_gib']} GiB)")
    ax1.set_ylabel("peak RSS (MiB)")
    ax2.set_ylabel("ms per iteration")
    ax2.set_title(f"one round; load average {r['load_before'][0]:.1f} to {r['load_after'][0]:.1f} on {r['cores']} cores",
                  fontsize=9)
    for ax in (ax1, ax2):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(x)
        ax.set_xticklabels([c["config"]["obs"] for c in cases])
        ax.set_xlabel("observation (C,H,W)")
        ax.legend(fontsize=8)
    fig.suptitle(f"A2C, {cases[0]['config']['envs']} environments, T {cases[0]['config']['steps']}: larger observations")
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "memory.png"), dpi=110)


def plot(r):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    cases = r["cases"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
    x = range(len(cases))
    best = lambda c, k: min(x["seconds_per_iteration"] for x in c["rounds"][k]) * 1e3
    ax1.bar([i - 0.2 for i in x], [best(c, "ours") for c in cases], 0.4, label="ours (tempo)")
    ax1.bar([i + 0.2 for i in x], [best(c, "torch") for c in cases], 0.4, label="PyTorch, CleanRL-style")
    ax1.set_yscale("log")
    ax1.set_ylabel(f"ms per iteration (best of {r['repeat']} rounds)")
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
