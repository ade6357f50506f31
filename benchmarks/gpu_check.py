"""The GPU check: the runtime on gpu:0 (CuPy) against numpy and raw CuPy, in one run.

    python benchmarks/gpu_check.py                        # on a machine with a GPU
    python benchmarks/gpu_check.py --device strict:0 --quick   # the same, on a stand-in

1. The op suite: each op of the public API, eagerly and traced, on the device against the
   same op on cpu:0 (rtol 1e-5; integers and bools exactly), and a gradient through a tape.
2. A 4096x4096 float32 matmul through the runtime against the library's own matmul on the
   same arrays (raw `cupy.matmul` on a GPU; target: >= 0.95 of raw's speed).
3. Per-op overhead on a 1-element tensor: 200 dependent adds in a graph (and eagerly)
   against the same adds in the raw library (target: graph <= 5 us above raw per op).
4. One training step of benchmarks/mlp.py's MLP on the device against the CPU.

Without a GPU it says that none was found, and why (CuPy missing, or no device it sees),
and exits 0. `--device` runs the checks on another device (the array_api_strict stand-in
tests the script itself on a CPU; `--quick` shrinks the sizes for that). It prints the
results as Markdown for benchmarks/README.md, and exits 1 when an op disagrees. It
finishes in well under ten minutes on a GPU.
"""
import argparse
import sys
import time

import numpy as np

import runtime as rt
from harness import machine, medians
from runtime import devices
from mlp import data, make_step

RTOL, ATOL = 1e-5, 1e-6


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="gpu:0")
    parser.add_argument("--quick", action="store_true", help="small sizes, few repeats")
    args = parser.parse_args()
    if args.device not in rt.config.list_devices():
        print(f"No GPU found: {args.device} is not a device of this machine "
              f"({', '.join(rt.config.list_devices())}): {_why_missing(args.device)}. "
              f"Nothing was measured.")
        return 0
    device = devices.get(args.device)
    print(f"{args.device} ({_describe(device)}); {machine()}")
    failures = check_ops(device)
    timings = [matmul_speed(device, args.quick), op_overhead(device, args.quick),
               training_step(device, args.quick)]
    print("\n| workload | variant | result | ratio |\n|---|---|---|---|")
    for rows in timings:
        for row in rows:
            print("| " + " | ".join(row) + " |")
    return 1 if failures else 0


# -- 1. the op suite --------------------------------------------------------------------------

