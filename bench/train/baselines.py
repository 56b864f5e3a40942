"""PyTorch eager baselines of the training benchmark: the models of
`bench/train/bench_train.rs`, the same maths on the same weights, trained
with `torch.optim.Adam` and autograd.

    python baselines.py {lstm,lstm-nn,gpt} DIR --iterations N [--threads K]
        [--heads H] [--lr LR] [--warmup W]
    python baselines.py {lstm,gpt} DIR --check OUT [--adam-step K] [--float64]

Reads the initial parameters (`NAME.npy`, as `bench_train --list-params`
lists them), `tokens.npy` ([T, B] int64) and `targets.npy` ([T, B] int64,
the next tokens) from DIR.

- `lstm`: the LSTM written as its cell, a Python loop over t (the same ops
  as ours: z = x Wx + h Wh + b, gates i, f, g, o, c and h).
- `lstm-nn`: the same model with `torch.nn.LSTM` (weights copied in:
  weight_ih = Wx^T, weight_hh = Wh^T, bias_ih = b, bias_hh = 0), ATen's
  own LSTM loop.
- `gpt`: the pre-norm blocks over the whole sequence at once (causal mask),
  as a PyTorch training step is written.

`--compile` runs the loss through `torch.compile` (the `torch-compile`
system of run.py).

The loss is the cross-entropy summed over t and the batch (`reduction=
"sum"`). Timing: `--iterations N` training steps (zero_grad, forward,
backward, Adam step) after `--warmup W`; prints one JSON line with the
median and every per-iteration time. `--check OUT` does one step from the
moments `m_NAME.npy`, `v_NAME.npy` in DIR at Adam step K and writes the
loss of each t (`loss.npy`), the gradients `g_NAME.npy` and the updated
`NAME_new.npy`, `m_NAME_new.npy`, `v_NAME_new.npy` to OUT.
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def lstm_names():
    return ["E", "Wx", "Wh", "b", "Wo", "bo"]


def gpt_names(layers):
    names = ["E"]
    for l in range(layers):
        names += [f"{n}{l}" for n in ["Wq", "Wk", "Wv", "Wproj", "W1", "W2"]]
    return names + ["Wo"]


def build(torch, model, P, tokens, targets, heads, eps=1e-5):
    """The loss function of `model` over the parameter dict P, and the list
    of parameters the optimizer updates (the extra zero bias of nn.LSTM
    included)."""
    import torch.nn.functional as F

    T, B = tokens.shape
    V = P["E"].shape[0]
    flat_targets = targets.reshape(-1)

    if model == "lstm":
        H = P["Wh"].shape[0]

        def loss_fn(per_step=False):
            x = P["E"][tokens]  # [T, B, H]
            xw = x @ P["Wx"] + P["b"]  # the input part of every step at once
            h = c = None
            hs = []
            for t in range(T):
                z = xw[t] if h is None else xw[t] + h @ P["Wh"]
                i, f, g, o = z.split(H, dim=1)
                i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
                c = i * g if c is None else f * c + i * g
                h = o * torch.tanh(c)
                hs.append(h)
            logits = torch.stack(hs) @ P["Wo"] + P["bo"]
            return cross_entropy(F, logits, flat_targets, T, per_step)

        return loss_fn, [P[n] for n in lstm_names()]

    if model == "lstm-nn":
        H = P["Wh"].shape[0]
        lstm = torch.nn.LSTM(H, H, dtype=P["E"].dtype)
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(P["Wx"].T)
            lstm.weight_hh_l0.copy_(P["Wh"].T)
            lstm.bias_ih_l0.copy_(P["b"])
            lstm.bias_hh_l0.zero_()

        def loss_fn(per_step=False):
            out, _ = lstm(P["E"][tokens])
            logits = out @ P["Wo"] + P["bo"]
            return cross_entropy(F, logits, flat_targets, T, per_step)

        return loss_fn, [P["E"], P["Wo"], P["bo"]] + list(lstm.parameters())

    if model == "gpt":
        layers = sum(1 for n in P if n.startswith("Wq"))
        D = P["E"].shape[1]
        hd = D // heads
        scale = 1.0 / np.sqrt(hd)
        mask = torch.ones(T, T, dtype=torch.bool).tril()

        def rms(x):
            return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps)

        def split(x):  # [T, B, D] -> [B, H, T, hd]
            return x.reshape(T, B, heads, hd).permute(1, 2, 0, 3)

        def loss_fn(per_step=False):
            u = P["E"][tokens]  # [T, B, D]
            for l in range(layers):
                a = rms(u)
                q, k, v = split(a @ P[f"Wq{l}"]), split(a @ P[f"Wk{l}"]), split(a @ P[f"Wv{l}"])
                s = (q @ k.transpose(-1, -2)) * scale
                s = s.masked_fill(~mask, float("-inf"))
                o = (torch.softmax(s, -1) @ v).permute(2, 0, 1, 3).reshape(T, B, D)
                r = u + o @ P[f"Wproj{l}"]
                g = rms(r) @ P[f"W1{l}"]
                u = r + (g * torch.sigmoid(g)) @ P[f"W2{l}"]
            logits = rms(u) @ P["Wo"]
            return cross_entropy(F, logits, flat_targets, T, per_step)

        return loss_fn, [P[n] for n in gpt_names(layers)]
    raise SystemExit(f"unknown model {model}")


def cross_entropy(F, logits, flat_targets, T, per_step):
    V = logits.shape[-1]
    if per_step:
        return F.cross_entropy(logits.reshape(-1, V), flat_targets, reduction="none").reshape(T, -1).sum(1)
    return F.cross_entropy(logits.reshape(-1, V), flat_targets, reduction="sum")


def load(directory, model, float64):
    names = lstm_names() if model.startswith("lstm") else None
    if names is None:
        layers = 0
        while os.path.exists(os.path.join(directory, f"Wq{layers}.npy")):
            layers += 1
        names = gpt_names(layers)
    arrays = {n: np.load(os.path.join(directory, n + ".npy")) for n in names}
    if float64:
        arrays = {n: a.astype(np.float64) for n, a in arrays.items()}
    tokens = np.load(os.path.join(directory, "tokens.npy"))
    targets = np.load(os.path.join(directory, "targets.npy"))
    return names, arrays, tokens, targets


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model", choices=["lstm", "lstm-nn", "gpt"])
    parser.add_argument("directory")
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--check")
    parser.add_argument("--adam-step", type=int, default=1)
    parser.add_argument("--float64", action="store_true")
    parser.add_argument("--device", default="cpu", help="PyTorch's device (cpu or cuda; not with --check)")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the loss (forward and backward); its compile time is the warm-up "
                             "iterations' time less the median iteration's, reported as compile_ms")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    if args.device != "cpu":
        torch.set_default_device(args.device)
    names, arrays, tokens_np, targets_np = load(args.directory, args.model, args.float64)
    P = {n: torch.from_numpy(a).to(args.device).requires_grad_(True) for n, a in arrays.items()}
    tokens = torch.from_numpy(tokens_np).to(args.device)
    targets = torch.from_numpy(targets_np).to(args.device)
    loss_fn, params = build(torch, args.model, P, tokens, targets, args.heads)
    if args.compile:
        loss_fn = torch.compile(loss_fn)
    optimizer = torch.optim.Adam(params, lr=args.lr)

    if args.check:
        # One step from the given moments, at Adam step K.
        for n in names:
            state = optimizer.state[P[n]]
            dtype = P[n].dtype
            state["step"] = torch.tensor(float(args.adam_step - 1))
            state["exp_avg"] = torch.from_numpy(np.load(os.path.join(args.directory, f"m_{n}.npy"))).to(dtype)
            state["exp_avg_sq"] = torch.from_numpy(np.load(os.path.join(args.directory, f"v_{n}.npy"))).to(dtype)
        per_step = loss_fn(per_step=True)
        per_step.sum().backward()
        os.makedirs(args.check, exist_ok=True)
        np.save(os.path.join(args.check, "loss.npy"), per_step.detach().numpy())
        for n in names:
            np.save(os.path.join(args.check, f"g_{n}.npy"), P[n].grad.numpy())
        optimizer.step()
        for n in names:
            state = optimizer.state[P[n]]
            np.save(os.path.join(args.check, f"{n}_new.npy"), P[n].detach().numpy())
            np.save(os.path.join(args.check, f"m_{n}_new.npy"), state["exp_avg"].numpy())
            np.save(os.path.join(args.check, f"v_{n}_new.npy"), state["exp_avg_sq"].numpy())
        return

    times = []
    warmup_times = []
    losses = []
    for k in range(args.warmup + args.iterations):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - start
        losses.append(loss.item())
        if k >= args.warmup:
            times.append(elapsed)
        else:
            warmup_times.append(elapsed)
    print(
        json.dumps(
            dict(
                ms_per_iteration=statistics.median(times) * 1e3,
                ms_samples=[t * 1e3 for t in times],
                first_loss=losses[0],
                last_loss=losses[-1],
                threads=torch.get_num_threads(),
                torch=torch.__version__,
                device=args.device,
                **({"compile_ms": (sum(warmup_times) - len(warmup_times) * statistics.median(times)) * 1e3}
                   if args.compile else {}),
                **({"device_bytes": torch.cuda.max_memory_allocated()} if args.device != "cpu" else {}),
            )
        )
    )


if __name__ == "__main__":
    sys.exit(main())
