"""examples/python/gpt.py builds the decoder of examples/gpt.rs: on the same
seeded weights its compiled output is the Rust example's program's (run by
tempo-run), and the interpreter's."""

import importlib.util
import json
import pathlib
import subprocess

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_gpt():
    spec = importlib.util.spec_from_file_location("gpt", ROOT / "examples" / "python" / "gpt.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_python_decoder_is_the_rust_one():
    gpt = load_gpt()
    layers, heads, width, steps = 2, 2, 16, 5
    program = gpt.build(layers, heads, width)
    exe = program.compile()
    ours = exe.run(T=steps, L=layers, seed=7)["y"]
    assert ours.shape == (steps, 1, width)
    again = exe.run(T=steps, L=layers, seed=7)["y"]
    assert np.array_equal(ours, again)
    assert np.array_equal(ours, program.interpret(T=steps, L=layers, seed=7)["y"])
    # The Rust example's program, through tempo-run, on the same seeded inputs.
    release = ROOT / "target" / "release"
    mlir = subprocess.run(
        [release / "examples" / "gpt", "--layers", str(layers), "--heads", str(heads), "--width", str(width), "--mlir"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    source = ROOT / "target" / "gpt-from-rust.mlir"
    source.write_text(mlir)
    run = subprocess.run(
        [release / "tempo-run", source, "--bound", f"T={steps}", "--bound", f"L={layers}", "--seed", "7", "--format", "json"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    theirs = np.array(json.loads(run.splitlines()[0])["values"], dtype=np.float32).reshape(ours.shape)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
