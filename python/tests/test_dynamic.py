"""Dynamic structure from Python: reads through data (a tree's children
read at the numbers an input gives, compiled depth by depth) and a
data-dependent stop (a loop that ends where a condition first holds),
compiled and interpreted alike; bad data is a located error."""

import numpy as np
import pytest

import tempo


def tree_sum():
    p = tempo.Program()
    n = p.dim("n", "N")
    leaves = p.dim("leaf", "NL")
    x = p.input("x", [n], [])
    left = p.input("left", [n], [], "int64")
    right = p.input("right", [n], [], "int64")
    s = p.tensor("s", [n], [])
    p.define(s, n < leaves.bound, x[n])
    p.otherwise(s, s[left[n]] * 2.0 + s[right[n]] + x[n])
    p.output(s)
    return p


def test_reads_through_data_follow_a_tree_numbered_out_of_order():
    # Leaves 0..3; 6 = (5, 4), 4 = (2, 3), 5 = (0, 1): node 4's parent is 6.
    x = np.arange(7, dtype=np.float32)
    left = np.array([0, 0, 0, 0, 2, 0, 5], dtype=np.int64)
    right = np.array([0, 0, 0, 0, 3, 1, 4], dtype=np.int64)
    exe = tree_sum().compile()
    out = exe.run(N=7, NL=4, x=x, left=left, right=right)["s"]
    interpreted = tree_sum().interpret(N=7, NL=4, x=x, left=left, right=right)["s"]
    assert np.array_equal(out, interpreted)
    s = list(x)
    for node in (4, 5, 6):
        s[node] = s[left[node]] * 2 + s[right[node]] + x[node]
    assert out.tolist() == s


def test_a_cycle_in_the_data_is_an_error_at_the_read():
    left = np.array([0, 0, 0, 0, 6, 0, 5], dtype=np.int64)
    right = np.array([0, 0, 0, 0, 3, 1, 4], dtype=np.int64)
    exe = tree_sum().compile()
    with pytest.raises(tempo.TempoError, match=r"test_dynamic.py:\d+:\d+: error: point \d needs itself"):
        exe.run(N=7, NL=4, x=np.zeros(7, np.float32), left=left, right=right)


def doubling_until(limit):
    p = tempo.Program()
    t = p.dim("t", "T")
    x = p.tensor("x", [t], [], "int64")
    done = p.tensor("done", [t], [], "bool")
    p.define(x, t == 0, t.position("int64") + 1)
    p.otherwise(x, x[t - 1] * 2)
    p.define(done, t >= 0, x[t] >= limit)
    p.stop(done, t)
    p.output(x)
    return p


def test_a_stop_ends_the_dimension_where_its_condition_first_holds():
    exe = doubling_until(100).compile()
    assert exe.run(T=20)["x"].tolist() == [1, 2, 4, 8, 16, 32, 64, 128]
    assert exe.run(T=5)["x"].tolist() == [1, 2, 4, 8, 16]
    assert doubling_until(100).interpret(T=20)["x"].tolist() == [1, 2, 4, 8, 16, 32, 64, 128]


def test_a_ragged_stop_ends_each_sequence_at_its_own_length():
    # x[b, t] doubles from b + 1 until it reaches 100: lengths 8, 7, 7, 6;
    # last[b] reads x[b, T - 1], each b's own last point.
    p = tempo.Program()
    b = p.dim("b", "B")
    t = p.dim("t", "T")
    x = p.tensor("x", [b, t], [], "int64")
    done = p.tensor("done", [b, t], [], "bool")
    last = p.tensor("last", [b], [], "int64")
    p.define(x, t == 0, b.position("int64") + 1)
    p.otherwise(x, x[b, t - 1] * 2)
    p.define(done, t >= 0, x[b, t] >= 100)
    p.stop(done, t)
    p.define(last, b >= 0, x[b, t.bound - 1])
    p.output(x)
    p.output(last)
    expected = [[1, 2, 4, 8, 16, 32, 64, 128], [2, 4, 8, 16, 32, 64, 128, 0],
                [3, 6, 12, 24, 48, 96, 192, 0], [4, 8, 16, 32, 64, 128, 0, 0]]
    exe = p.compile()
    for out in (exe.run(B=4, T=20), p.interpret(B=4, T=20)):
        assert out["x"].tolist() == expected
        assert out["last"].tolist() == [128, 128, 192, 128]
    assert exe.stop_lengths == [[8, 7, 7, 6]]
