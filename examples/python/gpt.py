"""The GPT-2-shaped decoder of examples/gpt.rs, written in Python.

One temporal program over steps ``t`` and layers ``l``: RMS norm, causal
multi-head attention over the keys and values of all earlier steps (read as
ranges ``k[l, 0:t + 1]``: no hand-written KV cache), a SiLU MLP, residuals,
and the next step's input ``tanh(h[t - 1, L - 1])``. Compiled once, run
several times::

    python examples/python/gpt.py [--layers 2] [--heads 2] [--width 64] [--steps 8]

prints the time of the first run and of later ones. ``build`` is what
python/tests/test_gpt.py checks against the Rust example's program.
"""

import argparse
import math
import time

import numpy as np

import tempo


def build(layers, heads, width, batch=1, eps=1e-5):
    d, h = width, heads
    hd, bh, ffn = d // h, batch * h, 4 * d
    p = tempo.Program()
    t = p.dim("t", "T")
    l = p.dim("l", "L")
    x0 = p.input("x0", [], [batch, d])
    wq = p.input("Wq", [l], [d, d])
    wk = p.input("Wk", [l], [d, d])
    wv = p.input("Wv", [l], [d, d])
    wo = p.input("Wo", [l], [d, d])
    w1 = p.input("W1", [l], [d, ffn])
    w2 = p.input("W2", [l], [ffn, d])
    u = p.tensor("u", [t, l], [batch, d])
    a = p.tensor("a", [t, l], [batch, d])
    # Keys and values over (l, t): each layer's steps together, as a KV
    # cache [L, T, ...] keeps them.
    k = p.tensor("k", [l, t], [bh, hd])
    v = p.tensor("v", [l, t], [bh, hd])
    hidden = p.tensor("h", [t, l], [batch, d])
    y = p.tensor("y", [t], [batch, d])

    p.define(u, (t == 0) & (l == 0), x0[()])
    p.define(u, l == 0, hidden[t - 1, l.bound - 1].tanh())
    p.otherwise(u, hidden[t, l - 1])
    p.otherwise(a, u[t, l].rms_norm(eps))
    p.otherwise(k, (a[t, l] @ wk[l]).reshape([bh, hd]))
    p.otherwise(v, (a[t, l] @ wv[l]).reshape([bh, hd]))
    q = (a[t, l] @ wq[l]).reshape([bh, 1, hd])
    # Per head: q [h, 1, hd] against the keys of steps 0..t [n, h, hd].
    scores = tempo.einsum("hqd,nhd->hqn", q, k[l, 0 : t + 1]) * (1.0 / math.sqrt(hd))
    attended = tempo.einsum("hqn,nhd->hqd", scores.softmax(), v[l, 0 : t + 1]).reshape([batch, d])
    r = u[t, l] + attended @ wo[l]
    g = r.rms_norm(eps) @ w1[l]
    p.otherwise(hidden, r + (g * g.sigmoid()) @ w2[l])
    p.otherwise(y, hidden[t, l.bound - 1])
    p.output(y)
    return p


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=2)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    program = build(args.layers, args.heads, args.width)
    start = time.perf_counter()
    exe = program.compile(opt=3, fast_math=True)
    compiled = time.perf_counter()
    print(f"compile {1e3 * (compiled - start):.1f} ms")
    # Weights made once, read in place by every run.
    rng = np.random.default_rng(0)
    d, ffn, layers = args.width, 4 * args.width, args.layers
    shapes = {"x0": (1, d), "Wq": (layers, d, d), "Wk": (layers, d, d), "Wv": (layers, d, d), "Wo": (layers, d, d)}
    shapes.update({"W1": (layers, d, ffn), "W2": (layers, ffn, d)})
    weights = {name: (rng.standard_normal(shape) / math.sqrt(shape[-2])).astype(np.float32) for name, shape in shapes.items()}
    for run in range(args.runs):
        start = time.perf_counter()
        y = exe.run(T=args.steps, L=args.layers, **weights)["y"]
        took = time.perf_counter() - start
        print(f"run {run + 1}: {1e3 * took:.2f} ms ({1e3 * took / args.steps:.3f} ms/token), y {list(y.shape)}")


if __name__ == "__main__":
    main()
