"""Two independent chains of four 1024x1024 float32 matmuls in one graph.

The `parallel` pass marks the matmuls async; the fast executor runs the two chains
on a thread pool at once (numpy releases the GIL in matmul). Target: faster than
the same graph run sequentially (one inter-op thread).

A multithreaded BLAS already spreads one matmul over every core: two at once then
compete for them. Run with OPENBLAS_NUM_THREADS=1 to see inter-op parallelism alone.
"""
import numpy as np

import runtime as rt
from harness import Report, main, medians

SIZE, DEPTH = 1024, 4


def two_chains(x, y, w):
    for _ in range(DEPTH):
        x = rt.matmul(x, w)
        y = rt.matmul(y, w)
    return x, y


def two_chains_numpy(x, y, w):
    for _ in range(DEPTH):
        x = x @ w
    for _ in range(DEPTH):
        y = y @ w
    return x, y


def measure(quick=False):
    report = Report(f"two chains of {DEPTH} {SIZE}x{SIZE} matmuls",
                    "parallel graph faster than sequential graph", baseline="numpy")
    rng = np.random.default_rng(0)
    arrays = [rng.normal(size=(SIZE, SIZE)).astype(np.float32) / 32 for _ in range(3)]
    tensors = [rt.constant(a) for a in arrays]
    graph = rt.function(two_chains)
    for got, want in zip(graph(*tensors), two_chains_numpy(*arrays)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-3, atol=1e-3)
    variants = {
        "graph, 2 inter-op threads": (lambda: graph(*tensors),
                                      lambda: rt.config.options(inter_op_threads=2)),
        "graph, sequential": (lambda: graph(*tensors),
                              lambda: rt.config.options(inter_op_threads=1)),
        "numpy": lambda: two_chains_numpy(*arrays),
    }
    report.values.update(medians(variants, repeat=3 if quick else 9, number=1))
    speedup = report.values["graph, sequential"] / report.values["graph, 2 inter-op threads"]
    report.notes.append(f"sequential / parallel: {speedup:.2f}x")
    return report


if __name__ == "__main__":
    main(measure)
