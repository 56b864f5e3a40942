"""The training step (bench/train) and PPO (bench/rl) on the GPU: ours
(`tempo-run --target cuda`, the whole run one program) against PyTorch on the
same device (the benches' own baselines with `--device cuda`), each in its
own process, interleaved. Writes OUT/train_rl.json and OUT/train_rl.md.

    train_rl.py OUT --bin-dir DIR [--deadline SECONDS] [--timeout S] [--repeat N]

The configurations are the benches' (bench/train: the LSTM language model
and the 2-layer GPT-style block; bench/rl: PPO's base configuration, 512
environments, 250 steps). Reported: ms (PPO: s) per iteration, compile time,
the losses or returns of both (same data and initial weights: the training
step's losses agree to float tolerance; PPO's returns only in distribution,
the random streams differ), peak device memory.
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
sys.path.insert(0, os.path.join(ROOT, "bench", "train"))
import run as train  # noqa: E402  (bench/train/run.py)

TARGET = os.environ.get("TEMPO_GPU_TARGET", "cuda")
DEVICE = os.environ.get("TEMPO_GPU_TORCH_DEVICE", "cuda")


def run(command, timeout, env=None):
    start = time.perf_counter()
    p = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.perf_counter() - start
    if p.returncode != 0:
        raise RuntimeError(f"{os.path.basename(command[0])} failed ({p.returncode}): {p.stderr.strip()[-1500:]}")
    return p.stdout, p.stderr, wall


def ours_timing(err):
    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", err)
    peak = re.search(r"peak device memory of buffers and blocks: (\d+)", err)
    return float(m.group(1)), float(m.group(2)), int(peak.group(1)) if peak else None


def train_cases():
    return [
        dict(model="lstm", batch=64, width=256, T=64, iterations=10),
        dict(model="gpt", batch=16, width=256, layers=2, heads=4, T=64, iterations=10),
    ]


def train_row(c, bin_dir, timeout, repeat):
    train.TEMPO_RUN = os.path.join(bin_dir, "tempo-run")
    train.BENCH_TRAIN = os.path.join(bin_dir, "bench_train")
    row = dict(bench="train", config=train.label(c) + f", T {c['T']}", iterations=c["iterations"])
    with tempfile.TemporaryDirectory() as d:
        train.write_data(d, c, c["T"])
        program = train.write_program(d, c, "loop")
        ours = train.tempo_command(program, d, c, c["T"], "loop", c["iterations"], 1)
        ours += ["--target", TARGET, "--output-dir", os.path.join(d, "out"), "--format", "none"]
        systems = {"tempo": ours}
        for system in (["torch", "torch-nn"] if c["model"] == "lstm" else ["torch"]):
            systems[system] = train.baseline_command(system, d, c, c["iterations"], 1, ["--device", DEVICE])
        samples = {s: [] for s in systems}
        for r in range(repeat):
            order = list(systems) if r % 2 == 0 else list(reversed(systems))
            for s in order:
                out, err, wall = run(systems[s], timeout)
                if s == "tempo":
                    compile_ms, execute_ms, peak = ours_timing(err)
                    samples[s].append(execute_ms / c["iterations"])
                    row.update(tempo_compile_s=compile_ms / 1e3, tempo_peak_bytes=peak)
                    import numpy as np

                    loss = np.load(os.path.join(d, "out", "loss.npy")) if os.path.exists(
                        os.path.join(d, "out", "loss.npy")) else None
                    if loss is not None:
                        loss = np.asarray(loss)
                        row["tempo_losses"] = [float(x) for x in loss.reshape(-1)[:3]]
                        # loss[i, t] (summed over the batch): the first
                        # iteration's, summed over t as PyTorch's first_loss is.
                        row["tempo_first_loss"] = float(loss.reshape(loss.shape[0], -1)[0].sum()) if loss.ndim else None
                else:
                    result = json.loads(out.strip().splitlines()[-1])
                    samples[s].append(result["ms_per_iteration"])
                    row[f"{s}_first_loss"] = result.get("first_loss")
                    row[f"{s}_peak_bytes"] = result.get("device_bytes")
        for s, v in samples.items():
            row[f"{s}_ms"] = statistics.median(v)
    return row


def ppo_row(bin_dir, timeout, repeat, iterations=3):
    c = dict(envs=512, steps=250, layers=2, width=64, obs="3,4,4")
    row = dict(bench="rl", config="PPO base: 512 envs, T 250, 2 x 64, obs 3,4,4", iterations=iterations)
    with tempfile.TemporaryDirectory() as d:
        program = os.path.join(d, "ppo.mlir")
        text = subprocess.run([os.path.join(bin_dir, "ppo"), "--env", "trivial", "--envs", str(c["envs"]),
                               "--steps", str(c["steps"]), "--layers", str(c["layers"]), "--width", str(c["width"]),
                               "--obs", c["obs"], "--iterations", str(iterations), "--lr", "1e-4", "--dtype", "f32",
                               "--mlir"], capture_output=True, text=True, check=True).stdout
        open(program, "w").write(text)
        ours = [os.path.join(bin_dir, "tempo-run"), program, "--bound", f"I={iterations}", "--bound",
                f"T={c['steps']}", "--seed", "1", "--fast-math", "--threads", "1", "--timings", "--stats",
                "--target", TARGET]
        torch = [sys.executable, os.path.join(ROOT, "bench", "rl", "baseline.py"), "--envs", str(c["envs"]),
                 "--steps", str(c["steps"]), "--layers", str(c["layers"]), "--width", str(c["width"]), "--obs",
                 c["obs"], "--iterations", str(iterations + 1), "--threads", "1", "--device", DEVICE]
        samples = {"tempo": [], "torch": []}
        for r in range(repeat):
            for s in (["tempo", "torch"] if r % 2 == 0 else ["torch", "tempo"]):
                out, err, wall = run(ours if s == "tempo" else torch, timeout)
                if s == "tempo":
                    compile_ms, execute_ms, peak = ours_timing(err)
                    samples[s].append(execute_ms / 1e3 / iterations)
                    m = re.search(r"mean_return: \S+ = \[([^\]]*)\]", out)
                    row.update(tempo_compile_s=compile_ms / 1e3, tempo_peak_bytes=peak,
                               tempo_returns=[float(x) for x in m.group(1).split(",")] if m else None)
                else:
                    result = json.loads(out.strip().splitlines()[-1])
                    samples[s].append(statistics.median(result["seconds"][1:]))  # the first warms up
                    row.update(torch_returns=result["returns"][1:], torch_peak_bytes=result.get("device_bytes"))
        for s, v in samples.items():
            row[f"{s}_s"] = statistics.median(v)
    return row


def markdown(device, rows):
    lines = [
        f"Training and RL on {device}: ours (`--target cuda`, the whole run one program, fast math) and PyTorch "
        "eager on the same device; per iteration, median of interleaved runs; speed-up = PyTorch's time over ours.",
        "",
        "| bench | configuration | tempo | PyTorch | speed-up | nn.LSTM | tempo compile s | tempo peak MiB | "
        "PyTorch peak MiB |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['bench']} | {r['config']} | failed: {r['error'][:200]} | | | | | | |")
            continue
        unit = "ms" if r["bench"] == "train" else "s"
        t, p = r.get(f"tempo_{unit}"), r.get(f"torch_{unit}")
        nn = r.get("torch-nn_ms")
        mib = lambda b: f"{b / 2**20:.0f}" if b else "n/a"  # noqa: E731
        lines.append(
            f"| {r['bench']} | {r['config']} | {t:.3f} {unit} | {p:.3f} {unit} | {p / t:.2f}x | "
            f"{f'{nn:.3f} ms ({nn / t:.2f}x)' if nn else ''} | {r.get('tempo_compile_s', 0):.1f} | "
            f"{mib(r.get('tempo_peak_bytes'))} | {mib(r.get('torch_peak_bytes'))} |"
        )
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--deadline", type=float, default=1e9)
    ap.add_argument("--timeout", type=float, default=150)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--device-name", default=None)
    a = ap.parse_args()
    end = time.time() + a.deadline
    os.makedirs(a.out, exist_ok=True)
    device = a.device_name or subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                             capture_output=True, text=True).stdout.strip() or "no GPU"
    jobs = [("rl", None)] + [("train", c) for c in train_cases()]
    rows = []
    for kind, c in jobs:
        if time.time() > end:
            print(f"{kind} {c or ''}: not run (past the deadline)", flush=True)
            continue
        try:
            row = ppo_row(a.bin_dir, a.timeout, a.repeat) if kind == "rl" else train_row(c, a.bin_dir, a.timeout,
                                                                                          a.repeat)
        except (RuntimeError, subprocess.TimeoutExpired, subprocess.CalledProcessError) as e:
            row = dict(bench=kind, config=train.label(c) if c else "PPO base", error=str(e).strip()[-1500:])
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(a.out, "train_rl.json"), "w") as f:
            json.dump(dict(device=device, rows=rows), f, indent=1)
        with open(os.path.join(a.out, "train_rl.md"), "w") as f:
            f.write(markdown(device, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
