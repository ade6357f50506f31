"""Scaling: conversion of long generated functions and tracing of large graphs.

Issue 7 asks that converting a 2,000-line function and tracing a 100,000-op graph
complete, with time and memory growing about linearly. This script measures both at
several sizes and fits `cost ~ size ** k` (least squares on logs); k near 1 is linear.

    python benchmarks/scale.py [--quick]
"""
import gc
import importlib.util
import math
import os
import sys
import tempfile
import time
import tracemalloc

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import runtime as rt  # noqa: E402
from autograph import conversion  # noqa: E402

BLOCK = """\
    a{i} = x * {i} + y
    if a{i} > {i}:
        y = y + 1
    else:
        y = y - 1
    for j{i} in range(3):
        if j{i} == 1:
            continue
        y = y + j{i}
    while y > 1000:
        y = y // 2
"""
BLOCK_LINES = BLOCK.count("\n")


def long_function(lines):
    """A function of about `lines` lines: repeated blocks of if / for / while."""
    blocks = max(1, (lines - 3) // BLOCK_LINES)
    body = "".join(BLOCK.format(i=i) for i in range(blocks))
    return f"def big(x):\n    y = 0\n{body}    return y\n", blocks * BLOCK_LINES + 3


def load(source):
    fd, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(f"scale_{abs(hash(source))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.big, path


def measure(fn):
    """(seconds, peak bytes) of one call."""
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return seconds, peak


def fit_exponent(sizes, costs):
    xs = [math.log(s) for s in sizes]
    ys = [math.log(c) for c in costs]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def conversion_scaling(sizes):
    rows = []
    for lines in sizes:
        source, actual = long_function(lines)
        fn, path = load(source)
        options = conversion.ConversionOptions()
        seconds, peak = measure(lambda: conversion.convert(fn, options))
        rows.append((actual, seconds, peak))
        os.unlink(path)
    return rows


def trace_scaling(sizes):
    rows = []
    for ops in sizes:
        def chain(x, n=ops // 2):
            for _ in range(n):         # Python loop: unrolled while tracing
                x = x * 1.0001 + 0.5
            return x
        f = rt.function(chain)
        seconds, peak = measure(lambda: f.get_concrete_function(rt.constant(1.0)))
        count = len(f.get_concrete_function(rt.constant(1.0)).graph.ops)
        rows.append((count, seconds, peak))
    return rows


def report(title, unit, rows):
    print(f"\n{title}")
    print(f"| {unit} | time | peak memory |")
    print("|---|---|---|")
    for size, seconds, peak in rows:
        print(f"| {size} | {seconds * 1e3:.0f} ms | {peak / 2**20:.1f} MB |")
    sizes = [r[0] for r in rows]
    print(f"fitted exponent: time {fit_exponent(sizes, [r[1] for r in rows]):.2f}, "
          f"memory {fit_exponent(sizes, [r[2] for r in rows]):.2f}")


def main(argv):
    quick = "--quick" in argv
    sys.setrecursionlimit(10000)
    line_sizes = [250, 500, 1000] if quick else [250, 500, 1000, 2000]
    op_sizes = [12_500, 25_000, 50_000] if quick else [12_500, 25_000, 50_000, 100_000]
    report("Converting a long function", "lines", conversion_scaling(line_sizes))
    report("Tracing a large graph", "operations", trace_scaling(op_sizes))


if __name__ == "__main__":
    main(sys.argv[1:])
