#!/usr/bin/env python3
"""Times the bundled examples through tempo-run (compile and execute phases,
as reported by --timings), records the peak bytes of live stores and each
store's kind (--stats) and the process's peak RSS, and writes
bench/results.json and the tables in bench/README.md.
Usage: python3 bench/run.py [--repeat N]

Timings are wall-clock medians on this machine; they are recorded here, never
asserted in tests."""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")

CASES = [
    ("counter", "examples/counter.mlir", {"T": 1_000_000}, []),
    ("counter", "examples/counter.mlir", {"T": 10_000_000}, []),
    ("fibonacci", "examples/fibonacci.mlir", {"T": 1_000_000}, []),
    ("running_sum", "examples/running_sum.mlir", {"T": 1_000_000}, ["--seed", "1"]),
    ("rnn", "examples/rnn.mlir", {"T": 100_000}, ["--seed", "1"]),
    ("rnn", "examples/rnn.mlir", {"T": 1_000_000}, ["--seed", "1"]),
    ("returns", "examples/returns.mlir", {"T": 1_000_000}, ["--seed", "1"]),
    ("causal_attention", "examples/causal_attention.mlir", {"T": 2_048}, ["--seed", "1"]),
    ("windowed_attention", "examples/windowed_attention.mlir", {"T": 100_000}, ["--seed", "1"]),
    ("stacked_rnn", "examples/stacked_rnn.mlir", {"T": 100_000, "L": 4}, ["--seed", "1"]),
]

# Memory: the same program at growing T; the store bytes are counted by the
# compiled code, the RSS is the whole process (MLIR and LLVM included).
MEMORY_CASES = [
    ("cumulative_sum", "examples/cumulative_sum.mlir", {"T": 10}, []),
    ("cumulative_sum", "examples/cumulative_sum.mlir", {"T": 100_000}, []),
    ("cumulative_sum", "examples/cumulative_sum.mlir", {"T": 10_000_000}, []),
    ("windowed_attention", "examples/windowed_attention.mlir", {"T": 100}, ["--seed", "1"]),
    ("windowed_attention", "examples/windowed_attention.mlir", {"T": 4_096}, ["--seed", "1"]),
    ("windowed_attention", "examples/windowed_attention.mlir", {"T": 100_000}, ["--seed", "1"]),
    ("causal_attention", "examples/causal_attention.mlir", {"T": 100}, ["--seed", "1"]),
    ("causal_attention", "examples/causal_attention.mlir", {"T": 1_024}, ["--seed", "1"]),
    ("causal_attention", "examples/causal_attention.mlir", {"T": 4_096}, ["--seed", "1"]),
    ("stacked_rnn", "examples/stacked_rnn.mlir", {"T": 100, "L": 4}, ["--seed", "1"]),
    ("stacked_rnn", "examples/stacked_rnn.mlir", {"T": 100_000, "L": 4}, ["--seed", "1"]),
]


def run_memory(path, bounds, extra):
    cmd = [TEMPO_RUN, os.path.join(ROOT, path), "--format", "none", "--stats"] + extra
    for name, value in bounds.items():
        cmd += ["--bound", f"{name}={value}"]
    child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    stderr = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    if status != 0:
        raise SystemExit(f"{cmd} failed:\n{stderr}")
    peak = int(re.search(r"peak bytes of live stores: ([0-9]+)", stderr).group(1))
    stores = re.findall(r"^  (\S+): (\S+)", stderr, re.M)
    kinds = ", ".join(f"{name}: {kind}" for name, kind in stores if kind not in ("input", "output"))
    return peak, kinds, usage.ru_maxrss // 1024


def bounds_text(bounds):
    return ", ".join(f"{name}={value:,}" for name, value in bounds.items())


def run_once(path, bounds, extra):
    cmd = [TEMPO_RUN, os.path.join(ROOT, path), "--format", "none", "--timings"] + extra
    for name, value in bounds.items():
        cmd += ["--bound", f"{name}={value}"]
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    match = re.search(r"compile ([0-9.]+) ms, execute ([0-9.]+) ms", done.stderr)
    return float(match.group(1)), float(match.group(2))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--quiet", "--bin", "tempo-run"], cwd=ROOT, check=True)
    results = []
    for name, path, bounds, extra in CASES:
        samples = [run_once(path, bounds, extra) for _ in range(args.repeat)]
        compile_ms = statistics.median(s[0] for s in samples)
        execute_ms = statistics.median(s[1] for s in samples)
        steps = bounds["T"]
        results.append({
            "example": name,
            "bounds": bounds,
            "compile_ms": round(compile_ms, 3),
            "execute_ms": round(execute_ms, 3),
            "ns_per_step": round(execute_ms * 1e6 / steps, 2),
            "repeat": args.repeat,
        })
        print(f"{name:12} T={steps:>9}: compile {compile_ms:8.2f} ms, execute {execute_ms:9.2f} ms", file=sys.stderr)
    memory = []
    for name, path, bounds, extra in MEMORY_CASES:
        peak, kinds, rss_mib = run_memory(path, bounds, extra)
        memory.append({"example": name, "bounds": bounds, "stores": kinds, "peak_store_bytes": peak, "max_rss_mib": rss_mib})
        print(f"{name:12} T={bounds['T']:>9}: peak store bytes {peak}, RSS {rss_mib} MiB ({kinds})", file=sys.stderr)
    machine = {"cpus": os.cpu_count(), "machine": platform.machine(), "python": platform.python_version()}
    with open(os.path.join(ROOT, "bench", "results.json"), "w") as f:
        json.dump({"machine": machine, "results": results, "memory": memory}, f, indent=2)
        f.write("\n")
    rows = "\n".join(
        f"| {r['example']} | {bounds_text(r['bounds'])} | {r['compile_ms']:.1f} | {r['execute_ms']:.1f} | {r['ns_per_step']:.1f} |"
        for r in results
    )
    table = (
        "| example | bounds | compile (ms) | execute (ms) | ns per step |\n"
        "| --- | ---: | ---: | ---: | ---: |\n" + rows + "\n"
    )
    readme = os.path.join(ROOT, "bench", "README.md")
    text = open(readme).read()
    start, end = text.index("<!-- results -->"), text.index("<!-- /results -->")
    text = text[: start + len("<!-- results -->")] + "\n" + table + text[end:]
    memory_rows = "\n".join(
        f"| {m['example']} | {bounds_text(m['bounds'])} | {m['stores']} | {m['peak_store_bytes']:,} | {m['max_rss_mib']} |"
        for m in memory
    )
    memory_table = (
        "| example | bounds | stores | peak store bytes | max RSS (MiB) |\n"
        "| --- | ---: | --- | ---: | ---: |\n" + memory_rows + "\n"
    )
    start, end = text.index("<!-- memory -->"), text.index("<!-- /memory -->")
    text = text[: start + len("<!-- memory -->")] + "\n" + memory_table + text[end:]
    open(readme, "w").write(text)


if __name__ == "__main__":
    main()
