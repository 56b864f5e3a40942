"""The building blocks a model needs, tried as a new user would (issue 43
item 6): GELU and SiLU, dynamic slices (position embeddings), one-hot
targets from token ids with `==` against `arange`, numbers wherever a
value goes (a branch's value included), `bool()` of a value refused, and
a one-layer GPT trained from Python with them."""

import inspect

import numpy as np
import pytest

import tempo


def elementwise(build, xs, dtype="float32"):
    """`y[t] = build(x[t])`, compiled and interpreted."""
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [xs.shape[1]], dtype)
    y = p.tensor("y", [t], [xs.shape[1]], dtype)
    p.otherwise(y, build(x[t]))
    p.output(y)
    return p.compile().run(T=len(xs), x=xs)["y"], p.interpret(T=len(xs), x=xs)["y"]


def test_gelu_and_silu_are_pytorchs():
    xs = np.linspace(-6, 6, 26, dtype=np.float64).reshape(2, 13)
    gelu = 0.5 * xs * (1 + np.tanh(np.sqrt(2 / np.pi) * (xs + 0.044715 * xs**3)))
    silu = xs / (1 + np.exp(-xs))
    for got in elementwise(lambda v: v.gelu(), xs, "float64"):
        np.testing.assert_allclose(got, gelu, rtol=1e-12, atol=1e-15)
    for got in elementwise(lambda v: v.silu(), xs, "float64"):
        np.testing.assert_allclose(got, silu, rtol=1e-12, atol=1e-15)
    # float32 too.
    compiled, interpreted = elementwise(lambda v: v.gelu() + v.silu(), xs.astype(np.float32))
    np.testing.assert_allclose(compiled, (gelu + silu).astype(np.float32), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(interpreted, compiled, rtol=1e-5, atol=1e-6)


def test_gelu_of_integers_is_refused_at_the_line():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3], "int64")
    y = p.tensor("y", [t], [3], "int64")
    line = inspect.currentframe().f_lineno + 1
    p.otherwise(y, x[t].gelu())
    p.output(y)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    assert error.value.file.endswith("test_blocks.py") and error.value.line == line


def test_slice_at_reads_position_embeddings():
    p = tempo.Program()
    t = p.dim("t", "T")
    wpe = p.input("wpe", [], [8, 4])
    x = p.input("x", [t], [4])
    h = p.tensor("h", [t], [4])
    prev = p.tensor("prev", [t], [2, 4])
    p.otherwise(h, x[t] + wpe[()].slice_at([t, 0], [1, 4]).reshape([4]))
    # Two rows ending at t + 1 (an Index offset), and a column offset.
    p.otherwise(prev, wpe[()].slice_at([t, 0], [2, 4]))
    p.output(h)
    p.output(prev)
    rng = np.random.default_rng(1)
    table = rng.standard_normal((8, 4)).astype(np.float32)
    xs = rng.standard_normal((5, 4)).astype(np.float32)
    for out in (p.compile().run(T=5, wpe=table, x=xs), p.interpret(T=5, wpe=table, x=xs)):
        np.testing.assert_array_equal(out["h"], xs + table[:5])
        np.testing.assert_array_equal(out["prev"], np.stack([table[k : k + 2] for k in range(5)]))


def test_slice_at_past_the_end_is_a_tempo_error():
    p = tempo.Program()
    t = p.dim("t", "T")
    wpe = p.input("wpe", [], [4, 2])
    h = p.tensor("h", [t], [1, 2])
    line = inspect.currentframe().f_lineno + 1
    p.otherwise(h, wpe[()].slice_at([t, 0], [1, 2]))
    p.output(h)
    table = np.zeros((4, 2), np.float32)
    exe = p.compile()
    assert exe.run(T=4, wpe=table)["h"].shape == (4, 1, 2)
    with pytest.raises(tempo.TempoError) as error:
        exe.run(T=6, wpe=table)
    assert f"test_blocks.py:{line}:" in str(error.value)
    with pytest.raises(tempo.TempoError):
        p.interpret(T=6, wpe=table)
    # Offsets of another rank than the value's: refused at once.
    with pytest.raises(tempo.TempoError, match="takes 2 offsets"):
        wpe[()].slice_at([t], [1])
    # The executable runs again afterwards.
    assert exe.run(T=2, wpe=table)["h"].shape == (2, 1, 2)


def test_one_hot_targets_from_token_ids():
    p = tempo.Program()
    t = p.dim("t", "T")
    ids = p.input("ids", [t], [3], "int64")
    one_hot = p.tensor("one_hot", [t], [3, 5])
    other = p.tensor("other", [t], [3, 5], "bool")
    p.otherwise(one_hot, (tempo.arange(5) == ids[t].reshape([3, 1])).astype("float32"))
    p.otherwise(other, ids[t].reshape([3, 1]) != tempo.arange(5))
    p.output(one_hot)
    p.output(other)
    tokens = np.array([[0, 4, 2], [1, 1, 3]])
    for out in (p.compile().run(T=2, ids=tokens), p.interpret(T=2, ids=tokens)):
        np.testing.assert_array_equal(out["one_hot"], np.eye(5, dtype=np.float32)[tokens])
        np.testing.assert_array_equal(out["other"], np.eye(5)[tokens] == 0)


