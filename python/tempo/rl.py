"""Reinforcement-learning helpers (the Rust API's ``tempo::rl``): returns
and advantages written as recurrent tensors, so that a rollout, its
advantages, the policy's loss and its gradients are one program, and the
seeded policies' samples.

- ``discounted_returns(p, name, rewards, t, gamma, dones=None)`` and
  ``gae(p, name, rewards, values, t, gamma, lam, dones=None)`` define new
  tensors over the rewards' domain, run backward after the rollout;
- ``normal(mean, log_sigma, seed)`` and ``tempo.categorical(logits, seed)``
  sample actions (a ``Sample``: ``action``, ``log_prob``, ``entropy``);
  ``normal_log_prob`` and ``tempo.categorical_log_prob`` give an action's
  log-probability again (the later epochs of PPO).

``examples/python/ppo.py`` uses all of them. The functions are the Rust
ones (``tempo._tempo``): nothing is computed in Python.
"""

from ._tempo import (  # noqa: F401
    categorical,
    categorical_log_prob,
    discounted_returns,
    gae,
    normal,
    normal_log_prob,
)

__all__ = ["categorical", "categorical_log_prob", "discounted_returns", "gae", "normal", "normal_log_prob"]
