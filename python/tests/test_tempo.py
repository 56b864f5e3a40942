"""The tempo Python package: programs built in Python, compiled once and run
many times with NumPy arrays, checked against NumPy and the interpreter;
errors name the Python line."""

import inspect

import numpy as np
import pytest

import tempo


def counter():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.tensor("x", [t], [], "int64")
    p.define(x, t == 0, t.position("int64") * 0)
    p.otherwise(x, x[t - 1] + 1)
    p.output(x)
    return p


def test_compiled_once_runs_many_times():
    exe = counter().compile()
    assert exe.bounds == ["T"]
    for steps in (3, 7, 1):
        out = exe.run(T=steps)["x"]
        assert out.dtype == np.int64
        assert out.tolist() == list(range(steps))


def rnn():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [8])
    w = p.input("w", [], [8, 8])
    h = p.tensor("h", [t], [8])
    p.define(h, t == 0, x[t].tanh())
    p.otherwise(h, (h[t - 1] @ w[()] + x[t]).tanh())
    p.output(h)
    return p


def test_rnn_matches_numpy_and_the_interpreter():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    exe = rnn().compile()
    out = exe.run(T=6, x=x, w=w)["h"]
    interpreted = rnn().interpret(T=6, x=x, w=w)["h"]
    assert np.array_equal(out, interpreted)
    h = np.tanh(x[0])
    want = [h]
    for k in range(1, 6):
        h = np.tanh(h @ w + x[k])
        want.append(h)
    np.testing.assert_allclose(out, np.stack(want), rtol=1e-5, atol=1e-6)


def test_causal_attention_reads_a_growing_range():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [4])
    o = p.tensor("o", [t], [4])
    keys = x[0 : t + 1]
    scores = tempo.einsum("d,nd->n", x[t], keys).softmax()
    p.otherwise(o, tempo.einsum("n,nd->d", scores, keys))
    p.output(o)
    xs = np.sin(np.arange(24, dtype=np.float32) * 0.37).reshape(6, 4)
    out = p.compile().run(T=6, x=xs)["o"]
    for k in range(6):
        s = xs[: k + 1] @ xs[k]
        e = np.exp(s - s.max())
        np.testing.assert_allclose(out[k], (e / e.sum()) @ xs[: k + 1], rtol=1e-5, atol=1e-6)


def test_scalars_on_either_side_and_values_of_dimensions():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    y = p.tensor("y", [t], [3])
    p.otherwise(y, (1.0 - x[t]) * 2 + t.position() / t.bound_value())
    p.output(y)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = p.compile().run(T=4, x=xs)["y"]
    want = (1.0 - xs) * 2 + (np.arange(4, dtype=np.float32) / 4)[:, None]
    np.testing.assert_allclose(out, want, rtol=1e-6)


def test_errors_name_the_python_line():
    p = tempo.Program()
    t = p.dim("t", "T")
    l = p.dim("l", "L")
    y = p.tensor("y", [t], [], "int64")
    line = inspect.currentframe().f_lineno + 1
    p.otherwise(y, l.position("int64"))
    p.output(y)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    assert f"test_tempo.py:{line}:" in str(error.value)
    assert "position along 'l'" in str(error.value)


def test_missing_inputs_are_named_for_python():
    exe = rnn().compile()
    with pytest.raises(tempo.TempoError, match="missing input 'x'.*x=array"):
        exe.run(T=2, w=np.zeros((8, 8), np.float32))


class DLPackOnly:
    """A tensor seen only through the DLPack protocol (as PyTorch's and
    JAX's are): inputs take it; outputs, NumPy arrays, give it back."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


def test_dlpack_tensors_in_and_out():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 8)) * 0.3).astype(np.float32)
    exe = rnn().compile()
    through_dlpack = exe.run(T=4, x=DLPackOnly(x), w=DLPackOnly(w))["h"]
    assert np.array_equal(through_dlpack, exe.run(T=4, x=x, w=w)["h"])
    assert np.array_equal(np.from_dlpack(DLPackOnly(through_dlpack)), through_dlpack)


def scaled():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    w = p.input("w", [], [])
    y = p.tensor("y", [t], [3])
    p.otherwise(y, x[t] * w[()])
    p.output(y)
    return p


def test_scalar_inputs_take_0_d_arrays_numpy_scalars_and_python_numbers():
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = scaled()
    exe = p.compile()
    for w in (np.array(2.0, np.float32), np.float32(2.0), 2.0, 2):
        np.testing.assert_array_equal(exe.run(T=2, x=xs, w=w)["y"], xs * 2)
        np.testing.assert_array_equal(p.interpret(T=2, x=xs, w=w)["y"], xs * 2)
    # A one-element vector is not a scalar: refused, naming the shapes.
    with pytest.raises(tempo.TempoError, match=r"input 'w' must be float32\[\], got float32\[1\]"):
        exe.run(T=2, x=xs, w=np.array([2.0], np.float32))


def test_bad_shapes_are_refused_at_the_python_line():
    p = tempo.Program()
    t = p.dim("t", "T")
    line = inspect.currentframe().f_lineno + 1
    x = p.input("x", [t], [-3])
    p.output(x)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    assert f"test_tempo.py:{line}:" in str(error.value)
    assert "negative" in str(error.value)
    # Zero-size dimensions: refused at the line too, saying so.
    p = tempo.Program()
    t = p.dim("t", "T")
    line = inspect.currentframe().f_lineno + 1
    x = p.input("x", [t], [0])
    p.output(x)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    assert f"test_tempo.py:{line}:" in str(error.value)
    assert "size 0" in str(error.value)


def test_zero_bounds_and_empty_prefixes_run():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    s = p.tensor("s", [t], [3])
    p.otherwise(s, x[0:t].sum(0))
    p.output(s)
    exe = p.compile()
    xs = np.ones((4, 3), np.float32)
    np.testing.assert_array_equal(exe.run(T=4, x=xs)["s"], np.arange(4, dtype=np.float32)[:, None] * xs)
    assert exe.run(T=0, x=np.ones((0, 3), np.float32))["s"].shape == (0, 3)


def test_one_executable_runs_from_many_threads():
    # Runs of one executable take turns (a thread pool of inference calls);
    # every result is right under load.
    import threading

    exe = counter().compile()
    failures = []

    def work(k):
        try:
            for j in range(25):
                steps = 3 + k + j
                assert exe.run(T=steps)["x"].tolist() == list(range(steps))
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(repr(error))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
