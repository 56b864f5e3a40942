"""GPT decode benchmark: this project against PyTorch eager and JAX jit.

    bench/gpt/setup.sh                 # toolchain, then PyTorch/JAX/NumPy/matplotlib in bench/.venv
    bench/.venv/bin/python bench/gpt/run.py [--quick] [--repeat N] [--threads N]

For each model shape and sequence length it writes seeded weights as .npy
files, emits the decoder's MLIR with `examples/gpt.rs --mlir`, and runs
`tempo-run` (compiled), `baselines.py torch` and `baselines.py jax`
interleaved (one of each per round, the order rotating), each in its own
process with the same thread count. Reported: the median ms/token of the
decode of T tokens, compile time, peak RSS of the process, our peak store
bytes, the load average, and the largest difference between our hidden
states and PyTorch's. Results go to bench/gpt/results.json,
bench/gpt/results.md (also copied into bench/README.md) and
bench/gpt/ms_per_token.png.

    bench/.venv/bin/python bench/gpt/run.py --gpu [--repeat N]

runs the same decodes on the GPU instead: `tempo-run --target cuda` next to
PyTorch eager on the same device (`--device cuda`; the bench's PyTorch must
then be a CUDA build), the device named in the results
(bench/gpt/gpu_results.json and gpu_results.md). Without a CUDA device it
stops with a message.
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

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
GPT = os.path.join(ROOT, "target", "release", "examples", "gpt")
SYSTEMS = ["tempo", "torch", "jax"]


def configs(quick):
    small = dict(layers=12, heads=12, width=768)
    tiny = dict(layers=2, heads=2, width=64)
    mid = dict(layers=4, heads=4, width=256)
    if quick:
        return [
            ("gpt2-small, batch 1, causal", dict(small, batch=1, window=None), [128]),
            ("2 layers, width 64, batch 1, causal", dict(tiny, batch=1, window=None), [128]),
        ]
    return [
        ("gpt2-small, batch 1, causal", dict(small, batch=1, window=None), [128, 256, 512]),
        ("gpt2-small, batch 8, causal", dict(small, batch=8, window=None), [128, 256]),
        ("2 layers, width 64, batch 1, causal", dict(tiny, batch=1, window=None), [128, 1024, 4096]),
        ("4 layers, width 256, batch 1, window 64", dict(mid, batch=1, window=64), [512, 1024, 2048, 4096]),
        ("4 layers, width 256, batch 1, causal", dict(mid, batch=1, window=None), [512, 1024, 2048, 4096]),
    ]


def weights(directory, c, seed=0):
    rng = np.random.default_rng(seed)
    d, f, L, b = c["width"], 4 * c["width"], c["layers"], c["batch"]

    def normal(shape, fan_in):
        return (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(fan_in)).astype(np.float32)

    arrays = {
        "x0": rng.standard_normal((b, d), dtype=np.float32),
        "Wq": normal((L, d, d), d),
        "Wk": normal((L, d, d), d),
        "Wv": normal((L, d, d), d),
        "Wo": normal((L, d, d), d),
        "W1": normal((L, d, f), d),
        "W2": normal((L, f, d), f),
    }
    for name, array in arrays.items():
        np.save(os.path.join(directory, name + ".npy"), array)
    return sum(a.nbytes for k, a in arrays.items() if k != "x0")


def write_program(directory, c):
    """The decoder of configuration `c` as MLIR (`examples/gpt.rs --mlir`)."""
    program = os.path.join(directory, "gpt.mlir")
    flags = ["--layers", str(c["layers"]), "--heads", str(c["heads"]), "--width", str(c["width"])]
    flags += ["--batch", str(c["batch"])] + (["--window", str(c["window"])] if c["window"] else [])
    with open(program, "w") as f:
        subprocess.run([GPT, "--mlir"] + flags, stdout=f, check=True)
    return program


def run_one(system, program, directory, c, steps, threads, output=None, gpu=False, timeout=None):
    load = os.getloadavg()[0]
    if system == "tempo":
        command = [TEMPO_RUN, program, "--bound", f"T={steps}", "--bound", f"L={c['layers']}", "--timings", "--stats"]
        command += ["--threads", str(threads)]
        command += ["--target", os.environ.get("TEMPO_GPU_TARGET", "cuda")] if gpu else []
        for name in ["x0", "Wq", "Wk", "Wv", "Wo", "W1", "W2"]:
            command += ["--input", f"{name}={os.path.join(directory, name + '.npy')}"]
        if output:
            command += ["--format", "none", "--output-dir", output]
        else:
            command += ["--format", "none"]
        env = None
    else:
        command = [sys.executable, os.path.join(HERE, "baselines.py"), system, directory, "--steps", str(steps)]
        command += ["--heads", str(c["heads"]), "--threads", str(threads)]
        command += ["--device", os.environ.get("TEMPO_GPU_TORCH_DEVICE", "cuda")] if gpu else []
        if c["window"]:
            command += ["--window", str(c["window"])]
        if output:
            command += ["--output", os.path.join(output, "y.npy")]
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise RuntimeError(f"{system}: over {timeout:.0f} s")
    wall = time.perf_counter() - start
    if process.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{err[-3000:]}")
    row = {"system": system, "load": load, "wall_s": wall}
    if system == "tempo":
        m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", err)
        row["compile_ms"] = float(m.group(1))
        row["ms_per_token"] = float(m.group(2)) / steps
        m = re.search(r"peak bytes of live stores: (\d+)", err)
        row["peak_store_bytes"] = int(m.group(1)) if m else None
        m = re.search(r"peak device memory of buffers and blocks: (\d+)", err)
        row["peak_device_bytes"] = int(m.group(1)) if m else None
        row["stores"] = {
            k: v for k, v in re.findall(r"^  ([kv]): (\S+)", err, re.M)
        }
    else:
        result = json.loads(out.strip().splitlines()[-1])
        row.update(result)
    return row


def peak_rss(system, program, directory, c, steps, threads):
    """Peak RSS (MiB) of one run. Measured by GNU time, a small process that
    forks the run: the high-water mark of a child forked straight from this
    Python process would include this process's own memory."""
    if system == "tempo":
        command = [TEMPO_RUN, program, "--bound", f"T={steps}", "--bound", f"L={c['layers']}", "--format", "none"]
        command += ["--threads", str(threads)]
        for name in ["x0", "Wq", "Wk", "Wv", "Wo", "W1", "W2"]:
            command += ["--input", f"{name}={os.path.join(directory, name + '.npy')}"]
    else:
        command = [sys.executable, os.path.join(HERE, "baselines.py"), system, directory, "--steps", str(steps)]
        command += ["--heads", str(c["heads"]), "--threads", str(threads)]
        if c["window"]:
            command += ["--window", str(c["window"])]
    result = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    return int(result.stderr.strip().splitlines()[-1]) / 1024


