"""Threads and the GIL (issue 43): ``Executable.run`` releases the GIL
while the compiled code runs, so other Python threads go on; runs of one
executable from several threads take turns and each gets its own, correct
results; separate executables run at the same time."""

import threading
import time

import numpy as np

import tempo
from gil import steps_in_the_middle


def recurrence(width=128):
    """``h[t] = tanh(h[t-1] @ w + x[t])``: a run long enough to watch."""
    p = tempo.Program()
    t = p.dim("t", "T")
    w = p.input("w", [], [width, width])
    x = p.input("x", [t], [width])
    h = p.tensor("h", [t], [width])
    p.define(h, t == 0, x[t].tanh())
    p.otherwise(h, (h[t - 1] @ w[()] + x[t]).tanh())
    p.output(h)
    return p


def inputs(seed, steps, width=128):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((width, width)) / np.sqrt(width)).astype(np.float32)
    return dict(w=w, x=rng.standard_normal((steps, width)).astype(np.float32))


def test_other_threads_run_python_while_compiled_code_runs():
    exe = recurrence().compile(threads=1)
    steps = 2000
    args = inputs(0, steps)
    exe.run(T=steps, **args)  # warm
    start = time.perf_counter()
    exe.run(T=steps, **args)
    alone = time.perf_counter() - start
    # Make the run long enough to count on (at least about 0.2 s).
    steps = int(steps * max(1.0, 0.2 / max(alone, 1e-6)))
    args = inputs(0, steps)
    _, during, seconds = steps_in_the_middle(lambda: exe.run(T=steps, **args), every=1000)
    assert during >= 10, f"the other thread took {during} thousand steps in the middle of a {seconds:.3f} s run"


def test_two_threads_running_one_executable_both_get_their_results():
    exe = recurrence(32).compile()
    want = {k: exe.run(T=300, **inputs(k, 300, 32))["h"] for k in range(4)}
    got = {k: [] for k in range(4)}
    errors = []

    def worker(k):
        try:
            for _ in range(5):
                got[k].append(exe.run(T=300, **inputs(k, 300, 32))["h"])
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors, errors
    for k in range(4):
        assert len(got[k]) == 5
        for out in got[k]:
            np.testing.assert_array_equal(out, want[k])


def test_separate_executables_run_at_the_same_time():
    # Two executables of one program: each run takes about `alone`; run
    # at once from two threads they overlap (the GIL is not held), so the
    # pair takes less than twice as long whenever two cores are free. The
    # check is only that both finish with their own results.
    p = recurrence(64)
    a, b = p.compile(threads=1), p.compile(threads=1)
    steps = 500
    want_a = a.run(T=steps, **inputs(1, steps, 64))["h"]
    want_b = b.run(T=steps, **inputs(2, steps, 64))["h"]
    out = {}
    ta = threading.Thread(target=lambda: out.__setitem__("a", a.run(T=steps, **inputs(1, steps, 64))["h"]))
    tb = threading.Thread(target=lambda: out.__setitem__("b", b.run(T=steps, **inputs(2, steps, 64))["h"]))
    ta.start()
    tb.start()
    ta.join()
    tb.join()
    np.testing.assert_array_equal(out["a"], want_a)
    np.testing.assert_array_equal(out["b"], want_b)
