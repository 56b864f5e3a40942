"""A helper of the GIL tests: how many steps another Python thread takes
in the middle of a call."""

import threading
import time


def steps_in_the_middle(call, every=100):
    """Runs ``call()`` while another thread counts, time-stamping every
    ``every`` steps; returns ``(call's result, stamps in the middle half of
    the call, the call's duration)``. Holding the GIL for the whole call,
    the other thread takes no step in its middle half (it may before the
    call takes the GIL and after it returns); released, it steps all along."""
    stamps = []
    stop = threading.Event()

    def spin():
        k = 0
        while not stop.is_set():
            k += 1
            if k % every == 0:
                stamps.append(time.perf_counter())

    spinner = threading.Thread(target=spin)
    spinner.start()
    try:
        time.sleep(0.01)
        start = time.perf_counter()
        result = call()
        end = time.perf_counter()
    finally:
        stop.set()
        spinner.join()
    quarter = (end - start) / 4
    middle = sum(1 for s in stamps if start + quarter < s < end - quarter)
    return result, middle, end - start
