"""Bidirectional RNN over a batch of sequences of mixed lengths (the BiRNN
workload of ACRoBat, MLSys'24): the batch, a NumPy reference, PyTorch eager
one sequence at a time, and DyNet with (or without) dynamic auto-batching.

    python birnn.py make DIR [--seqs 64] [--min-len 10] [--max-len 50]
        [--hidden 256] [--seed 1]
    python birnn.py {reference,torch,dynet} DIR [--repeat R] [--threads N]
        [--no-autobatch] [--roots-only] [--check]

`make` writes x.npy, prev.npy, next.npy, Wx.npy, Wh.npy, bf.npy, Ux.npy,
Uh.npy, bb.npy and bounds.json {"N", "seqs", "tokens"} to DIR and prints
them as one JSON line. The others read DIR, run the batch once to warm up
and R times timed, and print one JSON line: {"system",
"ms_per_batch_median", "ms_all", "seqs", "tokens", "hidden",
"max_abs_error" (against `reference`, with --check)}. Only the computation
is timed (for DyNet, building the graph too); loading is not. DyNet is
imported only by `dynet`. --roots-only (DyNet) reads back only each
sequence's last forward state and first backward state (which still
computes every state, the chains being sequential) and checks those rows
only.

Layout: the tokens of all sequences are numbered together as n = 1..N-1,
sequence k's tokens a contiguous block, sequences in order; n = 0 is a
dummy "zero state" node. Sequence lengths are uniform in
[min_len, max_len]. prev[n] = n - 1 within a sequence and 0 for its first
token; next[n] = n + 1 within a sequence and 0 for its last token;
prev[0] = next[0] = 0. x [N, H] holds the token embeddings (row 0 zeros).
Everything is drawn from one numpy Generator seeded with `seed`, in this
order: lengths, x, Wx, Wh, bf, Ux, Uh, bb; weights uniform in
(-1/sqrt(H), 1/sqrt(H)), biases 0.1 * standard normal, x 0.5 * standard
normal.

The maths (H = hidden size): hf[0] = hb[0] = 0 and, for every token n >= 1,
  hf[n] = tanh(x[n] @ Wx + hf[prev[n]] @ Wh + bf)
  hb[n] = tanh(x[n] @ Ux + hb[next[n]] @ Uh + bb)
the result is s [N, 2, H] f32, s[n, 0] = hf[n], s[n, 1] = hb[n] (row 0 zeros).
"""

import argparse
import json
import os

import numpy as np

import timing

NAMES = ["x", "prev", "next", "Wx", "Wh", "bf", "Ux", "Uh", "bb"]
# DyNet's auto-batching mode, read when dynet is first imported.
AUTOBATCH = True
# Read back only each sequence's last hf and first hb (s is zero elsewhere).
ROOTS_ONLY = False
DYNET_MEM = "2048"  # MiB for DyNet's CPU memory pools


