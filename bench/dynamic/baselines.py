"""Baselines of the TreeLSTM benchmark over a batch of random binary trees
(the batch of `trees.py`): a NumPy reference, PyTorch eager one tree at a
time, and DyNet with (or without) dynamic auto-batching.

    python baselines.py {reference,torch,dynet} DIR --repeat R
        [--threads N] [--no-autobatch] [--roots-only] [--check]

Reads x.npy, left.npy, right.npy, W.npy, bw.npy, U.npy, bu.npy from DIR,
runs the batch once to warm up and R times timed, and prints one JSON line:
{"system", "ms_per_batch_median", "ms_all", "trees", "nodes", "hidden",
"max_abs_error" (against `reference`, with --check)}. Only the forward
computation is timed (for DyNet, building the graph too); loading is not.
DyNet is imported only by `dynet`, so this runs in any venv with NumPy and
the library asked for. DyNet's Python API copies values out through Python
lists (npvalue), which costs about as much as its forward pass when every
node is read; --roots-only (DyNet) reads only the roots' h, which still
computes every node, and checks those rows only.

The maths, for every node n (H = hidden size):
  leaf:     i, o, u = split3(x[n] @ W + bw)
            c = sigmoid(i) tanh(u);  h = sigmoid(o) tanh(c)
  internal: i, fl, fr, o, u = split5(concat(h[l], h[r]) @ U + bu)
            c = sigmoid(i) tanh(u) + sigmoid(fl) c[l] + sigmoid(fr) c[r]
            h = sigmoid(o) tanh(c)
with l, r = left[n], right[n]; the result is s [N, 2, H] f32,
s[n, 0] = h[n], s[n, 1] = c[n].
"""

import argparse
import json
import os

import numpy as np

import timing

NAMES = ["x", "left", "right", "W", "bw", "U", "bu"]
# DyNet's auto-batching mode, read when dynet is first imported.
AUTOBATCH = True
# Read back only the roots' h (s is zero elsewhere).
ROOTS_ONLY = False
DYNET_MEM = "2048"  # MiB for DyNet's CPU memory pools


def load(directory):
    """The batch of DIR as a dict of arrays, plus `roots` (found from left/right)."""
    b = {n: np.load(os.path.join(directory, n + ".npy")) for n in NAMES}
    with open(os.path.join(directory, "bounds.json")) as f:
        bounds = json.load(f)
    NL, N = bounds["NL"], bounds["N"]
    child = np.zeros(N, bool)
    child[b["left"][NL:]] = child[b["right"][NL:]] = True
    b["roots"] = np.flatnonzero(~child)  # ascending: tree order
    assert b["roots"].shape[0] == bounds["trees"] and b["x"].shape[0] == N
    return b


def num_leaves(b):
    return (b["left"].shape[0] + b["roots"].shape[0]) // 2


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def reference(b):
    """NumPy in float64, nodes in id order (children come first)."""
    H = b["x"].shape[1]
    N, NL = b["left"].shape[0], num_leaves(b)
    W, bw, U, bu = (b[k].astype(np.float64) for k in ["W", "bw", "U", "bu"])
    h = np.zeros((N, H))
    c = np.zeros((N, H))
    z = b["x"][:NL].astype(np.float64) @ W + bw  # all leaves at once
    i, o, u = np.split(z, 3, axis=1)
    c[:NL] = sigmoid(i) * np.tanh(u)
    h[:NL] = sigmoid(o) * np.tanh(c[:NL])
    for n in range(NL, N):
        l, r = b["left"][n], b["right"][n]
        z = np.concatenate([h[l], h[r]]) @ U + bu
        i, fl, fr, o, u = np.split(z, 5)
        c[n] = sigmoid(i) * np.tanh(u) + sigmoid(fl) * c[l] + sigmoid(fr) * c[r]
        h[n] = sigmoid(o) * np.tanh(c[n])
    return np.stack([h, c], axis=1).astype(np.float32)


