"""Tempo: recurrent-tensor programs, compiled with MLIR.

Build a program of tensors over temporal dimensions, each defined by
conditional definitions that read other tensors at affine offsets
(``x[t - 1]``) or over ranges (``k[0:t + 1]``); compile it once and run it
many times with NumPy arrays::

    import numpy as np, tempo
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    s = p.tensor("s", [t], [3])
    p.define(s, t == 0, x[t])
    p.otherwise(s, s[t - 1] + x[t])
    p.output(s)
    exe = p.compile()
    out = exe.run(T=5, x=np.ones((5, 3), np.float32))["s"]

Training is a program too: ``Program.grad`` declares a gradient,
``Expr.stop_gradient`` cuts a path, and ``tempo.optim`` (SGD, momentum,
Adam and AdamW) defines parameters over an iteration dimension.
``random_uniform``, ``random_normal`` and ``categorical`` are seeded random
values; ``tempo.rl`` has returns, advantages and policies for
reinforcement learning, and ``Program.call`` calls a Python function (an
environment) from the program. ``Program.data_parallel`` splits a batch
over the processes of an ``mpirun`` launch and averages the gradients
(one all-reduce per iteration).

The classes are the Rust API's (``tempo._tempo``): nothing is built or
checked twice. Errors are ``tempo.TempoError`` naming the Python line.
"""

from ._tempo import (  # noqa: F401
    AdamState,
    Cond,
    Dim,
    Executable,
    Expr,
    Index,
    Program,
    Sample,
    Shard,
    Tensor,
    TempoError,
    always,
    arange,
    barrier,
    categorical,
    categorical_log_prob,
    constant,
    einsum,
    maximum,
    minimum,
    processes,
    random_normal,
    random_uniform,
    where,
)
from . import optim, rl  # noqa: F401

__all__ = [
    "AdamState",
    "Cond",
    "Dim",
    "Executable",
    "Expr",
    "Index",
    "Program",
    "Sample",
    "Shard",
    "Tensor",
    "TempoError",
    "always",
    "arange",
    "barrier",
    "categorical",
    "categorical_log_prob",
    "constant",
    "einsum",
    "maximum",
    "minimum",
    "optim",
    "processes",
    "rl",
    "random_normal",
    "random_uniform",
    "where",
]
