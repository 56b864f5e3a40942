"""Training from Python (issue 43): the Rust API's optimizers through
`tempo.optim` against NumPy references of the same updates (PyTorch's
algorithms), seeded random values (uniform, normal, categorical), the
building blocks a trainer needs (numbers as values, pow, maximum, minimum,
arange as one-hot), examples/python/train_lstm.py printing the Rust
example's losses, the docstrings' examples, and bad input refused with
`tempo.TempoError` (never a crash)."""

import doctest
import inspect
import math
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import tempo

ROOT = pathlib.Path(__file__).resolve().parents[2]


# --- Optimizers against NumPy -------------------------------------------

ITERATIONS, STEPS = 6, 4


def regression(optimizer, **settings):
    """A linear model fitted by `optimizer`: `loss[i, t] = (x[i, t] . w[i] -
    y[i, t])^2`, `w` over the iterations from the input `w0`; outputs `w`,
    `loss` and the optimizer's state."""
    p = tempo.Program()
    i = p.dim("i", "I")
    t = p.dim("t", "T")
    x = p.input("x", [i, t], [3], "float64")
    y = p.input("y", [i, t], [], "float64")
    w0 = p.input("w0", [], [3], "float64")
    w = p.tensor("w", [i], [3], "float64")
    loss = p.tensor("loss", [i, t], [], "float64")
    err = (x[i, t] * w[i]).sum() - y[i, t]
    p.otherwise(loss, err * err)
    g = p.grad("g", loss, w)
    state = optimizer(p, w, g, i, w0[()], **settings)
    p.output(w)
    p.output(loss)
    if isinstance(state, tempo.AdamState):
        p.output(state.m)
        p.output(state.v)
    elif isinstance(state, tempo.Tensor):
        p.output(state)
    return p


def data():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((ITERATIONS, STEPS, 3))
    y = x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.standard_normal((ITERATIONS, STEPS))
    w0 = np.array([0.3, 0.2, -0.1])
    return dict(I=ITERATIONS, T=STEPS, x=x, y=y, w0=w0)


def gradient(w, x, y):
    """d/dw of sum_t (x[t] . w - y[t])^2."""
    return 2 * ((x @ w - y)[:, None] * x).sum(axis=0)


