"""Temporal optimizations benchmark: time per step of `tempo-run` with the
default pipeline (-O2), with each temporal pass left out
(`--disable-pass`), and with all of them left out.

    bench/.venv/bin/python bench/optimize/run.py [--quick] [--repeat N] [--threads N]

Programs: running statistics over the whole history (sums and maxima of
r[0:t+1], lifted to recurrences by temporal-lift-recurrences), moving sums
of integer counts over 256 steps (a difference of running sums), an RL step
with a duplicated policy network (merged by temporal-dedup), and the causal
and window-attention decodes of examples/gpt.rs (2 layers, width 64). The
configurations of one program and T are interleaved (one of each per
round, the order rotating); medians of the execute time are reported with
the load average. LLVM's level stays -O2 throughout. Results go to
bench/optimize/results.json, results.md (copied into bench/README.md) and
ms_per_step.png.

    bench/.venv/bin/python bench/optimize/run.py --vectorization [--repeat N]

measures temporal-vectorize instead: GPT-2 small at batch 8 (seeded
weights) with the batch in the point shape, with the batch as a temporal
dimension (examples/gpt.rs --batch-dim, vectorized by -O2), and the latter
with --disable-pass temporal-vectorize, interleaved; results in
vectorization.json, vectorization.md and vectorization.png.

    bench/.venv/bin/python bench/optimize/run.py --tiling [--repeat N]

measures temporal-tile-ranges: a causal-attention decode at -O2 (softmax
over the whole range), at -O3 (attention in static blocks of 64 with a
running maximum and sum) and at -O3 without the pass; results in
tiling.json, tiling.md and tiling.png.

    bench/.venv/bin/python bench/optimize/run.py --incrementalization [--repeat N]

measures the incrementalization of temporal-lift-recurrences: a loss over
a whole trajectory (trajectory_loss.mlir) and a gradient accumulation
(gradient_accumulation.mlir) at T = 1,000 to 100,000, peak store bytes and
time per step at -O2 and without the pass; results in
incrementalization.json, incrementalization.md and incrementalization.png.

    bench/.venv/bin/python bench/optimize/run.py --fusion [--repeat N]

measures the fusion of lower-temporal-to-loops (row groups, reshape views,
contraction fills): GPT-2-shaped decodes with it and without it
(--disable-pass fusion), time per step and loop nests per point; results
in fusion.json, fusion.md and fusion.png.

    bench/.venv/bin/python bench/optimize/run.py --memory-budget [--repeat N]

measures -O2 with --memory-budget (attention tiled where its temporaries
would exceed it) on 64 queries per step over a growing cache
(many_queries.mlir): peak resident memory and time per step; results in
memory_budget.json, memory_budget.md and memory_budget.png.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
GPT = os.path.join(ROOT, "target", "release", "examples", "gpt")
PASSES = ["temporal-dce", "temporal-dedup", "temporal-simplify", "temporal-lift-recurrences"]
CONFIGS = [("default -O2", [])] + [(f"without {p}", [p]) for p in PASSES] + [("no temporal passes", PASSES)]


def programs(quick, directory):
    gpt = {}
    for name, extra in [("causal", []), ("window", ["--window", "64"])]:
        path = os.path.join(directory, f"gpt_{name}.mlir")
        text = subprocess.run(
            [GPT, "--layers", "2", "--heads", "2", "--width", "64", "--mlir"] + extra,
            check=True, capture_output=True, text=True,
        ).stdout
        with open(path, "w") as f:
            f.write(text)
        gpt[name] = path
    steps = [512, 1024] if quick else [512, 1024, 2048, 4096]
    return [
        ("running statistics (64 wide)", os.path.join(HERE, "running_statistics.mlir"), {}, steps),
        ("moving integer sums (w = 256)", os.path.join(HERE, "moving_counts.mlir"), {}, steps),
        ("duplicated policy (256 wide)", os.path.join(HERE, "duplicated_policy.mlir"), {}, steps),
        ("causal attention decode", gpt["causal"], {"L": 2}, steps),
        ("window-64 attention decode", gpt["window"], {"L": 2}, steps),
    ]


def run_one(program, bounds, steps, disabled, threads, level="2"):
    command = [TEMPO_RUN, program, "--bound", f"T={steps}", "--seed", "1", "--format", "none", "--timings"]
    command += ["-O", level]
    command += ["--threads", str(threads)]
    for name, value in bounds.items():
        command += ["--bound", f"{name}={value}"]
    for p in disabled:
        command += ["--disable-pass", p]
    load = os.getloadavg()[0]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stderr
    m = re.search(r"compile ([0-9.]+) ms, execute ([0-9.]+) ms", out)
    return float(m.group(1)), float(m.group(2)), load


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for title, program, bounds, steps_list in programs(args.quick, directory):
            for steps in steps_list:
                samples = {name: [] for name, _ in CONFIGS}
                loads = []
                for r in range(args.repeat):
                    order = CONFIGS[r % len(CONFIGS):] + CONFIGS[: r % len(CONFIGS)]
                    for name, disabled in order:
                        compile_ms, execute_ms, load = run_one(program, bounds, steps, disabled, args.threads)
                        samples[name].append((compile_ms, execute_ms))
                        loads.append(load)
                for name, _ in CONFIGS:
                    execute = statistics.median(e for _, e in samples[name])
                    compile_ms = statistics.median(c for c, _ in samples[name])
                    rows.append(dict(program=title, T=steps, config=name, execute_ms=execute,
                                     ms_per_step=execute / steps, compile_ms=compile_ms,
                                     load=statistics.median(loads)))
                    print(f"{title:32} T={steps:5} {name:38} {execute / steps:9.4f} ms/step  compile {compile_ms:7.1f} ms")
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(dict(threads=args.threads, repeat=args.repeat, cpus=os.cpu_count(), rows=rows), f, indent=1)
    write_markdown(rows, args)
    plot(rows)


def write_markdown(rows, args):
    programs_seen = []
    for r in rows:
        if r["program"] not in programs_seen:
            programs_seen.append(r["program"])
    names = [name for name, _ in CONFIGS]
    lines = [
        f"Median ms per step over {args.repeat} interleaved rounds, {args.threads} threads "
        f"(load average {statistics.median(r['load'] for r in rows):.2f} on {os.cpu_count()} CPUs). "
        "Each column leaves one temporal pass out of the default pipeline; the ratio is the slowest "
        "configuration over the default.",
        "",
        "| program | T | " + " | ".join(names) + " | slowest / default |",
        "| --- | ---: | " + " | ".join("---:" for _ in names) + " | ---: |",
    ]
    for p in programs_seen:
        for steps in sorted({r["T"] for r in rows if r["program"] == p}):
            cells = {r["config"]: r["ms_per_step"] for r in rows if r["program"] == p and r["T"] == steps}
            ratio = max(cells.values()) / cells[names[0]]
            lines.append(f"| {p} | {steps} | " + " | ".join(f"{cells[n]:.3g}" for n in names) + f" | {ratio:.1f}x |")
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def plot(rows):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    programs_seen = []
    for r in rows:
        if r["program"] not in programs_seen:
            programs_seen.append(r["program"])
    fig, axes = plt.subplots(1, len(programs_seen), figsize=(4.2 * len(programs_seen), 3.6))
    for ax, p in zip(axes, programs_seen):
        for name, _ in CONFIGS:
            points = sorted((r["T"], r["ms_per_step"]) for r in rows if r["program"] == p and r["config"] == name)
            ax.plot([t for t, _ in points], [v for _, v in points], marker="o", label=name)
        ax.set_title(p, fontsize=9)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("T (steps)")
        ax.set_ylabel("ms per step")
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "ms_per_step.png"), dpi=110)


def save_rows(file, args, rows):
    """The rows of a run, with its threads, rounds and CPU count, as JSON."""
    with open(os.path.join(HERE, file), "w") as f:
        json.dump(dict(threads=args.threads, repeat=args.repeat, cpus=os.cpu_count(), rows=rows), f, indent=1)


def interleaved(configs, repeat, run):
    """Runs every configuration `(name, a, b)` of `configs` once per round
    as `run(a, b)` (which returns `run_one`'s triple), the order rotating
    from round to round; returns the execute times by name and the load
    averages."""
    samples = {name: [] for name, _, _ in configs}
    loads = []
    for r in range(repeat):
        k = r % len(configs)
        for name, a, b in configs[k:] + configs[:k]:
            _, execute, load = run(a, b)
            samples[name].append(execute)
            loads.append(load)
    return samples, loads


def write_ratio_table(file, caption, names, rows, key, digits):
    """A markdown table into `file`: one row per T, one column per
    configuration (`names`), each cell the value of `key` and its ratio to
    the first configuration's."""
    lines = [
        caption,
        "",
        "| T | " + " | ".join(names) + " |",
        "| ---: | " + " | ".join("---:" for _ in names) + " |",
    ]
    for steps in sorted({r["T"] for r in rows}):
        cells = {r["config"]: r[key] for r in rows if r["T"] == steps}
        base = cells[names[0]]
        lines.append(
            f"| {steps} | " + " | ".join(f"{cells[n]:.{digits}f} ({cells[n] / base:.2f}x)" for n in names) + " |"
        )
    with open(os.path.join(HERE, file), "w") as f:
        f.write("\n".join(lines) + "\n")


VECTORIZATION = [
    ("batch 8 in the point shape", [], []),
    ("batch as a dimension (vectorized)", ["--batch-dim"], []),
    ("batch as a dimension, without temporal-vectorize", ["--batch-dim"], ["temporal-vectorize"]),
]


def vectorization(args):
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        paths = {}
        for name, flags, _ in VECTORIZATION:
            key = " ".join(flags)
            if key not in paths:
                path = os.path.join(directory, f"gpt{len(paths)}.mlir")
                text = subprocess.run(
                    [GPT, "--layers", "12", "--heads", "12", "--width", "768", "--batch", "8", "--mlir"] + flags,
                    check=True, capture_output=True, text=True,
                ).stdout
                with open(path, "w") as f:
                    f.write(text)
                paths[key] = path
        for steps in [32, 128]:
            def one(flags, disabled):
                bounds = {"L": 12, "B": 8} if flags else {"L": 12}
                return run_one(paths[" ".join(flags)], bounds, steps, disabled, args.threads)

            samples, loads = interleaved(VECTORIZATION, args.repeat, one)
            for name, _, _ in VECTORIZATION:
                ms = statistics.median(samples[name]) / steps
                rows.append(dict(config=name, T=steps, ms_per_token=ms, load=statistics.median(loads)))
                print(f"T={steps:4} {name:52} {ms:8.2f} ms/token")
    save_rows("vectorization.json", args, rows)
    names = [name for name, _, _ in VECTORIZATION]
    caption = (
        f"GPT-2 small, batch 8, median ms/token over {args.repeat} interleaved rounds, {args.threads} threads "
        f"(load average {statistics.median(r['load'] for r in rows):.2f} on {os.cpu_count()} CPUs); the ratio is "
        "each configuration over the batch in the point shape."
    )
    write_ratio_table("vectorization.md", caption, names, rows, "ms_per_token", 1)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    steps_list = sorted({r["T"] for r in rows})
    width = 0.25
    for k, name in enumerate(names):
        values = [next(r["ms_per_token"] for r in rows if r["config"] == name and r["T"] == t) for t in steps_list]
        ax.bar([i + (k - 1) * width for i in range(len(steps_list))], values, width, label=name)
    ax.set_xticks(range(len(steps_list)), [f"T = {t}" for t in steps_list])
    ax.set_ylabel("ms per token")
    ax.set_title("GPT-2 small, batch 8", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "vectorization.png"), dpi=110)


