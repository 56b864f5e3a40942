"""ACRoBat's dynamic workloads on this machine: a TreeLSTM over batches of
random binary trees, a bidirectional RNN over sequences of mixed lengths
and a nested RNN over sequences of inner sequences of mixed lengths (this
project against PyTorch eager, one sample at a time, what
users write, and DyNet with dynamic auto-batching), greedy decoding until
EOS against the masked fixed-length decode, and an early-exit stack of
layers against the full stack.

    bench/dynamic/setup.sh             # toolchain, then PyTorch, DyNet, NumPy, matplotlib in bench/.venv
    bench/.venv/bin/python bench/dynamic/run.py [--quick] [--repeat N]

For each batch (8 or 64 trees of 20 to 50 leaves) and hidden size (64,
128, 256) it writes the batch with trees.py, emits the program with
`examples/tree_lstm.rs --mlir`, and runs, interleaved (one of each per
round), each in its own process:
- `tempo-run` with `--fast-math` (children read through data, the nodes of
  one depth computed together: batched), and again with
  `--disable-pass depth-batching` (the same order, one node at a time);
  the time is the compiled code's execution (`--timings`, the median of 5
  runs after a warm-up run, `--repeat 5`), outputs kept in memory and not
  printed;
- `baselines.py torch` (one thread, per tree) and `baselines.py dynet`
  (auto-batching on; every node's h and c read back, as our output holds
  them, and only the roots' h, as the issue's figures were taken).
Every system's result is checked against the NumPy reference (ours through
--output-dir once per case). Reported: medians in ms per batch, the ratios,
and the load average. Results go to bench/dynamic/results.json,
results.md (also copied into bench/README.md) and ms_per_batch.png.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TEMPO_RUN = os.path.join(ROOT, "target", "release", "tempo-run")
EXAMPLE = os.path.join(ROOT, "target", "release", "examples", "tree_lstm")
DECODE = os.path.join(ROOT, "target", "release", "examples", "decode_until_eos")
BIRNN = os.path.join(ROOT, "target", "release", "examples", "birnn")
EARLY_EXIT = os.path.join(ROOT, "target", "release", "examples", "early_exit")
NESTED = os.path.join(ROOT, "target", "release", "examples", "nested_rnn")
BIRNN_NAMES = ["x", "prev", "next", "Wx", "Wh", "bf", "Ux", "Uh", "bb"]
PYTHON = sys.executable
# Each tempo-run process compiles once, runs once to warm up, then this many
# times, and reports the median (as the baselines warm up before timing).
TEMPO_REPEAT = "5"
NAMES = ["x", "left", "right", "W", "bw", "U", "bu"]

SYSTEMS = ["tempo", "tempo_per_node", "torch", "dynet", "dynet_roots"]
LABELS = {
    "tempo": "tempo (batched by depth)",
    "tempo_per_node": "tempo (one node at a time)",
    "torch": "PyTorch eager (per tree)",
    "dynet": "DyNet auto-batch (all nodes read)",
    "dynet_roots": "DyNet auto-batch (roots read)",
}


def build():
    subprocess.run(
        [
            "cargo", "build", "--release", "--bin", "tempo-run",
            "--example", "tree_lstm", "--example", "decode_until_eos", "--example", "birnn",
            "--example", "early_exit", "--example", "nested_rnn",
        ],
        cwd=ROOT,
        check=True,
    )


def tempo_command(program, batch, bounds, extra):
    cmd = [TEMPO_RUN, program, "--fast-math", "--bound", f"N={bounds['N']}", "--bound", f"NL={bounds['NL']}"]
    for name in NAMES:
        cmd += ["--input", f"{name}={os.path.join(batch, name + '.npy')}"]
    return cmd + extra


def run_tempo(program, batch, bounds, per_node):
    extra = ["--format", "none", "--timings", "--repeat", TEMPO_REPEAT] + (["--disable-pass", "depth-batching"] if per_node else [])
    out = subprocess.run(tempo_command(program, batch, bounds, extra), capture_output=True, text=True, check=True)
    ms = re.search(r"execute ([0-9.]+) ms", out.stderr)
    return float(ms.group(1))


def check_tempo(program, batch, bounds, reference):
    with tempfile.TemporaryDirectory() as out:
        extra = ["--format", "none", "--output-dir", out]
        subprocess.run(tempo_command(program, batch, bounds, extra), check=True, capture_output=True)
        s = np.load(os.path.join(out, "s.npy"))
    return float(np.abs(s - reference).max())


def run_baseline(system, batch, repeat):
    args = {"torch": ["torch", "--threads", "1"], "dynet": ["dynet"], "dynet_roots": ["dynet", "--roots-only"]}[system]
    cmd = [PYTHON, os.path.join(HERE, "baselines.py"), args[0], batch, "--repeat", str(repeat), "--check"] + args[1:]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    line = json.loads(out.stdout.strip().splitlines()[-1])
    return line["ms_all"], line.get("max_abs_error")


def birnn_bench(work, rounds, quick):
    """The BiRNN over sequences of mixed lengths (10 to 50 tokens):
    tempo batched by depth (the position in the sequence) and one token at
    a time, PyTorch eager per sequence, DyNet auto-batching, interleaved."""
    rows = []
    for seqs, hidden in ([(8, 64)] if quick else [(s, h) for s in (8, 64) for h in (64, 256)]):
        batch = os.path.join(work, f"birnn_s{seqs}h{hidden}")
        subprocess.run(
            [PYTHON, os.path.join(HERE, "birnn.py"), "make", batch, "--seqs", str(seqs), "--hidden", str(hidden)],
            check=True, capture_output=True,
        )
        bounds = json.load(open(os.path.join(batch, "bounds.json")))
        program = os.path.join(work, f"birnn_{hidden}.mlir")
        with open(program, "w") as f:
            subprocess.run([BIRNN, "--hidden", str(hidden), "--mlir"], stdout=f, check=True)

        def tempo(per_node):
            cmd = [TEMPO_RUN, program, "--fast-math", "--bound", f"N={bounds['N']}", "--format", "none", "--timings", "--repeat", TEMPO_REPEAT]
            for name in BIRNN_NAMES:
                cmd += ["--input", f"{name}={os.path.join(batch, name + '.npy')}"]
            if per_node:
                cmd += ["--disable-pass", "depth-batching"]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True)
            return float(re.search(r"execute ([0-9.]+) ms", out.stderr).group(1))

        def baseline(system, extra):
            cmd = [PYTHON, os.path.join(HERE, "birnn.py"), system, batch, "--repeat", "3", "--check"] + extra
            line = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
            return line["ms_all"], line.get("max_abs_error")

        samples = {s: [] for s in SYSTEMS}
        errors = {}
        for _ in range(rounds):
            for _ in range(3):
                samples["tempo"].append(tempo(False))
                samples["tempo_per_node"].append(tempo(True))
            for system, args in [("torch", ["torch", ["--threads", "1"]]), ("dynet", ["dynet", []]),
                                 ("dynet_roots", ["dynet", ["--roots-only"]])]:
                ms, error = baseline(*args)
                samples[system] += ms
                errors[system] = error
        row = {"seqs": seqs, "hidden": hidden, "tokens": bounds["tokens"],
               "ms": {k: statistics.median(v) for k, v in samples.items()}, "samples": samples,
               "max_abs_error": errors, "load": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("seqs", "hidden", "ms", "load")}), flush=True)
    return rows


def nested_bench(work, rounds, quick):
    """The nested RNN (4 inner sequences of 10 to 50 tokens per sample,
    examples/nested_rnn.rs): tempo batched by depth (tokens and inner
    sequences read through data), tempo with the inner loops stopped per
    inner sequence (a ragged stop, one token at a time), PyTorch eager per
    sample, DyNet auto-batching, interleaved; every result checked against
    the NumPy reference."""
    sys.path.insert(0, HERE)
    import nested_rnn

    rows = []
    for samples, hidden in ([(8, 64)] if quick else [(s, h) for s in (8, 64) for h in (64, 256)]):
        batch = os.path.join(work, f"nested_s{samples}h{hidden}")
        subprocess.run(
            [PYTHON, os.path.join(HERE, "nested_rnn.py"), "make", batch, "--samples", str(samples), "--hidden",
             str(hidden)],
            check=True, capture_output=True,
        )
        bounds = json.load(open(os.path.join(batch, "bounds.json")))
        reference = nested_rnn.reference(nested_rnn.load(batch))
        programs = {}
        for kind, extra in [("tempo", ["--by-depth"]), ("tempo_stopped", [])]:
            programs[kind] = os.path.join(work, f"nested_{kind}_{hidden}.mlir")
            with open(programs[kind], "w") as f:
                subprocess.run([NESTED, "--hidden", str(hidden), "--mlir"] + extra, stdout=f, check=True)

        def command(kind):
            cmd = [TEMPO_RUN, programs[kind], "--fast-math"]
            if kind == "tempo":
                cmd += ["--bound", f"K={bounds['K']}", "--bound", f"M={bounds['M']}"]
                names = nested_rnn.DEPTH_NAMES
            else:
                cmd += ["--bound", f"N={bounds['N']}", "--bound", f"I={bounds['I']}", "--bound", f"J={bounds['J']}"]
                names = nested_rnn.NAMES
            for name in names:
                cmd += ["--input", f"{name}={os.path.join(batch, name + '.npy')}"]
            return cmd

        errors = {}
        for kind in programs:
            with tempfile.TemporaryDirectory() as out:
                subprocess.run(command(kind) + ["--format", "none", "--output-dir", out], check=True, capture_output=True)
                g = np.load(os.path.join(out, "g.npy"))
            g = g[1:].reshape(reference.shape) if kind == "tempo" else g
            errors[kind] = float(np.abs(g - reference).max())

        def tempo(kind):
            out = subprocess.run(command(kind) + ["--format", "none", "--timings", "--repeat", TEMPO_REPEAT], capture_output=True, text=True,
                                 check=True)
            return float(re.search(r"execute ([0-9.]+) ms", out.stderr).group(1))

        def baseline(system, extra):
            cmd = [PYTHON, os.path.join(HERE, "nested_rnn.py"), system, batch, "--repeat", "3", "--check"] + extra
            line = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
            return line["ms_all"], line.get("max_abs_error")

        samples_ms = {s: [] for s in ("tempo", "tempo_stopped", "torch", "dynet")}
        for _ in range(rounds):
            for kind in programs:
                for _ in range(3):
                    samples_ms[kind].append(tempo(kind))
            for system, extra in [("torch", ["--threads", "1"]), ("dynet", [])]:
                ms, error = baseline(system, extra)
                samples_ms[system] += ms
                errors[system] = error
        row = {"samples": samples, "hidden": hidden, "tokens": bounds["tokens"],
               "ms": {k: statistics.median(v) for k, v in samples_ms.items()}, "runs": samples_ms,
               "max_abs_error": errors, "load": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("samples", "hidden", "ms", "max_abs_error", "load")}), flush=True)
    return rows


def early_exit_bench(work, rounds, quick):
    """The early-exit stack (examples/early_exit.rs: 48 layers of width 256,
    a batch of 8 samples, 16 classes) stopping once every sample has exited
    (the batch in the point, lanes masked), and stopping per sample (a
    ragged stop, a sample per point), at several exit depths (sample s exits
    at layer K + s P), against the full stack, interleaved."""
    layers, width, batch, classes = 48, 256, 8, 16
    programs = {}
    for kind, extra in [("early", []), ("per_sample", ["--per-sample"]), ("full", ["--full"])]:
        path = os.path.join(work, f"early_exit_{kind}.mlir")
        with open(path, "w") as f:
            subprocess.run([EARLY_EXIT, "--width", str(width), "--batch", str(batch), "--mlir"] + extra, stdout=f,
                           check=True)
        programs[kind] = path
    rng = np.random.default_rng(1)
    scale = 0.5 / np.sqrt(width)
    rows = []
    for exit_at, spread in ([(2, 0)] if quick else [(2, 0), (8, 0), (24, 0), (47, 0), (2, 5)]):
        directory = os.path.join(work, f"early_exit_{exit_at}_{spread}")
        os.makedirs(directory, exist_ok=True)
        boost = np.zeros((layers, batch, classes), np.float32)
        exits = [min(exit_at + s * spread, layers - 1) for s in range(batch)]
        for s, e in enumerate(exits):
            boost[e:, s, 0] = 100.0
        arrays = {
            "x": rng.uniform(-1, 1, (batch, width)), "W": rng.uniform(-scale, scale, (layers, width, width)),
            "b": rng.uniform(-0.1, 0.1, (layers, width)), "Wc": rng.uniform(-0.01 * scale, 0.01 * scale, (width, classes)),
            "boost": boost,
        }
        # The per-sample program's x [S, 1, D] and boost [S, L, 1, K].
        per_sample = dict(arrays, x=arrays["x"][:, None, :], boost=boost.transpose(1, 0, 2)[:, :, None, :])
        for name, array in arrays.items():
            np.save(os.path.join(directory, name + ".npy"), array.astype(np.float32))
            np.save(os.path.join(directory, name + "_s.npy"), per_sample[name].astype(np.float32))
        samples = {k: [] for k in programs}
        for _ in range(rounds):
            for kind, program in programs.items():
                for _ in range(3):
                    cmd = [TEMPO_RUN, program, "--bound", f"L={layers}", "--format", "none", "--timings", "--repeat",
                           TEMPO_REPEAT, "--fast-math"]
                    suffix = "_s" if kind == "per_sample" else ""
                    if kind == "per_sample":
                        cmd += ["--bound", f"S={batch}"]
                    for name in arrays:
                        cmd += ["--input", f"{name}={os.path.join(directory, name + suffix + '.npy')}"]
                    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
                    samples[kind].append(float(re.search(r"execute ([0-9.]+) ms", out.stderr).group(1)))
        row = {"exits": [e + 1 for e in exits], "layers": max(exits) + 1, "of": layers,
               "ms": {k: statistics.median(v) for k, v in samples.items()}, "samples": samples,
               "load": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("layers", "exits", "ms", "load")}), flush=True)
    return rows


def decode_inputs(directory, width, vocab, steps, eos_at, seed=1):
    """Weights of the RNN decoder of examples/decode_until_eos.rs, and a bias
    that makes EOS (token 1) the argmax from step `eos_at` on (never before):
    `eos_at` a number (one sequence, bias [T, V]) or a list (a batch, one
    end per sequence, bias [T, B, V])."""
    rng = np.random.default_rng(seed)
    os.makedirs(directory, exist_ok=True)
    scale = 2.0 / np.sqrt(width)
    for name, shape in [("E", (vocab, width)), ("Wx", (width, width)), ("Wh", (width, width)), ("Wo", (width, vocab))]:
        np.save(os.path.join(directory, name + ".npy"), (rng.uniform(-scale, scale, shape)).astype(np.float32))
    ends = eos_at if isinstance(eos_at, list) else [eos_at]
    bias = np.zeros((steps, len(ends), vocab), np.float32)
    bias[:, :, 0] = -1e4
    for lane, end in enumerate(ends):
        bias[:end, lane, 1] = -1e4
        bias[end:, lane, 1] = 1e4
    np.save(os.path.join(directory, "bias.npy"), bias if isinstance(eos_at, list) else bias[:, 0])


def run_decode(program, directory, steps):
    cmd = [TEMPO_RUN, program, "--bound", f"T={steps}", "--format", "none", "--timings", "--repeat", TEMPO_REPEAT, "--fast-math"]
    for name in ["E", "Wx", "Wh", "Wo", "bias"]:
        cmd += ["--input", f"{name}={os.path.join(directory, name + '.npy')}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return float(re.search(r"execute ([0-9.]+) ms", out.stderr).group(1))


def decode_bench(work, rounds, quick):
    """Greedy decode until EOS against the masked fixed-length decode, at
    several positions of EOS (the tokens produced), interleaved."""
    width, vocab, steps, batch = 256, 1024, 512, 8

    def emit(kind, extra):
        path = os.path.join(work, f"decode_{kind}.mlir")
        with open(path, "w") as f:
            subprocess.run([DECODE, "--width", str(width), "--vocab", str(vocab), "--mlir"] + extra, stdout=f, check=True)
        return path

    single = {"until_eos": emit("until_eos", []), "masked": emit("masked", ["--masked"])}
    batched = {
        "until_eos": emit("batch_until_eos", ["--batch", str(batch)]),
        "masked": emit("batch_masked", ["--batch", str(batch), "--masked"]),
    }
    rows = []
    cases = [(k, None) for k in ([8] if quick else [8, 32, 128, 511])]
    # A batch of 8 sequences of mixed lengths (ends spread up to the longest).
    cases += [(k, batch) for k in ([64] if quick else [64, 256])]
    for eos_at, lanes in cases:
        programs = batched if lanes else single
        ends = [eos_at * (i + 1) // lanes for i in range(lanes)] if lanes else eos_at
        directory = os.path.join(work, f"decode_{eos_at}_{lanes}")
        decode_inputs(directory, width, vocab, steps, ends)
        samples = {k: [] for k in programs}
        for _ in range(rounds):
            for kind, program in programs.items():
                for _ in range(3):
                    samples[kind].append(run_decode(program, directory, steps))
        row = {"tokens": eos_at + 1, "batch": lanes or 1, "ends": ends, "steps": steps, "width": width, "vocab": vocab,
               "ms": {k: statistics.median(v) for k, v in samples.items()}, "samples": samples,
               "load": os.getloadavg()[0]}
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("tokens", "batch", "ms", "load")}), flush=True)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="one small case, one round")
    p.add_argument("--repeat", type=int, default=3, help="rounds (each system runs 3 times per round)")
    args = p.parse_args()
    build()
    sys.path.insert(0, HERE)
    import baselines
    import trees

    cases = [(8, 64)] if args.quick else [(t, h) for t in (8, 64) for h in (64, 128, 256)]
    rounds = 1 if args.quick else args.repeat
    results = []
    work = tempfile.mkdtemp(prefix="tempo-dynamic-")
    for trees_n, hidden in cases:
        batch = os.path.join(work, f"t{trees_n}h{hidden}")
        data = trees.make_batch(trees_n, hidden=hidden, seed=1)
        trees.write(batch, data)
        bounds = json.load(open(os.path.join(batch, "bounds.json")))
        program = os.path.join(work, f"tree_lstm_{hidden}.mlir")
        with open(program, "w") as f:
            subprocess.run([EXAMPLE, "--hidden", str(hidden), "--mlir"], stdout=f, check=True)
        reference = baselines.reference(baselines.load(batch))
        samples = {s: [] for s in SYSTEMS}
        errors = {"tempo": check_tempo(program, batch, bounds, reference)}
        for _ in range(rounds):
            for system in SYSTEMS:
                if system.startswith("tempo"):
                    for _ in range(3):
                        samples[system].append(run_tempo(program, batch, bounds, system == "tempo_per_node"))
                else:
                    ms, error = run_baseline(system, batch, 3)
                    samples[system] += ms
                    errors[system] = error
        medians = {s: statistics.median(v) for s, v in samples.items()}
        row = {
            "trees": trees_n,
            "hidden": hidden,
            "nodes": bounds["N"],
            "ms": medians,
            "samples": samples,
            "max_abs_error": errors,
            "load": os.getloadavg()[0],
        }
        results.append(row)
        print(json.dumps({k: row[k] for k in ("trees", "hidden", "ms", "max_abs_error", "load")}), flush=True)
    birnn = birnn_bench(work, rounds, args.quick)
    nested = nested_bench(work, rounds, args.quick)
    decode = decode_bench(work, rounds, args.quick)
    early = early_exit_bench(work, rounds, args.quick)
    write(results, birnn, nested, decode, early, args.quick)


def write(results, birnn, nested, decode, early, quick):
    machine = f"{os.cpu_count()} cores"
    json.dump(
        {"machine": machine, "results": results, "birnn": birnn, "nested_rnn": nested, "decode": decode,
         "early_exit": early},
        open(os.path.join(HERE, "results.json"), "w"),
        indent=1,
    )
    lines = [
        "| trees | nodes | H | tempo batched | tempo per node | PyTorch eager | DyNet (all read) | DyNet (roots read) "
        "| vs DyNet all | vs DyNet roots | vs PyTorch | batched vs per node | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        m = r["ms"]
        lines.append(
            f"| {r['trees']} | {r['nodes']} | {r['hidden']} | {m['tempo']:.1f} | {m['tempo_per_node']:.1f} | "
            f"{m['torch']:.1f} | {m['dynet']:.1f} | {m['dynet_roots']:.1f} | {m['dynet'] / m['tempo']:.1f}x | "
            f"{m['dynet_roots'] / m['tempo']:.1f}x | {m['torch'] / m['tempo']:.1f}x | "
            f"{m['tempo_per_node'] / m['tempo']:.2f}x | {r['load']:.2f} |"
        )
    lines += [
        "",
        "Bidirectional RNN over sequences of 10 to 50 tokens (`examples/birnn.rs`; the same systems, ms per batch):",
        "",
        "| sequences | tokens | H | tempo batched | tempo per token | PyTorch eager | DyNet (all read) | DyNet (ends read) "
        "| vs DyNet all | vs DyNet ends | vs PyTorch | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in birnn:
        m = r["ms"]
        lines.append(
            f"| {r['seqs']} | {r['tokens']} | {r['hidden']} | {m['tempo']:.2f} | {m['tempo_per_node']:.2f} | "
            f"{m['torch']:.1f} | {m['dynet']:.1f} | {m['dynet_roots']:.1f} | {m['dynet'] / m['tempo']:.1f}x | "
            f"{m['dynet_roots'] / m['tempo']:.1f}x | {m['torch'] / m['tempo']:.1f}x | {r['load']:.2f} |"
        )
    lines += [
        "",
        "Nested RNN, 4 inner sequences of 10 to 50 tokens per sample (`examples/nested_rnn.rs`; tempo batched by depth, "
        "and with each inner loop stopped at its own length (a ragged stop, one token at a time); ms per batch):",
        "",
        "| samples | tokens | H | tempo batched | tempo stopped loops | PyTorch eager | DyNet auto-batch "
        "| vs DyNet | vs PyTorch | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in nested:
        m = r["ms"]
        lines.append(
            f"| {r['samples']} | {r['tokens']} | {r['hidden']} | {m['tempo']:.2f} | {m['tempo_stopped']:.2f} | "
            f"{m['torch']:.1f} | {m['dynet']:.1f} | {m['dynet'] / m['tempo']:.1f}x | {m['torch'] / m['tempo']:.1f}x | "
            f"{r['load']:.2f} |"
        )
    lines += [
        "",
        "Greedy decode until EOS (RNN language model, width 256, vocabulary 1024, at most 512 steps) against the same "
        "model decoded for all 512 steps with the tokens after EOS masked; `--fast-math`, ms per decode:",
        "",
        "| sequences | steps produced (longest) | until EOS | masked, 512 steps | ratio | until EOS per step (us) | load |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in decode:
        m = r["ms"]
        lines.append(
            f"| {r['batch']} | {r['tokens']} | {m['until_eos']:.2f} | {m['masked']:.2f} | {m['masked'] / m['until_eos']:.1f}x | "
            f"{1000 * m['until_eos'] / r['tokens']:.1f} | {r['load']:.2f} |"
        )
    lines += [
        "",
        "Early exit over a stack of 48 layers (width 256, a batch of 8 samples; `examples/early_exit.rs`), the layers "
        "stopping once every sample is confident (the batch in the point, exited lanes masked) and per sample (a ragged "
        "stop, each sample its own layers), against the full stack; `--fast-math`, ms per forward pass:",
        "",
        "| layers computed (per sample) | early exit, batch | early exit, per sample | full stack | full / batch "
        "| load |",
        "| :--- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in early:
        m = r["ms"]
        exits = r["exits"]
        which = f"{exits[0]}" if len(set(exits)) == 1 else f"{exits[0]} to {exits[-1]} (sum {sum(exits)})"
        lines.append(
            f"| {which} of {r['of']} | {m['early']:.2f} | {m['per_sample']:.2f} | {m['full']:.2f} | "
            f"{m['full'] / m['early']:.1f}x | {r['load']:.2f} |"
        )
    table = "\n".join(lines) + "\n"
    open(os.path.join(HERE, "results.md"), "w").write(table)
    if not quick:
        readme = os.path.join(ROOT, "bench", "README.md")
        text = open(readme).read()
        begin, end = "<!-- dynamic -->", "<!-- /dynamic -->"
        if begin in text and end in text:
            text = text[: text.index(begin) + len(begin)] + "\n" + table + text[text.index(end) :]
            open(readme, "w").write(text)
    plot(results)


def plot(results):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, trees_n in zip(axes, (8, 64)):
        rows = [r for r in results if r["trees"] == trees_n]
        if not rows:
            continue
        width = 0.16
        for k, system in enumerate(SYSTEMS):
            xs = [i + (k - 2) * width for i in range(len(rows))]
            ax.bar(xs, [r["ms"][system] for r in rows], width, label=LABELS[system])
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels([f"H={r['hidden']}" for r in rows])
        ax.set_yscale("log")
        ax.set_title(f"TreeLSTM, batch of {trees_n} trees (forward)")
        ax.set_ylabel("ms per batch (median, log scale)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(HERE, "ms_per_batch.png"), dpi=120)


if __name__ == "__main__":
    main()
