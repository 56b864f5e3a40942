"""CleanRL-style PyTorch baseline of examples/ppo.rs on the Tempo artifact's
trivial environment: the same maths, written as CleanRL writes A2C/PPO.

Per iteration: a rollout of T steps over N environments under no_grad
(the environment as tensor ops: s0 ~ U(-1, 1), s[t+1] = clip(s[t] + 0.1 a,
-1, 1), reward -|s[t+1]|, the observation the state broadcast to C x H x W),
GAE with a Python loop over the future (gamma 0.99, lambda 0.96, no
bootstrap past the last step), advantages normalized over the iteration,
then one batched forward with grad over all T x N observations (the second
forward most frameworks run), the policy loss -log_prob * adv, 0.5 x the
squared value error, -0.01 x the entropy, each summed over t and averaged
over environments (as ours: the sum over t of the per-step mean), backward
and Adam. Separate actor and critic trunks of `layers` tanh layers of
`width` units; a normal policy with a learned log sigma.

Prints one JSON object: seconds per iteration (each iteration timed), the
mean returns, peak RSS (MiB) and the PyTorch version.

    python baseline.py --envs 512 --steps 250 --layers 2 --width 64 \
        --obs 3,4,4 --iterations 6 [--threads 2] [--dtype float32]
"""
import argparse
import json
import resource
import time

import torch

GAMMA, LAMBDA, ENTROPY, VALUE = 0.99, 0.96, 0.01, 0.5


def trunk(fan_in, width, layers, dtype):
    mods = []
    for _ in range(layers):
        lin = torch.nn.Linear(fan_in, width, dtype=dtype)
        with torch.no_grad():
            lin.weight.uniform_(-1, 1).mul_(1 / fan_in ** 0.5)
            lin.bias.zero_()
        mods += [lin, torch.nn.Tanh()]
        fan_in = width
    return torch.nn.Sequential(*mods)


class Agent(torch.nn.Module):
    def __init__(self, observation, width, layers, dtype):
        super().__init__()
        self.actor_trunk = trunk(observation, width, layers, dtype)
        self.critic_trunk = trunk(observation, width, layers, dtype)
        self.actor = torch.nn.Linear(width, 1, dtype=dtype)
        self.critic = torch.nn.Linear(width, 1, dtype=dtype)
        with torch.no_grad():
            self.actor.weight.uniform_(-1, 1).mul_(0.01)
            self.actor.bias.zero_()
            self.critic.weight.uniform_(-1, 1).mul_(1 / width ** 0.5)
            self.critic.bias.zero_()
        self.log_sigma = torch.nn.Parameter(torch.zeros(1, dtype=dtype))

    def value(self, obs):
        return self.critic(self.critic_trunk(obs)).squeeze(-1)

    def distribution(self, obs):
        mean = self.actor(self.actor_trunk(obs)).squeeze(-1)
        return torch.distributions.Normal(mean, self.log_sigma.exp())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--envs", type=int, default=512)
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--obs", default="3,4,4")
    ap.add_argument("--iterations", type=int, default=6)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    dtype = getattr(torch, a.dtype)
    c, h, w = (int(x) for x in a.obs.split(","))
    observation = c * h * w
    n, T = a.envs, a.steps
    agent = Agent(observation, a.width, a.layers, dtype)
    optimizer = torch.optim.Adam(agent.parameters(), lr=a.lr)
    seconds, returns = [], []
    for _ in range(a.iterations):
        start = time.perf_counter()
        obs = torch.empty(T, n, observation, dtype=dtype)
        actions = torch.empty(T, n, dtype=dtype)
        rewards = torch.empty(T, n, dtype=dtype)
        values = torch.empty(T, n, dtype=dtype)
        with torch.no_grad():
            state = torch.empty(n, dtype=dtype).uniform_(-1, 1)
            for t in range(T):
                o = state.unsqueeze(-1).expand(n, observation)
                obs[t] = o
                values[t] = agent.value(o)
                action = agent.distribution(o).sample()
                actions[t] = action
                state = (state + 0.1 * action).clamp(-1, 1)
                rewards[t] = -state.abs()
            advantages = torch.zeros(T, n, dtype=dtype)
            last = torch.zeros(n, dtype=dtype)
            for t in reversed(range(T)):
                next_value = values[t + 1] if t + 1 < T else torch.zeros(n, dtype=dtype)
                delta = rewards[t] + GAMMA * next_value - values[t]
                last = delta + GAMMA * LAMBDA * last
                advantages[t] = last
            target = advantages + values
            normalized = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
        flat = obs.reshape(T * n, observation)
        dist = agent.distribution(flat)
        log_prob = dist.log_prob(actions.reshape(-1)).reshape(T, n)
        entropy = dist.entropy().expand(T * n).reshape(T, n)
        value = agent.value(flat).reshape(T, n)
        per_env = -log_prob * normalized + VALUE * (value - target) ** 2 - ENTROPY * entropy
        loss = per_env.mean(dim=1).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seconds.append(time.perf_counter() - start)
        returns.append(float(rewards.sum(0).mean()))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "returns": returns, "rss_mib": rss, "torch": torch.__version__,
                      "dtype": a.dtype, "threads": a.threads}))


if __name__ == "__main__":
    main()