def make_batch(num_seqs, min_len=10, max_len=50, hidden=256, seed=1):
    """A dict of numpy arrays: x [N,H] f32, prev/next [N] i64, Wx, Wh, Ux, Uh
    [H,H] f32, bf, bb [H] f32, starts/lengths [seqs] i64 (N = 1 + tokens)."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min_len, max_len + 1, size=num_seqs).astype(np.int64)
    starts = (1 + np.concatenate([[0], np.cumsum(lengths)[:-1]])).astype(np.int64)
    N = 1 + int(lengths.sum())
    n = np.arange(N, dtype=np.int64)
    prev, nxt = n - 1, n + 1
    prev[starts] = 0
    nxt[starts + lengths - 1] = 0
    prev[0] = nxt[0] = 0

    H = hidden
    x = np.zeros((N, H), np.float32)
    x[1:] = rng.standard_normal((N - 1, H)) * 0.5
    a = 1 / np.sqrt(H)
    Wx = rng.uniform(-a, a, (H, H)).astype(np.float32)
    Wh = rng.uniform(-a, a, (H, H)).astype(np.float32)
    bf = (0.1 * rng.standard_normal(H)).astype(np.float32)
    Ux = rng.uniform(-a, a, (H, H)).astype(np.float32)
    Uh = rng.uniform(-a, a, (H, H)).astype(np.float32)
    bb = (0.1 * rng.standard_normal(H)).astype(np.float32)
    return dict(x=x, prev=prev, next=nxt, Wx=Wx, Wh=Wh, bf=bf, Ux=Ux, Uh=Uh, bb=bb,
                starts=starts, lengths=lengths)


def bounds_of(batch):
    N = int(batch["prev"].shape[0])
    return {"N": N, "seqs": int(batch["starts"].shape[0]), "tokens": N - 1}


def write(directory, batch):
    """Writes the arrays of NAMES as NAME.npy and bounds.json to `directory`."""
    os.makedirs(directory, exist_ok=True)
    for name in NAMES:
        np.save(os.path.join(directory, name + ".npy"), batch[name])
    with open(os.path.join(directory, "bounds.json"), "w") as f:
        json.dump(bounds_of(batch), f)
        f.write("\n")


def load(directory):
    """The batch of DIR as a dict of arrays, plus `starts` and `lengths`
    (found from prev/next)."""
    b = {n: np.load(os.path.join(directory, n + ".npy")) for n in NAMES}
    with open(os.path.join(directory, "bounds.json")) as f:
        bounds = json.load(f)
    b["starts"] = np.flatnonzero(b["prev"][1:] == 0) + 1  # ascending: sequence order
    ends = np.flatnonzero(b["next"][1:] == 0) + 1
    b["lengths"] = ends - b["starts"] + 1
    assert b["starts"].shape[0] == bounds["seqs"] and b["x"].shape[0] == bounds["N"]
    assert bounds_of(b) == bounds
    return b


def last_rows(b):
    """The rows read with ROOTS_ONLY: each sequence's last token (hf) and first token (hb)."""
    return b["starts"] + b["lengths"] - 1, b["starts"]


def reference(b):
    """NumPy in float64: hf by increasing n (prev[n] < n), hb by decreasing n
    (next[n] > n or 0)."""
    N, H = b["x"].shape
    x = b["x"].astype(np.float64)
    Wh, Uh = b["Wh"].astype(np.float64), b["Uh"].astype(np.float64)
    xf = x @ b["Wx"].astype(np.float64) + b["bf"]  # input terms of all tokens at once
    xb = x @ b["Ux"].astype(np.float64) + b["bb"]
    prev, nxt = b["prev"], b["next"]
    hf = np.zeros((N, H))
    hb = np.zeros((N, H))
    for n in range(1, N):
        hf[n] = np.tanh(xf[n] + hf[prev[n]] @ Wh)
    for n in range(N - 1, 0, -1):
        hb[n] = np.tanh(xb[n] + hb[nxt[n]] @ Uh)
    return np.stack([hf, hb], axis=1).astype(np.float32)


def torch_eager(b, threads=1):
    """Returns a function computing s as a PyTorch user would: per sequence,
    a forward loop then a backward loop over its tokens, each step with ops
    on one-row tensors."""
    import torch

    torch.set_num_threads(threads)
    T = {k: torch.from_numpy(b[k]) for k in ["x", "Wx", "Wh", "bf", "Ux", "Uh", "bb"]}
    x, Wx, Wh, bf, Ux, Uh, bb = (T[k] for k in ["x", "Wx", "Wh", "bf", "Ux", "Uh", "bb"])
    N, H = b["x"].shape
    seqs = list(zip(b["starts"].tolist(), b["lengths"].tolist()))

    def run():
        with torch.no_grad():
            zero = torch.zeros(1, H)
            hf, hb = [zero] * N, [zero] * N
            for start, length in seqs:
                h = zero
                for n in range(start, start + length):
                    h = torch.tanh(x[n : n + 1] @ Wx + h @ Wh + bf)
                    hf[n] = h
                h = zero
                for n in range(start + length - 1, start - 1, -1):
                    h = torch.tanh(x[n : n + 1] @ Ux + h @ Uh + bb)
                    hb[n] = h
            return torch.stack([torch.cat(hf), torch.cat(hb)], dim=1).numpy()

    return run


