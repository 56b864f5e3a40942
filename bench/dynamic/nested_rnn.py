"""Nested RNN over a batch of samples, each a sequence of inner sequences of
mixed lengths (the NestedRNN workload of ACRoBat, MLSys'24): the batch, a
NumPy reference, PyTorch eager one sample at a time, and DyNet with (or
without) dynamic auto-batching.

    python nested_rnn.py make DIR [--samples 64] [--outer 4] [--min-len 10]
        [--max-len 50] [--hidden 256] [--seed 1]
    python nested_rnn.py {reference,torch,dynet} DIR [--repeat R]
        [--threads N] [--no-autobatch] [--check]

`make` writes x.npy, len.npy, W.npy, U.npy, V.npy, Z.npy, bh.npy, bg.npy,
the inputs of the program batched by depth (xk.npy, prev.npy, last.npy,
before.npy) and bounds.json {"N", "I", "J", "tokens", "K", "M"} to DIR and prints them as one
JSON line. The others read DIR, run the batch once to warm up and R times
timed, and print one JSON line: {"system", "ms_per_batch_median",
"ms_all", "samples", "tokens", "hidden", "max_abs_error" (against
`reference`, with --check)}. Only the computation is timed (for DyNet,
building the graph too); loading is not. DyNet is imported only by
`dynet`.

Layout (H = hidden size): N samples of I inner sequences; inner sequence
(n, i) has len[n, i] tokens, uniform in [min_len, max_len]; x [N, I, J, 1,
H] holds the token embeddings, J the longest length (padding rows are
never read). Everything is drawn from one numpy Generator seeded with
`seed`, in this order: lengths, x, W, U, V, Z, bh, bg; weights uniform in
(-1/sqrt(H), 1/sqrt(H)), biases 0.1 * standard normal, x 0.5 * standard
normal (zero in the padding).

The maths, per sample n:
  h[i, j] = tanh(x[n, i, j] @ W + h[i, j-1] @ U + bh)   (h[i, -1] = 0), j < len[n, i]
  g[i]    = tanh(h[i, len[n, i] - 1] @ V + g[i-1] @ Z + bg)   (g[-1] = 0)
the result is g [N, I, 1, H] f32 (the program's output of
`examples/nested_rnn.rs`).
"""

import argparse
import json
import os

import numpy as np

import timing

NAMES = ["x", "len", "W", "U", "V", "Z", "bh", "bg"]
# The inputs of the program batched by depth (`nested_rnn.rs --by-depth`).
DEPTH_NAMES = ["xk", "prev", "last", "before", "W", "U", "V", "Z", "bh", "bg"]
AUTOBATCH = True
DYNET_MEM = "2048"  # MiB for DyNet's CPU memory pools


def make_batch(samples, outer=4, min_len=10, max_len=50, hidden=256, seed=1):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=(samples, outer)).astype(np.int64)
    J, H = int(lengths.max()), hidden
    x = (rng.standard_normal((samples, outer, J, 1, H)) * 0.5).astype(np.float32)
    for n in range(samples):
        for i in range(outer):
            x[n, i, lengths[n, i]:] = 0
    a = 1 / np.sqrt(H)
    weights = {k: rng.uniform(-a, a, (H, H)).astype(np.float32) for k in ["W", "U", "V", "Z"]}
    bh = (0.1 * rng.standard_normal(H)).astype(np.float32)
    bg = (0.1 * rng.standard_normal(H)).astype(np.float32)
    return dict(x=x, len=lengths, bh=bh, bg=bg, **weights)


def by_depth(batch):
    """The arrays of the program batched by depth: tokens numbered from 1
    sample by sample, inner sequence by inner sequence (xk [K, 1, H],
    prev [K]), inner sequences from 1 (last, before [M])."""
    N, I, J, _, H = batch["x"].shape
    lengths = batch["len"]
    K, M = 1 + int(lengths.sum()), 1 + N * I
    xk = np.zeros((K, 1, H), np.float32)
    prev = np.zeros(K, np.int64)
    last = np.zeros(M, np.int64)
    before = np.zeros(M, np.int64)
    at = 1
    for n in range(N):
        for i in range(I):
            m, length = 1 + n * I + i, int(lengths[n, i])
            xk[at:at + length] = batch["x"][n, i, :length]
            prev[at + 1:at + length] = np.arange(at, at + length - 1)
            last[m] = at + length - 1
            before[m] = m - 1 if i > 0 else 0
            at += length
    return dict(xk=xk, prev=prev, last=last, before=before)


def bounds_of(batch):
    N, I, J = batch["x"].shape[:3]
    tokens = int(batch["len"].sum())
    return {"N": int(N), "I": int(I), "J": int(J), "tokens": tokens, "K": tokens + 1, "M": int(N * I) + 1}


def write(directory, batch):
    os.makedirs(directory, exist_ok=True)
    arrays = {**batch, **by_depth(batch)}
    for name in NAMES + DEPTH_NAMES:
        np.save(os.path.join(directory, name + ".npy"), arrays[name])
    with open(os.path.join(directory, "bounds.json"), "w") as f:
        json.dump(bounds_of(batch), f)
        f.write("\n")


