"""Per-op overhead of graph execution, next to numpy's own per-call cost.

A traced graph of 200 dependent adds (`x = x + c`), on a scalar and on a 1-element
array: the graph's time per op against numpy doing the same adds in a Python loop.
"""
import numpy as np

import runtime as rt
from harness import Report, executor_variants, main, medians, optional

OPS = 200


def adds(x, c):
    for _ in range(OPS):
        x = x + c
    return x


def adds_numpy(x, c):
    for _ in range(OPS):
        x = x + c
    return x


def framework_variants(value):
    variants = {}
    tf = optional("tensorflow")
    if tf is not None:
        f = tf.function(adds)
        x, c = tf.constant(value), tf.constant(value)
        variants["tf.function, per op"] = lambda: f(x, c)
    return variants


def measure(quick=False):
    report = Report(f"per-op overhead ({OPS} dependent adds)", "reported, not a target")
    graph = rt.function(adds)
    for label, value in [("scalar", np.float32(1.0)), ("1-element array", np.ones(1, np.float32))]:
        x, c = rt.constant(value), rt.constant(value)
        variants = {f"{name}, {label}": v for name, v in
                    executor_variants(lambda x=x, c=c: graph(x, c)).items()}
        variants[f"numpy, {label}"] = lambda value=value: adds_numpy(value, value)
        if label == "scalar":
            variants.update(framework_variants(value))
        for name, seconds in medians(variants, repeat=5 if quick else 15).items():
            report.add(name + ", per op", seconds / OPS)
    report.baseline = "numpy, scalar, per op"
    return report


if __name__ == "__main__":
    main(measure)
