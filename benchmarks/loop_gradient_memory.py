"""Peak memory of a long loop's gradient: 500 steps over 64K-element float32 vectors.

The gradient needs forward values of every iteration, which the forward loop collects.
Pruning drops collections no gradient reads; rematerialization (opt-in) recomputes
cheap values from the loop variable instead of collecting them; under a memory budget
(`rt.function(..., memory_budget=)`) it recomputes the cheapest ones until the planned
peak fits. Peak memory and time per call at each budget are reported, no target.
"""
import warnings

import numpy as np

import runtime as rt
from harness import Report, format_value, main, medians, peak_bytes

STEPS, SIZE = 500, 1 << 16
BUDGETS_MB = (900, 700, 500, 300, 100)


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
    calls = {}
    for name, passes in [("graph, no passes", False), ("graph, default passes", True),
                         ("graph, + rematerialization",
                          rt.config.DEFAULT_PASSES | {"rematerialization"})]:
        with rt.config.options(optimizations=passes):
            report.add(name, peak_bytes(lambda: f(x, w)))
        calls[name] = (lambda: f(x, w), lambda p=passes: rt.config.options(optimizations=p))
    reference = [t.numpy() for t in rt.nest.flatten(f(x, w))]
    for budget in BUDGETS_MB:
        name = f"graph, memory budget {budget} MB"
        g = rt.function(loop_gradients, memory_budget=budget * 2**20)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            report.add(name, peak_bytes(lambda g=g: g(x, w)))
        if caught:
            report.notes.append(f"{name}: {caught[0].message}")
        assert all(np.array_equal(a, b) for a, b in zip(
            [t.numpy() for t in rt.nest.flatten(g(x, w))], reference))
        calls[name] = lambda g=g: g(x, w)
    times = medians(calls, repeat=3 if quick else 7, number=1)
    report.notes.append("time per call: " + "; ".join(
        f"{name.removeprefix('graph, ')} {format_value(t, 's')}" for name, t in times.items()))
    report.notes.append(f"one vector: {SIZE * 4 / 2**20:.2f} MB; one collection of it over "
                        f"the loop: {STEPS * SIZE * 4 / 2**20:.0f} MB")
    return report


if __name__ == "__main__":
    main(measure)
