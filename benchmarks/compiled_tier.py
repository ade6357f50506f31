"""The compiled tier (numba) against the fast executor and hand-written numpy.

Six workloads, each run by the fast executor, by the compiled tier (regions compiled
before timing: policy "always") and by hand-written numpy, with JAX `jit` when it is
installed, side by side in one process. Then the start-up costs: the cold compile of
each workload's regions (empty disk cache, numba already started) and, in fresh
processes, the first call of a converted 200-op function from a warm disk cache
under the default policy, next to the fast executor's cold first call.

Targets (ratio to numpy): collatz and the scalar loop <= 0.1, RNN <= 0.7, training
loop <= 0.9, elementwise chain <= 0.5, small ops <= 0.3; first call of the 200-op
function from a warm disk cache <= 3x the fast executor's.

    python benchmarks/compiled_tier.py [--quick]
"""
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from harness import ROOT, Report, machine, medians, optional, sample, table

import autograph as ag  # noqa: E402 - harness puts this checkout first on sys.path
import runtime as rt  # noqa: E402

# -- the workloads: a converted function, its numpy twin, its arguments --------------------


@ag.convert
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def collatz_numpy(n):
    steps = np.int32(0)
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


@ag.convert
def primes(n):
    count = 0
    i = 2
    while i < n:
        j = 2
        is_prime = True
        while j * j <= i:
            if i % j == 0:
                is_prime = False
                break
            j += 1
        if is_prime:
            count += 1
        i += 1
    return count


def primes_numpy(n):
    count = np.int32(0)
    i = np.int32(2)
    while i < n:
        j = np.int32(2)
        is_prime = True
        while j * j <= i:
            if i % j == 0:
                is_prime = False
                break
            j += 1
        if is_prime:
            count += 1
        i += 1
    return count


rnn = sample("dynamic_rnn").rnn


def rnn_numpy(xs, h, w_x, w_h, b):
    outputs = []
    for x in xs:
        h = np.tanh(x @ w_x + h @ w_h + b)
        outputs.append(h)
    return h, np.stack(outputs)


def rnn_data():
    rng = np.random.default_rng(0)
    return [rng.normal(size=(200, 16, 64)).astype(np.float32), np.zeros((16, 64), np.float32),
            (rng.normal(size=(64, 64)) * 0.1).astype(np.float32),
            (rng.normal(size=(64, 64)) * 0.1).astype(np.float32), np.zeros(64, np.float32)]


STEPS, LR = 20, np.float32(0.1)


@ag.convert
def train(x, y, w1, b1, w2, b2):
    """20 SGD steps of a 64-128-10 MLP, softmax cross-entropy, backward pass by hand."""
    n = rt.cast(rt.shape(x)[0], rt.float32)
    for _ in rt.range(STEPS):
        h = rt.relu(rt.matmul(x, w1) + b1)
        logits = rt.matmul(h, w2) + b2
        e = rt.exp(logits - rt.reduce_max(logits, axis=1, keepdims=True))
        p = e / rt.reduce_sum(e, axis=1, keepdims=True)
        d_logits = (p - y) / n
        d_h = rt.where(h > 0.0, rt.matmul(d_logits, w2, transpose_b=True), 0.0)
        w2 = w2 - 0.1 * rt.matmul(h, d_logits, transpose_a=True)
        b2 = b2 - 0.1 * rt.reduce_sum(d_logits, axis=0)
        w1 = w1 - 0.1 * rt.matmul(x, d_h, transpose_a=True)
        b1 = b1 - 0.1 * rt.reduce_sum(d_h, axis=0)
    return w1, b1, w2, b2


def train_numpy(x, y, w1, b1, w2, b2):
    n = np.float32(x.shape[0])
    for _ in range(STEPS):
        h = np.maximum(x @ w1 + b1, np.float32(0))
        logits = h @ w2 + b2
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        d_logits = (p - y) / n
        d_h = np.where(h > 0, d_logits @ w2.T, np.float32(0))
        w2 = w2 - LR * (h.T @ d_logits)
        b2 = b2 - LR * d_logits.sum(axis=0)
        w1 = w1 - LR * (x.T @ d_h)
        b1 = b1 - LR * d_h.sum(axis=0)
    return w1, b1, w2, b2


