"""Where a GPU run's time goes: the GPT-2 small decode, the LSTM training
step and PPO run with `TEMPO_CUDA_PROFILE` (each launch timed alone; see
runtime/src/cuda_profile.rs), short, each report written to
OUT/NAME.profile.txt, with the unprofiled run's time beside it in
OUT/profile.json.

    kernel_profile.py OUT --bin-dir DIR [--deadline SECONDS] [--timeout S] [--cases NAME,...]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "gpt"))
import run as gpt  # noqa: E402  (bench/gpt/run.py)

sys.path.pop(0)
del sys.modules["run"]
sys.path.insert(0, os.path.join(ROOT, "bench", "train"))
import run as train  # noqa: E402  (bench/train/run.py)

TARGET = os.environ.get("TEMPO_GPU_TARGET", "cuda")


def decode(bin_dir, d, c, steps):
    gpt.GPT = os.path.join(bin_dir, "gpt")
    gpt.weights(d, c)
    program = gpt.write_program(d, c)
    command = [os.path.join(bin_dir, "tempo-run"), program, "--bound", f"T={steps}", "--bound", f"L={c['layers']}"]
    for name in ["x0", "Wq", "Wk", "Wv", "Wo", "W1", "W2"]:
        command += ["--input", f"{name}={os.path.join(d, name + '.npy')}"]
    return command + ["--format", "none"], steps


def lstm(bin_dir, d):
    train.BENCH_TRAIN = os.path.join(bin_dir, "bench_train")
    train.TEMPO_RUN = os.path.join(bin_dir, "tempo-run")
    c = dict(model="lstm", batch=64, width=256, T=64, iterations=3)
    train.write_data(d, c, c["T"])
    program = train.write_program(d, c, "loop")
    command = train.tempo_command(program, d, c, c["T"], "loop", c["iterations"], 1)
    return command + ["--output-dir", os.path.join(d, "out"), "--format", "none"], c["iterations"]


def ppo(bin_dir, d):
    program = os.path.join(d, "ppo.mlir")
    text = subprocess.run([os.path.join(bin_dir, "ppo"), "--env", "trivial", "--envs", "512", "--steps", "250",
                           "--layers", "2", "--width", "64", "--obs", "3,4,4", "--iterations", "1", "--lr", "1e-4",
                           "--dtype", "f32", "--mlir"], capture_output=True, text=True, check=True).stdout
    open(program, "w").write(text)
    return [os.path.join(bin_dir, "tempo-run"), program, "--bound", "I=1", "--bound", "T=250", "--seed", "1",
            "--fast-math", "--threads", "1", "--format", "none"], 1


CASES = [
    ("decode_b64_window512_T256", lambda b, d: decode(b, d, dict(layers=12, heads=12, width=768, batch=64,
                                                                   window=512), 256)),
    ("decode_b1_causal_T128", lambda b, d: decode(b, d, dict(layers=12, heads=12, width=768, batch=1,
                                                               window=None), 128)),
    ("lstm_train_b64_w256_T64", lstm),
    ("ppo_base_1_iteration", ppo),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--deadline", type=float, default=1e9)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--cases", help="the cases to run, by name (default: all)")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    end = time.time() + a.deadline
    rows = []
    for name, make in CASES:
        if a.cases and name not in a.cases.split(","):
            continue
        if time.time() > end:
            print(f"{name}: not run (past the deadline)", flush=True)
            continue
        row = dict(case=name)
        with tempfile.TemporaryDirectory() as d:
            try:
                command, per = make(a.bin_dir, d)
                command += ["--target", TARGET] + [f for f in ("--timings", "--stats") if f not in command]
                for profiled in (False, True):
                    env = dict(os.environ)
                    if profiled:
                        env["TEMPO_CUDA_PROFILE"] = os.path.join(a.out, name + ".profile.txt")
                    p = subprocess.run(command, capture_output=True, text=True, timeout=a.timeout, env=env)
                    m = re.search(r"compile ([\d.]+) ms, execute ([\d.]+) ms", p.stderr)
                    key = "profiled" if profiled else "plain"
                    if p.returncode != 0 or not m:
                        row[key + "_error"] = p.stderr[-800:]
                        break
                    row[key + "_compile_ms"] = float(m.group(1))
                    row[key + "_execute_ms"] = float(m.group(2))
                    row[key + "_ms_per_unit"] = float(m.group(2)) / per
            except (subprocess.TimeoutExpired, subprocess.CalledProcessError, OSError) as e:
                row["error"] = str(e)[-800:]
        rows.append(row)
        print(json.dumps(row), flush=True)
        with open(os.path.join(a.out, "profile.json"), "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