def torch_eager(b, threads=1):
    """Returns a function computing s as a PyTorch user would: per tree,
    recursively (post-order), each node with ops on one-row tensors."""
    import torch

    torch.set_num_threads(threads)
    T = {k: torch.from_numpy(b[k]) for k in ["x", "W", "bw", "U", "bu"]}
    x, W, bw, U, bu = T["x"], T["W"], T["bw"], T["U"], T["bu"]
    left, right = b["left"].tolist(), b["right"].tolist()
    roots, NL, N = b["roots"].tolist(), num_leaves(b), len(left)

    def node(n, hs, cs):
        if n < NL:
            i, o, u = torch.chunk(x[n : n + 1] @ W + bw, 3, dim=1)
            c = torch.sigmoid(i) * torch.tanh(u)
        else:
            l, r = left[n], right[n]
            hl, cl = node(l, hs, cs)
            hr, cr = node(r, hs, cs)
            z = torch.cat([hl, hr], dim=1) @ U + bu
            i, fl, fr, o, u = torch.chunk(z, 5, dim=1)
            c = torch.sigmoid(i) * torch.tanh(u) + torch.sigmoid(fl) * cl + torch.sigmoid(fr) * cr
        h = torch.sigmoid(o) * torch.tanh(c)
        hs[n], cs[n] = h, c
        return h, c

    def run():
        with torch.no_grad():
            hs, cs = [None] * N, [None] * N
            for root in roots:
                node(root, hs, cs)
            return torch.stack([torch.cat(hs), torch.cat(cs)], dim=1).numpy()

    return run


def dynet_autobatch(b):
    """Returns a function computing s with DyNet: a fresh graph per batch
    with every node of every tree as expressions (leaf embeddings as lookup
    parameters, weights as parameters), then one forward of the h and c of
    all nodes (or of the roots, ROOTS_ONLY), so that auto-batching
    (AUTOBATCH) sees the whole batch."""
    import dynet_config

    dynet_config.set(autobatch=int(AUTOBATCH), mem=DYNET_MEM, random_seed=1)
    import dynet as dy

    H = b["x"].shape[1]
    NL, N = num_leaves(b), b["left"].shape[0]
    left, right, roots = b["left"].tolist(), b["right"].tolist(), b["roots"].tolist()
    model = dy.ParameterCollection()
    # DyNet's vectors are columns: z = W^T x + bw.
    pW = model.parameters_from_numpy(np.ascontiguousarray(b["W"].T))
    pbw = model.parameters_from_numpy(b["bw"])
    pU = model.parameters_from_numpy(np.ascontiguousarray(b["U"].T))
    pbu = model.parameters_from_numpy(b["bu"])
    E = model.lookup_parameters_from_numpy(b["x"][:NL])

    def run():
        dy.renew_cg()
        assert model  # the collection owns the parameters: keep it alive
        W, bw, U, bu = pW, pbw, pU, pbu  # added to the graph when used
        hs, cs = [None] * N, [None] * N
        for n in range(N):  # ids are a post-order of every tree
            if n < NL:
                z = dy.affine_transform([bw, W, dy.lookup(E, n, update=False)])
                i, o, u = (dy.pickrange(z, k * H, (k + 1) * H) for k in range(3))
                c = dy.cmult(dy.logistic(i), dy.tanh(u))
            else:
                l, r = left[n], right[n]
                z = dy.affine_transform([bu, U, dy.concatenate([hs[l], hs[r]])])
                i, fl, fr, o, u = (dy.pickrange(z, k * H, (k + 1) * H) for k in range(5))
                c = (dy.cmult(dy.logistic(i), dy.tanh(u)) + dy.cmult(dy.logistic(fl), cs[l])
                     + dy.cmult(dy.logistic(fr), cs[r]))
            hs[n] = dy.cmult(dy.logistic(o), dy.tanh(c))
            cs[n] = c
        if ROOTS_ONLY:
            s = np.zeros((N, 2, H), np.float32)
            s[roots, 0] = dy.concatenate_cols([hs[r] for r in roots]).npvalue().T
            return s
        Hm, Cm = dy.concatenate_cols(hs), dy.concatenate_cols(cs)  # [H, N]
        dy.forward([Hm, Cm])
        return np.stack([Hm.npvalue().T, Cm.npvalue().T], axis=1).astype(np.float32)

    return run


def main():
    global AUTOBATCH, ROOTS_ONLY
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("system", choices=["reference", "torch", "dynet"])
    p.add_argument("dir")
    timing.add_run_options(p)
    p.add_argument("--roots-only", action="store_true")
    a = p.parse_args()
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
    out = {"system": name, **times, "trees": int(b["roots"].shape[0]),
           "nodes": int(b["left"].shape[0]), "hidden": int(b["x"].shape[1])}
    if a.system == "torch":
        out["threads"] = a.threads
    if a.check:
        err = np.abs(s - reference(b))
        out["max_abs_error"] = float((err[b["roots"], 0] if ROOTS_ONLY else err).max())
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
