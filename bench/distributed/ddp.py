"""PyTorch DDP baselines of bench/distributed (issue 44): the workloads of
run.py written for PyTorch's DistributedDataParallel with the Gloo
backend, P processes of 1 thread each on this machine.

    bench/.venv/bin/python bench/distributed/ddp.py lstm --processes 2 --batch 16 --iterations 60
    bench/.venv/bin/python bench/distributed/ddp.py ppo --processes 2 --batch 1024 --iterations 12

`--batch` is the whole run's (split evenly over the processes), as run.py
counts it. Each process is spawned here (torch.multiprocessing), joins a
Gloo group over TCP on 127.0.0.1, builds the model from the same seed
(DDP also broadcasts rank 0's parameters at construction), waits at a
barrier, runs one untimed warm-up iteration, then `--iterations` timed
ones. Prints one JSON object: the seconds per iteration (the slowest
process's total over the iterations), the collectives per iteration the
step issues itself (DDP's gradient all-reduces, one per bucket, come on
top: one bucket of 25 MB holds these models' gradients), the gradient
bytes, and the PyTorch version.

- `lstm`: examples/train_lstm.rs's model and data (the characters of
  examples/data/sonnets.txt, windows of --seq-len, each iteration the next
  `batch` windows, this process's part of them), float64, hidden 32: `z =
  wx[x] + h wh + bias` (the embedding of the four gates), gates i, f, g,
  o, `logits = h wy + by`, the loss the sum over t of the batch's mean
  cross-entropy, Adam (lr 0.02); the iteration's loss over the whole batch
  all-reduced for the report, as ours does (1 collective + DDP's: 2 in
  all; ours sends the loss in the gradients' buffer: 1).
- `ppo`: bench/rl's base configuration (baseline.py's CleanRL-style A2C
  on the trivial environment, float32): each process steps its own
  environments (its own seed), the advantages are normalized with their
  mean and deviation over all processes' environments (2 all-reduces),
  the mean return is all-reduced for the report (1), the update's
  gradients through DDP: 3 collectives + DDP's (4 in all; ours 3, the
  mean return in the gradients' buffer).
"""
import argparse
import datetime
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SONNETS = os.path.join(ROOT, "examples", "data", "sonnets.txt")


def lstm_worker(torch, dist, a, rank, processes):
    import torch.nn.functional as F

    text = open(SONNETS, encoding="utf-8").read()
    vocabulary = sorted(set(text))
    index = {c: k for k, c in enumerate(vocabulary)}
    tokens = [index[c] for c in text]
    V, H, T = len(vocabulary), a.hidden, a.seq_len
    local = a.batch // processes
    first = rank * local
    starts = len(tokens) - T - 1

    def batch(i):
        x = torch.empty(T, local, dtype=torch.long)
        y = torch.empty(T, local, dtype=torch.long)
        for b in range(local):
            start = ((i * a.batch + first + b) * T) % starts
            x[:, b] = torch.tensor(tokens[start:start + T])
            y[:, b] = torch.tensor(tokens[start + 1:start + T + 1])
        return x, y

    class Lstm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            scale = 1 / H ** 0.5
            shapes = {"wx": (V, 4 * H), "wh": (H, 4 * H), "bias": (4 * H,), "wy": (H, V), "by": (V,)}
            for name, shape in shapes.items():
                init = (torch.rand(shape, dtype=torch.float64) * 2 - 1) * scale
                setattr(self, name, torch.nn.Parameter(init))

        def forward(self, x, y):
            z_in = self.wx[x] + self.bias  # [T, B, 4H]
            h = c = None
            losses = []
            for t in range(T):
                z = z_in[t] if h is None else z_in[t] + h @ self.wh
                i, f, g, o = z.split(H, dim=1)
                i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
                c = i * g if c is None else f * c + i * g
                h = o * torch.tanh(c)
                losses.append(F.cross_entropy(h @ self.wy + self.by, y[t]))
            return torch.stack(losses)

    torch.manual_seed(a.seed)
    model = torch.nn.parallel.DistributedDataParallel(Lstm()) if processes > 1 else Lstm()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    data = [batch(i) for i in range(a.iterations + 1)]

    def step(i):
        x, y = data[i]
        per_step = model(x, y)
        optimizer.zero_grad()
        per_step.sum().backward()
        optimizer.step()
        report = per_step.detach().mean()
        if processes > 1:
            dist.all_reduce(report)
            report /= processes
        return float(report)

    parameters = sum(p.numel() for p in model.parameters())
    return step, parameters * 8, 1