TILING = [
    ("-O2 (softmax over the whole range)", "2", []),
    ("-O3 (temporal-tile-ranges, blocks of 64)", "3", []),
    ("-O3 without temporal-tile-ranges", "3", ["temporal-tile-ranges"]),
]


def tiling(args):
    """Causal-attention decode (examples/gpt.rs, 2 layers, 4 heads of 64,
    width 256): time per step with attention tiled into static blocks (-O3)
    and not (-O2, and -O3 with the pass left out), interleaved."""
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "gpt.mlir")
        text = subprocess.run(
            [GPT, "--layers", "2", "--heads", "4", "--width", "256", "--mlir"],
            check=True, capture_output=True, text=True,
        ).stdout
        with open(path, "w") as f:
            f.write(text)
        for steps in [512, 1024, 2048, 4096]:
            samples, loads = interleaved(
                TILING, args.repeat, lambda level, disabled: run_one(path, {"L": 2}, steps, disabled, args.threads, level)
            )
            for name, _, _ in TILING:
                ms = statistics.median(samples[name]) / steps
                rows.append(dict(config=name, T=steps, ms_per_step=ms, load=statistics.median(loads)))
                print(f"T={steps:5} {name:45} {ms:8.3f} ms/step")
    save_rows("tiling.json", args, rows)
    names = [name for name, _, _ in TILING]
    caption = (
        f"Causal-attention decode (2 layers, 4 heads of 64), median ms/step over {args.repeat} interleaved rounds, "
        f"{args.threads} threads (load average {statistics.median(r['load'] for r in rows):.2f} on "
        f"{os.cpu_count()} CPUs); the ratio is each configuration over -O2."
    )
    write_ratio_table("tiling.md", caption, names, rows, "ms_per_step", 3)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name in names:
        points = sorted((r["T"], r["ms_per_step"]) for r in rows if r["config"] == name)
        ax.plot([t for t, _ in points], [v for _, v in points], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("T (steps)")
    ax.set_ylabel("ms per step")
    ax.set_title("causal-attention decode: tiled and untiled softmax", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "tiling.png"), dpi=110)