def copy_bandwidth(threads):
    """STREAM-style copy bandwidth with `threads` threads (PyTorch's parallel
    copy of 256 MiB): bytes read plus bytes written per second, best of 5."""
    import torch

    torch.set_num_threads(threads)
    a = torch.ones(64 * 1024 * 1024, dtype=torch.float32)
    b = torch.empty_like(a)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        b.copy_(a)
        best = min(best, time.perf_counter() - start)
    return 2 * a.numel() * 4 / best


def gpu_configs(quick):
    """GPT-2 small decodes on the GPU, most telling first (a run with a
    deadline measures a prefix of the list): the issue's target shape (batch
    64, T = 4096, causal and window 512), then batches 1 and 8 and longer
    sequences."""
    small = dict(layers=12, heads=12, width=768)
    if quick:
        return [("gpt2-small, batch 1, causal", dict(small, batch=1, window=None), 64)]
    out = []
    for batch, steps in [(64, 4096), (1, 512), (8, 512), (64, 512), (1, 4096), (8, 4096), (1, 16384), (8, 16384),
                         (64, 16384)]:
        if steps >= 4096:
            out.append((f"gpt2-small, batch {batch}, window 512", dict(small, batch=batch, window=512), steps))
        out.append((f"gpt2-small, batch {batch}, causal", dict(small, batch=batch, window=None), steps))
    return out


