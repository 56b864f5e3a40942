"""Advantage actor-critic and PPO from Python, the environment stepped by
a Python function that the compiled program calls (``Program.call``):
examples/ppo.rs (the Rust example) written in Python, the whole training
run one program. For each iteration ``i``: a rollout of ``T`` steps over
``N`` environments (the batch in each point, so the function steps all
``N`` at once), generalized advantage estimation over the future (a
backward recurrence), normalized advantages, the policy, value and
entropy losses, their gradients and Adam::

    python examples/python/ppo.py --env cartpole [--envs 16] [--steps 128]
        [--iterations 60] [--objective a2c|ppo] [--epochs 4] [--clip 0.2]
        [--layers 2] [--width 64] [--lr 0.003] [--seed 1] [--threads 0]
        [--fast-math] [--obs 3,4,4] [--dtype f32|f64] [--mlir]

Environments:

- ``cartpole``: Gymnasium's ``CartPole-v1`` (``pip install gymnasium``),
  ``N`` environments stepped by one Python function per step of the
  program; an environment that ends an episode (terminated, or truncated
  at 500 steps) is reset at once and its ``done`` masks the advantages.
  Episodes go on across iterations, so a return reaches 500. The mean
  return of an iteration is that of the episodes that ended in it (the
  previous iteration's when none did). A categorical policy over the two
  actions.
- ``trivial``: the RL benchmark's environment (``bench/rl``), its
  dynamics in NumPy: a state per environment, ``s0 ~ U(-1, 1)`` (the
  program's seeded values, as the Rust example), ``s[t+1] = clip(s[t] +
  0.1 a[t], -1, 1)``, reward ``-|s[t+1]|``, the observation the state
  broadcast to ``C x H x W``; a normal policy. The same program as
  ``ppo --env trivial`` of the Rust example, with the two steps of the
  environment computed by NumPy: the same returns on the same seed.

Prints one line per iteration, ``iteration N mean_return R seconds S``
(``S``: for ``cartpole`` the time from the iteration's first step to the
next's; for ``trivial`` the run's time divided evenly, as the Rust example
does), then the compile time on stderr. Runs from any directory. With the
default flags ``cartpole`` passes a mean return of 195 within 30
iterations (seeds 1 to 5: at iterations 18 to 24; with ``--objective
ppo``, 8 or 9), in about 5 s on 2 cores; ``python/tests/test_ppo.py``
checks it.
"""

import argparse
import sys
import time

import numpy as np

import tempo

GAMMA = 0.99
LAMBDA = 0.96
ENTROPY = 0.01
VALUE = 0.5


class CartPoles:
    """``n`` Gymnasium ``CartPole-v1`` environments stepped together, each
    reset as soon as an episode ends; records each finished episode's
    return with the iteration it ended in, and when each iteration began."""

    def __init__(self, n, steps, seed):
        import gymnasium

        self.envs = [gymnasium.make("CartPole-v1") for _ in range(n)]
        self.steps = steps
        self.seed = seed
        self.calls = 0
        self.running = np.zeros(n)
        self.finished = []  # (iteration, return)
        self.started = []  # time of each iteration's first step

    def reset(self):
        """The first observations ``[n, 4]`` (float64)."""
        rows = [env.reset(seed=self.seed * 1000 + k)[0] for k, env in enumerate(self.envs)]
        return np.asarray(rows, dtype=np.float64)

    def step(self, action):
        """Steps every environment with its action (``[n]`` int64); returns
        ``[n, 6]``: the next observation (a fresh one where the episode
        ended), the reward and whether the episode ended."""
        iteration = self.calls // self.steps
        if self.calls % self.steps == 0:
            self.started.append(time.perf_counter())
        self.calls += 1
        out = np.empty((len(self.envs), 6))
        for k, env in enumerate(self.envs):
            obs, reward, terminated, truncated, _ = env.step(int(action[k]))
            self.running[k] += reward
            done = terminated or truncated
            if done:
                self.finished.append((iteration, self.running[k]))
                self.running[k] = 0.0
                obs, _ = env.reset()
            out[k, :4] = obs
            out[k, 4] = reward
            out[k, 5] = float(done)
        return out

    def mean_returns(self, iterations):
        """Per iteration the mean return of the episodes that ended in it
        (the previous value where none did; 0 before the first)."""
        out, last = [], 0.0
        for i in range(iterations):
            ended = [r for k, r in self.finished if k == i]
            last = float(np.mean(ended)) if ended else last
            out.append(last)
        return out


