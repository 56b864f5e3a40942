"""Errors a Python user understands (issue 43 item 7): a `TempoError`
carrying the file, line and column of the Python call that built the
offending op (or made the offending call), the op and a hint, for wrong
dtypes, shapes, missing bounds, numbers that are no integer, and arrays
that are not contiguous or not writable (those run); never a crash."""

import inspect
import sys
import time

import numpy as np
import pytest

import tempo
from gil import steps_in_the_middle

COLUMNS = sys.version_info >= (3, 11)


def here(offset=1):
    """The line `offset` lines below the caller's."""
    return inspect.currentframe().f_back.f_lineno + offset


def scaled(dtype="float32"):
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3], dtype)
    y = p.tensor("y", [t], [3], dtype)
    p.otherwise(y, x[t] * 2)
    p.output(y)
    return p


def test_an_op_refused_at_compile_time_carries_file_line_column_and_op():
    p = tempo.Program()
    t = p.dim("t", "T")
    a = p.input("a", [t], [3])
    b = p.input("b", [t], [4])
    y = p.tensor("y", [t], [3])
    line = here()
    p.otherwise(y, a[t] +   b[t])  # noqa: E222 (the column is that of `a[t] + b[t]`)
    p.output(y)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    e = error.value
    assert e.file == __file__ and e.line == line
    assert e.op == "add"
    assert e.message in str(e) and str(e).startswith(f"{__file__}:{line}:")
    if COLUMNS:
        assert e.column == 20  # p.otherwise(y, a[t] + ...: the `a` of the sum
        assert f"{__file__}:{line}:20: error:" in str(e)
    else:
        assert e.column is None


def test_the_column_is_the_call_that_built_the_op():
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3], "int64")
    y = p.tensor("y", [t], [3], "int64")
    line = here()
    value = x[t] + 1; bad = value.tanh()  # noqa: E702
    p.otherwise(y, bad)
    p.output(y)
    with pytest.raises(tempo.TempoError) as error:
        p.compile()
    assert error.value.line == line
    if COLUMNS:
        assert error.value.column == 29  # `value.tanh()`, not `x[t] + 1`


def test_wrong_dtype_names_the_run_with_a_hint():
    exe = scaled().compile()
    line = here(2)
    with pytest.raises(tempo.TempoError, match="float32") as error:
        exe.run(T=2, x=np.ones((2, 3)))
    e = error.value
    assert (e.file, e.line, e.op) == (__file__, line, "Executable.run")
    assert "astype(np.float32)" in e.hint and "hint:" in str(e)
    with pytest.raises(tempo.TempoError, match="float32") as error:
        scaled().interpret(T=2, x=np.ones((2, 3)))
    assert error.value.op == "Program.interpret" and "astype" in error.value.hint
    with pytest.raises(tempo.TempoError, match="not supported") as error:
        exe.run(T=2, x=np.ones((2, 3), np.float16))
    assert "float32, float64, int32, int64 or bool" in error.value.hint


def test_wrong_shapes_missing_and_bad_bounds():
    exe = scaled().compile()
    with pytest.raises(tempo.TempoError, match=r"float32\[2, 3\].*float32\[2, 4\]|must be") as error:
        exe.run(T=2, x=np.ones((2, 4), np.float32))
    assert "bound values first" in error.value.hint
    with pytest.raises(tempo.TempoError, match="missing bound T") as error:
        exe.run(x=np.ones((2, 3), np.float32))
    assert error.value.line == here(-1) and error.value.op == "Executable.run"
    with pytest.raises(tempo.TempoError, match="bound T is an int, not 2.5"):
        exe.run(T=2.5, x=np.ones((2, 3), np.float32))
    with pytest.raises(tempo.TempoError, match="bound T is an int"):
        scaled().interpret(T="2", x=np.ones((2, 3), np.float32))
    # A NumPy integer is an int.
    assert exe.run(T=np.int64(2), x=np.ones((2, 3), np.float32))["y"].shape == (2, 3)