FUSION = [("-O2 (fused)", []), ("-O2 without fusion", ["fusion"])]
TEMPO_OPT = os.path.join(ROOT, "target", "release", "tempo-opt")


def loop_nests(program, fuse):
    """Loop nests of the lowered program directly inside its time loops
    (linalg ops and scf loops not inside another such loop; the arms of a
    tensor's branches all count), as lower-temporal-to-loops writes them."""
    option = "" if fuse else "{fuse=false}"
    text = subprocess.run(
        [TEMPO_OPT, program, "-O2", f"--pass-pipeline=temporal-verify, temporal-schedule, lower-temporal-to-loops{option}"],
        check=True, capture_output=True, text=True,
    ).stdout
    start = re.compile(r"^\s*(?:%[\w#:]+(?:, %[\w#:]+)* = )?(affine\.for|scf\.for|scf\.parallel|scf\.if|affine\.if|linalg\.\w+)")
    stack, count = [], 0
    for line in text.splitlines():
        while re.search(r"\{[^{}]*\}", line):
            line = re.sub(r"\{[^{}]*\}", "", line)
        m = start.match(line)
        kind = m.group(1) if m else None
        in_time = "affine.for" in stack
        inside_loop = any(k in ("scf.for", "scf.parallel") or k.startswith("linalg") for k in stack)
        if kind and kind not in ("affine.for", "scf.if", "affine.if", "linalg.yield") and in_time and not inside_loop:
            count += 1
        for _ in range(line.count("}")):
            if stack:
                stack.pop()
        for _ in range(line.count("{")):
            stack.append(kind or "other")
    return count