def trivial_step(state, action):
    """The trivial environment's next state ``[n, 1]``, in the program's
    element type: ``clip(s + 0.1 a, -1, 1)`` (in place on a new array:
    the function runs at every step)."""
    moved = action.reshape(-1, 1) * state.dtype.type(0.1)
    moved += state
    np.minimum(moved, 1, out=moved)
    return np.maximum(moved, -1, out=moved)


def trivial_reward(state, action):
    """The reward of acting ``action`` in ``state``: ``-|clip(s + 0.1 a, -1, 1)|``."""
    moved = action * state.dtype.type(0.1)
    moved += state.reshape(-1)
    np.minimum(moved, 1, out=moved)
    np.maximum(moved, -1, out=moved)
    np.abs(moved, out=moved)
    return np.negative(moved, out=moved)


def program(c, env):
    """The training program; outputs the trivial environment's
    ``mean_return[i]``, or CartPole's ``episodes[i]`` (how many ended in
    iteration ``i``)."""
    cartpole = c.env == "cartpole"
    dtype = "float32" if c.dtype == "f32" and not cartpole else "float64"
    n, width = c.envs, c.width
    observation = 4 if cartpole else int(np.prod(c.obs))
    p = tempo.Program()
    i = p.dim("i", "I")
    t = p.dim("t", "T")
    # Separate trunks for the actor and the critic, an actor head and a
    # critic head; each parameter's initial value is the run's seeded
    # uniform values in [-1, 1) (the input `{name}_init`) times a scale.
    shapes = []
    fan_in = observation
    for k in range(c.layers):
        for trunk in ("w", "cw"):
            shapes.append((f"{trunk}{k}", [fan_in, width], 1.0 / np.sqrt(fan_in)))
            shapes.append((f"{trunk}b{k}", [width], 0.0))
        fan_in = width
    actions = 2 if cartpole else 1
    shapes += [("actor", [fan_in, actions], 0.01), ("actor_bias", [actions], 0.0),
               ("critic", [fan_in, 1], 1.0 / np.sqrt(fan_in)), ("critic_bias", [1], 0.0)]
    if not cartpole:
        shapes.append(("log_sigma", [1], 0.0))
    epochs = c.epochs if c.objective == "ppo" else 1
    params = {}
    for name, shape, scale in shapes:
        init = p.input(f"{name}_init", [], shape, dtype)
        per_epoch = [p.tensor(name if k == 0 else f"{name}_e{k}", [i], shape, dtype) for k in range(epochs)]
        params[name] = (init, per_epoch, scale)

    def at(k):
        return lambda name: params[name][1][k][i]

    state = p.tensor("state", [i, t], [n, 4 if cartpole else 1], dtype)
    features = p.tensor("features", [i, t], [n, width], dtype)
    reward = p.tensor("reward", [i, t], [n], dtype)
    done = p.tensor("done", [i, t], [n], dtype)
    value = p.tensor("value", [i, t], [n], dtype)
    log_prob = p.tensor("log_prob", [i, t], [n], dtype)
    entropy = p.tensor("entropy", [i, t], [n], dtype)
    action = p.tensor("action", [i, t], [n], "int64" if cartpole else dtype)
    if cartpole:
        observed = state[i, t]
    else:
        # The state broadcast to the observation (a product by ones: exact).
        observed = state[i, t] @ tempo.constant(1.0, dtype, [1, observation])

    def trunk(param, prefix):
        h = observed
        for k in range(c.layers):
            h = (h @ param(f"{prefix}{k}") + param(f"{prefix}b{k}")).tanh()
        return h

    param = at(0)
    p.otherwise(features, trunk(param, "w"))
    head = features[i, t] @ param("actor") + param("actor_bias")
    p.otherwise(value, (trunk(param, "cw") @ param("critic") + param("critic_bias")).reshape([n]))
    if cartpole:
        sample = tempo.categorical(head, 17)
        p.otherwise(action, sample.action)
        p.otherwise(log_prob, tempo.categorical_log_prob(head, action[i, t]))
        p.otherwise(entropy, sample.entropy)
        # The environments' step after each action: [next observation,
        # reward, done] per environment; the next observation of the last
        # step of an iteration is the first of the next iteration.
        stepped = p.tensor("stepped", [i, t], [n, 6], dtype)
        p.otherwise(stepped, p.call("cartpole_step", env.step, [action[i, t]], [n, 6], dtype))
        p.define(state, (i == 0) & (t == 0), p.call("cartpole_reset", env.reset, [], [n, 4], dtype))
        p.define(state, t == 0, stepped[i - 1, t.bound - 1].slice([0, 0], [n, 4]))
        p.otherwise(state, stepped[i, t - 1].slice([0, 0], [n, 4]))
        p.otherwise(reward, stepped[i, t].slice([0, 4], [n, 1]).reshape([n]))
        p.otherwise(done, stepped[i, t].slice([0, 5], [n, 1]).reshape([n]))
    else:
        mean = head.reshape([n])
        sample = tempo.rl.normal(mean, param("log_sigma"), 17)
        p.otherwise(action, sample.action)
        p.otherwise(log_prob, tempo.rl.normal_log_prob(action[i, t], mean, param("log_sigma")))
        p.otherwise(entropy, sample.entropy)
        p.define(state, t == 0, tempo.random_uniform(5, [n, 1], dtype) * 2.0 - 1.0)
        p.otherwise(state, p.call("trivial_step", trivial_step, [state[i, t - 1], action[i, t - 1]], [n, 1], dtype))
        p.otherwise(reward, p.call("trivial_reward", trivial_reward, [state[i, t], action[i, t]], [n], dtype))
        p.otherwise(done, 0.0)
    # Advantages (GAE over the future, values outside the gradient),
    # normalized over the iteration's steps and environments.
    fixed_value = p.tensor("fixed_value", [i, t], [n], dtype)
    p.otherwise(fixed_value, value[i, t].stop_gradient())
    advantage = tempo.rl.gae(p, "advantage", reward, fixed_value, t, GAMMA, LAMBDA, done)
    stats = p.tensor("advantage_stats", [i], [2], dtype)
    every = advantage[i, :]
    mean = every.mean(0).mean(0)
    centered = every - mean
    deviation = (centered * centered).mean(0).mean(0).sqrt()
    p.otherwise(stats, mean.reshape([1]).concat(deviation.reshape([1]), 0))
    normalized = (advantage[i, t] - stats[i].slice([0], [1])) / (stats[i].slice([1], [1]) + 1e-8)
    returns = advantage[i, t] + fixed_value[i, t]
    losses = []
    for k in range(epochs):
        if c.objective == "a2c":
            error = value[i, t] - returns
            per_env = -(log_prob[i, t] * normalized.stop_gradient()) + error * error * (0.5 * VALUE) \
                - entropy[i, t] * ENTROPY
        else:
            # PPO: each epoch computes the policy and the values again from
            # the rollout's observations with its own parameters.
            param_k = at(k)
            features_k = p.tensor(f"features_e{k}", [i, t], [n, width], dtype)
            p.otherwise(features_k, trunk(param_k, "w"))
            head_k = features_k[i, t] @ param_k("actor") + param_k("actor_bias")
            value_k = p.tensor(f"value_e{k}", [i, t], [n], dtype)
            p.otherwise(value_k, (trunk(param_k, "cw") @ param_k("critic") + param_k("critic_bias")).reshape([n]))
            log_prob_k = p.tensor(f"log_prob_e{k}", [i, t], [n], dtype)
            if cartpole:
                p.otherwise(log_prob_k, tempo.categorical_log_prob(head_k, action[i, t]))
                entropy_k = tempo.categorical(head_k, 17).entropy
            else:
                mean_k = head_k.reshape([n])
                p.otherwise(log_prob_k, tempo.rl.normal_log_prob(action[i, t], mean_k, param_k("log_sigma")))
                entropy_k = tempo.rl.normal(mean_k, param_k("log_sigma"), 17).entropy
            ratio = (log_prob_k[i, t] - log_prob[i, t].stop_gradient()).exp()
            adv = normalized.stop_gradient()
            clipped = ratio.maximum(1.0 - c.clip).minimum(1.0 + c.clip)
            surrogate = (ratio * adv).minimum(clipped * adv)
            error = value_k[i, t] - returns
            per_env = -surrogate + error * error * (0.5 * VALUE) - entropy_k * ENTROPY
        loss = p.tensor("loss" if c.objective == "a2c" else f"loss_e{k}", [i, t], [], dtype)
        p.otherwise(loss, per_env.mean(0))
        losses.append(loss)
    for name, (init, per_epoch, scale) in params.items():
        grads = [p.grad(f"g_{param_k.name}", loss, param_k) for param_k, loss in zip(per_epoch, losses)]
        tempo.optim.adam_epochs(p, per_epoch, grads, i, init[()] * scale, lr=c.lr)
    if cartpole:
        # The episodes that ended in each iteration (their returns are
        # counted by the environments' function).
        episodes = p.tensor("episodes", [i], [], dtype)
        p.otherwise(episodes, done[i, :].sum(0).sum(0))
        p.output(episodes)
    else:
        mean_return = p.tensor("mean_return", [i], [], dtype)
        p.otherwise(mean_return, reward[i, :].sum(0).mean(0))
        p.output(mean_return)
    return p


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--env", choices=["cartpole", "trivial"], default="cartpole")
    ap.add_argument("--objective", choices=["a2c", "ppo"], default="a2c")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--clip", type=float, default=0.2)
    ap.add_argument("--envs", type=int, default=None, help="default: 16 (cartpole), 64 (trivial)")
    ap.add_argument("--steps", type=int, default=None, help="default: 128 (cartpole), 64 (trivial)")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--obs", default="3,4,4", help="the trivial environment's observation C,H,W")
    ap.add_argument("--iterations", type=int, default=None, help="default: 60 (cartpole), 50 (trivial)")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["f32", "f64"], default="f32", help="the trivial environment's (cartpole: f64)")
    ap.add_argument("--fast-math", action="store_true")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--mlir", action="store_true", help="print the program's MLIR instead of running it")
    c = ap.parse_args(argv)
    cartpole = c.env == "cartpole"
    c.envs = c.envs if c.envs is not None else (16 if cartpole else 64)
    c.steps = c.steps if c.steps is not None else (128 if cartpole else 64)
    c.iterations = c.iterations if c.iterations is not None else (60 if cartpole else 50)
    try:
        c.obs = [int(x) for x in c.obs.split(",")]
    except ValueError:
        ap.error(f"--obs takes C,H,W, got {c.obs!r}")
    if len(c.obs) != 3 or min(c.obs) <= 0:
        ap.error(f"--obs takes C,H,W (positive), got {c.obs}")
    if min(c.envs, c.steps, c.width, c.iterations, c.layers, c.epochs) <= 0:
        ap.error("--envs, --steps, --width, --layers, --iterations and --epochs must be positive")
    if c.clip < 0:
        ap.error("--clip must be at least 0")
    return c