def test_numbers_that_are_no_integer_are_refused_at_their_line():
    for number in (float("nan"), float("inf"), 2.5, 2.0**63):
        p = tempo.Program()
        t = p.dim("t", "T")
        n = p.tensor("n", [t], [2], "int64")
        line = here()
        p.otherwise(n, number)
        p.output(n)
        with pytest.raises(tempo.TempoError, match="is not a value of i64") as error:
            p.compile()
        assert error.value.line == line and error.value.op == "constant"
        assert "astype" in error.value.hint
    # The same for a number beside an integer value, and a constant.
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [2], "int32")
    n = p.tensor("n", [t], [2], "int32")
    line = here()
    p.otherwise(n, x[t] * 0.5 + tempo.constant(float("nan"), "int32"))
    p.output(n)
    with pytest.raises(tempo.TempoError, match="the number 0.5 is not a value of i32") as error:
        p.compile()
    assert error.value.line == line
    # Integral floats are exact: fine.
    p = tempo.Program()
    t = p.dim("t", "T")
    n = p.tensor("n", [t], [], "int64")
    p.otherwise(n, tempo.constant([3.0], "int64").sum() + 2.0)
    p.output(n)
    assert p.compile().run(T=2)["n"].tolist() == [5, 5]


def test_nan_cast_to_an_integer_in_the_program_is_zero_in_both_engines():
    # A value cast at run time (not a number of the program) saturates as
    # `llvm.fptosi.sat` does: NaN is 0, never a crash; compiled and
    # interpreted agree.
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [4])
    n = p.tensor("n", [t], [4], "int32")
    p.otherwise(n, x[t].astype("int32"))
    p.output(n)
    xs = np.array([[np.nan, np.inf, -np.inf, 2.7]], np.float32)
    want = [[0, 2**31 - 1, -(2**31), 2]]
    assert p.compile().run(T=1, x=xs)["n"].tolist() == want
    assert p.interpret(T=1, x=xs)["n"].tolist() == want


def test_non_contiguous_and_read_only_arrays_run():
    exe = scaled().compile()
    p = scaled()
    base = np.arange(24, dtype=np.float32).reshape(4, 6)
    strided = base[:, ::2]  # a view, every other column
    fortran = np.asfortranarray(base[:3, :3].copy())
    transposed = base[:3, :3].T
    read_only = np.arange(6, dtype=np.float32).reshape(2, 3)
    read_only.flags.writeable = False
    for array in (strided, fortran, transposed, read_only):
        assert not (array.flags.c_contiguous and array.flags.writeable)
        want = np.ascontiguousarray(array) * 2
        np.testing.assert_array_equal(exe.run(T=len(array), x=array)["y"], want)
        np.testing.assert_array_equal(p.interpret(T=len(array), x=array)["y"], want)
    # The inputs are not changed.
    np.testing.assert_array_equal(base, np.arange(24, dtype=np.float32).reshape(4, 6))


def test_a_panic_is_never_a_crash():
    # Arguments that are not what a method takes are Python's own errors.
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.input("x", [t], [3])
    with pytest.raises(TypeError):
        x[t] + "one"
    with pytest.raises(ValueError):
        x[t, t]
    with pytest.raises(ValueError):
        x[t].sum(axis=3)
    with pytest.raises(ValueError, match="unknown dtype"):
        p.input("z", [t], [3], "float16")


def test_interpret_releases_the_gil():
    """`Program.interpret` runs without the GIL: another thread counts
    while it runs (the program is built and interpreted on one thread: a
    Program belongs to its thread)."""
    width = 48
    p = tempo.Program()
    t = p.dim("t", "T")
    w = p.input("w", [], [width, width])
    h = p.tensor("h", [t], [width])
    p.define(h, t == 0, 1.0)
    p.otherwise(h, (h[t - 1] @ w[()]).tanh())
    p.output(h)
    weights = (np.eye(width) * 0.9).astype(np.float32)
    steps = 200
    start = time.perf_counter()
    p.interpret(T=steps, w=weights)
    alone = time.perf_counter() - start
    steps = int(steps * max(1.0, 0.2 / max(alone, 1e-6)))  # about 0.2 s at least
    out, middle, seconds = steps_in_the_middle(lambda: p.interpret(T=steps, w=weights))
    assert out["h"].shape == (steps, width)
    assert middle > 10, f"the other thread stepped {middle} hundred times in the middle of a {seconds:.3f} s run"