def op_cases():
    """(name, fn, numpy arguments) for each op of the public API."""
    rng = np.random.default_rng(0)
    pos = rng.uniform(0.25, 3.0, (3, 4)).astype(np.float32)
    pos2 = rng.uniform(0.25, 3.0, (3, 4)).astype(np.float32)
    signed = rng.uniform(-3.0, 3.0, (3, 4)).astype(np.float32)
    ints = rng.integers(-5, 6, (3, 4)).astype(np.int32)
    nonzero = rng.integers(1, 6, (3, 4)).astype(np.int32)
    bools, bools2 = rng.random((3, 4)) < 0.5, rng.random((3, 4)) < 0.5
    matrix = rng.normal(size=(4, 5)).astype(np.float32)
    index = np.array([2, 0, 1], np.int32)
    labels = np.array([1, 0, 3], np.int32)
    hot = np.eye(4, dtype=np.float32)[labels]
    cases = [(name, getattr(rt, name), [pos]) for name in
             "sqrt log rsqrt log1p reciprocal".split()]
    cases += [(name, getattr(rt, name), [signed]) for name in
              "negative abs sign square exp sin cos tan tanh sigmoid relu softplus floor ceil "
              "round is_nan is_finite identity stop_gradient transpose".split()]
    cases += [(name, getattr(rt, name), [pos, pos2]) for name in
              "add subtract multiply divide floordiv mod pow maximum minimum equal not_equal "
              "less less_equal greater greater_equal squared_difference".split()]
    cases += [(f"{name} (int32)", getattr(rt, name), [ints, nonzero]) for name in
              "floordiv mod bitwise_and bitwise_or bitwise_xor".split()]
    cases += [(name, getattr(rt, name), [bools, bools2]) for name in
              "logical_and logical_or logical_xor".split()]
    cases += [("logical_not", rt.logical_not, [bools]), ("invert", rt.invert, [ints])]
    cases += [(name, lambda x, f=getattr(rt, name): f(x, axis=1), [pos]) for name in
              "reduce_sum reduce_mean reduce_max reduce_min reduce_prod".split()]
    cases += [(name, lambda x, f=getattr(rt, name): f(x, axis=0), [bools]) for name in
              "reduce_any reduce_all".split()]
    cases += [(name, lambda x, f=getattr(rt, name): f(x, axis=1), [signed]) for name in
              "argmax argmin".split()]
    cases += [
        ("matmul", rt.matmul, [pos, matrix]),
        ("cast", lambda x: rt.cast(x, rt.int32), [signed]),
        ("clip_by_value", lambda x: rt.clip_by_value(x, -1.0, 1.0), [signed]),
        ("add_n", lambda x, y: rt.add_n([x, y, x]), [pos, pos2]),
        ("where", rt.where, [bools, pos, pos2]),
        ("reshape", lambda x: rt.reshape(x, [4, 3]), [pos]),
        ("shape size rank", lambda x: (rt.shape(x), rt.size(x), rt.rank(x)), [pos]),
        ("expand_dims squeeze", lambda x: rt.squeeze(rt.expand_dims(x, 1)), [pos]),
        ("concat", lambda x, y: rt.concat([x, y], 0), [pos, pos2]),
        ("stack unstack", lambda x, y: rt.unstack(rt.stack([x, y], 1), axis=1), [pos, pos2]),
        ("split", lambda x: rt.split(x, 2, axis=1), [pos]),
        ("tile", lambda x: rt.tile(x, [2, 1]), [pos]),
        ("gather", lambda x, i: (rt.gather(x, i), rt.gather(x, i, axis=1)), [signed, index]),
        ("getitem", lambda x, i: (x[1:, ::2], x[i], x[:, -1]), [signed, index]),
        ("one_hot", lambda i: rt.one_hot(i, 4), [labels]),
        ("zeros ones fill range", lambda: (rt.zeros([2, 3]), rt.ones([2], rt.int32),
                                          rt.fill([2, 2], 3.0), rt.range(0, 10, 3)), []),
        ("zeros_like ones_like", lambda x: (rt.zeros_like(x), rt.ones_like(x)), [pos]),
        ("broadcast_to", lambda x: rt.broadcast_to(x[0], [3, 4]), [pos]),
        ("softmax log_softmax", lambda x: (rt.nn.softmax(x), rt.nn.log_softmax(x)), [signed]),
        ("softmax_cross_entropy", rt.nn.softmax_cross_entropy_with_logits, [hot, signed]),
        ("sparse_softmax_cross_entropy", rt.nn.sparse_softmax_cross_entropy_with_logits,
         [labels, signed]),
        ("sigmoid_cross_entropy", rt.nn.sigmoid_cross_entropy_with_logits,
         [np.float32(0.5) * (signed > 0), signed]),
        ("random (seeded)", lambda: (rt.random.uniform([3], seed=1), rt.random.normal([3], seed=2)),
         []),
        ("gradient", _gradient, [signed, matrix]),
    ]
    return cases


def _gradient(x, w):
    with rt.GradientTape() as tape:
        tape.watch(x)
        loss = rt.reduce_mean(rt.nn.softmax(rt.matmul(rt.tanh(x), w)) * x[:, :1])
    return tape.gradient(loss, x)


def check_ops(device):
    """Run the op suite; print one line per disagreement; returns their number."""
    failures = []
    cases = op_cases()
    for name, fn, args in cases:
        rt.random.set_seed(0)                 # (each run draws the same random numbers)
        with rt.device("cpu:0"):
            want = _values(fn(*[rt.constant(a) for a in args]))
        for mode in ("eager", "graph"):
            try:
                _check(name, fn, args, device, mode, want)
            except Exception as e:  # noqa: BLE001 - every disagreement is reported
                failures.append(f"{name} ({mode}): {type(e).__name__}: {e}".splitlines()[0])
    print(f"op suite on {device.name}: {2 * len(cases) - len(failures)} of {2 * len(cases)} "
          f"checks agree with cpu:0 (rtol {RTOL})")
    for line in failures:
        print(f"  FAILED {line}")
    return len(failures)


def _check(name, fn, args, device, mode, want):
    rt.random.set_seed(0)
    with rt.device(device.name):
        tensors = [rt.constant(a) for a in args]
        got = fn(*tensors) if mode == "eager" else rt.function(fn)(*tensors)
    flat = rt.nest.flatten(got)
    if mode == "eager" and name != "random (seeded)":
        placed = {t.device for t in flat}
        assert placed == {device.name}, f"results on {sorted(placed)}"
    for g, w in zip(_values(got), want, strict=True):
        assert g.dtype == w.dtype, f"dtype {g.dtype} != {w.dtype}"
        if w.dtype.kind in "fc":
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL)
        else:
            np.testing.assert_array_equal(g, w)


