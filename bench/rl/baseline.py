"""CleanRL-style PyTorch baseline of examples/ppo.rs on the Tempo artifact's
trivial environment: the same maths, written as CleanRL writes A2C/PPO.

The rollout's storage (T x N observations, actions, rewards, values) is
allocated once, before the training loop, as CleanRL allocates it. Per
iteration: a rollout of T steps over N environments under no_grad
(the environment as tensor ops: s0 ~ U(-1, 1), s[t+1] = clip(s[t] + 0.1 a,
-1, 1), reward -|s[t+1]|, the observation the state broadcast to C x H x W),
GAE with a Python loop over the future (gamma 0.99, lambda 0.96, no
bootstrap past the last step), advantages normalized over the iteration,
then one batched forward with grad over all T x N observations (the second
forward most frameworks run), the policy loss -log_prob * adv, 0.25 x the
squared value error (0.5 x VALUE, VALUE = 0.5: CleanRL's vf_coef 0.5 times
its v_loss = 0.5 x mean((v - ret)^2), and examples/ppo.rs's VALUE/2 x
(value - returns)^2), -0.01 x the entropy, each summed over t and averaged
over environments (as ours: the sum over t of the per-step mean), backward
and Adam. Separate actor and critic trunks of `layers` tanh layers of
`width` units; a normal policy with a learned log sigma.

Prints one JSON object: seconds per iteration (each iteration timed), the
mean returns, peak RSS (MiB) and the PyTorch version.

    python baseline.py --envs 512 --steps 250 --layers 2 --width 64 \
        --obs 3,4,4 --iterations 6 [--threads 2] [--dtype float32] [--device cuda]

With `--env cartpole`: examples/ppo.rs's CartPole, as tensor ops over the
batch of environments (Gym's CartPoleEnv.step: Euler steps of 0.02 s, force
+-10 N; an episode ends when the pole tips past 12 degrees or the cart
leaves +-2.4 m; reward 1 per step; the ended environment restarts at once
from a fresh U(-0.05, 0.05) state; every iteration starts from fresh
states), a categorical policy over the two forces, GAE that does not
bootstrap across an episode's end, and the loss as ours writes it (0.5 x
VALUE x the squared error, as for the trivial environment). Prints, as
examples/ppo.rs does, a line per iteration,
`iteration N mean_return R seconds S`, the mean return over the
iteration's episodes (those still running at its last step counted with
what they have), then the JSON object.

    python baseline.py --env cartpole --envs 64 --steps 200 --layers 2 \
        --width 64 --iterations 100 --lr 1e-3 --dtype float64 --seed 1
"""
import argparse
import json
import math
import resource
import time

import torch

GAMMA, LAMBDA, ENTROPY, VALUE = 0.99, 0.96, 0.01, 0.5


def update(optimizer, log_prob, entropy, value, normalized, target):
    """One full-batch step on the A2C loss (as examples/ppo.rs): policy,
    value (0.5 x VALUE x the squared error) and entropy terms, averaged
    over environments, summed over steps."""
    per_env = -log_prob * normalized + 0.5 * VALUE * (value - target) ** 2 - ENTROPY * entropy
    loss = per_env.mean(dim=1).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


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
    def __init__(self, observation, width, layers, dtype, actions=1):
        super().__init__()
        self.actor_trunk = trunk(observation, width, layers, dtype)
        self.critic_trunk = trunk(observation, width, layers, dtype)
        self.actor = torch.nn.Linear(width, actions, dtype=dtype)
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

    def categorical(self, obs):
        return torch.distributions.Categorical(logits=self.actor(self.actor_trunk(obs)))


# CartPole (Gym's CartPoleEnv, as examples/ppo.rs's cartpole_step and
# cartpole_done write it), over a batch of states [n, 4].
GRAVITY, CART, POLE, HALF_LENGTH, TAU = 9.8, 1.0, 0.1, 0.5, 0.02
THETA_LIMIT = 12 * 2 * math.pi / 360


def cartpole_step(state, force):
    total = CART + POLE
    x, x_dot, theta, theta_dot = state.unbind(-1)
    cos, sin = theta.cos(), theta.sin()
    temp = (force + theta_dot * theta_dot * sin * (POLE * HALF_LENGTH)) * (1 / total)
    theta_acc = (sin * GRAVITY - cos * temp) / ((-(cos * cos) * (POLE / total) + 4 / 3) * HALF_LENGTH)
    x_acc = temp - theta_acc * cos * (POLE * HALF_LENGTH / total)
    return torch.stack([x + x_dot * TAU, x_dot + x_acc * TAU, theta + theta_dot * TAU,
                        theta_dot + theta_acc * TAU], -1)


def cartpole_done(state):
    return ((state[:, 0].abs() > 2.4) | (state[:, 2].abs() > THETA_LIMIT)).to(state.dtype)


