"""Training benchmark: a training step of an LSTM language model and of a
2-layer GPT-style model, ours against PyTorch eager autograd on the same
maths and weights.

    bench/train/setup.sh              # toolchain, then PyTorch/NumPy/matplotlib in bench/.venv
    bench/.venv/bin/python bench/train/run.py [--quick] [--repeat N] [--threads N]
    bench/.venv/bin/python bench/train/run.py --redraw     # table and plot from results.json

For each model shape and sequence length T it writes seeded weights,
tokens and targets as .npy files, prints the program with
`examples/bench_train` (bench/train/bench_train.rs) and runs `tempo-run`
and the PyTorch baselines (bench/train/baselines.py) interleaved: one of
each per round, the order rotating, each in its own process under GNU time
(peak RSS), every system on the same number of threads.

Our side is one program per case. Where the scheduler accepts a whole
training run (back-propagation through time inside an iteration dimension
`i`), it is N iterations of forward, BPTT and Adam in one program and the
time per iteration is its execution time over N (compilation excluded and
reported apart); otherwise (`--mode step`) it is a program of one step
(loss, gradients and the Adam update, no `i`) and the time per iteration is
its execution time. PyTorch's time per iteration is the median of N timed
iterations after a warm-up one (zero_grad, forward, backward, Adam step).
Each reported figure is the median over the rounds.

Correctness, once per model shape (at the smallest T): one step of ours
(no `i`, Adam at step 10 from random moments) against PyTorch's on the
same weights: the loss of each t, every gradient, and the updated
parameters and moments, as max |ours - torch| / max |torch| per tensor
(target: 1e-4), with PyTorch in float64 as the scale of float32 rounding.

Stored activations: `tempo-run --stats` lists each store; those whose size
grows with T are the activations BPTT keeps, compared with the formula.

Results: bench/train/results.json, the table between the `train` markers in
bench/README.md (and bench/train/results.md), the plot bench/train/train.png;
with `--tag NAME`, results-NAME.json, results-NAME.md, the `train-NAME`
markers and train-NAME.png instead (a partial run beside the full one).
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

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
BENCH_TRAIN = os.path.join(ROOT, "target", "release", "examples", "bench_train")
VOCAB = 64
LR = 1e-3
CHECK_ADAM_STEP = 10
TOLERANCE = 1e-4
# Ours with --fast-math (fused multiply-add, polynomial exp/tanh/sigmoid,
# as PyTorch's vectorized CPU kernels do); --exact runs without it.
FAST_MATH = True


def cases(quick):
    """(model, batch, width, T list, check) in run order."""
    lstm = [(16, 64), (64, 64), (16, 256), (64, 256)]
    gpt = [(16, 64), (16, 256)]
    if quick:
        return [
            dict(model="lstm", batch=16, width=64, seqs=[64]),
            dict(model="lstm", batch=64, width=256, seqs=[64]),
            dict(model="gpt", batch=16, width=64, layers=2, heads=4, seqs=[64]),
        ]
    out = [dict(model="lstm", batch=b, width=w, seqs=[64, 256]) for b, w in lstm]
    out += [dict(model="gpt", batch=b, width=w, layers=2, heads=4, seqs=[64, 256]) for b, w in gpt]
    return out


def suffix(tag):
    """The file and marker suffix of a tagged run ("" for the full run)."""
    return f"-{tag}" if tag else ""


def label(c):
    if c["model"] == "lstm":
        return f"LSTM, batch {c['batch']}, width {c['width']}"
    return f"GPT {c['layers']} layers x {c['heads']} heads, batch {c['batch']}, width {c['width']}"


def flops(c, T):
    """Multiply-adds x 2 of one training step (forward + backward = 3x the
    forward's products), to pick the number of iterations."""
    b, w, v = c["batch"], c["width"], VOCAB
    if c["model"] == "lstm":
        forward = 2 * b * (2 * w * 4 * w + w * v)
    else:
        forward = 2 * b * c["layers"] * 12 * w * w + 2 * b * w * v
    return 3 * forward * T


def iterations_for(c, T, quick):
    n = int(round(1.5e9 / flops(c, T)))
    return max(2, min(3 if quick else 10, n))


def program_flags(c):
    flags = ["--batch", str(c["batch"]), "--width", str(c["width"]), "--vocab", str(VOCAB), "--lr", str(LR)]
    if c["model"] == "gpt":
        flags += ["--layers", str(c["layers"]), "--heads", str(c["heads"])]
    return [c["model"]] + flags


def param_shapes(c):
    out = subprocess.run([BENCH_TRAIN] + program_flags(c) + ["--list-params"], capture_output=True, text=True, check=True)
    shapes = []
    for line in out.stdout.split("\n"):
        if line.strip():
            name, shape = line.split()
            shapes.append((name, tuple(int(x) for x in shape.split(","))))
    return shapes


def write_data(directory, c, T, seed=0):
    """Seeded weights (normal / sqrt(fan-in), zero biases), Adam moments for
    the check (v > 0), tokens and their next tokens (int64 and one-hot)."""
    rng = np.random.default_rng(seed)
    for name, shape in param_shapes(c):
        if len(shape) == 1:
            w = np.zeros(shape, np.float32)
        elif name == "E":
            w = rng.standard_normal(shape, dtype=np.float32)
        else:
            w = (rng.standard_normal(shape, dtype=np.float32) / np.sqrt(shape[0])).astype(np.float32)
        np.save(os.path.join(directory, name + ".npy"), w)
        np.save(os.path.join(directory, f"m_{name}.npy"), (1e-3 * rng.standard_normal(shape)).astype(np.float32))
        np.save(os.path.join(directory, f"v_{name}.npy"), rng.uniform(1e-7, 1e-5, shape).astype(np.float32))
    seq = rng.integers(0, VOCAB, (T + 1, c["batch"]))
    np.save(os.path.join(directory, "tokens.npy"), seq[:T].astype(np.int64))
    np.save(os.path.join(directory, "targets.npy"), seq[1:].astype(np.int64))
    np.save(os.path.join(directory, "targets_onehot.npy"), np.eye(VOCAB, dtype=np.float32)[seq[1:]])


def write_program(directory, c, mode, adam_step=1):
    path = os.path.join(directory, f"{c['model']}_{mode}.mlir")
    flags = program_flags(c) + (["--iterations", "1"] if mode == "loop" else ["--adam-step", str(adam_step)])
    with open(path, "w") as f:
        subprocess.run([BENCH_TRAIN] + flags, stdout=f, check=True)
    return path


def tempo_command(program, directory, c, T, mode, iterations, threads):
    command = [TEMPO_RUN, program, "--bound", f"T={T}", "--threads", str(threads), "--timings", "--stats"]
    if FAST_MATH:
        command.append("--fast-math")
    if mode == "loop":
        command += ["--bound", f"I={iterations}"]
    for name, _ in param_shapes(c):
        command += ["--input", f"{name}={os.path.join(directory, name + '.npy')}"]
        if mode == "step":
            for prefix in ["m_", "v_"]:
                command += ["--input", f"{prefix}{name}={os.path.join(directory, prefix + name + '.npy')}"]
    command += ["--input", f"tokens={os.path.join(directory, 'tokens.npy')}"]
    command += ["--input", f"targets={os.path.join(directory, 'targets_onehot.npy')}"]
    return command


def timed(command, env=None):
    """Runs `command` under GNU time; returns (stdout, stderr, peak RSS MiB,
    wall seconds)."""
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-o", rss.name, "-f", "%M"] + command, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - start
        if p.returncode != 0:
            raise RuntimeError(f"{' '.join(command[:3])} ... failed ({p.returncode}):\n{p.stderr[-3000:]}")
        text = rss.read().strip().splitlines()
    return p.stdout, p.stderr, int(text[-1]) / 1024, wall


def parse_stats(err):
    stores = {}
    for name, kind, size in re.findall(r"^  (\S+): (.+?) \((\d+) bytes\)$", err, re.M):
        stores[name] = dict(kind=kind, bytes=int(size))
    m = re.search(r"peak bytes of live stores: (\d+)", err)
    return stores, int(m.group(1)) if m else None


# Our timed runs: compiled once, one warm-up run, then the median of this
# many runs (`tempo-run --repeat`), as the baselines time iterations after
# a warm-up one (the first run of a process pays the first touch of its
# stores' pages: about 95 ms for the GPT case, measured with perf).
TEMPO_REPEAT = 3


def run_tempo(program, directory, c, T, mode, iterations, threads, output=None):
    command = tempo_command(program, directory, c, T, mode, iterations, threads)
    command += ["--format", "none"] + (["--output-dir", output] if output else [])
    if output is None:
        command += ["--repeat", str(TEMPO_REPEAT)]
    # Without the compilation cache: every round compiles, so that the
    # compile column is a cold compile (a hit takes milliseconds).
    _, err, rss, wall = timed(command, dict(os.environ, TEMPO_CACHE="0"))
    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", err)
    compile_ms, execute_ms = float(m.group(1)), float(m.group(2))
    per = iterations if mode == "loop" else 1
    stores, peak = parse_stats(err)
    return dict(
        repeat=TEMPO_REPEAT if output is None else 1,
        ms_per_iteration=execute_ms / per,
        execute_ms=execute_ms,
        compile_ms=compile_ms,
        iterations=per,
        peak_rss_mib=rss,
        wall_s=wall,
        stores=stores,
        peak_store_bytes=peak,
    )


def baseline_command(system, directory, c, iterations, threads, extra=()):
    if system.startswith("jax"):
        mode = "scan" if system == "jax-scan" else "step"
        command = [sys.executable, os.path.join(HERE, "jax_baselines.py"), c["model"], directory, "--mode", mode,
                   "--threads", str(threads)]
    else:
        model = {"torch": c["model"], "torch-compile": c["model"], "torch-nn": "lstm-nn"}[system]
        command = [sys.executable, os.path.join(HERE, "baselines.py"), model, directory, "--threads", str(threads)]
        if system == "torch-compile":
            command.append("--compile")
    command += ["--iterations", str(iterations), "--lr", str(LR)]
    if c["model"] == "gpt":
        command += ["--heads", str(c["heads"])]
    return command + list(extra)


def run_baseline(system, directory, c, iterations, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    out, _, rss, wall = timed(baseline_command(system, directory, c, iterations, threads), env)
    row = json.loads(out.strip().splitlines()[-1])
    row.update(peak_rss_mib=rss, wall_s=wall)
    return row


def check(directory, c, T, threads):
    """One step of ours against PyTorch's (float32 and float64)."""
    program = write_program(directory, c, "step", adam_step=CHECK_ADAM_STEP)
    ours_dir, torch_dir, exact_dir = (os.path.join(directory, d) for d in ("ours", "torch32", "torch64"))
    os.makedirs(ours_dir, exist_ok=True)
    run_tempo(program, directory, c, T, "step", 1, threads, output=ours_dir)
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    for out, extra in [(torch_dir, []), (exact_dir, ["--float64"])]:
        command = baseline_command("torch", directory, c, 1, threads, ["--check", out, "--adam-step", str(CHECK_ADAM_STEP)])
        subprocess.run(command + extra, check=True, env=env, capture_output=True)
    names = ["loss"] + [f"{p}{n}{s}" for n, _ in param_shapes(c) for p, s in [("g_", ""), ("", "_new"), ("m_", "_new"), ("v_", "_new")]]
    tensors = {}
    for name in names:
        ours = np.load(os.path.join(ours_dir, name + ".npy")).astype(np.float64)
        theirs = np.load(os.path.join(torch_dir, name + ".npy")).astype(np.float64)
        exact = np.load(os.path.join(exact_dir, name + ".npy"))
        assert ours.shape == theirs.shape, (name, ours.shape, theirs.shape)
        def rel(a, b):
            scale = np.max(np.abs(b))
            return float(np.max(np.abs(a - b)) / scale) if scale > 0 else float(np.max(np.abs(a - b)))

        tensors[name] = dict(ours_vs_torch=rel(ours, theirs), ours_vs_float64=rel(ours, exact), torch_vs_float64=rel(theirs, exact))
    worst = max(tensors.items(), key=lambda kv: kv[1]["ours_vs_torch"])
    return dict(
        T=T,
        adam_step=CHECK_ADAM_STEP,
        tensors=tensors,
        worst_tensor=worst[0],
        max_ours_vs_torch=worst[1]["ours_vs_torch"],
        max_torch_vs_float64=max(v["torch_vs_float64"] for v in tensors.values()),
        max_ours_vs_float64=max(v["ours_vs_float64"] for v in tensors.values()),
        within_tolerance=worst[1]["ours_vs_torch"] <= TOLERANCE,
        loss_ours=float(np.load(os.path.join(ours_dir, "loss.npy")).sum()),
        loss_torch=float(np.load(os.path.join(torch_dir, "loss.npy")).sum()),
    )


def probe(model, mode):
    """Whether tempo-run compiles and runs a tiny program of `model` in
    `mode`: None, or the error text."""
    flags = ["--batch", "2", "--width", "8", "--vocab", "5"] + (["--layers", "2", "--heads", "2"] if model == "gpt" else [])
    flags += ["--iterations", "1"] if mode == "loop" else []
    with tempfile.TemporaryDirectory() as d:
        program = os.path.join(d, "p.mlir")
        with open(program, "w") as f:
            subprocess.run([BENCH_TRAIN, model] + flags, stdout=f, check=True)
        command = [TEMPO_RUN, program, "--bound", "T=4", "--seed", "1", "--format", "none"]
        command += ["--bound", "I=2"] if mode == "loop" else []
        p = subprocess.run(command, capture_output=True, text=True)
        return None if p.returncode == 0 else p.stderr.strip()[-2000:]


def git_head():
    p = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True)
    return dict(commit=p.stdout.strip()[:120], uncommitted_changes=bool(dirty.stdout.strip()))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def wait_for_load(limit, timeout):
    """Waits (at most `timeout` s) until the 1-minute load average is below `limit`."""
    start = time.time()
    while os.getloadavg()[0] >= limit and time.time() - start < timeout:
        time.sleep(10)
    return os.getloadavg()[0]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--mode", choices=["auto", "loop", "step"], default="auto")
    parser.add_argument("--wait-load", type=float, default=1.5, help="wait (up to 10 min) for a load average below this first")
    parser.add_argument("--no-check", action="store_true")
    parser.add_argument("--no-cell-loop", action="store_true",
                        help="leave out PyTorch's LSTM as a loop of cells (nn.LSTM, the faster, stays; a cell loop takes "
                             "seconds per iteration at batch 64, width 256, T = 256)")
    parser.add_argument("--no-jax", action="store_true", help="leave out the JAX baselines (a jitted step, the run as one lax.scan)")
    parser.add_argument("--torch-compile", action="store_true",
                        help="also PyTorch with torch.compile (tens of seconds of compile per case)")
    parser.add_argument("--also-one-thread", action="store_true", help="also run ours on 1 thread (LSTM cases)")
    parser.add_argument("--redraw", action="store_true")
    parser.add_argument("--tag", help="write results-TAG.json, the train-TAG table and train-TAG.png (a partial run)")
    parser.add_argument("--exact", action="store_true", help="run ours without --fast-math (bit-exact with the interpreter)")
    parser.add_argument("--models", default="lstm,gpt", help="the models whose cases run (with --tag: a partial run)")
    args = parser.parse_args()
    global FAST_MATH
    FAST_MATH = not args.exact
    if args.redraw:
        results = json.load(open(os.path.join(HERE, f"results{suffix(args.tag)}.json")))
        return publish(results)

    subprocess.run(["cargo", "build", "--release", "--bin", "tempo-run", "--example", "bench_train", "-q"], cwd=ROOT, check=True)
    probes = {(m, mode): probe(m, mode) for m in ["lstm", "gpt"] for mode in ["loop", "step"]}
    for (m, mode), error in probes.items():
        print(f"probe {m} {mode}: {'ok' if error is None else 'fails: ' + error.splitlines()[-1]}", flush=True)
    load_waited = wait_for_load(args.wait_load, 600)
    results = dict(
        tag=args.tag,
        machine=dict(
            cpu=cpu_name(),
            cpus=os.cpu_count(),
            threads=args.threads,
            load_before=os.getloadavg(),
            load_after_wait=load_waited,
            uptime_before=subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
        ),
        tempo=git_head(),
        repeat=args.repeat,
        quick=args.quick,
        tempo_repeat=TEMPO_REPEAT,
        fast_math=FAST_MATH,
        vocab=VOCAB,
        lr=LR,
        probes={f"{m} {mode}": error for (m, mode), error in probes.items()},
        rows=[],
        checks=[],
        stats=[],
    )
    import torch

    results["torch"] = torch.__version__
    for c in cases(args.quick):
        model = c["model"]
        if model not in args.models.split(","):
            continue
        mode = args.mode
        if mode == "auto":
            mode = "loop" if probes[(model, "loop")] is None else "step"
        if probes[(model, mode)] is not None:
            results["rows"].append(dict(config=label(c), model=model, **{k: c[k] for k in ("batch", "width")},
                                        system="tempo", error=probes[(model, mode)]))
            print(f"{label(c)}: not runnable: {probes[(model, mode)].splitlines()[-1]}", flush=True)
            continue
        cell_loop = not (args.no_cell_loop and model == "lstm")
        systems = ["tempo"] + (["torch"] if cell_loop else []) + (["torch-nn"] if model == "lstm" else [])
        if not args.no_jax:
            systems += ["jax", "jax-scan"]
        if args.torch_compile:
            systems.append("torch-compile")
        if args.also_one_thread and model == "lstm":
            systems.append("tempo-1t")
        for T in c["seqs"]:
            with tempfile.TemporaryDirectory() as directory:
                write_data(directory, c, T)
                if T == c["seqs"][0] and not args.no_check:
                    result = check(directory, c, T, args.threads)
                    result.update(config=label(c), model=model, batch=c["batch"], width=c["width"])
                    results["checks"].append(result)
                    print(f"{label(c)} T={T}: check: max |ours - torch| / max|torch| = {result['max_ours_vs_torch']:.1e} "
                          f"({result['worst_tensor']}), torch f32 vs f64 {result['max_torch_vs_float64']:.1e}", flush=True)
                program = write_program(directory, c, mode)
                n = iterations_for(c, T, args.quick)
                samples = {s: [] for s in systems}
                for r in range(args.repeat):
                    order = systems[r % len(systems):] + systems[: r % len(systems)]
                    for system in order:
                        load = os.getloadavg()[0]
                        if system.startswith("tempo"):
                            threads = 1 if system == "tempo-1t" else args.threads
                            row = run_tempo(program, directory, c, T, mode, n, threads)
                        else:
                            row = run_baseline(system, directory, c, n, args.threads)
                        row["load"] = load
                        samples[system].append(row)
                for system in systems:
                    rs = samples[system]
                    row = dict(
                        config=label(c), model=model, batch=c["batch"], width=c["width"], T=T, system=system,
                        mode=mode if system.startswith("tempo") else "eager", iterations=n,
                        threads=1 if system == "tempo-1t" else args.threads,
                        ms_per_iteration=statistics.median(x["ms_per_iteration"] for x in rs),
                        ms_samples=[x["ms_per_iteration"] for x in rs],
                        ms_min=min(x["ms_per_iteration"] for x in rs),
                        peak_rss_mib=statistics.median(x["peak_rss_mib"] for x in rs),
                        load=[x["load"] for x in rs],
                    )
                    if system.startswith("tempo"):
                        row["compile_ms"] = statistics.median(x["compile_ms"] for x in rs)
                        row["ms_per_iteration_with_compile"] = row["ms_per_iteration"] + row["compile_ms"] / n
                        row["peak_store_bytes"] = rs[0]["peak_store_bytes"]
                        row["stores"] = rs[0]["stores"]
                    else:
                        row["first_loss"] = rs[0]["first_loss"]
                        row["last_loss"] = rs[0]["last_loss"]
                        if "compile_ms" in rs[0]:
                            row["compile_ms"] = statistics.median(x["compile_ms"] for x in rs)
                    results["rows"].append(row)
                    extra = f", compile {row['compile_ms']:.0f} ms" if "compile_ms" in row else ""
                    print(f"{label(c):50s} T={T:4d} {system:8s} {row['ms_per_iteration']:9.2f} ms/iteration "
                          f"(N={n}{extra}, RSS {row['peak_rss_mib']:.0f} MiB, load {row['load']})", flush=True)
        # Stored activations against T: the timing runs give T = 64 and
        # 256 (their --stats); one more run of one iteration gives T = 128.
        if not args.quick:
            for T in [64, 128, 256]:
                row = next((r for r in results["rows"] if r["config"] == label(c) and r.get("T") == T
                            and r["system"] == "tempo" and "stores" in r), None)
                if row is None:
                    with tempfile.TemporaryDirectory() as directory:
                        write_data(directory, c, T)
                        program = write_program(directory, c, mode)
                        row = run_tempo(program, directory, c, T, mode, 1, args.threads)
                results["stats"].append(dict(config=label(c), model=model, batch=c["batch"], width=c["width"], T=T,
                                             stores=row["stores"], peak_store_bytes=row["peak_store_bytes"]))
    results["machine"]["load_after"] = os.getloadavg()
    results["machine"]["uptime_after"] = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    with open(os.path.join(HERE, f"results{suffix(args.tag)}.json"), "w") as f:
        json.dump(results, f, indent=1)
    publish(results)


# The stores of the LSTM whose size grows with T, and what each holds per step.
ACTIVATIONS = {
    "gates": ("the activated gates i, f, g, o", lambda b, h, v: 4 * b * h),
    "c": ("the cell state", lambda b, h, v: b * h),
    "h": ("the hidden state", lambda b, h, v: b * h),
    "g_E$c$loss$0$0": ("the loss step's cotangents of h, Wo and bo", lambda b, h, v: b * h + h * v + v),
}


def activation_formula(b, h, v, T):
    return 4 * T * sum(f(b, h, v) for _, f in ACTIVATIONS.values())


def publish(results):
    table = markdown(results)
    tag = results.get("tag")
    with open(os.path.join(HERE, f"results{suffix(tag)}.md"), "w") as f:
        f.write(table)
    sys.path.insert(0, os.path.dirname(HERE))
    import readme  # noqa: E402  (bench/readme.py)

    readme.replace_table(f"train{suffix(tag)}", table)
    plot(results)
    print(table)


def markdown(results):
    m = results["machine"]
    rows = results["rows"]
    lines = [
        f"Machine: {m['cpu']}, {m['cpus']} cores; {m['threads']} threads for every system; load average "
        f"{m['load_before'][0]:.2f} before and {m['load_after'][0]:.2f} after the run; median of "
        f"{results['repeat']} interleaved rounds; PyTorch {results.get('torch', '?')}; tempo at "
        f"`{results['tempo']['commit'][:60]}`{' (with uncommitted changes)' if results['tempo']['uncommitted_changes'] else ''}; "
        f"ours {'with `--fast-math`' if results.get('fast_math') else 'exact (no `--fast-math`)'}.",
        "",
        "| model | T | ours ms/iter | ours, 1 thread | PyTorch (cell loop) | PyTorch nn.LSTM | best PyTorch / ours "
        "| JAX step | JAX scan | JAX scan / ours | torch.compile (compile ms) | ours incl. compile | compile (ms) "
        "| JAX compile step / scan (ms) | N | peak RSS ours / torch (MiB) | peak store bytes |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = []
    for r in rows:
        key = (r["config"], r.get("T"))
        if key not in keys:
            keys.append(key)
    for key in keys:
        by = {r["system"]: r for r in rows if (r["config"], r.get("T")) == key}
        ours = by.get("tempo")
        if ours and "error" in ours:
            error = ours["error"].splitlines()[-1].replace("|", "\\|")
            lines.append(f"| {key[0]} | - | not runnable: `{error[:200]}` | | | | | | | | | | | | | | |")
            continue
        torch_rows = [by[s] for s in ("torch", "torch-nn") if s in by]
        best = min(torch_rows, key=lambda r: r["ms_per_iteration"])

        def ms(r):
            return f"{r['ms_per_iteration']:.2f}" if r else "-"

        jax_step, jax_scan = by.get("jax"), by.get("jax-scan")
        versus_scan = f"{jax_scan['ms_per_iteration'] / ours['ms_per_iteration']:.2f}x" if jax_scan else "-"
        tc = by.get("torch-compile")
        compiled_torch = f"{ms(tc)} ({tc['compile_ms']:.0f})" if tc and "compile_ms" in tc else "-"
        jax_compile = " / ".join(f"{r['compile_ms']:.0f}" if r and "compile_ms" in r else "-" for r in (jax_step, jax_scan))
        lines.append(
            f"| {key[0]} | {key[1]} | {ms(ours)} | {ms(by.get('tempo-1t'))} | {ms(by.get('torch'))} | {ms(by.get('torch-nn'))} "
            f"| {best['ms_per_iteration'] / ours['ms_per_iteration']:.2f}x | {ms(jax_step)} | {ms(jax_scan)} | {versus_scan} "
            f"| {compiled_torch} | {ours['ms_per_iteration_with_compile']:.1f} "
            f"| {ours['compile_ms']:.0f} | {jax_compile} | {ours['iterations']} | {ours['peak_rss_mib']:.0f} / {best['peak_rss_mib']:.0f} "
            f"| {ours['peak_store_bytes']:,} |"
        )
    mode = {r.get("mode") for r in rows if r.get("system") == "tempo" and "mode" in r}
    lines += [
        "",
        "Ours: " + ("N iterations of forward, BPTT and Adam in one program (over an iteration dimension i); ms/iter = execution / N"
                    if mode == {"loop"} else "one step per program (loss, gradients, Adam; no iteration dimension); ms/iter = execution")
        + (f", execution the median of {results['tempo_repeat']} runs after a warm-up one (`tempo-run --repeat`)"
           if results.get("tempo_repeat") else ", execution of one (cold) run")
        + "; incl. compile = ms/iter + compile / N. PyTorch: median of N iterations after a warm-up one. "
        "JAX (bench/train/jax_baselines.py, the same maths, Adam as PyTorch's): a jitted step, the median of N calls "
        "after a warm-up one; scan: the N iterations as one jitted `lax.scan`, its time over N; compile times apart "
        "(best / ours and JAX scan / ours above 1: we are faster). "
        "Peak RSS: the whole process (ours: compiler and JIT included; torch: the interpreter and libtorch), "
        "against the PyTorch variant with the best time.",
    ]
    if results["checks"]:
        lines += [
            "",
            f"Correctness (one step, Adam step {CHECK_ADAM_STEP} from random moments, same weights): "
            "max over tensors of max |ours - torch| / max |torch| (the loss of each t, every gradient, "
            "the updated parameters and both moments); PyTorch float32 against float64 for scale.",
            "",
            "| model | T | ours vs torch | worst tensor | ours vs float64 | torch vs float64 | loss ours / torch | within 1e-4 |",
            "| --- | ---: | ---: | --- | ---: | ---: | --- | --- |",
        ]
        for ch in results["checks"]:
            lines.append(
                f"| {ch['config']} | {ch['T']} | {ch['max_ours_vs_torch']:.1e} | `{ch['worst_tensor']}` | "
                f"{ch['max_ours_vs_float64']:.1e} | {ch['max_torch_vs_float64']:.1e} | "
                f"{ch['loss_ours']:.4f} / {ch['loss_torch']:.4f} | {'yes' if ch['within_tolerance'] else 'no'} |"
            )
    lstm_stats = [s for s in results["stats"] if s["model"] == "lstm"]
    if lstm_stats:
        lines += [
            "",
            "Stored activations of the LSTM's training step (`tempo-run --stats`): the stores that grow with T, in bytes, "
            "against the formula `4 T (4BH + BH + BH + (BH + HV + V))` (f32: the activated gates, c, h, and the loss "
            "step's cotangents of h, Wo and bo, kept side by side in one tensor), V = "
            f"{results['vocab']}:",
            "",
            "| model | T | gates | c | h | loss cotangents | sum | formula | peak store bytes |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for s in lstm_stats:
            parts = [s["stores"].get(name, {}).get("bytes", 0) for name in ACTIVATIONS]
            formula = activation_formula(s["batch"], s["width"], results["vocab"], s["T"])
            lines.append(
                f"| {s['config']} | {s['T']} | " + " | ".join(f"{x:,}" for x in parts)
                + f" | {sum(parts):,} | {formula:,} | {s['peak_store_bytes']:,} |"
            )
    other = [s for s in results["stats"] if s["model"] != "lstm"]
    if other:
        lines += [
            "",
            "Stores of the GPT-style step that grow with T (`tempo-run --stats`; those whose size differs between the "
            "smallest and the largest T), in bytes:",
            "",
            "| model | T | stores growing with T | their bytes | bytes per step | peak store bytes |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for s in other:
            same = [x for x in other if x["config"] == s["config"]]
            lo, hi = min(same, key=lambda x: x["T"]), max(same, key=lambda x: x["T"])
            growing = [n for n in s["stores"] if lo["stores"].get(n, {}).get("bytes") != hi["stores"].get(n, {}).get("bytes")]
            total = sum(s["stores"][n]["bytes"] for n in growing)
            lines.append(f"| {s['config']} | {s['T']} | {len(growing)} | {total:,} | {total // s['T']:,} | {s['peak_store_bytes']:,} |")
    return "\n".join(lines) + "\n"


def plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in results["rows"] if "error" not in r]
    configs = []
    for r in rows:
        if r["config"] not in configs:
            configs.append(r["config"])
    if not configs:
        return
    fig, axes = plt.subplots(2, len(configs), figsize=(3.3 * len(configs), 6.0), squeeze=False)
    names = {"tempo": "ours", "tempo-1t": "ours, 1 thread", "torch": "PyTorch (cell loop)", "torch-nn": "PyTorch nn.LSTM",
             "jax": "JAX step", "jax-scan": "JAX lax.scan", "torch-compile": "torch.compile"}
    for k, config in enumerate(configs):
        systems = ["tempo", "tempo-1t", "torch", "torch-nn", "jax", "jax-scan", "torch-compile"]
        for system, style in zip(systems, ["o-", "o:", "s--", "^:", "d-.", "v-.", "x--"]):
            rs = [r for r in rows if r["config"] == config and r["system"] == system]
            if not rs:
                continue
            name = names[system] if "LSTM" in config or system != "torch" else "PyTorch"
            axes[0][k].plot([r["T"] for r in rs], [r["ms_per_iteration"] for r in rs], style, label=name)
            axes[1][k].plot([r["T"] for r in rs], [r["peak_rss_mib"] for r in rs], style, label=name)
        axes[0][k].set_title(config.replace(", batch", "\nbatch"), fontsize=8)
        axes[0][k].set_ylabel("ms / training iteration")
        axes[1][k].set_ylabel("peak RSS (MiB)")
        for ax in (axes[0][k], axes[1][k]):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("T")
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, f"train{suffix(results.get('tag'))}.png"), dpi=100)


if __name__ == "__main__":
    main()
