"""External calls with Python functions (``Program.call``, issue 43): a
function run once per point, compiled and interpreted alike; its arguments
are the points' values (arrays it may keep); an exception in it, or a
result of another shape or dtype, ends the run with a ``TempoError`` that
carries the traceback and the line of ``p.call``, and the executable runs
again afterwards; bad calls are refused where they are made."""

import threading

import numpy as np
import pytest

import tempo


def spring(state, action):
    """A damped spring (examples/environment.rs): the next [position, velocity]."""
    velocity = state[1] * np.float32(0.9) + action * np.float32(0.1) - state[0] * np.float32(0.05)
    return np.array([state[0] + velocity, velocity], np.float32)


def environment(step):
    """examples/environment.rs in Python: the agent pushes the spring back
    towards 0; the state is stepped by `step`."""
    p = tempo.Program()
    t = p.dim("t", "T")
    state = p.tensor("state", [t], [2])
    action = p.tensor("action", [t], [])
    position = state[t].slice([0], [1]).reshape([])
    p.otherwise(action, tempo.where(position < 0.0, tempo.constant(1.0), -1.0))
    p.define(state, t == 0, tempo.constant([1.0, 0.0]))
    p.otherwise(state, p.call("step", step, [state[t - 1], action[t - 1]], [2]))
    p.output(state)
    return p


def simulate(steps):
    state, out = np.array([1.0, 0.0], np.float32), []
    for _ in range(steps):
        out.append(state)
        state = spring(state, np.float32(1.0 if state[0] < 0 else -1.0))
    return np.array(out)


def test_a_function_runs_once_per_point_compiled_and_interpreted():
    calls = []

    def step(state, action):
        calls.append((state, action))
        return spring(state, action)

    p = environment(step)
    compiled = p.compile().run(T=12)["state"]
    assert len(calls) == 11, "once per point of state but the first"
    np.testing.assert_allclose(compiled, simulate(12), rtol=1e-6)
    # Each argument is its own array, of the declared shape and dtype,
    # holding that point's value (the function may keep it).
    assert all(s.shape == (2,) and s.dtype == np.float32 and a.shape == () for s, a in calls)
    assert all(s.flags.writeable and s.flags.c_contiguous for s, _ in calls)
    np.testing.assert_array_equal(np.array([s for s, _ in calls]), compiled[:-1])
    calls.clear()
    interpreted = p.interpret(T=12)["state"]
    assert len(calls) == 11
    np.testing.assert_array_equal(compiled, interpreted)


def test_calls_with_no_arguments_numbers_and_integer_results():
    counter = iter(range(100))
    p = tempo.Program()
    t = p.dim("t", "T")
    n = p.tensor("n", [t], [], "int64")
    x = p.tensor("x", [t], [], "float64")
    p.otherwise(n, p.call("next", lambda: next(counter), [], [], "int64"))  # a Python int
    p.otherwise(x, p.call("half", lambda v: v / 2, [n[t]], [], "float64"))  # a NumPy float64
    odd = p.tensor("odd", [t], [2], "bool")
    p.otherwise(odd, p.call("odd", lambda v: np.array([v % 2 == 1, True]), [n[t]], [2], "bool"))
    p.output(n)
    p.output(x)
    p.output(odd)
    out = p.compile().run(T=4)
    assert out["n"].tolist() == [0, 1, 2, 3]
    assert out["x"].tolist() == [0.0, 0.5, 1.0, 1.5]
    assert out["odd"].tolist() == [[False, True], [True, True], [False, True], [True, True]]


def test_an_exception_ends_the_run_with_the_traceback_and_the_line():
    def step(state, action):
        if state[0] < 0.5:
            raise ValueError("the spring broke")
        return spring(state, action)

    p = environment(step)
    exe = p.compile()
    for run in (lambda: exe.run(T=20), lambda: p.interpret(T=20)):
        with pytest.raises(tempo.TempoError) as error:
            run()
        message = str(error.value)
        assert "external function 'step' failed" in message, message
        assert "Traceback" in message and "ValueError: the spring broke" in message, message
        assert "in step" in message, "the function's frame: " + message
        assert "test_calls.py:" in message, "the line of p.call: " + message
    # The executable runs again (a function that no longer raises).
    ok = environment(spring).compile().run(T=3)["state"]
    np.testing.assert_allclose(ok, simulate(3), rtol=1e-6)
    good_after_bad = exe.run(T=2)["state"]  # two points: no call reaches the raise
    np.testing.assert_allclose(good_after_bad, simulate(2), rtol=1e-6)


