"""Cold conversion cost of a 50-line function, as a multiple of `ast.parse` + `compile`.

Target (issue 3): at most 25x; TensorFlow's AutoGraph measures about 600x here.
Both are timed side by side in this process; medians of REPEATS runs.

    python benchmarks/conversion_cost.py
"""
import ast
import os
import statistics
import sys
import tempfile
import time
import importlib.util

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from autograph import conversion  # noqa: E402

REPEATS = 30

SOURCE = '''
def model_step(x, y, n, w, scale):
    total = 0.0
    count = 0
    best = -1.0
    i = 0
    while i < n:
        v = x[i] * w + y[i]
        if v > best:
            best = v
        elif v < 0:
            v = -v
        else:
            v = v * scale
        if count > 100:
            break
        total += v
        count += 1
        i += 1
    for j in range(n):
        if j % 2 == 0:
            continue
        total = total - x[j] * 0.5
        if total < -1000:
            return total, best
    acc = []
    for k in range(3):
        acc.append(total * k)
    mean = total / count if count > 0 else 0.0
    flag = best > 0 and mean > 0 or count == 0
    if not flag:
        total = abs(total)
    z = max(total, best)
    q = min(z, 1e6)
    assert q <= 1e6, "q too large"
    r = q * 2
    r = r - 1
    r = r + best
    s = r / 3
    t = s * s
    u = t - s
    if u > t:
        u = t
    while u > 100:
        u = u / 2
    return u, acc, flag
'''


def _load_function():
    fd, path = tempfile.mkstemp(suffix=".py")
    with os.fdopen(fd, "w") as f:
        f.write(SOURCE)
    spec = importlib.util.spec_from_file_location("bench_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model_step, path


def _median_time(fn, repeats=REPEATS):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    fn, path = _load_function()
    lines = len(SOURCE.strip().splitlines())
    options = conversion.ConversionOptions()

    def baseline():
        compile(ast.parse(SOURCE), path, "exec")

    def convert_cold():
        conversion._cache.clear()
        conversion._by_function.clear()
        conversion.convert(fn, options)

    convert_cold()                       # warm imports
    base = _median_time(baseline)
    cold = _median_time(convert_cold)
    print(f"function of {lines} lines")
    print(f"ast.parse + compile : {base * 1e3:8.3f} ms (median of {REPEATS})")
    print(f"cold conversion     : {cold * 1e3:8.3f} ms (median of {REPEATS})")
    print(f"ratio               : {cold / base:8.1f}x   (target <= 25x)")
    os.unlink(path)


if __name__ == "__main__":
    main()
