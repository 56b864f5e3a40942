"""JAX baselines of the training benchmark: the models of
`bench/train/baselines.py` (the LSTM as its cell under `lax.scan`, the
pre-norm GPT blocks over the whole sequence with a causal mask), the same
maths on the same weights, gradients by `jax.grad`, Adam written out as
`torch.optim.Adam` computes it (betas 0.9, 0.999, eps 1e-8).

    python jax_baselines.py {lstm,gpt} DIR --mode {step,scan} --iterations N [--threads K] [--heads H] [--lr LR]

- `--mode step`: one jitted training step (loss, gradients, Adam), called
  N times after a warm-up call: the median time per call.
- `--mode scan`: the whole run of N steps as one jitted `lax.scan` over the
  iterations (what our one-program training run is): its time over N, the
  median of three runs after the compile.

The compile time (`jit(...).lower(...).compile()`) is reported apart. Reads
the parameters and `tokens.npy`, `targets.npy` from DIR as baselines.py
does; prints one JSON line (ms_per_iteration, ms_samples, compile_ms,
first_loss, last_loss: the loss summed over t and the batch).
"""

import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from baselines import load  # noqa: E402

BETA1, BETA2, EPS_ADAM = 0.9, 0.999, 1e-8


def model_loss(jax, model, heads, tokens, targets, eps=1e-5):
    """The loss (summed over t and the batch) of `model` as a function of
    the parameter dict."""
    jnp, lax, nn = jax.numpy, jax.lax, jax.nn
    T, B = tokens.shape

    def cross_entropy(logits):
        logp = logits - lax.stop_gradient(logits.max(-1, keepdims=True))
        logp = logp - jnp.log(jnp.exp(logp).sum(-1, keepdims=True))
        picked = jnp.take_along_axis(logp, targets[..., None], axis=-1)
        return -picked.sum()

    if model == "lstm":

        def loss(P):
            H = P["Wh"].shape[0]
            xw = P["E"][tokens] @ P["Wx"] + P["b"]  # the input part of every step at once

            def cell(carry, x):
                h, c = carry
                z = x + h @ P["Wh"]
                i, f, g, o = jnp.split(z, 4, axis=1)
                c = nn.sigmoid(f) * c + nn.sigmoid(i) * jnp.tanh(g)
                h = nn.sigmoid(o) * jnp.tanh(c)
                return (h, c), h

            zeros = jnp.zeros((B, H), xw.dtype)
            _, hs = lax.scan(cell, (zeros, zeros), xw)
            return cross_entropy(hs @ P["Wo"] + P["bo"])

        return loss

    def loss(P):
        layers = sum(1 for n in P if n.startswith("Wq"))
        D = P["E"].shape[1]
        hd = D // heads
        scale = 1.0 / (hd**0.5)
        mask = jnp.tril(jnp.ones((T, T), bool))

        def rms(x):
            return x / jnp.sqrt((x * x).mean(-1, keepdims=True) + eps)

        def split(x):  # [T, B, D] -> [B, H, T, hd]
            return x.reshape(T, B, heads, hd).transpose(1, 2, 0, 3)

        u = P["E"][tokens]
        for l in range(layers):
            a = rms(u)
            q, k, v = split(a @ P[f"Wq{l}"]), split(a @ P[f"Wk{l}"]), split(a @ P[f"Wv{l}"])
            s = jnp.where(mask, (q @ k.swapaxes(-1, -2)) * scale, -jnp.inf)
            o = (nn.softmax(s, -1) @ v).transpose(2, 0, 1, 3).reshape(T, B, D)
            r = u + o @ P[f"Wproj{l}"]
            g = rms(r) @ P[f"W1{l}"]
            u = r + (g * nn.sigmoid(g)) @ P[f"W2{l}"]
        return cross_entropy(rms(u) @ P["Wo"])

    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=["lstm", "gpt"])
    ap.add_argument("directory")
    ap.add_argument("--mode", choices=["step", "scan"], default="step")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    a = ap.parse_args()
    if a.threads == 1:
        os.environ["XLA_FLAGS"] = (
            os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
        )
    import jax
    import jax.numpy as jnp
    from jax import lax

    _, arrays, tokens, targets = load(a.directory, a.model, False)
    P = {n: jnp.asarray(w) for n, w in arrays.items()}
    loss = model_loss(jax, a.model, a.heads, jnp.asarray(tokens), jnp.asarray(targets))
    value_and_grad = jax.value_and_grad(loss)

    def step(state):
        P, m, v, t = state
        value, g = value_and_grad(P)
        t = t + 1
        m = {n: BETA1 * m[n] + (1 - BETA1) * g[n] for n in P}
        v = {n: BETA2 * v[n] + (1 - BETA2) * g[n] * g[n] for n in P}
        c1, c2 = 1 - BETA1**t, 1 - BETA2**t
        P = {n: P[n] - (a.lr / c1) * m[n] / (jnp.sqrt(v[n]) / jnp.sqrt(c2) + EPS_ADAM) for n in P}
        return (P, m, v, t), value

    zeros = {n: jnp.zeros_like(w) for n, w in P.items()}
    state = (P, zeros, dict(zeros), jnp.asarray(0.0, jnp.float32))
    if a.mode == "step":
        fn = step
    else:

        def fn(state):
            return lax.scan(lambda s, _: step(s), state, None, length=a.iterations)

    start = time.perf_counter()
    compiled = jax.jit(fn).lower(state).compile()
    compile_ms = (time.perf_counter() - start) * 1e3
    times, losses = [], []
    if a.mode == "step":
        s = state
        for k in range(1 + a.iterations):
            start = time.perf_counter()
            s, value = compiled(s)
            value.block_until_ready()
            elapsed = time.perf_counter() - start
            losses.append(float(value))
            if k > 0:
                times.append(elapsed)
    else:
        for _ in range(3):
            start = time.perf_counter()
            _, values = compiled(state)
            values.block_until_ready()
            times.append((time.perf_counter() - start) / a.iterations)
        losses = [float(x) for x in values]
    print(
        json.dumps(
            dict(
                ms_per_iteration=statistics.median(times) * 1e3,
                ms_samples=[t * 1e3 for t in times],
                compile_ms=compile_ms,
                first_loss=losses[0],
                last_loss=losses[-1],
                mode=a.mode,
                jax=jax.__version__,
            )
        )
    )


if __name__ == "__main__":
    sys.exit(main())
