"""Conversion and tracing caches are thread-safe: many threads calling the same and
different converted functions with different signatures get correct results, and each
function is converted once and each signature traced once."""
import threading

import numpy as np

import autograph as ag
import runtime as rt
from autograph import conversion


def scaled_sum(v, k):
    total = 0.0
    for x in v:
        if x > 0:
            total += x * k
    return total


def countdown(n):
    steps = 0
    while n > 0:
        n -= 1
        steps += 1
    return steps


def test_eight_threads_same_and_different_functions():
    f, g = ag.convert(scaled_sum), ag.convert(countdown)
    inputs = [np.arange(n, dtype=np.float32) - 2 for n in (3, 5)]
    errors, results = [], []

    def work(i):
        try:
            for _ in range(5):
                v = inputs[i % 2]
                results.append(("f", len(v), i % 3, float(f(v, i % 3))))
                results.append(("g", i, int(g(rt.constant(i)))))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for item in results:
        if item[0] == "f":
            _, n, k, value = item
            v = inputs[0] if n == 3 else inputs[1]
            assert value == float(scaled_sum(v, k))
        else:
            assert item[2] == item[1]
    # one trace per (shape, Python k) signature, one for countdown's scalar signature
    assert f.experimental_get_tracing_count() == 2 * 3
    assert g.experimental_get_tracing_count() == 1
    converted = [k for k in conversion._cache if k[0] in (scaled_sum.__code__,
                                                          countdown.__code__)]
    assert len(converted) == 2
