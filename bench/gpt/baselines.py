"""Baselines of the GPT decode benchmark: the decoder of `examples/gpt.rs`,
the same maths, in PyTorch eager with a preallocated KV cache and in JAX
`jit` over a padded static-size cache (masked attention over all T slots,
the approach of static-shape graph compilers).

    python baselines.py {torch,jax} WEIGHTS_DIR --steps T --heads H
        [--window W] [--threads N] [--output y.npy]

Reads x0.npy, Wq.npy, ... from WEIGHTS_DIR (as `tempo-run --input` does)
and prints one JSON line: {"ms_per_token", "compile_ms", ...}.
"""

import argparse
import json
import math
import os
import sys
import time

import numpy as np

NAMES = ["x0", "Wq", "Wk", "Wv", "Wo", "W1", "W2"]
EPS = 1e-5


def load(directory):
    return {n: np.load(os.path.join(directory, n + ".npy")) for n in NAMES}


# Peak device memory of the decode (PyTorch's allocator), on a GPU.
PEAK = {}


def run_torch(w, steps, heads, window, threads, float64=False, device="cpu"):
    import torch

    torch.set_num_threads(threads)
    W = {k: torch.from_numpy(v.astype(np.float64) if float64 else v).to(device) for k, v in w.items()}
    dtype = torch.float64 if float64 else torch.float32
    x0 = W["x0"]
    layers, width, _ = W["Wq"].shape
    batch = x0.shape[0]
    hd = width // heads
    bh = batch * heads
    scale = 1.0 / math.sqrt(hd)

    def rms(x):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS)

    def decode():
        kc = torch.zeros(layers, steps, bh, hd, dtype=dtype, device=device)
        vc = torch.zeros(layers, steps, bh, hd, dtype=dtype, device=device)
        ys = torch.empty(steps, batch, width, dtype=dtype, device=device)
        h = None
        for t in range(steps):
            u = x0 if t == 0 else torch.tanh(h)
            lo = 0 if window is None else max(0, t - window + 1)
            for l in range(layers):
                a = rms(u)
                q = (a @ W["Wq"][l]).reshape(bh, 1, hd)
                kc[l, t] = (a @ W["Wk"][l]).reshape(bh, hd)
                vc[l, t] = (a @ W["Wv"][l]).reshape(bh, hd)
                keys = kc[l, lo : t + 1].permute(1, 2, 0)  # [BH, hd, n]
                values = vc[l, lo : t + 1].permute(1, 0, 2)  # [BH, n, hd]
                p = torch.softmax(torch.bmm(q, keys) * scale, -1)
                o = torch.bmm(p, values).reshape(batch, width)
                r = u + o @ W["Wo"][l]
                g = rms(r) @ W["W1"][l]
                u = r + (g * torch.sigmoid(g)) @ W["W2"][l]
            h = u
            ys[t] = h
        return ys

    with torch.inference_mode():
        if device != "cpu":
            torch.cuda.synchronize()
        start = time.perf_counter()
        ys = decode()
        if device != "cpu":
            torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
    if device != "cpu":
        PEAK["device_bytes"] = torch.cuda.max_memory_allocated()
    return ys.cpu().numpy(), elapsed, 0.0


def run_jax(w, steps, heads, window, threads):
    if threads == 1:
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        )
    import jax
    import jax.numpy as jnp

    W = {k: jnp.asarray(v) for k, v in w.items()}
    layers, width, _ = w["Wq"].shape
    batch = w["x0"].shape[0]
    hd = width // heads
    bh = batch * heads
    scale = 1.0 / math.sqrt(hd)

    def rms(x):
        return x / jnp.sqrt((x * x).mean(-1, keepdims=True) + EPS)

    def step(u, kc, vc, t, weights):
        positions = jnp.arange(steps)
        valid = positions <= t
        if window is not None:
            valid = valid & (positions > t - window)
        for l in range(layers):
            a = rms(u)
            q = (a @ weights["Wq"][l]).reshape(bh, hd)
            k = (a @ weights["Wk"][l]).reshape(1, bh, hd)
            v = (a @ weights["Wv"][l]).reshape(1, bh, hd)
            kc = jax.lax.dynamic_update_slice(kc, k[None], (l, t, 0, 0))
            vc = jax.lax.dynamic_update_slice(vc, v[None], (l, t, 0, 0))
            s = jnp.einsum("bd,nbd->bn", q, kc[l]) * scale
            s = jnp.where(valid[None, :], s, -jnp.inf)
            p = jax.nn.softmax(s, axis=-1)
            o = jnp.einsum("bn,nbd->bd", p, vc[l]).reshape(batch, width)
            r = u + o @ weights["Wo"][l]
            g = rms(r) @ weights["W1"][l]
            u = r + (g * jax.nn.sigmoid(g)) @ weights["W2"][l]
        return u, kc, vc

    jstep = jax.jit(step, donate_argnums=(1, 2))
    # Per-layer arrays (slicing the stacked [L, ...] arrays inside the jitted
    # step made XLA copy them every step).
    weights = {k: [W[k][l] for l in range(layers)] for k in NAMES[1:]}

    def decode():
        kc = jnp.zeros((layers, steps, bh, hd), jnp.float32)
        vc = jnp.zeros((layers, steps, bh, hd), jnp.float32)
        ys = []
        u = W["x0"]
        for t in range(steps):
            h, kc, vc = jstep(u, kc, vc, jnp.int32(t), weights)
            ys.append(h)
            u = jnp.tanh(h)
        return jnp.stack(ys).block_until_ready()

    # Compilation (one trace: t is a traced scalar) outside the timed decode.
    start = time.perf_counter()
    kc = jnp.zeros((layers, steps, bh, hd), jnp.float32)
    vc = jnp.zeros((layers, steps, bh, hd), jnp.float32)
    jstep(W["x0"], kc, vc, jnp.int32(0), weights)[0].block_until_ready()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    ys = decode()
    elapsed = time.perf_counter() - start
    return np.asarray(ys), elapsed, compile_s


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=["torch", "jax"])
    parser.add_argument("weights")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--heads", type=int, required=True)
    parser.add_argument("--window", type=int)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--output")
    parser.add_argument("--float64", action="store_true", help="PyTorch in float64 (a reference for the check)")
    parser.add_argument("--device", default="cpu", help="PyTorch's device (cpu or cuda)")
    args = parser.parse_args()
    w = load(args.weights)
    if args.system == "torch":
        ys, elapsed, compile_s = run_torch(
            w, args.steps, args.heads, args.window, args.threads, args.float64, args.device
        )
    else:
        ys, elapsed, compile_s = run_jax(w, args.steps, args.heads, args.window, args.threads)
    if args.output:
        np.save(args.output, ys)
    print(json.dumps({"ms_per_token": elapsed * 1e3 / args.steps, "compile_ms": compile_s * 1e3, **PEAK}))


if __name__ == "__main__":
    sys.exit(main())
