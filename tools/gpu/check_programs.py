"""Runs every program of the given directories compiled for a GPU target
(`tempo-run --target cuda`) and with the reference interpreter, and compares
the outputs. One JSON line per program in OUT/programs.jsonl and a summary
line per program on stdout; exits non-zero if any program disagrees or the
compiled run fails where the interpreter runs.

    check_programs.py OUT DIR_OR_FILE... [--jobs N] [--deadline SECONDS]
                      [--target-flags "--target cuda"] [--timeout S]

A program's bounds come from its first line `// bounds: T=4 B=2`, else from
the `--bound NAME=V` flags of a `// Run:` comment, else every bound of its
`temporal.dim` ops gets 7 (`T`) or 3. Programs with reads through data or
stops (`temporal.read_at`, `temporal.stop`) and external calls are expected
to be refused for the GPU with a located "not yet" error. Outcomes:

- agree: the CPU's tolerances (floats within 1e-5 relative to 1 + |value|,
  f64 within 1e-12, integers and booleans exact), the largest difference
  reported;
- close: floats within 1e-3 (the GPU's libdevice functions and ptxas's
  fused multiply-adds round differently), reported apart from agreement;
- differ, compiled-failed (the interpreter ran), refused (expected), both-failed
  (the program is rejected either way: generated programs may be), timeout.

`--target-flags "--target cpu"` runs the same checks for the CPU target, to
test this script on a machine without a GPU.
"""

import argparse
import concurrent.futures
import glob
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def programs_of(paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(glob.glob(os.path.join(p, "*.mlir")))
        elif p.endswith(".mlir"):
            out.append(p)
    return out


def bounds_of(text):
    first = text.split("\n", 1)[0]
    if first.startswith("// bounds:"):
        return [b for b in first[len("// bounds:"):].split() if "=" in b]
    for line in text.splitlines():
        if line.startswith("// Run:") or line.startswith("//   tempo-run"):
            found = re.findall(r"--bound\s+(\w+=\d+)", line)
            if found:
                return found
    names = re.findall(r'"temporal\.dim"\(\)\s*\{[^}]*bound\s*=\s*"(\w+)"', text)
    return [f"{n}={7 if n == 'T' else 3}" for n in dict.fromkeys(names)]


def expected_refusal(text):
    return any(op in text for op in ("temporal.read_at", "temporal.stop", "temporal.call"))


def flat(values):
    if isinstance(values, list):
        for v in values:
            yield from flat(v)
    else:
        yield values


def load(text):
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def compare(compiled, interpreted):
    """(outcome, largest relative difference, message)."""
    if [(x["name"], x["shape"]) for x in compiled] != [(y["name"], y["shape"]) for y in interpreted]:
        return "differ", math.inf, "different outputs or shapes"
    worst = 0.0
    where = ""
    within = True
    for x, y in zip(compiled, interpreted):
        is_float = x["dtype"].startswith("float") or x["dtype"] in ("bfloat16", "f16")
        tolerance = 1e-12 if x["dtype"] == "float64" else 1e-5
        for k, (u, v) in enumerate(zip(flat(x["values"]), flat(y["values"]))):
            if isinstance(u, bool) or isinstance(v, bool) or not is_float:
                if u != v:
                    return "differ", math.inf, f"{x['name']}[{k}]: {u} vs {v} (exact)"
                continue
            if isinstance(u, float) and isinstance(v, float) and math.isnan(u) and math.isnan(v):
                continue
            if u == v:
                continue
            if isinstance(u, float) and isinstance(v, float) and (math.isinf(u) or math.isinf(v)):
                return "differ", math.inf, f"{x['name']}[{k}]: {u} vs {v}"
            d = abs(u - v) / (1 + abs(v))
            within = within and d <= tolerance
            if d > worst:
                worst, where = d, f"{x['name']}[{k}]: {u} vs {v}"
        if worst > 1e-3:
            return "differ", worst, where
    if within:
        return "agree", worst, where
    return "close", worst, where


def run(command, timeout):
    start = time.perf_counter()
    try:
        p = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.perf_counter() - start
    except subprocess.TimeoutExpired:
        return None, "", "timeout", time.perf_counter() - start


def check(program, tempo_run, target_flags, timeout, seed):
    text = open(program, encoding="utf-8", errors="replace").read()
    bounds = bounds_of(text)
    flags = [f for b in bounds for f in ("--bound", b)] + ["--seed", str(seed), "--format", "json"]
    rc_c, out_c, err_c, s_c = run([tempo_run, program] + target_flags + flags, timeout)
    rc_i, out_i, err_i, s_i = run([tempo_run, program, "--interpret"] + flags, timeout)
    row = dict(program=os.path.relpath(program, ROOT) if program.startswith(ROOT) else program,
               bounds=bounds, compiled_s=round(s_c, 3), interpreted_s=round(s_i, 3))
    if rc_c is None:
        row.update(outcome="timeout", message=f"compiled run over {timeout} s")
    elif rc_c != 0:
        refusal = "not yet" in err_c
        if refusal and (expected_refusal(text) or rc_i != 0):
            row.update(outcome="refused", message=err_c.strip().splitlines()[-1][:300])
        elif rc_i != 0:
            row.update(outcome="both-failed", message=err_c.strip()[-300:])
        else:
            row.update(outcome="compiled-failed", message=err_c.strip()[-2000:])
    elif rc_i is None:
        row.update(outcome="timeout", message=f"interpreted run over {timeout} s")
    elif rc_i != 0:
        row.update(outcome="interpreter-failed", message=err_i.strip()[-1000:])
    else:
        try:
            outcome, worst, message = compare(load(out_c), load(out_i))
        except (ValueError, KeyError) as e:
            outcome, worst, message = "differ", math.inf, f"unreadable output: {e}"
        row.update(outcome=outcome, largest_difference=worst if math.isfinite(worst) else None, message=message)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from now after which no program starts")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--tempo-run", default=os.path.join(ROOT, "target", "release", "tempo-run"))
    ap.add_argument("--target-flags", default="--target cuda")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    programs = programs_of(a.paths)
    end = time.time() + a.deadline
    flags = shlex.split(a.target_flags)
    counts = {}
    failures = 0
    with open(os.path.join(a.out, "programs.jsonl"), "w") as log, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        def guarded(p):
            if time.time() > end:
                return dict(program=p, outcome="skipped", message="past the deadline")
            return check(p, a.tempo_run, flags, a.timeout, a.seed)

        for row in pool.map(guarded, programs):
            counts[row["outcome"]] = counts.get(row["outcome"], 0) + 1
            log.write(json.dumps(row) + "\n")
            log.flush()
            bad = row["outcome"] in ("differ", "compiled-failed", "timeout", "interpreter-failed")
            failures += bad
            detail = row.get("message", "") if row["outcome"] != "agree" else ""
            diff = row.get("largest_difference")
            print(f"{row['outcome']:16} {row['program']} {' '.join(row.get('bounds', []))}"
                  + (f" (largest difference {diff:.1e})" if diff else "")
                  + (f": {detail.splitlines()[-1][:200] if detail else ''}" if bad or row["outcome"] == "close" else ""),
                  flush=True)
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    print(f"{len(programs)} programs: {summary}")
    with open(os.path.join(a.out, "programs_summary.json"), "w") as f:
        json.dump(dict(programs=len(programs), counts=counts, target_flags=a.target_flags), f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