def dynet_autobatch(b):
    """Returns a function computing s with DyNet: a fresh graph per batch
    with both chains of every sequence as expressions (token embeddings as
    lookup parameters, weights as parameters, the zero state as one input
    shared by all chains), then one forward of all hf and hb (or of each
    sequence's last hf and first hb, ROOTS_ONLY), so that auto-batching
    (AUTOBATCH) sees the whole batch."""
    import dynet_config

    dynet_config.set(autobatch=int(AUTOBATCH), mem=DYNET_MEM, random_seed=1)
    import dynet as dy

    N, H = b["x"].shape
    seqs = list(zip(b["starts"].tolist(), b["lengths"].tolist()))
    last, first = (r.tolist() for r in last_rows(b))
    model = dy.ParameterCollection()
    # DyNet's vectors are columns: h = tanh(bf + Wx^T x + Wh^T h).
    P = {k: model.parameters_from_numpy(np.ascontiguousarray(b[k].T)) for k in ["Wx", "Wh", "Ux", "Uh"]}
    P.update({k: model.parameters_from_numpy(b[k]) for k in ["bf", "bb"]})
    E = model.lookup_parameters_from_numpy(b["x"])

    def run():
        dy.renew_cg()
        assert model  # the collection owns the parameters: keep it alive
        Wx, Wh, bf, Ux, Uh, bb = (P[k] for k in ["Wx", "Wh", "bf", "Ux", "Uh", "bb"])
        zero = dy.zeros(H)
        hf, hb = [zero] * N, [zero] * N
        for start, length in seqs:
            xs = [dy.lookup(E, n, update=False) for n in range(start, start + length)]
            h = zero
            for t in range(length):
                h = dy.tanh(dy.affine_transform([bf, Wx, xs[t], Wh, h]))
                hf[start + t] = h
            h = zero
            for t in range(length - 1, -1, -1):
                h = dy.tanh(dy.affine_transform([bb, Ux, xs[t], Uh, h]))
                hb[start + t] = h
        if ROOTS_ONLY:
            s = np.zeros((N, 2, H), np.float32)
            F = dy.concatenate_cols([hf[n] for n in last])
            B = dy.concatenate_cols([hb[n] for n in first])
            dy.forward([F, B])
            s[last, 0] = F.npvalue().reshape(H, -1).T
            s[first, 1] = B.npvalue().reshape(H, -1).T
            return s
        F, B = dy.concatenate_cols(hf), dy.concatenate_cols(hb)  # [H, N]
        dy.forward([F, B])
        return np.stack([F.npvalue().T, B.npvalue().T], axis=1).astype(np.float32)

    return run


def main():
    global AUTOBATCH, ROOTS_ONLY
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("system", choices=["make", "reference", "torch", "dynet"])
    p.add_argument("dir")
    p.add_argument("--seqs", type=int, default=64)
    p.add_argument("--min-len", type=int, default=10)
    p.add_argument("--max-len", type=int, default=50)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    timing.add_run_options(p)
    p.add_argument("--roots-only", action="store_true")
    a = p.parse_args()
    if a.system == "make":
        batch = make_batch(a.seqs, a.min_len, a.max_len, a.hidden, a.seed)
        write(a.dir, batch)
        print(json.dumps({"dir": a.dir, **bounds_of(batch), "hidden": a.hidden}))
        return
    b = load(a.dir)
    if a.system == "reference":
        run, name = (lambda: reference(b)), "numpy-reference"
    elif a.system == "torch":
        run, name = torch_eager(b, a.threads), "torch-eager"
    else:
        AUTOBATCH, ROOTS_ONLY = not a.no_autobatch, a.roots_only
        run, name = dynet_autobatch(b), "dynet-autobatch" if AUTOBATCH else "dynet"
        name += "-roots" if ROOTS_ONLY else ""
    s, times = timing.timed(run, a.repeat)
    bounds = bounds_of(b)
    out = {"system": name, **times, "seqs": bounds["seqs"],
           "tokens": bounds["tokens"], "hidden": int(b["x"].shape[1])}
    if a.system == "torch":
        out["threads"] = a.threads
    if a.check:
        err = np.abs(s - reference(b))
        if ROOTS_ONLY:
            last, first = last_rows(b)
            err = np.concatenate([err[last, 0], err[first, 1]])
        out["max_abs_error"] = float(err.max())
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