@pytest.mark.parametrize(
    "result, expected",
    [
        (lambda s, a: np.zeros(3, np.float32), "must return float32[2], returned float32[3]"),
        (lambda s, a: np.zeros(2, np.float64), "returned an array of float64; declared float32[2]"),
        (lambda s, a: np.zeros(2, np.float16), "returned an array of float16"),
        (lambda s, a: [1.0, 2.0], "returned an array of float64"),
        (lambda s, a: None, "returned an array of object"),
        (lambda s, a: "text", "declared float32[2]"),
        (lambda s, a: np.zeros((2, 1), np.float32), "must return float32[2], returned float32[2, 1]"),
        (lambda s: s, "TypeError"),  # called with two arguments
    ],
)
def test_results_of_another_shape_or_dtype_are_a_tempo_error(result, expected):
    exe = environment(result).compile()
    with pytest.raises(tempo.TempoError) as error:
        exe.run(T=4)
    assert expected in str(error.value), str(error.value)
    assert "test_calls.py:" in str(error.value)


def test_strided_and_fortran_results_are_read_right():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.tensor("x", [t], [2, 3], "int64")
    table = np.arange(12, dtype=np.int64).reshape(4, 3)
    p.otherwise(x, p.call("view", lambda: table[::2], [], [2, 3], "int64"))
    y = p.tensor("y", [t], [3, 2], "int64")
    p.otherwise(y, p.call("transposed", lambda v: v.T, [x[t]], [3, 2], "int64"))
    big = np.arange(128 * 160, dtype=np.float32).reshape(160, 128)
    z = p.tensor("z", [t], [128, 160])  # 80 KiB: copied from the array's memory
    p.otherwise(z, p.call("big", lambda: big.T, [], [128, 160]))
    p.output(y)
    p.output(z)
    out = p.compile().run(T=2)
    np.testing.assert_array_equal(out["y"][1], table[::2].T)
    np.testing.assert_array_equal(out["z"][1], big.T)


def test_bad_calls_are_refused_where_they_are_made():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.tensor("x", [t], [2])
    with pytest.raises(tempo.TempoError, match="not callable"):
        p.call("f", 3, [x[t - 1]], [2])
    with pytest.raises(tempo.TempoError, match="an argument of a call is an Expr"):
        p.call("f", spring, [np.zeros(2)], [2])
    with pytest.raises(tempo.TempoError, match="list of Expr"):
        p.call("f", spring, 5, [2])
    with pytest.raises(tempo.TempoError, match="a size of the result's shape is -2"):
        p.call("f", spring, [], [-2])
    with pytest.raises(tempo.TempoError, match="unknown dtype"):
        p.call("f", spring, [], [2], "float16")
    with pytest.raises(tempo.TempoError, match="not empty"):
        p.call("", spring, [], [2])
    p.call("f", spring, [x[t - 1], x[t - 1]], [2])
    p.call("f", spring, [x[t - 1], x[t - 1]], [2])  # the same function again: fine
    with pytest.raises(tempo.TempoError, match="names another function already"):
        p.call("f", simulate, [x[t - 1]], [2])
    with pytest.raises(tempo.TempoError, match=r"returns float32\[2\] where it was called before, not float64\[2\]"):
        p.call("f", spring, [x[t - 1]], [2], "float64")
    with pytest.raises(tempo.TempoError) as error:
        p.call("g", None, [x[t - 1]], [2])
    assert "test_calls.py:" in str(error.value), "a refusal names this file's line"


def test_a_function_may_run_another_executable_but_not_its_own_caller():
    inner = tempo.Program()
    u = inner.dim("u", "U")
    start = inner.input("start", [], [2])
    y = inner.tensor("y", [u], [2])
    inner.define(y, u == 0, start[()])
    inner.otherwise(y, y[u - 1] * 2.0)
    inner.output(y)
    inner_exe = inner.compile()

    def doubled(state, action):
        return inner_exe.run(U=2, start=state)["y"][1]

    out = environment(doubled).compile().run(T=4)["state"]
    assert out.tolist() == [[1.0, 0.0], [2.0, 0.0], [4.0, 0.0], [8.0, 0.0]]

    holder = {}

    def again(state, action):
        holder["exe"].run(T=2)
        return state

    holder["exe"] = environment(again).compile()
    with pytest.raises(tempo.TempoError) as error:
        holder["exe"].run(T=3)
    message = str(error.value)
    assert "this executable is running on this thread already" in message, message


