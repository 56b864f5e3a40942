"""What the baselines of bench/dynamic (baselines.py, birnn.py,
nested_rnn.py) share: their common command-line options and timing a
batch's run after a warm-up."""

import statistics
import time


def add_run_options(parser):
    """--repeat, --threads (PyTorch), --no-autobatch (DyNet), --check."""
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-autobatch", action="store_true")
    parser.add_argument("--check", action="store_true")


def timed(run, repeat):
    """Runs `run` once to warm up, then `repeat` times timed: the last
    result and the JSON fields {"ms_per_batch_median", "ms_all"}."""
    result = run()
    ms = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        ms.append((time.perf_counter() - start) * 1e3)
    return result, {"ms_per_batch_median": round(statistics.median(ms), 3), "ms_all": [round(t, 3) for t in ms]}
