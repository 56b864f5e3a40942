"""Optimizers written as recurrences over an iteration dimension, so that a
whole training run is one program (the Rust API's ``tempo::optim``).

A parameter is a tensor over an iteration dimension ``i``: its point at
``i = 0`` is an initial value, and each later point the previous one
updated from the gradient of the previous iteration's loss, read through
``stop_gradient``. Declare the gradient with ``Program.grad`` first, then
let an optimizer define the parameter (it must have no branches yet)::

    import tempo
    p = tempo.Program()
    i = p.dim("i", "I")                       # iterations
    t = p.dim("t", "T")                       # the examples of one iteration
    x = p.input("x", [i, t], [3])
    y = p.input("y", [i, t], [])
    w = p.tensor("w", [i], [3])               # the parameter, a point per iteration
    loss = p.tensor("loss", [i, t], [])
    err = (x[i, t] * w[i]).sum() - y[i, t]
    p.otherwise(loss, err * err)
    g = p.grad("g", loss, w)                  # g[i]: d sum_t loss[i, t] / d w[i]
    tempo.optim.adam(p, w, g, i, 0.0, lr=0.01)
    p.output(loss)

Each optimizer declares its state (``w_velocity``, ``w_m``, ...) over the
parameter's domain; learning rates and coefficients are constants of the
program. The functions are the Rust ones (``tempo._tempo``): nothing is
computed in Python.
"""

from ._tempo import AdamState, adam, adam_epochs, momentum, sgd  # noqa: F401

__all__ = ["AdamState", "adam", "adam_epochs", "momentum", "sgd"]