def cartpole(a, dtype):
    """A2C on CartPole: the rollout under no_grad, GAE, one batched forward
    with grad, Adam; per iteration the line examples/ppo.rs prints."""
    n, T = a.envs, a.steps
    agent = Agent(4, a.width, a.layers, dtype, actions=2)
    optimizer = torch.optim.Adam(agent.parameters(), lr=a.lr)
    fresh = lambda: torch.empty(n, 4, dtype=dtype).uniform_(-0.05, 0.05)
    seconds, returns = [], []
    # The rollout's storage, allocated once (as CleanRL does).
    obs = torch.empty(T, n, 4, dtype=dtype)
    actions = torch.empty(T, n, dtype=torch.long)
    rewards = torch.ones(T, n, dtype=dtype)
    dones = torch.empty(T, n, dtype=dtype)
    values = torch.empty(T, n, dtype=dtype)
    for iteration in range(a.iterations):
        start = time.perf_counter()
        with torch.no_grad():
            state = fresh()  # every iteration starts from fresh states
            for t in range(T):
                obs[t] = state
                values[t] = agent.value(state)
                action = agent.categorical(state).sample()
                actions[t] = action
                following = cartpole_step(state, action.to(dtype) * 20 - 10)
                done = cartpole_done(following)  # reward 1 for this step, ended after it
                dones[t] = done
                state = torch.where(done.unsqueeze(-1) > 0.5, fresh(), following)
            # GAE: no bootstrap across an episode's end, nor past the last step.
            advantages = torch.zeros(T, n, dtype=dtype)
            last = torch.zeros(n, dtype=dtype)
            for t in reversed(range(T)):
                nonterminal = 1.0 - dones[t]
                next_value = values[t + 1] if t + 1 < T else torch.zeros(n, dtype=dtype)
                delta = rewards[t] + GAMMA * next_value * nonterminal - values[t]
                last = delta + GAMMA * LAMBDA * nonterminal * last
                advantages[t] = last
            target = advantages + values
            normalized = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
        flat = obs.reshape(T * n, 4)
        dist = agent.categorical(flat)
        log_prob = dist.log_prob(actions.reshape(-1)).reshape(T, n)
        entropy = dist.entropy().reshape(T, n)
        value = agent.value(flat).reshape(T, n)
        update(optimizer, log_prob, entropy, value, normalized, target)
        seconds.append(time.perf_counter() - start)
        # The mean return of the iteration's episodes: those that ended, and
        # at the last step every environment's running one.
        with torch.no_grad():
            running = torch.zeros(n, dtype=dtype)
            total, count = 0.0, 0.0
            for t in range(T):
                running = running + rewards[t]
                if t == T - 1:
                    total, count = total + float(running.sum()), count + n
                else:
                    total, count = total + float((running * dones[t]).sum()), count + float(dones[t].sum())
                    running = running * (1 - dones[t])
        returns.append(total / max(count, 1.0))
        print(f"iteration {iteration} mean_return {returns[-1]:.4f} seconds {seconds[-1]:.6f}", flush=True)
    return seconds, returns


def trivial_rollout(agent, obs, actions, rewards, values):
    """A rollout of T steps over N environments of the trivial environment
    (under no_grad), into the storage `obs` ([T, N, observation]),
    `actions`, `rewards`, `values` ([T, N]), then GAE over the future (no
    bootstrap past the last step): the advantages and the value targets."""
    T, n, observation = obs.shape
    dtype = obs.dtype
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
    return advantages, advantages + values


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
    ap.add_argument("--env", choices=["trivial", "cartpole"], default="trivial")
    ap.add_argument("--device", default="cpu", help="PyTorch's device (cpu or cuda): every tensor made there")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if a.device != "cpu":
        torch.set_default_device(a.device)
    torch.manual_seed(a.seed)
    dtype = getattr(torch, a.dtype)
    if a.env == "cartpole":
        seconds, returns = cartpole(a, dtype)
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"seconds": seconds, "returns": returns, "rss_mib": rss, "torch": torch.__version__,
                          "dtype": a.dtype, "threads": a.threads, "env": a.env}))
        return
    c, h, w = (int(x) for x in a.obs.split(","))
    observation = c * h * w
    n, T = a.envs, a.steps
    agent = Agent(observation, a.width, a.layers, dtype)
    optimizer = torch.optim.Adam(agent.parameters(), lr=a.lr)
    seconds, returns = [], []
    # The rollout's storage, allocated once before the loop (as CleanRL
    # does): T x N observations of C x H x W.
    obs = torch.empty(T, n, observation, dtype=dtype)
    actions = torch.empty(T, n, dtype=dtype)
    rewards = torch.empty(T, n, dtype=dtype)
    values = torch.empty(T, n, dtype=dtype)
    for _ in range(a.iterations):
        start = time.perf_counter()
        with torch.no_grad():
            advantages, target = trivial_rollout(agent, obs, actions, rewards, values)
            normalized = (advantages - advantages.mean()) / (advantages.std(unbiased=False) + 1e-8)
        flat = obs.reshape(T * n, observation)
        dist = agent.distribution(flat)
        log_prob = dist.log_prob(actions.reshape(-1)).reshape(T, n)
        entropy = dist.entropy().expand(T * n).reshape(T, n)
        value = agent.value(flat).reshape(T, n)
        update(optimizer, log_prob, entropy, value, normalized, target)
        if a.device != "cpu":
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
        returns.append(float(rewards.sum(0).mean()))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"seconds": seconds, "returns": returns, "rss_mib": rss, "torch": torch.__version__,
                      "dtype": a.dtype, "threads": a.threads, "device": a.device,
                      **({"device_bytes": torch.cuda.max_memory_allocated()} if a.device != "cpu" else {})}))


if __name__ == "__main__":
    main()
