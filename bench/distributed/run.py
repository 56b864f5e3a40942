"""Data-parallel scaling of Tempo over MPI (issue 44): examples/train_lstm.rs
and examples/ppo.rs with --data-parallel, 1 process (no launcher) and 2
processes (Open MPI's mpirun), each of 1 thread (--threads 1).

Per workload and number of processes P:
- weak scaling: P processes with the 1-process batch each (batch P*B);
- strong scaling: P processes sharing the 1-process batch (B/P each).
Time per iteration: the execution time the example reports (compilation
apart; the processes start running together, tempo::barrier) divided by
the iterations, the median of --repeat interleaved rounds (each
configuration and the control once per round). Processes waiting in an
all-reduce yield their core (`--mca mpi_yield_when_idle 1`): with Open
MPI's default busy polling, a waiting process takes the core its peer
needs whenever they share cores. Each process's all-reduces,
their bytes and the time in them come from the runtime (TEMPO_MPI_STATS).
Throughput: samples (LSTM: windows of --seq-len characters; PPO:
environment steps) per second over the whole run. Weak-scaling efficiency
t(1, B) / t(P, P*B); strong t(1, B) / (P * t(P, B)). The control: P
independent processes (no MPI, no communication) with B each at once, the
slowest's time: what the machine gives P processes (its cores, memory
bandwidth, other load); weak efficiency against it, t(control) / t(P,
P*B), is what the data-parallel run loses to communication and waiting.

    bench/.venv/bin/python bench/distributed/run.py [--repeat 3] [--quick] [--bin-dir DIR] [--no-ddp]

The baseline, PyTorch DDP (Gloo) from bench/.venv (bench/train/setup.sh
installs it from PyPI), runs the same workloads (ddp.py) in the same
rounds: 1 process, and 2 processes weak and strong, each of 1 thread.
Writes results.json and results.md beside this file.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# The training step of bench/train's LSTM (hidden 32, 32 characters, batch
# 8 per process) and the PPO base configuration of bench/rl (512
# environments, 250 steps, 2 layers of 64; here per process in the weak
# case), in f32 with --fast-math as bench/rl runs it.
WORKLOADS = {
    "lstm": dict(binary="train_lstm", batch_flag="--batch", batch=8, samples=lambda b, args: b,
                 args=["--hidden", "32", "--seq-len", "32", "--threads", "1"], iterations=60),
    "ppo": dict(binary="ppo", batch_flag="--envs", batch=512, samples=lambda b, args: b * 250,
                args=["--steps", "250", "--layers", "2", "--width", "64", "--threads", "1", "--fast-math"],
                iterations=12),
}
STATS = re.compile(r"tempo: rank (\d+) of (\d+): (\d+) all-reduces, (\d+) bytes, ([0-9.]+) s in them")
LSTM_TIME = re.compile(r"train_lstm: compile ([0-9.]+) s, execute ([0-9.]+) s")
PPO_LINE = re.compile(r"iteration \d+ mean_return \S+ seconds ([0-9.]+)")


def run_independent(bin_dir, workload, processes, batch, iterations):
    """The slowest execution time of `processes` plain runs at once."""
    w = WORKLOADS[workload]
    command = [os.path.join(bin_dir, "examples", w["binary"]), "--iterations", str(iterations),
               w["batch_flag"], str(batch)] + w["args"]
    env = dict(os.environ, TEMPO_CACHE="0")
    running = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
               for _ in range(processes)]
    times = []
    for proc in running:
        out, err = proc.communicate(timeout=900)
        if proc.returncode != 0:
            sys.exit(f"{' '.join(command)} failed:\n{err[-3000:]}")
        if workload == "lstm":
            times.append(float(LSTM_TIME.search(err).group(2)))
        else:
            times.append(float(PPO_LINE.findall(out)[0]) * iterations)
    return max(times)


def run_once(bin_dir, workload, processes, batch, iterations):
    w = WORKLOADS[workload]
    command = [os.path.join(bin_dir, "examples", w["binary"]), "--iterations", str(iterations),
               w["batch_flag"], str(batch), "--data-parallel"] + w["args"]
    if processes > 1:
        command = ["mpirun", "-np", str(processes), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none",
                   "--mca", "mpi_yield_when_idle", "1"] + command
    env = dict(os.environ, TEMPO_MPI_STATS="1", TEMPO_CACHE="0")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    if workload == "lstm":
        times = [float(m.group(2)) for m in LSTM_TIME.finditer(done.stderr)]
        execute = max(times)
    else:
        per = [float(m.group(1)) for m in PPO_LINE.finditer(done.stdout)]
        execute = per[0] * iterations
    stats = [dict(rank=int(m.group(1)), calls=int(m.group(3)), bytes=int(m.group(4)), seconds=float(m.group(5)))
             for m in STATS.finditer(done.stderr)]
    return execute, stats


def run_ddp(workload, processes, batch, iterations, port):
    """PyTorch DDP's seconds per iteration and its figures (ddp.py)."""
    command = [sys.executable, os.path.join(HERE, "ddp.py"), workload, "--processes", str(processes), "--batch",
               str(batch), "--iterations", str(iterations), "--port", str(port)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summarize_ddp(runs, workload, processes, batch, iterations):
    seconds = statistics.median(r["seconds_per_iteration"] for r in runs)
    out = dict(system="PyTorch DDP", workload=workload, processes=processes, batch=batch, iterations=iterations,
               seconds_per_iteration=seconds, samples_per_second=WORKLOADS[workload]["samples"](batch, None) / seconds,
               torch=runs[0]["torch"])
    if processes > 1:
        # The step's own collectives and DDP's one bucket of gradients.
        out["all_reduces_per_iteration"] = runs[0]["step_collectives"] + 1
        out["bytes_per_iteration"] = runs[0]["gradient_bytes"]
    return out


def summarize(runs, workload, processes, batch, iterations):
    execute = statistics.median(r[0] for r in runs)
    out = dict(system="tempo", workload=workload, processes=processes, batch=batch, iterations=iterations,
               seconds_per_iteration=execute / iterations,
               samples_per_second=WORKLOADS[workload]["samples"](batch, None) / (execute / iterations),
               executes=[r[0] for r in runs])
    stats = runs[len(runs) // 2][1]
    if stats:
        out["all_reduces_per_iteration"] = stats[0]["calls"] / iterations
        out["bytes_per_iteration"] = stats[0]["bytes"] / iterations
        share = statistics.mean(s["seconds"] for s in stats) / execute
        out["collective_share"] = share
    return out


def table(results):
    lines = ["| system | workload | P | batch (whole run) | ms / iteration | samples / s | all-reduces / iteration | "
             "bytes / iteration | time in all-reduce | efficiency |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        eff = r.get("efficiency", "")
        share = f"{100 * r['collective_share']:.1f}%" if "collective_share" in r else "-"
        lines.append(
            f"| {r.get('system', 'tempo')} | {r['workload']} | {r['processes']} | {r['batch']} | "
            f"{1000 * r['seconds_per_iteration']:.2f} | "
            f"{r['samples_per_second']:.0f} | {r.get('all_reduces_per_iteration', 0):.0f} | "
            f"{r.get('bytes_per_iteration', 0):.0f} | {share} | {eff} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="one run each, fewer iterations")
    parser.add_argument("--bin-dir", default=os.path.join(ROOT, "target", "release"))
    parser.add_argument("--no-ddp", action="store_true", help="leave out the PyTorch DDP baseline")
    args = parser.parse_args()
    load_before = os.getloadavg()
    repeat = 1 if args.quick else args.repeat
    results = []
    for name, w in WORKLOADS.items():
        iterations = max(3, w["iterations"] // 3) if args.quick else w["iterations"]
        b = w["batch"]
        # Interleaved rounds: each configuration and the control once per
        # round, so that they meet the same load on a shared machine.
        rounds = {"one": [], "weak": [], "strong": [], "control": [], "ddp one": [], "ddp weak": [],
                  "ddp strong": []}
        for k in range(repeat):
            if not args.no_ddp:
                port = 29531 + 7 * k
                rounds["ddp one"].append(run_ddp(name, 1, b, iterations, port))
                rounds["ddp weak"].append(run_ddp(name, 2, 2 * b, iterations, port + 1))
                rounds["ddp strong"].append(run_ddp(name, 2, b, iterations, port + 2))
            rounds["one"].append(run_once(args.bin_dir, name, 1, b, iterations))
            rounds["weak"].append(run_once(args.bin_dir, name, 2, 2 * b, iterations))
            rounds["strong"].append(run_once(args.bin_dir, name, 2, b, iterations))
            rounds["control"].append(run_independent(args.bin_dir, name, 2, b, iterations))
        one = summarize(rounds["one"], name, 1, b, iterations)
        weak = summarize(rounds["weak"], name, 2, 2 * b, iterations)
        strong = summarize(rounds["strong"], name, 2, b, iterations)
        control = statistics.median(rounds["control"])
        results.append(dict(workload=name, processes="2 independent", batch=f"{b} each", iterations=iterations,
                            seconds_per_iteration=control / iterations,
                            samples_per_second=2 * w["samples"](b, None) / (control / iterations)))
        weak["efficiency"] = (f"weak {one['seconds_per_iteration'] / weak['seconds_per_iteration']:.2f} "
                              f"({control / iterations / weak['seconds_per_iteration']:.2f} of the control)")
        strong["efficiency"] = f"strong {one['seconds_per_iteration'] / (2 * strong['seconds_per_iteration']):.2f}"
        results += [one, weak, strong]
        results.append(results.pop(-4))
        if not args.no_ddp:
            d_one = summarize_ddp(rounds["ddp one"], name, 1, b, iterations)
            d_weak = summarize_ddp(rounds["ddp weak"], name, 2, 2 * b, iterations)
            d_strong = summarize_ddp(rounds["ddp strong"], name, 2, b, iterations)
            d_weak["efficiency"] = (f"weak {d_one['seconds_per_iteration'] / d_weak['seconds_per_iteration']:.2f}; "
                                    f"tempo {d_weak['seconds_per_iteration'] / weak['seconds_per_iteration']:.2f}x")
            d_strong["efficiency"] = (
                f"strong {d_one['seconds_per_iteration'] / (2 * d_strong['seconds_per_iteration']):.2f}; "
                f"tempo {d_strong['seconds_per_iteration'] / strong['seconds_per_iteration']:.2f}x")
            d_one["efficiency"] = f"tempo {d_one['seconds_per_iteration'] / one['seconds_per_iteration']:.2f}x"
            results += [d_one, d_weak, d_strong]
        print(table(results), flush=True)
    load_after = os.getloadavg()
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(dict(load_before=load_before, load_after=load_after, repeat=repeat, results=results), f, indent=1)
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write(f"Median of {repeat} interleaved rounds; load average {load_before[0]:.2f} before, "
                f"{load_after[0]:.2f} after. The DDP rows' efficiency column also gives tempo's speed-up "
                "over DDP in the same configuration (its time over ours).\n\n")
        f.write(table(results) + "\n")


if __name__ == "__main__":
    main()
