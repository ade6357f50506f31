"""Peak memory of a long loop's gradient: 500 steps over 64K-element float32 vectors.

The gradient needs forward values of every iteration, which the forward loop collects.
Pruning drops collections no gradient reads; rematerialization (opt-in) recomputes
cheap values from the loop variable instead of collecting them. Reported, no target.
"""
import numpy as np

import runtime as rt
from harness import Report, main, peak_bytes

STEPS, SIZE = 500, 1 << 16


def loop_gradients(x, w):
    def body(i, x):
        y = rt.tanh(x)
        return i + 1, x + y * rt.sin(x) * w
    _, out = rt.while_loop(lambda i, x: i < STEPS, body, [0, x])
    loss = rt.reduce_sum(out)
    return loss, rt.gradients(loss, [w, x])


def measure(quick=False):
    report = Report(f"gradient of a {STEPS}-step loop over {SIZE // 1024}K floats: peak memory",
                    "reported (rematerialization trades compute for memory)",
                    baseline="graph, no passes", unit="bytes")
    x = rt.constant(np.linspace(-1, 1, SIZE, dtype=np.float32))
    w = rt.constant(np.full(SIZE, 0.01, np.float32))
    f = rt.function(loop_gradients)
    for name, passes in [("graph, no passes", False), ("graph, default passes", True),
                         ("graph, + rematerialization",
                          rt.config.DEFAULT_PASSES | {"rematerialization"})]:
        with rt.config.options(optimizations=passes):
            report.add(name, peak_bytes(lambda: f(x, w)))
    report.notes.append(f"one vector: {SIZE * 4 / 2**20:.2f} MB; one collection of it over "
                        f"the loop: {STEPS * SIZE * 4 / 2**20:.0f} MB")
    return report


if __name__ == "__main__":
    main(measure)