def test_functions_run_on_the_running_thread_and_other_threads_go_on():
    seen = []

    def step(state, action):
        seen.append(threading.get_ident())
        return spring(state, action)

    exe = environment(step).compile()
    results = {}

    def run(k):
        results[k] = exe.run(T=30)["state"]

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for k in range(4):
        np.testing.assert_allclose(results[k], simulate(30), rtol=1e-5)
    assert set(seen) == {th.ident for th in threads}, "each run calls on its own thread"
    assert len(seen) == 4 * 29


@pytest.mark.parametrize("name", ["Program.call", "rl.discounted_returns", "rl.gae", "rl.normal"])
def test_docstring_examples_run(name):
    import doctest

    target = tempo
    for part in name.split("."):
        target = getattr(target, part)
    text = target.__doc__
    assert text and ">>>" in text, f"{name} has no example"
    test = doctest.DocTestParser().get_doctest(text, {"tempo": tempo, "np": np}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_the_readmes_call_example_runs():
    import pathlib
    import re

    readme = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()
    [block] = [b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "p.call(" in b]
    scope = {}
    exec(compile(block.replace('p.compile().run(T=3)["s"]', 'out = p.compile().run(T=3)["s"]'), "README.md", "exec"),
         scope)
    assert scope["out"].tolist() == [[0.0, 0.0], [1.0, 1.0], [1.5, 1.5]]


def batch_program(batched):
    """``s[b, t] = step(s[b, t-1])`` over a batch ``b`` of independent
    points; returns the program and the shapes ``step`` was called with."""
    shapes = []

    def step(state, k):
        shapes.append(state.shape)
        assert k.shape == state.shape[:-1], "the shared argument, one per row"
        return state * np.float32(2.0) + k[..., None]

    p = tempo.Program()
    b = p.dim("b", "B")
    t = p.dim("t", "T")
    x = p.input("x", [b], [2])
    s = p.tensor("s", [b, t], [2])
    p.define(s, t == 0, x[b])
    p.otherwise(s, p.call("step", step, [s[b, t - 1], tempo.constant(1.0)], [2], batched=batched))
    p.output(s)
    return p, shapes


def test_a_batched_call_gets_the_whole_batch_where_the_compiler_batches_it():
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    p, shapes = batch_program(True)
    batches = p.compile(bounds={"B": 3, "T": 4}).run(B=3, T=4, x=x)["s"]
    assert shapes == [(3, 2)] * 3, "one call per step with the batch's three points"
    shapes.clear()
    per_point = p.compile().run(B=3, T=4, x=x)["s"]  # no bound values: b stays a loop
    assert shapes == [(1, 2)] * 9, "a batch of one per point"
    shapes.clear()
    interpreted = p.interpret(B=3, T=4, x=x)["s"]
    assert shapes == [(1, 2)] * 9
    np.testing.assert_array_equal(batches, per_point)
    np.testing.assert_array_equal(batches, interpreted)
    np.testing.assert_array_equal(batches[:, 1], x * 2 + 1)
    # Compiled for B = 3, a run with another batch is refused.
    with pytest.raises(tempo.TempoError):
        p.compile(bounds={"B": 3, "T": 4}).run(B=4, T=4, x=np.zeros((4, 2), np.float32))
    # Without batched=True the function gets single points, one call
    # each, and b stays a loop.
    q, shapes = batch_program(False)
    single = q.compile(bounds={"B": 3, "T": 4}).run(B=3, T=4, x=x)["s"]
    assert shapes == [(2,)] * 9
    np.testing.assert_array_equal(single, batches)


def test_a_batched_call_needs_an_argument():
    p = tempo.Program()
    t = p.dim("t", "T")
    with pytest.raises(tempo.TempoError, match="takes an argument"):
        p.call("f", lambda: np.zeros((1, 2), np.float32), [], [2], batched=True)
    x = p.tensor("x", [t], [2])
    p.call("g", spring, [x[t - 1], x[t - 1]], [2], batched=True)
    with pytest.raises(tempo.TempoError, match="batched=True where it was called before"):
        p.call("g", spring, [x[t - 1], x[t - 1]], [2])
