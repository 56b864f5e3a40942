"""examples/python/ppo.py (issue 43): reinforcement learning from Python
with the environment stepped by a Python function. The trivial
environment's NumPy dynamics give the Rust example's returns on the same
seed; CartPole (Gymnasium's ``CartPole-v1``) runs deterministically, its
ended episodes counted alike by the program and the environments, and
(``tools/test.sh --long``, ``TEMPO_LONG=1``) learns past a mean return of
195."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "ppo.py"
RUST_PPO = ROOT / "target" / "release" / "examples" / "ppo"
LINE = re.compile(r"^iteration (\d+) mean_return (-?[\d.]+) seconds ([\d.]+)$")


def load():
    spec = importlib.util.spec_from_file_location("ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def returns_of(text):
    lines = [LINE.match(line) for line in text.strip().splitlines()]
    assert lines and all(lines), text
    assert [int(m.group(1)) for m in lines] == list(range(len(lines)))
    return [float(m.group(2)) for m in lines]


def run_example(args, cwd):
    p = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, cwd=cwd, timeout=600)
    assert p.returncode == 0, p.stderr
    assert re.search(r"ppo.py: compile [\d.]+ s", p.stderr), p.stderr
    return returns_of(p.stdout)


SMALL = ["--envs", "3", "--steps", "12", "--iterations", "3", "--width", "8", "--layers", "1", "--obs", "1,2,2"]


@pytest.mark.parametrize("objective", [["--objective", "a2c"], ["--objective", "ppo", "--epochs", "2"]])
def test_trivial_numpy_environment_gives_the_rust_examples_returns(objective, tmp_path):
    if not RUST_PPO.exists():
        pytest.fail(f"{RUST_PPO} is missing: cargo build --release --examples")
    ours = run_example(["--env", "trivial", *SMALL, *objective], cwd=tmp_path)
    rust = subprocess.run([str(RUST_PPO), "--env", "trivial", *SMALL, *objective], capture_output=True, text=True,
                          timeout=600)
    assert rust.returncode == 0, rust.stderr
    assert ours == returns_of(rust.stdout), "the same program, the environment in NumPy"


def test_cartpole_runs_deterministically_from_any_directory(tmp_path):
    pytest.importorskip("gymnasium", reason="python/build.sh installs gymnasium into the test venv")
    args = ["--env", "cartpole", "--envs", "4", "--steps", "16", "--iterations", "4", "--width", "16", "--seed", "3"]
    first = run_example(args, cwd=tmp_path)
    assert first == run_example(args, cwd=tmp_path), "the same seeds give the same returns"
    assert all(r > 5 for r in first[1:]), first  # episodes of a random policy last about 20 steps
    other = run_example(args[:-1] + ["4"], cwd=tmp_path)
    assert other != first, "another seed, other episodes"


def test_cartpole_counts_every_episode_the_environments_ended():
    pytest.importorskip("gymnasium")
    ppo = load()
    c = ppo.parse(["--env", "cartpole", "--envs", "2", "--steps", "40", "--iterations", "3", "--width", "8",
                   "--layers", "1", "--objective", "ppo", "--epochs", "2"])
    returns, seconds, _ = ppo.train(c)  # raises if the program's count differs
    assert len(returns) == 3 and len(seconds) == 3 and all(s > 0 for s in seconds)


def test_bad_flags_exit_with_a_message(tmp_path):
    for args, message in [(["--envs", "0"], "must be positive"), (["--obs", "1,2"], "--obs takes C,H,W"),
                          (["--env", "mountaincar"], "invalid choice")]:
        p = subprocess.run([sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, cwd=tmp_path)
        assert p.returncode == 2 and message in p.stderr, p.stderr


@pytest.mark.skipif(not os.environ.get("TEMPO_LONG"), reason="long: a learning run (tools/test.sh --long)")
def test_cartpole_learns_past_195(tmp_path):
    pytest.importorskip("gymnasium")
    returns = run_example(["--env", "cartpole", "--seed", "1", "--fast-math"], cwd=tmp_path)
    best = max(returns[:41])
    assert best > 195, f"mean returns by iteration 40: {returns[:41]}"