def fusion(args):
    """GPT-2-shaped decodes (examples/gpt.rs): GPT-2 small (12 layers, 12
    heads, width 768) at batch 1 and 8, and a narrow model with long
    causal attention (2 layers, 4 heads of 64, T = 1024); and a recurrence
    of row norms and softmax with no matrix product
    (normalized_recurrence.mlir); time per step with lower-temporal-to-loops'
    fusion and without (`--disable-pass fusion`), interleaved, and the loop
    nests per point of each."""
    cases = [
        ("GPT-2 small, batch 1, T = 32", ["--layers", "12", "--heads", "12", "--width", "768", "--batch", "1"], 12, 32),
        ("GPT-2 small, batch 8, T = 32", ["--layers", "12", "--heads", "12", "--width", "768", "--batch", "8"], 12, 32),
        ("4 heads of 64, batch 1, T = 1024", ["--layers", "2", "--heads", "4", "--width", "256", "--batch", "1"], 2, 1024),
        ("4 heads of 64, batch 8, T = 1024", ["--layers", "2", "--heads", "4", "--width", "256", "--batch", "8"], 2, 1024),
        # No matrix products: norms and softmax of 64 rows of 2,048.
        ("row norms and softmax, T = 64", None, None, 64),
    ]
    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for k, (title, flags, layers, steps) in enumerate(cases):
            if flags is None:
                path, bounds = os.path.join(HERE, "normalized_recurrence.mlir"), {}
            else:
                path, bounds = os.path.join(directory, f"gpt{k}.mlir"), {"L": layers}
                text = subprocess.run([GPT, "--mlir"] + flags, check=True, capture_output=True, text=True).stdout
                with open(path, "w") as f:
                    f.write(text)
            nests = {name: loop_nests(path, not disabled) for name, disabled in FUSION}
            samples, loads = interleaved(
                [(name, disabled, None) for name, disabled in FUSION],
                args.repeat,
                lambda disabled, _: run_one(path, bounds, steps, disabled, args.threads),
            )
            for name, _ in FUSION:
                ms = statistics.median(samples[name]) / steps
                rows.append(dict(case=title, config=name, T=steps, ms_per_step=ms, loop_nests=nests[name],
                                 load=statistics.median(loads)))
                print(f"{title:36} {name:22} {ms:9.3f} ms/step  {nests[name]:3} loop nests per point")
    save_rows("fusion.json", args, rows)
    lines = [
        f"Median ms per step over {args.repeat} interleaved rounds, {args.threads} threads (load average "
        f"{statistics.median(r['load'] for r in rows):.2f} on {os.cpu_count()} CPUs); loop nests per (t, l) "
        "point as lower-temporal-to-loops writes them (every arm of a branch counted, and the matrix kernel's loop "
        "over leftover columns where the panels do not divide the columns; the last row has no layers: per t).",
        "",
        "| decode | fused ms/step | unfused ms/step | unfused / fused | fused loop nests | unfused loop nests |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for title, *_ in cases:
        fused = next(r for r in rows if r["case"] == title and r["config"] == FUSION[0][0])
        unfused = next(r for r in rows if r["case"] == title and r["config"] == FUSION[1][0])
        lines.append(
            f"| {title} | {fused['ms_per_step']:.3f} | {unfused['ms_per_step']:.3f} | "
            f"{unfused['ms_per_step'] / fused['ms_per_step']:.2f}x | {fused['loop_nests']} | {unfused['loop_nests']} |"
        )
    with open(os.path.join(HERE, "fusion.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    titles = [c[0] for c in cases]
    width = 0.38
    for k, (name, _) in enumerate(FUSION):
        ratios = []
        for title in titles:
            fused = next(r for r in rows if r["case"] == title and r["config"] == FUSION[0][0])
            mine = next(r for r in rows if r["case"] == title and r["config"] == name)
            ratios.append(mine["ms_per_step"] / fused["ms_per_step"])
        ax.bar([i + (k - 0.5) * width for i in range(len(titles))], ratios, width, label=name)
    ax.set_xticks(range(len(titles)), [t.replace(", T", "\nT") for t in titles], fontsize=6)
    ax.set_ylabel("time per step / fused")
    ax.set_title("lower-temporal-to-loops fusion", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "fusion.png"), dpi=110)


BUDGET = [("-O2", None), ("-O2 --memory-budget 1000000", 1000000)]


def memory_budget(args):
    """Attention of 64 queries per step over a growing cache
    (many_queries.mlir): peak resident memory of the process and time per
    step at -O2 and with a memory budget of 1 MB, under which -O2 tiles the
    attention (its scores, exponentials and weights, 3 * 64 * 4 bytes per
    cached position, no longer fit)."""
    import resource

    program = os.path.join(HERE, "many_queries.mlir")
    rows = []
    for steps in [2000, 4000, 8000]:
        samples = {name: [] for name, _ in BUDGET}
        peaks = {name: [] for name, _ in BUDGET}
        loads = []
        for r in range(args.repeat):
            k = r % len(BUDGET)
            for name, budget in BUDGET[k:] + BUDGET[:k]:
                command = [TEMPO_RUN, program, "--bound", f"T={steps}", "--seed", "1", "--format", "none",
                           "--timings", "--threads", str(args.threads)]
                if budget is not None:
                    command += ["--memory-budget", str(budget)]
                loads.append(os.getloadavg()[0])
                # Peak resident set of this child alone: run it through a
                # fresh Python that reports its own child's maximum.
                probe = ("import resource,subprocess,sys;"
                         "p=subprocess.run(sys.argv[1:],capture_output=True,text=True,check=True);"
                         "print(p.stderr);print('maxrss',resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
                out = subprocess.run([os.sys.executable, "-c", probe] + command, check=True, capture_output=True,
                                     text=True).stdout
                m = re.search(r"execute ([0-9.]+) ms", out)
                samples[name].append(float(m.group(1)))
                peaks[name].append(int(re.search(r"maxrss (\d+)", out).group(1)))
        for name, _ in BUDGET:
            ms = statistics.median(samples[name]) / steps
            peak = statistics.median(peaks[name]) / 1024
            rows.append(dict(config=name, T=steps, ms_per_step=ms, peak_mib=peak, load=statistics.median(loads)))
            print(f"T={steps:5} {name:30} {ms:8.3f} ms/step  peak {peak:7.1f} MiB")
    save_rows("memory_budget.json", args, rows)
    names = [name for name, _ in BUDGET]
    caption = (
        f"64 queries over a growing cache, median over {args.repeat} interleaved rounds, {args.threads} threads "
        f"(load average {statistics.median(r['load'] for r in rows):.2f} on {os.cpu_count()} CPUs): peak resident "
        "MiB of the process (compiler and JIT included) and ms per step; the ratio is over -O2."
    )
    write_ratio_table("memory_budget.md", caption, names, rows, "peak_mib", 1)
    with open(os.path.join(HERE, "memory_budget.md"), "a") as f:
        f.write("\n")
    with open(os.path.join(HERE, "memory_budget.md"), "a") as f:
        lines = ["| T | " + " | ".join(f"{n} ms/step" for n in names) + " |", "| ---: | ---: | ---: |"]
        for steps in sorted({r["T"] for r in rows}):
            cells = {r["config"]: r["ms_per_step"] for r in rows if r["T"] == steps}
            lines.append(f"| {steps} | " + " | ".join(f"{cells[n]:.3f}" for n in names) + " |")
        f.write("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for name in names:
        points = sorted((r["T"], r["peak_mib"]) for r in rows if r["config"] == name)
        ax.plot([t for t, _ in points], [v for _, v in points], marker="o", label=name)
    ax.set_xlabel("T (steps)")
    ax.set_ylabel("peak resident MiB")
    ax.set_title("64 queries over a growing cache", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "memory_budget.png"), dpi=110)


INCREMENTALIZATION = [("-O2", []), ("without temporal-lift-recurrences", ["temporal-lift-recurrences"])]


def peak_bytes(program, steps, disabled):
    """Peak bytes of live stores of one run (`--stats`)."""
    command = [TEMPO_RUN, program, "--bound", f"T={steps}", "--seed", "1", "--format", "none", "--stats"]
    for p in disabled:
        command += ["--disable-pass", p]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stderr
    return int(re.search(r"peak bytes of live stores: ([0-9]+)", out).group(1))


def incrementalization(args):
    """A loss over a whole trajectory and a gradient accumulation, read
    after the loop: peak store bytes and time per step with the reductions
    incrementalized (-O2) and not (the pass left out), interleaved."""
    rows = []
    for title, file in [
        ("trajectory loss (256 wide)", "trajectory_loss.mlir"),
        ("gradient accumulation (64 x 32)", "gradient_accumulation.mlir"),
    ]:
        program = os.path.join(HERE, file)
        for steps in [1000, 10000, 100000]:
            configs = [(name, [], disabled) for name, disabled in INCREMENTALIZATION]
            samples, loads = interleaved(
                configs, args.repeat, lambda _, disabled: run_one(program, {}, steps, disabled, args.threads)
            )
            for name, disabled in INCREMENTALIZATION:
                ms = statistics.median(samples[name]) / steps
                peak = peak_bytes(program, steps, disabled)
                rows.append(dict(program=title, config=name, T=steps, ms_per_step=ms, peak_bytes=peak,
                                 load=statistics.median(loads)))
                print(f"{title:34} T={steps:6} {name:36} {ms * 1e3:8.3f} us/step  peak {peak:>12} bytes")
    save_rows("incrementalization.json", args, rows)
    lines = [
        f"Whole-range reductions read after their loop, median over {args.repeat} interleaved rounds, "
        f"{args.threads} threads (load average {statistics.median(r['load'] for r in rows):.2f} on {os.cpu_count()} CPUs): "
        "peak bytes of live stores and microseconds per step; the ratio is without the pass over -O2.",
        "",
        "| program | T | peak bytes -O2 | peak bytes without | us/step -O2 | us/step without (ratio) |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for title in dict.fromkeys(r["program"] for r in rows):
        for steps in sorted({r["T"] for r in rows if r["program"] == title}):
            cell = {r["config"]: r for r in rows if r["program"] == title and r["T"] == steps}
            on, off = cell["-O2"], cell["without temporal-lift-recurrences"]
            lines.append(
                f"| {title} | {steps} | {on['peak_bytes']:,} | {off['peak_bytes']:,} ({off['peak_bytes'] / on['peak_bytes']:.0f}x) "
                f"| {on['ms_per_step'] * 1e3:.3f} | {off['ms_per_step'] * 1e3:.3f} ({off['ms_per_step'] / on['ms_per_step']:.2f}x) |"
            )
    with open(os.path.join(HERE, "incrementalization.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.6))
    for title in dict.fromkeys(r["program"] for r in rows):
        for name, _ in INCREMENTALIZATION:
            points = sorted((r["T"], r["peak_bytes"]) for r in rows if r["program"] == title and r["config"] == name)
            ax.plot([t for t, _ in points], [v for _, v in points], marker="o", label=f"{title}, {name}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("T (steps)")
    ax.set_ylabel("peak bytes of live stores")
    ax.set_title("incrementalized whole-range reductions", fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "incrementalization.png"), dpi=110)


def redraw():
    """Writes the table and plot again from results.json."""
    with open(os.path.join(HERE, "results.json")) as f:
        saved = json.load(f)
    args = argparse.Namespace(repeat=saved["repeat"], threads=saved["threads"])
    write_markdown(saved["rows"], args)
    plot(saved["rows"])


# The modes besides the main benchmark: flag -> function of the parsed
# arguments (--repeat, --threads).
MODES = {
    "--tiling": tiling,
    "--incrementalization": incrementalization,
    "--vectorization": vectorization,
    "--fusion": fusion,
    "--memory-budget": memory_budget,
}


if __name__ == "__main__":
    mode = next((m for m in MODES if m in os.sys.argv), None)
    if "--redraw" in os.sys.argv:
        redraw()
    elif mode is not None:
        parser = argparse.ArgumentParser()
        parser.add_argument(mode, action="store_true")
        parser.add_argument("--repeat", type=int, default=3)
        parser.add_argument("--threads", type=int, default=2)
        MODES[mode](parser.parse_args())
    else:
        main()