def train_data():
    rng = np.random.default_rng(0)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 32)]
    return [rng.normal(size=(32, 64)).astype(np.float32), y,
            (rng.normal(size=(64, 128)) * 0.1).astype(np.float32), np.zeros(128, np.float32),
            (rng.normal(size=(128, 10)) * 0.1).astype(np.float32), np.zeros(10, np.float32)]


@ag.convert
def chain(x):
    """8 elementwise ops."""
    return ((x * 1.5 + 0.5) * x - 2.0) * (x + 3.0) / (x * x)


def chain_numpy(x):
    return ((x * np.float32(1.5) + np.float32(0.5)) * x - np.float32(2.0)) * (
        x + np.float32(3.0)) / (x * x)


@ag.convert
def small_ops(x):
    """100 chained ops on a 16-element vector."""
    for _ in range(50):
        x = x * 1.0001 + 0.001
    return x


def small_ops_numpy(x):
    a, b = np.float32(1.0001), np.float32(0.001)
    for _ in range(50):
        x = x * a + b
    return x


def workloads():
    chain_x = np.linspace(0.5, 2.0, 4 * 2**20, dtype=np.float32)
    small_x = np.linspace(0, 1, 16, dtype=np.float32)
    return [
        ("collatz(27) on int32 scalars", collatz, collatz_numpy, [np.int32(27)], "<= 0.1"),
        ("primes below 2000 (nested whiles + break)", primes, primes_numpy, [np.int32(2000)],
         "<= 0.1"),
        ("RNN T=200 B=16 H=64", rnn, rnn_numpy, rnn_data(), "<= 0.7"),
        ("20 SGD steps of a 64-128-10 MLP in one loop", train, train_numpy, train_data(),
         "<= 0.9"),
        ("8-op elementwise chain over 4M float32", chain, chain_numpy, [chain_x], "<= 0.5"),
        ("100 chained ops on 16-element vectors", small_ops, small_ops_numpy, [small_x], "<= 0.3"),
    ]


def jax_variant(name, args):
    jax = optional("jax")
    if jax is None:
        return {}
    jnp, lax = jax.numpy, jax.lax
    if name.startswith("collatz"):
        def f(n):
            def body(s):
                n, k = s
                return lax.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1), k + 1
            return lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1]
    elif name.startswith("primes"):
        def f(n):
            def inner(s):
                i, j, p = s
                return i, j + 1, p & (i % j != 0)

            def outer(s):
                i, c = s
                _, _, p = lax.while_loop(lambda s: s[2] & (s[1] * s[1] <= s[0]), inner,
                                         (i, jnp.int32(2), True))
                return i + 1, c + p.astype(jnp.int32)
            return lax.while_loop(lambda s: s[0] < n, outer, (jnp.int32(2), jnp.int32(0)))[1]
    elif name.startswith("RNN"):
        def f(xs, h, w_x, w_h, b):
            def step(h, x):
                h = jnp.tanh(x @ w_x + h @ w_h + b)
                return h, h
            return lax.scan(step, h, xs)
    elif name.startswith("20 SGD"):
        def f(x, y, w1, b1, w2, b2):
            def step(_, p):
                w1, b1, w2, b2 = p
                h = jnp.maximum(x @ w1 + b1, 0)
                logits = h @ w2 + b2
                e = jnp.exp(logits - logits.max(axis=1, keepdims=True))
                d = (e / e.sum(axis=1, keepdims=True) - y) / x.shape[0]
                d_h = jnp.where(h > 0, d @ w2.T, 0)
                return (w1 - 0.1 * x.T @ d_h, b1 - 0.1 * d_h.sum(0), w2 - 0.1 * h.T @ d,
                        b2 - 0.1 * d.sum(0))
            return lax.fori_loop(0, STEPS, step, (w1, b1, w2, b2))
    elif name.startswith("8-op"):
        def f(x):
            return ((x * 1.5 + 0.5) * x - 2.0) * (x + 3.0) / (x * x)
    else:
        def f(x):
            for _ in range(50):
                x = x * 1.0001 + 0.001
            return x
    jitted, jargs = jax.jit(f), [jnp.asarray(a) for a in args]
    jax.block_until_ready(jitted(*jargs))
    return {"jax.jit": lambda: jax.block_until_ready(jitted(*jargs))}