def load(directory):
    b = {n: np.load(os.path.join(directory, n + ".npy")) for n in NAMES}
    with open(os.path.join(directory, "bounds.json")) as f:
        assert bounds_of(b) == json.load(f)
    return b


def reference(b):
    """NumPy in float64."""
    N, I, J, _, H = b["x"].shape
    x = b["x"].astype(np.float64)
    W, U, V, Z = (b[k].astype(np.float64) for k in ["W", "U", "V", "Z"])
    g = np.zeros((N, I, 1, H))
    for n in range(N):
        outer = np.zeros((1, H))
        for i in range(I):
            h = np.zeros((1, H))
            for j in range(int(b["len"][n, i])):
                h = np.tanh(x[n, i, j] @ W + h @ U + b["bh"])
            outer = np.tanh(h @ V + outer @ Z + b["bg"])
            g[n, i] = outer
    return g.astype(np.float32)


def torch_eager(b, threads=1):
    """Per sample, per inner sequence, one step at a time on one-row
    tensors, as a PyTorch user writes it."""
    import torch

    torch.set_num_threads(threads)
    x = torch.from_numpy(b["x"])
    W, U, V, Z, bh, bg = (torch.from_numpy(b[k]) for k in ["W", "U", "V", "Z", "bh", "bg"])
    N, I, J, _, H = b["x"].shape
    lengths = b["len"].tolist()

    def run():
        with torch.no_grad():
            out = []
            for n in range(N):
                g = torch.zeros(1, H)
                for i in range(I):
                    h = torch.zeros(1, H)
                    for j in range(lengths[n][i]):
                        h = torch.tanh(x[n, i, j] @ W + h @ U + bh)
                    g = torch.tanh(h @ V + g @ Z + bg)
                    out.append(g)
            return torch.stack(out).reshape(N, I, 1, H).numpy()

    return run


def dynet_autobatch(b):
    """A fresh graph per batch with every sample's nested chains, then one
    forward of all outer states, so that auto-batching sees the batch."""
    import dynet_config

    dynet_config.set(autobatch=int(AUTOBATCH), mem=DYNET_MEM, random_seed=1)
    import dynet as dy

    N, I, J, _, H = b["x"].shape
    lengths = b["len"].tolist()
    model = dy.ParameterCollection()
    P = {k: model.parameters_from_numpy(np.ascontiguousarray(b[k].T)) for k in ["W", "U", "V", "Z"]}
    P.update({k: model.parameters_from_numpy(b[k]) for k in ["bh", "bg"]})
    E = model.lookup_parameters_from_numpy(b["x"].reshape(N * I * J, H))

    def run():
        dy.renew_cg()
        assert model
        W, U, V, Z, bh, bg = (P[k] for k in ["W", "U", "V", "Z", "bh", "bg"])
        zero = dy.zeros(H)
        outs = []
        for n in range(N):
            g = zero
            for i in range(I):
                h = zero
                for j in range(lengths[n][i]):
                    xj = dy.lookup(E, (n * I + i) * J + j, update=False)
                    h = dy.tanh(dy.affine_transform([bh, W, xj, U, h]))
                g = dy.tanh(dy.affine_transform([bg, V, h, Z, g]))
                outs.append(g)
        G = dy.concatenate_cols(outs)  # [H, N * I]
        dy.forward([G])
        return G.npvalue().T.reshape(N, I, 1, H).astype(np.float32)

    return run


def main():
    global AUTOBATCH
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("system", choices=["make", "reference", "torch", "dynet"])
    p.add_argument("dir")
    p.add_argument("--samples", type=int, default=64)
    p.add_argument("--outer", type=int, default=4)
    p.add_argument("--min-len", type=int, default=10)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    timing.add_run_options(p)
    a = p.parse_args()
    if a.system == "make":
        batch = make_batch(a.samples, a.outer, a.min_len, a.max_len, a.hidden, a.seed)
        write(a.dir, batch)
        print(json.dumps({"dir": a.dir, **bounds_of(batch), "hidden": a.hidden}))
        return
    b = load(a.dir)
    if a.system == "reference":
        run, name = (lambda: reference(b)), "numpy-reference"
    elif a.system == "torch":
        run, name = torch_eager(b, a.threads), "torch-eager"
    else:
        AUTOBATCH = not a.no_autobatch
        run, name = dynet_autobatch(b), "dynet-autobatch" if AUTOBATCH else "dynet"
    g, times = timing.timed(run, a.repeat)
    bounds = bounds_of(b)
    out = {"system": name, **times, "samples": bounds["N"],
           "tokens": bounds["tokens"], "hidden": int(b["x"].shape[-1])}
    if a.system == "torch":
        out["threads"] = a.threads
    if a.check:
        out["max_abs_error"] = float(np.abs(g - reference(b)).max())
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
