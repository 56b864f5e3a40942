"""Data-parallel training from Python (issue 44): `Program.data_parallel`
splits a batch over the processes of an `mpirun` launch and makes every
gradient the processes' mean (the Rust API's, one all-reduce per
iteration). In one process it is the whole batch and changes nothing;
under `mpirun -np 2` (where the launcher is installed) two processes, each
with half the batch, end with the same weights as one process with all of
it."""

import os
import pathlib
import shutil
import subprocess
import sys

import numpy as np
import pytest

import tempo

BATCH, ITERATIONS = 8, 5

# The program each process runs: a linear model trained by SGD over
# iterations `i`, the loss the mean over this process's rows of the batch.
SCRIPT = r"""
import sys
import numpy as np
import tempo

def train(parallel, batch, iterations):
    p = tempo.Program()
    shard = p.data_parallel(batch) if parallel else None
    rows = shard.len if parallel else batch
    start = shard.start if parallel else 0
    i = p.dim("i", "I")
    x = p.input("x", [i], [rows, 3], "float64")
    y = p.input("y", [i], [rows], "float64")
    w = p.tensor("w", [i], [3], "float64")
    loss = p.tensor("loss", [i], [], "float64")
    err = x[i] @ w[i] - y[i]
    p.otherwise(loss, (err * err).mean(0))
    g = p.grad("g", loss, w)
    tempo.optim.sgd(p, w, g, i, 0.0, lr=0.1)
    p.output(w)
    rng = np.random.default_rng(7)
    xs = rng.standard_normal((iterations, batch, 3))
    ys = xs @ np.array([1.0, -2.0, 0.5])
    out = p.compile().run(I=iterations, x=xs[:, start:start + rows], y=ys[:, start:start + rows])
    return out["w"][-1], shard

if __name__ == "__main__":
    w, shard = train(sys.argv[1] == "parallel", int(sys.argv[2]), int(sys.argv[3]))
    line = f"{shard.rank if shard else 0} " + " ".join(repr(float(v)) for v in w) + "\n"
    if len(sys.argv) > 4:
        # One file per process: the launcher interleaves the processes'
        # standard outputs character by character.
        with open(f"{sys.argv[4]}/rank{shard.rank if shard else 0}.txt", "w") as f:
            f.write(line)
    else:
        sys.stdout.write(line)
"""


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("parallel") / "train.py"
    path.write_text(SCRIPT)
    return path


def weights(output):
    """Rank -> final weights, from the script's lines."""
    out = {}
    for line in output.strip().splitlines():
        rank, *values = line.split()
        out[int(rank)] = np.array([float(v) for v in values])
    return out


def test_one_process_is_the_whole_batch():
    p = tempo.Program()
    shard = p.data_parallel(BATCH)
    assert (shard.rank, shard.processes, shard.start, shard.len) == (0, 1, 0, BATCH)
    assert repr(shard) == f"Shard(rank=0, processes=1, start=0, len={BATCH})"
    assert tempo.processes() == (0, 1)
    tempo.barrier()


def test_a_batch_that_does_not_split_is_refused():
    with pytest.raises(tempo.TempoError) as e:
        tempo.Program().data_parallel(0)
    assert e.value.op == "Program.data_parallel"
    assert "does not split evenly" in str(e.value)


def test_the_gradient_is_unchanged_in_one_process(script):
    run = lambda mode: subprocess.run(  # noqa: E731
        [sys.executable, str(script), mode, str(BATCH), str(ITERATIONS)],
        capture_output=True, text=True, check=True,
    ).stdout
    np.testing.assert_array_equal(weights(run("parallel"))[0], weights(run("serial"))[0])


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no MPI launcher (tools/setup.sh installs OpenMPI)")
def test_two_processes_end_with_the_whole_batchs_weights(script, tmp_path):
    launch = ["mpirun", "-np", "2", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]
    env = dict(os.environ, TEMPO_MPI_TIMEOUT="60")
    done = subprocess.run(
        launch + [sys.executable, str(script), "parallel", str(BATCH), str(ITERATIONS), str(tmp_path)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = weights("".join(path.read_text() for path in sorted(tmp_path.glob("rank*.txt"))))
    assert sorted(ranks) == [0, 1]
    np.testing.assert_array_equal(ranks[0], ranks[1])
    serial = subprocess.run(
        [sys.executable, str(script), "serial", str(BATCH), str(ITERATIONS)],
        capture_output=True, text=True, check=True,
    ).stdout
    # The mean of the two halves' mean gradients is the batch's mean
    # gradient, summed in another order.
    np.testing.assert_allclose(ranks[0], weights(serial)[0], rtol=1e-12, atol=1e-12)