def ppo_worker(torch, dist, a, rank, processes):
    sys.path.insert(0, os.path.join(ROOT, "bench", "rl"))
    from baseline import ENTROPY, VALUE, Agent, trivial_rollout

    dtype = torch.float32
    observation = 3 * 4 * 4
    n, T = a.batch // processes, a.steps
    torch.manual_seed(a.seed)
    agent = Agent(observation, a.width, a.layers, dtype)

    class Both(torch.nn.Module):
        """The forward the update differentiates, through DDP."""

        def __init__(self, agent):
            super().__init__()
            self.agent = agent

        def forward(self, flat):
            mean = self.agent.actor(self.agent.actor_trunk(flat)).squeeze(-1)
            return mean, self.agent.value(flat), self.agent.log_sigma

    both = torch.nn.parallel.DistributedDataParallel(Both(agent)) if processes > 1 else Both(agent)
    optimizer = torch.optim.Adam(agent.parameters(), lr=1e-4)
    # Each process's own environments.
    torch.manual_seed(a.seed + 1000 * rank)
    obs = torch.empty(T, n, observation, dtype=dtype)
    actions = torch.empty(T, n, dtype=dtype)
    rewards = torch.empty(T, n, dtype=dtype)
    values = torch.empty(T, n, dtype=dtype)

    def across(x):
        if processes > 1:
            dist.all_reduce(x)
            x /= processes
        return x

    def step(_):
        with torch.no_grad():
            advantages, target = trivial_rollout(agent, obs, actions, rewards, values)
            mean = across(advantages.mean())
            deviation = across(((advantages - mean) ** 2).mean()).sqrt()
            normalized = (advantages - mean) / (deviation + 1e-8)
        flat = obs.reshape(T * n, observation)
        action_mean, value, log_sigma = both(flat)
        dist_ = torch.distributions.Normal(action_mean, log_sigma.exp())
        log_prob = dist_.log_prob(actions.reshape(-1)).reshape(T, n)
        entropy = dist_.entropy().expand(T * n).reshape(T, n)
        value = value.reshape(T, n)
        per_env = -log_prob * normalized + 0.5 * VALUE * (value - target) ** 2 - ENTROPY * entropy
        loss = per_env.mean(dim=1).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return float(across(rewards.sum(0).mean()))

    parameters = sum(p.numel() for p in agent.parameters())
    return step, parameters * 4, 3


def worker(rank, a, port, queue):
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    if a.processes > 1:
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=a.processes, timeout=datetime.timedelta(seconds=300))
    make = lstm_worker if a.workload == "lstm" else ppo_worker
    step, gradient_bytes, collectives = make(torch, dist, a, rank, a.processes)
    step(0)  # warm-up
    if a.processes > 1:
        dist.barrier()
    start = time.perf_counter()
    reports = [step(i + 1) for i in range(a.iterations)]
    seconds = time.perf_counter() - start
    queue.put(dict(rank=rank, seconds=seconds, reports=reports, gradient_bytes=gradient_bytes,
                   collectives=collectives, torch=torch.__version__))
    if a.processes > 1:
        dist.barrier()
        dist.destroy_process_group()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", choices=["lstm", "ppo"])
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--batch", type=int, required=True, help="the whole run's batch (LSTM windows, PPO environments)")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--seq-len", type=int, default=32)
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--port", type=int, default=29531)
    a = ap.parse_args()
    if a.batch % a.processes:
        sys.exit(f"ddp.py: --batch {a.batch} does not split over {a.processes} processes")
    import torch.multiprocessing as mp

    context = mp.get_context("spawn")
    queue = context.Queue()
    procs = [context.Process(target=worker, args=(r, a, a.port, queue)) for r in range(a.processes)]
    for p in procs:
        p.start()
    results = [queue.get(timeout=900) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        if p.exitcode != 0:
            sys.exit(f"ddp.py: a process exited with {p.exitcode}")
    slowest = max(r["seconds"] for r in results)
    first = min(results, key=lambda r: r["rank"])
    print(json.dumps(dict(workload=a.workload, processes=a.processes, batch=a.batch, iterations=a.iterations,
                          seconds_per_iteration=slowest / a.iterations, reports=first["reports"],
                          gradient_bytes=first["gradient_bytes"], step_collectives=first["collectives"],
                          torch=first["torch"])))


if __name__ == "__main__":
    main()