def gpu_main(args):
    """The decodes on the GPU: ours (`--target cuda`) and PyTorch eager on
    the same device, interleaved; medians; the device named. Each row is
    written as soon as it is measured; no configuration starts past
    `--deadline` seconds."""
    deadline = time.time() + args.deadline
    try:
        probe = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True
        )
    except OSError:
        probe = None
    if not args.gpu_device and (probe is None or probe.returncode != 0 or not probe.stdout.strip()):
        sys.exit("bench/gpt/run.py --gpu: no CUDA device on this machine (nvidia-smi finds none)")
    device = args.gpu_device or probe.stdout.strip().splitlines()[0]
    if not args.bin_dir:
        subprocess.run(["cargo", "build", "--release", "--bins", "--examples", "-q"], cwd=ROOT, check=True)
    results = args.results or HERE
    os.makedirs(results, exist_ok=True)
    rows = []

    def publish():
        with open(os.path.join(results, "gpu_results.json"), "w") as f:
            json.dump(dict(device=device, repeat=args.repeat, rows=rows), f, indent=1)
        lines = [
            f"GPT-2 small decode on {device}: median ms/token over {args.repeat} interleaved run(s), PyTorch eager "
            "with a KV cache on the same device; the ratio is PyTorch's time over ours (above 1: we are faster); "
            "peak device memory: ours from `tempo-run --stats` (buffers and mapped block-store memory), PyTorch's "
            "`torch.cuda.max_memory_allocated`.",
            "",
            "| model | T | tempo ms/token | PyTorch ms/token | speed-up | tempo peak MiB | PyTorch peak MiB | "
            "tempo compile s | max abs difference |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]

        def cell(v, f):
            return f.format(v) if v is not None else "n/a"

        for r in rows:
            t, p = r.get("tempo_ms_per_token"), r.get("torch_ms_per_token")
            ratio = p / t if t and p else None
            mib = lambda b: b / 2**20 if b else None  # noqa: E731
            lines.append(
                f"| {r['config']} | {r['T']} | {cell(t, '{:.3f}')} | {cell(p, '{:.3f}')} | {cell(ratio, '{:.2f}x')} | "
                f"{cell(mib(r.get('tempo_peak_bytes')), '{:.0f}')} | {cell(mib(r.get('torch_peak_bytes')), '{:.0f}')} | "
                f"{cell(r.get('tempo_compile_s'), '{:.1f}')} | {cell(r.get('difference'), '{:.1e}')} |"
                + (f" {r['note']}" if r.get("note") else "")
            )
        with open(os.path.join(results, "gpu_results.md"), "w") as f:
            f.write("\n".join(lines) + "\n")

    for name, c, steps in gpu_configs(args.quick):
        if time.time() > deadline:
            print(f"{name} T={steps}: not run (past the deadline)", flush=True)
            continue
        row = dict(config=name, T=steps, device=device)
        with tempfile.TemporaryDirectory() as directory:
            weights(directory, c)
            program = write_program(directory, c)
            samples = {"tempo": [], "torch": []}
            outputs = {}
            notes = []
            for r in range(args.repeat):
                for system in (["tempo", "torch"] if r % 2 == 0 else ["torch", "tempo"]):
                    check = os.path.join(directory, f"check_{system}")
                    os.makedirs(check, exist_ok=True)
                    try:
                        result = run_one(system, program, directory, c, steps, 1, output=check if r == 0 else None,
                                         gpu=True, timeout=args.run_timeout)
                    except RuntimeError as e:
                        notes.append(str(e).strip().splitlines()[-1][:300])
                        continue
                    samples[system].append(result["ms_per_token"])
                    if system == "tempo":
                        row["tempo_compile_s"] = result["compile_ms"] / 1e3
                        row["tempo_peak_bytes"] = result.get("peak_device_bytes")
                    else:
                        row["torch_peak_bytes"] = result.get("device_bytes")
                    if r == 0:
                        outputs[system] = np.load(os.path.join(check, "y.npy")).astype(np.float64)
            if notes:
                row["note"] = "; ".join(notes)
            if len(outputs) == 2:
                row["difference"] = float(np.max(np.abs(outputs["tempo"] - outputs["torch"])))
            row.update({f"{s}_ms_per_token": statistics.median(v) for s, v in samples.items() if v})
        rows.append(row)
        publish()
        t, p = row.get("tempo_ms_per_token"), row.get("torch_ms_per_token")
        print(f"{name:36} T={steps:5} tempo {t if t else float('nan'):8.3f}  torch {p if p else float('nan'):8.3f} "
              f"ms/token  max |diff| {row.get('difference', float('nan')):.2e} {row.get('note', '')}", flush=True)
    publish()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", action="store_true")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--bin-dir", help="a directory holding tempo-run and the gpt example (no cargo build)")
    parser.add_argument("--results", help="where --gpu writes gpu_results.json/.md (default: bench/gpt)")
    parser.add_argument("--deadline", type=float, default=1e9, help="--gpu: seconds after which no row starts")
    parser.add_argument("--run-timeout", type=float, default=None, help="--gpu: seconds one run may take")
    parser.add_argument("--gpu-device", help=argparse.SUPPRESS)  # the script's own test without a GPU
    args = parser.parse_args()
    if args.bin_dir:
        global TEMPO_RUN, GPT
        TEMPO_RUN, GPT = os.path.join(args.bin_dir, "tempo-run"), os.path.join(args.bin_dir, "gpt")
    if args.gpu:
        return gpu_main(args)
    systems = args.systems.split(",")
    subprocess.run(["cargo", "build", "--release", "--bins", "--examples", "-q"], cwd=ROOT, check=True)
    bandwidth = copy_bandwidth(args.threads)
    results = {
        "machine": {
            "cpus": os.cpu_count(),
            "copy_bandwidth_gb_s": bandwidth / 1e9,
            "load_before": os.getloadavg(),
            "threads": args.threads,
        },
        "rows": [],
    }
    print(f"copy bandwidth {bandwidth / 1e9:.1f} GB/s (read + write)", flush=True)
    for name, c, seqs in configs(args.quick):
        with tempfile.TemporaryDirectory() as directory:
            weight_bytes = weights(directory, c)
            program = write_program(directory, c)
            for steps in seqs:
                # Correctness: our hidden states against PyTorch's on the same
                # weights, and, as the scale of float32 rounding, PyTorch's
                # float32 states against its float64 ones.
                check_dir = os.path.join(directory, "check")
                os.makedirs(check_dir, exist_ok=True)
                difference = None
                if "torch" in systems and "tempo" in systems:
                    run_one("tempo", program, directory, c, steps, args.threads, output=check_dir)
                    ours = np.load(os.path.join(check_dir, "y.npy")).astype(np.float64)
                    run_one("torch", program, directory, c, steps, args.threads, output=check_dir)
                    theirs = np.load(os.path.join(check_dir, "y.npy")).astype(np.float64)
                    command = [sys.executable, os.path.join(HERE, "baselines.py"), "torch", directory]
                    command += ["--steps", str(steps), "--heads", str(c["heads"]), "--threads", str(args.threads)]
                    command += ["--float64", "--output", os.path.join(check_dir, "y64.npy")]
                    command += ["--window", str(c["window"])] if c["window"] else []
                    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                    exact = np.load(os.path.join(check_dir, "y64.npy"))

                    def rel(x, y):
                        return float(np.max(np.abs(x - y) / (1 + np.abs(y))))

                    difference = {
                        "ours_vs_torch": rel(ours, theirs),
                        "ours_vs_torch_first_step": rel(ours[0], theirs[0]),
                        "ours_vs_float64": rel(ours, exact),
                        "torch_vs_float64": rel(theirs, exact),
                    }
                samples = {s: [] for s in systems}
                for r in range(args.repeat):
                    order = systems[r % len(systems) :] + systems[: r % len(systems)]
                    for system in order:
                        samples[system].append(run_one(system, program, directory, c, steps, args.threads))
                for system in systems:
                    rows = samples[system]
                    row = {
                        "config": name,
                        **c,
                        "seq": steps,
                        "system": system,
                        "ms_per_token": statistics.median(x["ms_per_token"] for x in rows),
                        "ms_per_token_samples": [x["ms_per_token"] for x in rows],
                        "compile_ms": statistics.median(x.get("compile_ms", 0.0) for x in rows),
                        "load": [x["load"] for x in rows],
                        "peak_rss_mib": peak_rss(system, program, directory, c, steps, args.threads),
                        "weight_bytes": weight_bytes,
                        "floor_ms_per_token": weight_bytes / bandwidth * 1e3,
                    }
                    if system == "tempo":
                        row["peak_store_bytes"] = rows[0]["peak_store_bytes"]
                        row["stores"] = rows[0]["stores"]
                        row["max_difference_from_torch"] = difference
                    results["rows"].append(row)
                    print(
                        f"{name:45s} T={steps:5d} {system:6s} {row['ms_per_token']:9.3f} ms/token "
                        f"(compile {row['compile_ms']:.0f} ms, RSS {row['peak_rss_mib']:.0f} MiB)",
                        flush=True,
                    )
    results["machine"]["load_after"] = os.getloadavg()
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    table = markdown(results, systems)
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write(table)
    readme = os.path.join(ROOT, "bench", "README.md")
    text = open(readme).read()
    start, end = "<!-- gpt -->", "<!-- /gpt -->"
    if start in text and end in text:
        text = text[: text.index(start) + len(start)] + "\n" + table + text[text.index(end) :]
        open(readme, "w").write(text)
    plot(results, systems)
    print(table)