def reference(kind, arguments, lr, momentum=0.0, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
    """The parameters of every iteration (and the state), as PyTorch's
    optimizers compute them: step k (from 1) uses the gradient at w[k-1]."""
    x, y, w = arguments["x"], arguments["y"], arguments["w0"].copy()
    ws, states = [w.copy()], []
    m = v = buf = None
    for k in range(1, ITERATIONS + 1):
        g = gradient(w, x[k - 1], y[k - 1])
        if kind == "sgd":
            w = w - lr * g
        elif kind == "momentum":
            buf = g if buf is None else momentum * buf + g
            states.append(buf)
            w = w - lr * buf
        else:  # adam; AdamW: decoupled decay first, as torch.optim.AdamW
            b1, b2 = betas
            m = (1 - b1) * g if m is None else b1 * m + (1 - b1) * g
            v = (1 - b2) * g * g if v is None else b2 * v + (1 - b2) * g * g
            states.append((m, v))
            w = w * (1 - lr * weight_decay)
            w = w - lr * (m / (1 - b1**k)) / (np.sqrt(v / (1 - b2**k)) + eps)
        ws.append(w.copy())
    return np.array(ws[:ITERATIONS]), states[:ITERATIONS]


@pytest.mark.parametrize(
    "kind, settings",
    [
        ("sgd", dict(lr=0.02)),
        ("momentum", dict(lr=0.01, momentum=0.9)),
        ("adam", dict(lr=0.1)),
        ("adam", dict(lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ],
)
def test_optimizers_are_pytorchs_updates(kind, settings):
    optimizer = {"sgd": tempo.optim.sgd, "momentum": tempo.optim.momentum, "adam": tempo.optim.adam}[kind]
    arguments = data()
    out = regression(optimizer, **settings).compile().run(**arguments)
    want, states = reference(kind, arguments, **settings)
    np.testing.assert_allclose(out["w"], want, rtol=1e-10, atol=1e-12)
    if kind == "momentum":
        np.testing.assert_allclose(out["w_velocity"], np.array(states), rtol=1e-10, atol=1e-12)
    if kind == "adam":
        np.testing.assert_allclose(out["w_m"], np.array([m for m, _ in states]), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(out["w_v"], np.array([v for _, v in states]), rtol=1e-10, atol=1e-12)
    # The loss of each iteration is that of its parameters.
    losses = [((arguments["x"][k] @ want[k] - arguments["y"][k]) ** 2) for k in range(ITERATIONS)]
    np.testing.assert_allclose(out["loss"], np.array(losses), rtol=1e-10, atol=1e-12)


def test_adam_defaults_are_pytorchs():
    signature = inspect.signature(tempo.optim.adam)
    defaults = {name: p.default for name, p in signature.parameters.items() if p.default is not p.empty}
    assert defaults == {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0}


def hand_written_sgd(stop_gradient):
    """`tempo.optim.sgd`'s update written out, with the gradient read
    through `stop_gradient` or not."""

    def sgd(p, w, g, i, init, lr):
        p.define(w, i == 0, init)
        step = g[i - 1].stop_gradient() if stop_gradient else g[i - 1]
        p.otherwise(w, w[i - 1] - step * lr)

    return sgd


def test_sgd_is_the_update_written_by_hand():
    arguments = data()
    ours = regression(tempo.optim.sgd, lr=0.02).compile().run(**arguments)
    by_hand = regression(hand_written_sgd(True), lr=0.02).compile().run(**arguments)
    assert np.array_equal(ours["w"], by_hand["w"])
    # Leaving stop_gradient out changes nothing today: the gradient of a
    # parameter passes through none of its own later points (README).
    without = regression(hand_written_sgd(False), lr=0.02).compile().run(**arguments)
    assert np.array_equal(ours["w"], without["w"])


def test_adam_epochs_of_one_epoch_is_adam():
    arguments = data()
    ours = regression(tempo.optim.adam, lr=0.1).compile().run(**arguments)

    def one_epoch(p, w, g, i, init, lr):
        return tempo.optim.adam_epochs(p, [w], [g], i, init, lr=lr)[0]

    epochs = regression(one_epoch, lr=0.1).compile().run(**arguments)
    assert np.array_equal(ours["w"], epochs["w"])


# --- Random values --------------------------------------------------------


def random_values(kind, seed, dtype="float64", steps=16, width=256):
    p = tempo.Program()
    t = p.dim("t", "T")
    r = p.tensor("r", [t], [width], dtype)
    make = tempo.random_uniform if kind == "uniform" else tempo.random_normal
    p.otherwise(r, make(seed, [width], dtype))
    p.output(r)
    return p, p.compile().run(T=steps)["r"]


@pytest.mark.parametrize("kind", ["uniform", "normal"])
def test_random_values_are_seeded(kind):
    p, a = random_values(kind, 5)
    _, again = random_values(kind, 5)
    _, other = random_values(kind, 6)
    assert np.array_equal(a, again)
    assert not np.array_equal(a, other)
    # Each point its own values; the interpreter's are the compiled code's.
    assert not np.array_equal(a[0], a[1])
    assert np.array_equal(a, p.interpret(T=16)["r"])
    values = a.ravel()
    if kind == "uniform":
        assert values.min() >= 0.0 and values.max() < 1.0
        assert abs(values.mean() - 0.5) < 0.02
        assert abs(values.var() - 1 / 12) < 0.01
    else:
        assert abs(values.mean()) < 0.05
        assert abs(values.std() - 1.0) < 0.05
    _, single = random_values(kind, 5, "float32")
    assert single.dtype == np.float32


def test_categorical_samples_softmax():
    probs = np.array([0.1, 0.2, 0.7])
    rows, steps = 64, 32
    p = tempo.Program()
    t = p.dim("t", "T")
    logits = tempo.constant(np.tile(np.log(probs), (rows, 1)), "float64")
    sample = tempo.categorical(logits, seed=11)
    action = p.tensor("action", [t], [rows], "int64")
    log_prob = p.tensor("log_prob", [t], [rows], "float64")
    entropy = p.tensor("entropy", [t], [rows], "float64")
    again = p.tensor("again", [t], [rows], "float64")
    p.otherwise(action, sample.action)
    p.otherwise(log_prob, sample.log_prob)
    p.otherwise(entropy, sample.entropy)
    p.otherwise(again, tempo.categorical_log_prob(logits, action[t]))
    for tensor in (action, log_prob, entropy, again):
        p.output(tensor)
    out = p.compile().run(T=steps)
    frequencies = np.bincount(out["action"].ravel(), minlength=3) / (rows * steps)
    np.testing.assert_allclose(frequencies, probs, atol=0.03)
    np.testing.assert_allclose(out["log_prob"], np.log(probs)[out["action"]], rtol=1e-12)
    np.testing.assert_allclose(out["again"], out["log_prob"], rtol=1e-12)
    np.testing.assert_allclose(out["entropy"], -(probs * np.log(probs)).sum(), rtol=1e-12)
    assert np.array_equal(out["action"], p.compile().run(T=steps)["action"])


# --- Building blocks ------------------------------------------------------


def test_numbers_pow_maximum_minimum_and_one_hot():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [4], "float64")
    ids = p.input("ids", [t], [2], "int64")
    a = p.tensor("a", [t], [4], "float64")
    b = p.tensor("b", [t], [4], "float64")
    n = p.tensor("n", [t], [], "int64")
    one_hot = p.tensor("one_hot", [t], [2, 5], "float32")
    p.define(a, t == 0, 1.5)  # numbers as a branch's value
    p.otherwise(a, x[t].abs() ** 0.5 + 2.0 ** x[t] + x[t].pow(2))
    p.otherwise(b, tempo.where(x[t] > 0, x[t].maximum(0.5), tempo.minimum(-1.0, x[t])) + tempo.maximum(x[t], 0))
    p.define(n, t == 0, 7)
    p.otherwise(n, n[t - 1] + 1)
    p.otherwise(one_hot, tempo.arange(5).equals(ids[t].reshape([2, 1])).astype("float32"))
    for tensor in (a, b, n, one_hot):
        p.output(tensor)
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((3, 4))
    id_values = np.array([[0, 4], [2, 2], [1, 3]], np.int64)
    out = p.compile().run(T=3, x=xs, ids=id_values)
    want = np.sqrt(np.abs(xs)) + 2.0**xs + xs**2
    want[0] = 1.5
    np.testing.assert_allclose(out["a"], want, rtol=1e-12)
    want_b = np.where(xs > 0, np.maximum(xs, 0.5), np.minimum(-1.0, xs)) + np.maximum(xs, 0)
    np.testing.assert_allclose(out["b"], want_b, rtol=1e-12)
    assert out["n"].tolist() == [7, 8, 9]
    assert np.array_equal(out["one_hot"], np.eye(5, dtype=np.float32)[id_values])


def test_constants():
    p = tempo.Program()
    t = p.dim("t", "T")
    c = p.tensor("c", [t], [2, 3], "float64")
    k = p.tensor("k", [t], [3], "int64")
    p.otherwise(c, tempo.constant([[1, 2, 3], [4, 5, 6]], "float64") * tempo.constant(0.5, "float64"))
    p.otherwise(k, tempo.constant(2, "int64", [3]) + tempo.constant(np.arange(3), "int64"))
    p.output(c)
    p.output(k)
    out = p.compile().run(T=2)
    assert out["c"].tolist() == [[[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]] * 2
    assert out["k"].tolist() == [[2, 3, 4]] * 2


# --- The docstrings' examples and the README's ------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "optim.sgd",
        "optim.momentum",
        "optim.adam",
        "categorical",
        "random_uniform",
        "Program.grad",
    ],
)
def test_docstring_examples_run(name):
    target = tempo
    for part in name.split("."):
        target = getattr(target, part)
    text = target.__doc__
    assert text and ">>>" in text, f"{name} has no example"
    test = doctest.DocTestParser().get_doctest(text, {"tempo": tempo, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_readme_training_example_learns():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    [block] = [b for b in blocks if "tempo.optim.adam" in b]
    scope = {}
    exec(compile(block, "README.md", "exec"), scope)
    losses = scope["losses"]
    assert losses[-1] < 1e-2 * losses[0]


# --- examples/python/train_lstm.py is examples/train_lstm.rs ----------------


def test_train_lstm_prints_the_rust_examples_losses(tmp_path):
    flags = ["--iterations", "4", "--hidden", "8", "--seq-len", "6", "--batch", "2", "--lr", "0.05", "--seed", "3"]
    rust = subprocess.run(
        [ROOT / "target" / "release" / "examples" / "train_lstm", *flags],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    # From another directory: the script finds its data next to itself.
    python = subprocess.run(
        [sys.executable, ROOT / "examples" / "python" / "train_lstm.py", *flags],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    ).stdout
    assert rust.splitlines()[0].startswith("iteration 0 loss ")
    assert len(python.splitlines()) == 4
    assert python == rust


def test_train_lstm_reads_another_text_and_refuses_a_short_one(tmp_path):
    script = ROOT / "examples" / "python" / "train_lstm.py"
    text = tmp_path / "text.txt"
    text.write_text("abcab" * 20)
    run = subprocess.run(
        [sys.executable, script, "--iterations", "2", "--hidden", "4", "--seq-len", "5", "--batch", "2", "--data", text],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert [line.split()[:3] for line in lines] == [["iteration", "0", "loss"], ["iteration", "1", "loss"]]
    assert 0 < float(lines[0].split()[3]) < 3 * math.log(3)
    text.write_text("abc")
    run = subprocess.run([sys.executable, script, "--data", text], capture_output=True, text=True)
    assert run.returncode == 1 and "needs at least" in run.stderr


# --- Bad input: a TempoError, never a crash ---------------------------------


def scaled():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    y = p.tensor("y", [t], [3])
    p.otherwise(y, x[t] * 2.0)
    p.output(y)
    return p


def test_wrong_dtypes_and_missing_bounds_are_tempo_errors():
    p = scaled()
    exe = p.compile()
    float64 = np.ones((2, 3), np.float64)
    with pytest.raises(tempo.TempoError, match="float32"):
        exe.run(T=2, x=float64)
    with pytest.raises(tempo.TempoError, match="float32"):
        p.interpret(T=2, x=float64)
    with pytest.raises(tempo.TempoError, match="not supported"):
        exe.run(T=2, x=np.ones((2, 3), np.int8))
    with pytest.raises(tempo.TempoError, match="missing bound T"):
        exe.run(x=np.ones((2, 3), np.float32))
    with pytest.raises(tempo.TempoError, match="missing bound T"):
        p.interpret(x=np.ones((2, 3), np.float32))
    # The executable still runs after the errors.
    assert exe.run(T=2, x=np.ones((2, 3), np.float32))["y"].tolist() == [[2.0] * 3] * 2


def test_bad_optimizer_calls_are_tempo_errors_at_the_line():
    p = tempo.Program()
    i = p.dim("i", "I")
    t = p.dim("t", "T")
    w = p.tensor("w", [t], [3], "float64")
    v = p.tensor("v", [i], [3], "float64")
    n = p.tensor("n", [i], [3], "int64")
    loss = p.tensor("loss", [i], [], "float64")
    p.otherwise(loss, v[i].sum())
    g = p.grad("g", loss, v)
    line = inspect.currentframe().f_lineno + 2
    cases = [
        lambda: tempo.optim.sgd(p, w, g, i, 0.0, lr=0.1),  # i not in w's domain
        lambda: tempo.optim.adam(p, v, loss, i, 0.0),  # not v's gradient
        lambda: tempo.optim.momentum(p, n, n, i, 0, lr=0.1, momentum=0.9),  # ints
        lambda: tempo.optim.adam_epochs(p, [v], [], i, 0.0),  # one gradient per epoch
    ]
    messages = ["not in the domain of 'w'", "is not of the parameter 'v'", "optimizers update floats", "one gradient per epoch"]
    for k, (case, message) in enumerate(zip(cases, messages)):
        with pytest.raises(tempo.TempoError, match=message) as error:
            case()
        assert f"test_train.py:{line + k}:" in str(error.value)


def test_bad_values_are_refused():
    p = tempo.Program()
    t = p.dim("t", "T")
    r = p.tensor("r", [t], [2], "int64")
    line = inspect.currentframe().f_lineno + 1
    p.otherwise(r, tempo.random_uniform(1, [2], "int64"))
    p.output(r)
    with pytest.raises(tempo.TempoError, match="floating-point") as error:
        p.compile()
    assert f"test_train.py:{line}:" in str(error.value)
    with pytest.raises(tempo.TempoError, match="class axis"):
        tempo.categorical(tempo.constant(1.0), seed=1)
    with pytest.raises(TypeError, match="two numbers"):
        tempo.where(tempo.constant(1.0) > 0, 1.0, 2.0)
    with pytest.raises(TypeError):
        pow(tempo.constant(2.0), 2, 3)
    with pytest.raises(ValueError, match="shape"):
        tempo.constant([1.0, 2.0], shape=[3])
    with pytest.raises(TypeError):
        p.otherwise(r, "zero")


def test_the_package_is_typed():
    package = pathlib.Path(tempo.__file__).parent
    assert (package / "py.typed").exists()
    stubs = (package / "_tempo.pyi").read_text()
    # Every public name of the extension has a stub.
    for name in dir(tempo._tempo):
        if not name.startswith("_"):
            assert re.search(rf"^(class|def) {name}\b", stubs, re.M), name
    assert os.path.basename(tempo.optim.__file__) == "optim.py"


def test_every_class_method_and_function_has_a_docstring():
    missing = []
    for name in dir(tempo._tempo):
        if name.startswith("_"):
            continue
        value = getattr(tempo._tempo, name)
        if not (value.__doc__ or "").strip():
            missing.append(name)
        if inspect.isclass(value) and not issubclass(value, Exception):
            for attribute, member in vars(value).items():
                if not attribute.startswith("_") and not (getattr(member, "__doc__", None) or "").strip():
                    missing.append(f"{name}.{attribute}")
    assert missing == []
