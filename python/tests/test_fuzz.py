"""Fuzzing the Python surface (issue 40): seeded random model-like programs
(RNN and gated cells, attention over the prefix, reads through data) built
with random bad calls (wrong shapes and dtypes, names, sizes, tensors and
dimensions of another program, reads outside the domain, defined inputs,
undefined outputs, bad movements) and run with random bad arguments (wrong
arrays, lists, scalars, non-contiguous views, missing or negative bounds).

Every case must end in results that the compiled code and the interpreter
agree on, or in an exception a Python user can act on: a `tempo.TempoError`
naming this file's line for what the program says (or saying what is wrong
with an argument), or a `ValueError`/`TypeError` raised at the call. Never a
crash, a Rust panic (`PanicException`) or a `SystemError`.

`TEMPO_PY_FUZZ_CASES` (default 60) and `TEMPO_PY_FUZZ_SEED` (default 1) for
a longer run (`tools/test.sh --long` runs 1000 of a fresh seed)."""

import os
import random

import numpy as np
import pytest

import tempo

CASES = int(os.environ.get("TEMPO_PY_FUZZ_CASES", "60"))
SEED = int(os.environ.get("TEMPO_PY_FUZZ_SEED", "1"))

FAULTS = [
    "nothing",
    "wrong_shape",
    "wrong_dtype",
    "bad_dtype_name",
    "bad_name",
    "bad_size",
    "foreign_tensor",
    "foreign_dim",
    "outside",
    "defined_input",
    "undefined",
    "bad_movement",
    "bad_bound",
    "bad_array",
    "data_outside",
]

# What a user may be told: a TempoError (from the program or the run), or
# a ValueError/TypeError at the call that was wrong.
EXPECTED = (tempo.TempoError, ValueError, TypeError)


def build(rng, faults):
    """The program, its run's keyword arguments, and the bad calls made."""
    width = rng.randint(1, 4)
    steps = rng.randint(1, 6)
    p = tempo.Program()
    t = p.dim(rng.choice(["1t", "mod", "t t"]) if "bad_name" in faults else "t", "T")
    size = rng.choice([-2, 0]) if "bad_size" in faults else width
    dtype = rng.choice(["float16", "int8", "bogus"]) if "bad_dtype_name" in faults else "float32"
    x = p.input("x", [t], [size], dtype)
    cols = width + 1 if "wrong_shape" in faults else width
    w = p.input("w", [], [width, cols])
    nxt = p.input("next", [t], [], "int64")
    h = p.tensor("h", [t], [width])
    other = tempo.Program()
    s = other.dim("s", "S")
    foreign = other.tensor("foreign", [s], [width])
    p.define(h, t == 0, (x[t] @ w[()]).tanh())
    if "outside" in faults:
        prev = h[t + 2]
    elif "foreign_dim" in faults:
        prev = h[s - 1]
    else:
        prev = h[t - 1]
    mixed = prev @ w[()]
    if rng.random() < 0.5:
        gate = (mixed + x[t]).sigmoid()
        value = gate * prev + (1.0 - gate) * x[t].tanh()
    else:
        value = (mixed + x[t]).tanh()
    if "wrong_dtype" in faults:
        value = value + t.position("int64")
    if "bad_movement" in faults:
        value = rng.choice(
            [
                lambda v: v.reshape([width + 1]),
                lambda v: v.slice([1], [width]),
                lambda v: v.concat(v, 1),
                lambda v: v.sum(3),
            ]
        )(value)
    if "data_outside" in faults or rng.random() < 0.3:
        value = value + x[nxt[t]]
    p.otherwise(h, value)
    if "foreign_tensor" in faults:
        choice = rng.randrange(3)
        if choice == 0:
            p.otherwise(foreign, x[t])
        elif choice == 1:
            p.output(foreign)
        else:
            y = p.tensor("y", [t], [width])
            p.otherwise(y, foreign[t])
            p.output(y)
    if "defined_input" in faults:
        p.otherwise(x, h[t])
    if "undefined" in faults:
        u = p.tensor("u", [t], [width])
        p.output(u)
    if rng.random() < 0.5:
        o = p.tensor("o", [t], [width])
        keys = h[0 : t + 1]
        scores = tempo.einsum("d,nd->n", h[t], keys).softmax()
        p.otherwise(o, tempo.einsum("n,nd->d", scores, keys))
        p.output(o)
    p.output(h)

    arrays = np.random.default_rng(rng.randrange(1000))
    kwargs = {"T": steps}
    xs = arrays.standard_normal((steps, max(size, 0))).astype(np.float32)
    ws = arrays.standard_normal((width, cols)).astype(np.float32)
    nexts = (np.arange(steps, dtype=np.int64) + 1) % steps
    if "data_outside" in faults:
        nexts[-1] = steps + rng.randrange(3)
    kwargs.update(x=xs, w=ws, next=nexts)
    if "bad_bound" in faults:
        choice = rng.randrange(3)
        if choice == 0:
            del kwargs["T"]
        elif choice == 1:
            kwargs["T"] = -rng.randint(1, 4)
        else:
            kwargs["Q"] = 3
    if "bad_array" in faults:
        kwargs[rng.choice(["x", "w", "next"])] = rng.choice(
            [
                np.zeros((steps + 1, width), np.float32),
                np.zeros((width, cols), np.float64),
                [[1.0] * width] * steps,
                None,
                "text",
                3.5,
                np.zeros((steps, 2 * width), np.float32)[:, ::2],
                np.zeros((), np.float32),
            ]
        )
    return p, kwargs


def located(error):
    """Whether a TempoError says where (this file's line) or is about an
    argument of the run, which has no line."""
    text = str(error)
    words = ["bound", "input '", "is not an input", "missing input", "must be", "outside", "needed", "not supported"]
    return "test_fuzz.py:" in text or any(w in text for w in words)


def outcome(call):
    try:
        return ("ok", call())
    except EXPECTED as error:
        return ("error", error)


@pytest.mark.parametrize("case", range(CASES))
def test_random_bad_calls_end_in_results_or_located_errors(case):
    rng = random.Random(SEED * 1_000_003 + case)
    faults = [rng.choice(FAULTS) for _ in range(rng.randint(0, 2))]
    kind, built = outcome(lambda: build(rng, faults))
    if kind == "error":
        # Refused while building: at the call that was wrong.
        return
    p, kwargs = built
    compiled = outcome(lambda: p.compile().run(seed=5, **kwargs))
    interpreted = outcome(lambda: p.interpret(seed=5, **kwargs))
    for side, (kind, value) in (("compiled", compiled), ("interpreted", interpreted)):
        if kind == "error" and isinstance(value, tempo.TempoError):
            assert located(value), f"{faults}: {side} error without a location: {value}"
    assert compiled[0] == interpreted[0], f"{faults}: compiled {compiled} vs interpreted {interpreted}"
    if compiled[0] == "ok":
        assert compiled[1].keys() == interpreted[1].keys()
        for name in compiled[1]:
            np.testing.assert_array_equal(compiled[1][name], interpreted[1][name], err_msg=f"{faults}: {name}")
    if not faults or faults == ["nothing"] * len(faults):
        assert compiled[0] == "ok", f"a well-formed program was refused: {compiled[1]}"