def diffs(row):
    d = row.get("max_difference_from_torch")
    if not d:
        return "- | -"
    return (
        f"{d['ours_vs_torch_first_step']:.1e} / {d['ours_vs_torch']:.1e} "
        f"| {d['ours_vs_float64']:.1e} / {d['torch_vs_float64']:.1e}"
    )


def markdown(results, systems):
    m = results["machine"]
    lines = [
        f"Machine: {m['cpus']} cores, copy bandwidth {m['copy_bandwidth_gb_s']:.1f} GB/s (read + write), "
        f"{m['threads']} thread(s) for every system, load average {m['load_before'][0]:.2f} before and "
        f"{m['load_after'][0]:.2f} after the run.",
        "",
        "| model | T | ours (ms/token) | PyTorch | JAX | ours / PyTorch | ours / JAX | floor (ms/token) | ours / floor "
        "| compile (ms) | peak RSS ours / torch (MiB) | weights (MiB) | peak store bytes "
        "| diff vs torch (step 0 / all) | diff vs float64: ours / torch |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = []
    for row in results["rows"]:
        key = (row["config"], row["seq"])
        if key not in keys:
            keys.append(key)
    for key in keys:
        by = {r["system"]: r for r in results["rows"] if (r["config"], r["seq"]) == key}
        ours = by.get("tempo")
        torch = by.get("torch")
        jax = by.get("jax")

        def ms(r):
            return f"{r['ms_per_token']:.3f}" if r else "-"

        def ratio(a, b):
            return f"{a['ms_per_token'] / b['ms_per_token']:.2f}" if a and b else "-"

        floor = ours["floor_ms_per_token"] if ours else None
        lines.append(
            f"| {key[0]} | {key[1]} | {ms(ours)} | {ms(torch)} | {ms(jax)} | {ratio(ours, torch)} | {ratio(ours, jax)} "
            f"| {floor:.2f} | {ours['ms_per_token'] / floor:.2f} | {ours['compile_ms']:.0f} "
            f"| {ours['peak_rss_mib']:.0f} / {torch['peak_rss_mib'] if torch else 0:.0f} "
            f"| {ours['weight_bytes'] / 2**20:.0f} | {ours['peak_store_bytes']:,} "
            f"| {diffs(ours)} |"
            if ours
            else f"| {key[0]} | {key[1]} | - | {ms(torch)} | {ms(jax)} | | | | | | | | | | |"
        )
    return "\n".join(lines) + "\n"


def plot(results, systems):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs_seen = []
    for row in results["rows"]:
        if row["config"] not in configs_seen:
            configs_seen.append(row["config"])
    fig, axes = plt.subplots(1, len(configs_seen), figsize=(4.2 * len(configs_seen), 3.6), squeeze=False)
    for ax, config in zip(axes[0], configs_seen):
        for system, style in zip(systems, ["o-", "s--", "^:"]):
            rows = [r for r in results["rows"] if r["config"] == config and r["system"] == system]
            if rows:
                ax.plot([r["seq"] for r in rows], [r["ms_per_token"] for r in rows], style, label=system)
        ax.set_title(config, fontsize=8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("ms / token")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "ms_per_token.png"), dpi=110)


if __name__ == "__main__":
    main()