def train(c):
    """Runs the training program; returns (mean returns per iteration,
    seconds per iteration, compile seconds)."""
    env = CartPoles(c.envs, c.steps, c.seed) if c.env == "cartpole" else None
    p = program(c, env)
    start = time.perf_counter()
    exe = p.compile(fast_math=c.fast_math, threads=c.threads)
    compiled = time.perf_counter() - start
    start = time.perf_counter()
    out = exe.run(I=c.iterations, T=c.steps, seed=c.seed)
    seconds = time.perf_counter() - start
    if env is None:
        out = out["mean_return"]
        return [float(r) for r in out], [seconds / c.iterations] * c.iterations, compiled
    ended = [sum(1 for k, _ in env.finished if k == i) for i in range(c.iterations)]
    if ended != [int(x) for x in out["episodes"]]:
        raise RuntimeError("the program's count of ended episodes is not the environments'")
    marks = env.started + [start + seconds]
    return env.mean_returns(c.iterations), list(np.diff(marks)), compiled


def main(argv=None):
    c = parse(argv)
    if c.mlir:
        env = CartPoles(c.envs, c.steps, c.seed) if c.env == "cartpole" else None
        sys.stdout.write(program(c, env).mlir())
        return
    try:
        returns, seconds, compiled = train(c)
    except tempo.TempoError as e:
        print(f"ppo.py: {e}", file=sys.stderr)
        sys.exit(1)
    print(f"ppo.py: compile {compiled:.1f} s", file=sys.stderr)
    for k, (r, s) in enumerate(zip(returns, seconds)):
        print(f"iteration {k} mean_return {r:.4f} seconds {s:.6f}", flush=False)


if __name__ == "__main__":
    main()