def _values(result):
    return [np.asarray(t) for t in rt.nest.flatten(result)]


# -- 2.-4. timings ------------------------------------------------------------------------------

def matmul_speed(device, quick):
    n = 512 if quick else 4096
    rng = np.random.default_rng(0)
    a_np, b_np = (rng.standard_normal((n, n), dtype=np.float32) for _ in range(2))
    with rt.device(device.name):
        a, b = rt.constant(a_np), rt.constant(b_np)
        graph = rt.function(rt.matmul)
    raw_a, raw_b = a._value, b._value
    times = medians({
        "runtime, eager": _on(device, lambda: rt.matmul(a, b)),
        "runtime, graph": _on(device, lambda: graph(a, b)),
        "raw": _on(device, lambda: device.xp.matmul(raw_a, raw_b)),
    }, repeat=3 if quick else 9)
    return _rows(f"{n}x{n} float32 matmul", times, "raw", speed=True)


def op_overhead(device, quick):
    ops = 200

    def adds(x, c):
        for _ in range(ops):
            x = x + c
        return x

    with rt.device(device.name):
        x, c = rt.constant(np.ones(1, np.float32)), rt.constant(np.ones(1, np.float32))
        graph = rt.function(adds)
    raw_x, raw_c = x._value, c._value
    times = medians({
        "runtime, graph": _on(device, lambda: graph(x, c)),
        "runtime, eager": _on(device, lambda: adds(x, c)),
        "raw": _on(device, lambda: adds(raw_x, raw_c)),
    }, repeat=3 if quick else 9)
    per_op = {name: seconds / ops for name, seconds in times.items()}
    rows = _rows(f"per-op overhead, 1-element float32 ({ops} dependent adds)", per_op, "raw")
    above = (per_op["runtime, graph"] - per_op["raw"]) * 1e6
    rows.append((rows[0][0], "graph minus raw, per op", f"{above:.2f} us", "target <= 5 us"))
    return rows


def training_step(device, quick):
    x, labels, params = data()
    steps = {}
    for name in ("cpu:0", device.name):
        with rt.device(name):
            variables = [rt.Variable(p) for p in params]
            xt, yt = rt.constant(x), rt.constant(labels)
        step = rt.function(make_step(variables))
        steps[f"on {name}"] = _on(devices.get(name), lambda step=step, x=xt, y=yt: step(x, y))
    times = medians(steps, repeat=3 if quick else 9)
    return _rows("MLP training step (784-256-256-10, batch 128)", times, "on cpu:0")


def _on(device, work):
    """`work()` in the device's scope (a graph function's trace for it), until the device
    has done what it queued (CuPy runs kernels asynchronously)."""
    wait = device.native.synchronize if device.backend == "cupy" else (lambda: None)

    def run():
        with rt.device(device.name):
            result = work()
        wait()
        return result
    return run


def _rows(workload, times, baseline, speed=False):
    rows = []
    for name, seconds in times.items():
        ratio = times[baseline] / seconds if speed else seconds / times[baseline]
        label = "speed vs raw" if speed else f"vs {baseline}"
        rows.append((workload, name, _seconds(seconds), f"{ratio:.2f}x ({label})"))
    return rows


def _seconds(s):
    return f"{s * 1e3:.2f} ms" if s >= 1e-3 else f"{s * 1e6:.2f} us"


def _describe(device):
    if device.backend == "cupy":
        import cupy
        name = cupy.cuda.runtime.getDeviceProperties(device.index).get("name", b"GPU")
        return f"CuPy {cupy.__version__}, {name.decode() if isinstance(name, bytes) else name}"
    return f"{device.backend} {_version(device.backend)}"


def _version(module):
    try:
        return __import__(module).__version__
    except Exception:  # noqa: BLE001 - only shown
        return "?"


def _why_missing(name):
    kind = name.split(":")[0]
    why = devices.missing_reason(kind)
    if why:
        return why
    return "CuPy sees no such GPU" if kind == "gpu" else "no such device"


if __name__ == "__main__":
    start = time.perf_counter()
    code = main()
    print(f"\n(gpu_check ran {time.perf_counter() - start:.0f} s)")
    sys.exit(code)
