"""Peak memory of a five-line elementwise chain over 16 MB float32 arrays.

Measured with tracemalloc (numpy reports its array memory to it): the most memory
held at once while one call runs, beyond its input. Target: graph within 1.25x of
hand-written numpy.
"""
import numpy as np

import runtime as rt
from harness import Report, main, peak_bytes

ELEMENTS = 4 * 2**20              # 16 MB of float32


def chain(x):
    a = x * 2.0
    b = a + 1.0
    c = rt.sin(b)
    d = c * c
    return d - 0.5


def chain_numpy(x):
    a = x * np.float32(2.0)
    b = a + np.float32(1.0)
    c = np.sin(b)
    d = c * c
    return d - np.float32(0.5)


def measure(quick=False):
    report = Report("elementwise chain, 16 MB float32: peak memory", "graph <= 1.25x numpy",
                    unit="bytes")
    x = np.linspace(-1, 1, ELEMENTS, dtype=np.float32)
    t = rt.constant(x)
    graph = rt.function(chain)
    np.testing.assert_array_equal(graph(t).numpy(), chain_numpy(x))
    for name, settings in [("graph (fast executor)", {"executor": "fast"}),
                           ("graph (plain executor)", {"executor": "plain"}),
                           ("graph (no passes)", {"optimizations": False})]:
        with rt.config.options(**settings):
            report.add(name, peak_bytes(lambda: graph(t)))
    report.add("eager", peak_bytes(lambda: chain(t)))
    report.add("numpy", peak_bytes(lambda: chain_numpy(x)))
    report.notes.append(f"the input alone: {x.nbytes / 2**20:.0f} MB (not counted)")
    return report


if __name__ == "__main__":
    main(measure)
