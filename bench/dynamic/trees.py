"""Random batches of binary trees for the TreeLSTM benchmark (the ACRoBat,
MLSys'24, workload), with leaf embeddings and weights.

    python trees.py OUTDIR [--trees 64] [--hidden 64] [--seed 1]
        [--min-leaves 20] [--max-leaves 50]

writes x.npy, left.npy, right.npy, W.npy, bw.npy, U.npy, bu.npy and
bounds.json {"N", "NL", "trees"} to OUTDIR (and roots.npy, for reference).

Each tree has L leaves, L uniform in [min_leaves, max_leaves]; it is built
like a parse tree by merging a random adjacent pair of the current list of
subtrees into a new internal node until one root remains. Nodes are
numbered over the whole batch: all leaves first (tree 0's, then tree 1's,
...) as 0..NL-1, then the internal nodes tree by tree in creation order as
NL..N-1, so children always have smaller ids than their parent and
N = 2 NL - trees. left/right hold the children of internal nodes (0 for
leaves); x holds the leaf embeddings (rows of internal nodes are zeros).
Everything is drawn from one numpy Generator seeded with `seed`, in this
order: tree shapes, x, W, bw, U, bu.
"""

import argparse
import json
import os

import numpy as np


def make_batch(num_trees, min_leaves=20, max_leaves=50, hidden=64, seed=1):
    """A dict of numpy arrays: x [N,H] f32, left/right [N] i64, roots [T]
    i64, W [H,3H], bw [3H], U [2H,5H], bu [5H] (f32)."""
    rng = np.random.default_rng(seed)
    shapes = []  # per tree: L and its merges as (left, right) local ids
    for _ in range(num_trees):
        leaves = int(rng.integers(min_leaves, max_leaves + 1))
        subtrees = list(range(leaves))  # local ids: leaves 0..L-1, then L..
        merges = []
        while len(subtrees) > 1:
            j = int(rng.integers(0, len(subtrees) - 1))
            merges.append((subtrees[j], subtrees[j + 1]))
            subtrees[j : j + 2] = [leaves + len(merges) - 1]
        shapes.append((leaves, merges))

    NL = sum(L for L, _ in shapes)
    N = 2 * NL - num_trees
    left = np.zeros(N, np.int64)
    right = np.zeros(N, np.int64)
    roots = np.zeros(num_trees, np.int64)
    leaf_off, inner_off = 0, NL
    for t, (L, merges) in enumerate(shapes):
        glob = lambda k: leaf_off + k if k < L else inner_off + (k - L)
        for j, (a, b) in enumerate(merges):
            left[inner_off + j] = glob(a)
            right[inner_off + j] = glob(b)
        roots[t] = inner_off + len(merges) - 1
        leaf_off += L
        inner_off += len(merges)
    assert leaf_off == NL and inner_off == N

    H = hidden
    x = np.zeros((N, H), np.float32)
    x[:NL] = rng.standard_normal((NL, H)) * 0.5
    a, b = 1 / np.sqrt(H), 1 / np.sqrt(2 * H)
    W = rng.uniform(-a, a, (H, 3 * H)).astype(np.float32)
    bw = (0.1 * rng.standard_normal(3 * H)).astype(np.float32)
    U = rng.uniform(-b, b, (2 * H, 5 * H)).astype(np.float32)
    bu = (0.1 * rng.standard_normal(5 * H)).astype(np.float32)
    return dict(x=x, left=left, right=right, roots=roots, W=W, bw=bw, U=U, bu=bu)


def write(directory, batch):
    """Writes the arrays as NAME.npy and bounds.json to `directory`."""
    os.makedirs(directory, exist_ok=True)
    for name in ["x", "left", "right", "W", "bw", "U", "bu", "roots"]:
        np.save(os.path.join(directory, name + ".npy"), batch[name])
    N = batch["left"].shape[0]
    trees = batch["roots"].shape[0]
    bounds = {"N": N, "NL": (N + trees) // 2, "trees": trees}
    with open(os.path.join(directory, "bounds.json"), "w") as f:
        json.dump(bounds, f)
        f.write("\n")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("outdir")
    p.add_argument("--trees", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--min-leaves", type=int, default=20)
    p.add_argument("--max-leaves", type=int, default=50)
    a = p.parse_args()
    batch = make_batch(a.trees, a.min_leaves, a.max_leaves, a.hidden, a.seed)
    write(a.outdir, batch)
    N = batch["left"].shape[0]
    print(json.dumps({"dir": a.outdir, "N": N, "NL": (N + a.trees) // 2, "trees": a.trees, "hidden": a.hidden}))


if __name__ == "__main__":
    main()