def test_numbers_and_constants_wherever_a_value_goes():
    p = tempo.Program()
    i = p.dim("i", "I")
    n = p.tensor("n", [i], [], "int64")
    decay = p.tensor("decay", [i], [])
    mixed = p.tensor("mixed", [i], [2])
    p.define(n, i == 0, 3)  # a number as a branch's value
    p.otherwise(n, n[i - 1] * 2 + 1)
    p.define(decay, i == 0, tempo.constant(1.0))
    p.otherwise(decay, decay[i - 1] * tempo.constant(0.9))
    value = decay[i] * tempo.constant([1.0, -1.0])
    p.otherwise(mixed, tempo.where(value > 0, value.pow(2), tempo.maximum(-0.5, value)) + 2**value - tempo.minimum(value, 0))
    for tensor in (n, decay, mixed):
        p.output(tensor)
    out = p.compile().run(I=4)
    assert out["n"].tolist() == [3, 7, 15, 31]
    d = 0.9 ** np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(out["decay"], d, rtol=1e-6)
    v = d[:, None] * np.array([1.0, -1.0], np.float32)
    want = np.where(v > 0, v**2, np.maximum(-0.5, v)) + 2**v - np.minimum(v, 0)
    np.testing.assert_allclose(out["mixed"], want, rtol=1e-6)


def test_a_value_has_no_truth_value():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(tempo.TempoError, match="no truth value") as error:
        if x[t] > 0:
            pass
    assert (error.value.line, error.value.op) == (line, "Expr.__bool__")
    # `==` with something that is not a value is Python's identity.
    assert (x[t] == "x") is False


def test_a_one_layer_gpt_trains_from_python():
    """A new user's one-layer GPT: token and position embeddings (gather,
    slice_at), causal attention over the prefix, a GELU MLP, cross-entropy
    against token ids (one-hot by `==` with arange), gradients and Adam;
    the loss of a repeating sequence falls."""
    V, D, L = 5, 8, 6
    p = tempo.Program()
    i = p.dim("i", "I")
    t = p.dim("t", "T")
    tokens = p.input("tokens", [t], [], "int64")
    rng = np.random.default_rng(0)
    params = {}

    def param(name, shape):
        init = p.input(name + "0", [], shape)
        w = p.tensor(name, [i], shape)
        params[name] = (w, init, (0.3 * rng.standard_normal(shape)).astype(np.float32))
        return w

    wte, wpe, wq, wk, wv, w1, w2 = (
        param("wte", [V, D]),
        param("wpe", [L, D]),
        param("wq", [D, D]),
        param("wk", [D, D]),
        param("wv", [D, D]),
        param("w1", [D, 2 * D]),
        param("w2", [2 * D, D]),
    )
    x = p.tensor("x", [i, t], [D])
    h = p.tensor("h", [i, t], [D])
    loss = p.tensor("loss", [i, t], [])
    embedding = wte[i].gather(tokens[t].reshape([1])).reshape([D])
    p.otherwise(x, embedding + wpe[i].slice_at([t, 0], [1, D]).reshape([D]))
    keys = x[i, 0 : t + 1]
    q = x[i, t] @ wq[i]
    scores = tempo.einsum("d,nd->n", q, keys @ wk[i]) * (1.0 / np.sqrt(D))
    attended = x[i, t] + tempo.einsum("n,nd->d", scores.softmax(), keys @ wv[i])
    p.otherwise(h, attended + (attended.layer_norm() @ w1[i]).gelu() @ w2[i])
    logits = h[i, t] @ wte[i].permute([1, 0])
    target = (tempo.arange(V) == tokens[t + 1]).astype("float32")
    log_probs = logits - logits.max(keepdims=True) - (logits - logits.max(keepdims=True)).exp().sum(keepdims=True).log()
    p.define(loss, t < t.bound - 1, -(target * log_probs).sum())
    p.otherwise(loss, 0.0)
    for name, (w, init, _) in params.items():
        g = p.grad(name + "_grad", loss, w)
        tempo.optim.adam(p, w, g, i, init[()], lr=0.03)
    p.output(loss)
    sequence = np.array([0, 1, 2, 3, 4, 0], np.int64)
    out = p.compile().run(I=40, T=L, tokens=sequence, **{n + "0": v for n, (_, _, v) in params.items()})
    losses = out["loss"].sum(axis=1)
    assert np.isfinite(losses).all()
    assert losses[-1] < 0.2 * losses[0], losses


# --- Every function has an example, and every example runs -----------------


def documented():
    """(name, object) of every public function of tempo, tempo.optim and
    tempo.rl, and of every class and its methods."""
    found = {}
    for module, prefix in ((tempo, ""), (tempo.optim, "optim."), (tempo.rl, "rl.")):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.ismodule(value):
                continue
            found.setdefault(value, prefix + name)
            if inspect.isclass(value):
                for attribute, member in vars(value).items():
                    if not attribute.startswith("_") or attribute in ("__eq__", "__bool__"):
                        found.setdefault(member, f"{prefix}{name}.{attribute}")
    return sorted((name, value) for value, name in found.items())


def test_every_function_has_an_example():
    functions = [name for name, value in documented() if callable(value) and not inspect.isclass(value)]
    missing = [name for name in functions if "." not in name.replace("optim.", "").replace("rl.", "")]
    missing = [name for name in missing if ">>>" not in (eval_name(name).__doc__ or "")]
    assert missing == []


def eval_name(name):
    value = tempo
    for part in name.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("name", [name for name, value in documented() if ">>>" in (getattr(value, "__doc__", "") or "")])
def test_every_example_runs(name):
    import doctest

    text = eval_name(name).__doc__
    test = doctest.DocTestParser().get_doctest(text, {"tempo": tempo, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