def compiled_settings():
    return rt.config.options(executor="compiled", compile_policy="always")


def measure_workload(name, fn, reference, arrays, target, quick):
    report = Report(name, f"compiled {target} numpy")
    args = [rt.constant(a) for a in arrays]
    with compiled_settings():
        started = time.perf_counter()
        fn(*args)                              # compiles (cache cold or warm: see below)
        report.notes.append(f"first compiled call {time.perf_counter() - started:.2f} s")
    variants = {
        "fast": (lambda: fn(*args), lambda: rt.config.options(executor="fast")),
        "compiled": (lambda: fn(*args), compiled_settings),
        "numpy": lambda: reference(*arrays),
    }
    variants.update(jax_variant(name, arrays))
    report.values.update(medians(variants, repeat=5 if quick else 11))
    regions = [r for r in rt.config.compiled_regions()
               if r["graph"] == fn.__name__ and r["state"] == "compiled"]
    report.notes.append(f"compiled regions: {len(regions)} "
                        f"({', '.join(sorted(r['kind'] for r in regions))})")
    report.target = f"compiled {target}"
    return report


# -- start-up: cold compiles, warm disk cache, the 200-op function's first call ----------------

STARTUP = r"""
import sys, time
sys.path.insert(0, {root!r})
mode, cache = sys.argv[1], sys.argv[2]
start = time.perf_counter()
import autograph as ag
import runtime as rt
import numpy as np
rt.config.set_compile_cache_dir(cache)
if mode == "always":
    rt.config.set_compile_policy("always")

@ag.convert(jit_compile=mode != "fast")
def f(x, n):
    i = 0
    while i < n:
{body}
        i += 1
    return x

x, n = rt.constant(np.linspace(0, 1, 16, dtype=np.float32)), rt.constant(3)
imported = time.perf_counter()
f(x, n)
done = time.perf_counter()
print(imported - start, done - imported)
"""


def op_lines():
    """About 200 ops in the loop body: mixed arithmetic, a comparison and a where."""
    lines = []
    for k in range(48):
        lines.append(f"        x = rt.where(x > {k / 50:.2f}, x * 0.999 + 0.001, x - 0.0001)")
    return "\n".join(lines)


def first_calls(quick):
    """Seconds of the first call in fresh processes: (fast cold, compiled cold cache,
    compiled warm cache with policy always, jit_compile warm cache default policy)."""
    script = STARTUP.format(root=ROOT, body=op_lines())
    path = os.path.join(tempfile.mkdtemp(), "first_call.py")
    with open(path, "w") as f:
        f.write(script)
    cache = tempfile.mkdtemp()

    def run(mode):
        out = subprocess.run([sys.executable, path, mode, cache], capture_output=True,
                             text=True, check=True).stdout.split()
        return float(out[1])
    results = {"fast executor, cold": [], "jit_compile, warm disk cache (policy hot)": [],
               "compile everything, cold cache": [], "compile everything, warm disk cache": []}
    results["compile everything, cold cache"].append(run("always"))
    for _ in range(2 if quick else 5):
        results["fast executor, cold"].append(run("fast"))
        results["jit_compile, warm disk cache (policy hot)"].append(run("hot"))
        results["compile everything, warm disk cache"].append(run("always"))
    return {k: sorted(v)[len(v) // 2] for k, v in results.items()}


def measure(quick=False):
    rt.config.set_compile_cache_dir(tempfile.mkdtemp())      # cold compiles below
    reports = [measure_workload(*w, quick) for w in workloads()]
    startup = Report("first call of a converted ~200-op function, fresh process",
                     "jit_compile (warm disk cache) <= 3x fast cold", "fast executor, cold")
    startup.values.update(first_calls(quick))
    reports.append(startup)
    return reports


if __name__ == "__main__":
    print(machine())
    print(table(measure("--quick" in sys.argv)))
