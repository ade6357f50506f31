"""Trace and retrace cost: the first call of a 200-op function (trace, passes, compile,
run), a second trace of the same function for a new input shape, and a warm call.

    def layers(x, w):                       20 steps of 10 ops, unrolled while tracing:
        for k in range(20):                 matmul, add, tanh, multiply, add, reduce_mean,
            h = tanh(h @ w + 0.1 * k) ...   maximum and their constants

Each cold sample makes a new `rt.function` (nothing cached), so it pays everything a
user's first call pays (lazily compiled: the plain executor runs it; "compiled before the
first call" is `rt.config.set_lazy_compile(False)`). Target (issue 15): cold trace + first
call <= 8 ms. Hand-written numpy has no trace: its row is one call of the same
computation, for scale.
"""
import time

import numpy as np

import runtime as rt
from harness import Report, main, medians, optional

STEPS = 20


def layers(x, w):
    h = x
    for k in range(STEPS):
        h = rt.tanh(rt.matmul(h, w) + 0.1 * k)
        h = h * 0.5 + rt.reduce_mean(h)
        h = rt.maximum(h, -1.0)
    return rt.reduce_sum(h)


def layers_numpy(x, w):
    h = x
    for k in range(STEPS):
        h = np.tanh(h @ w + np.float32(0.1 * k))
        h = h * np.float32(0.5) + np.mean(h)
        h = np.maximum(h, np.float32(-1.0))
    return np.sum(h)


def cold_medians(variants, repeat):
    """{name: median seconds} of one-off events, wall time and (as "NAME (CPU)") this
    process's CPU time, which a loaded machine inflates less: `variants[name]()` returns
    a callable whose one call is the event (its setup stays outside the measurement)."""
    samples = {name: [] for name in variants}
    cpu = {f"{name} (CPU)": [] for name in variants}
    for _ in range(repeat):
        for name, prepare in variants.items():
            event = prepare()
            start, start_cpu = time.perf_counter(), time.process_time()
            event()
            samples[name].append(time.perf_counter() - start)
            cpu[f"{name} (CPU)"].append(time.process_time() - start_cpu)
    return {name: sorted(s)[len(s) // 2] for name, s in {**samples, **cpu}.items()}


def cold_pair(label, make, args, args2, call=lambda f, args: f(*args)):
    """Variants timing the first call of a new function from `make()`, and its call for a
    second signature after a first call."""
    def first_call():
        f = make()
        return lambda: call(f, args)

    def retrace():
        f = make()
        call(f, args)
        return lambda: call(f, args2)
    return {f"{label}: cold trace + first call": first_call,
            f"{label}: retrace for a new shape": retrace}


def under(executor):
    def call(f, args):
        with rt.config.options(executor=executor):
            return f(*args)
    return call


def compiled_first(f, args):
    with rt.config.options(executor="fast"):
        saved = rt.config.get_lazy_compile()
        rt.config.set_lazy_compile(False)
        try:
            return f(*args)
        finally:
            rt.config.set_lazy_compile(saved)


def framework_variants(x, w, x2):
    variants = {}
    jax = optional("jax")
    if jax is not None:
        jnp = jax.numpy

        def layers_jax(x, w):
            h = x
            for k in range(STEPS):
                h = jnp.tanh(h @ w + 0.1 * k)
                h = h * 0.5 + jnp.mean(h)
                h = jnp.maximum(h, -1.0)
            return jnp.sum(h)
        variants.update(cold_pair(
            "jax.jit", lambda: jax.jit(lambda x, w: layers_jax(x, w)),
            (jnp.asarray(x), jnp.asarray(w)), (jnp.asarray(x2), jnp.asarray(w)),
            lambda f, args: f(*args).block_until_ready()))
    tf = optional("tensorflow")
    if tf is not None:
        def layers_tf(x, w):
            h = x
            for k in range(STEPS):
                h = tf.tanh(h @ w + 0.1 * k)
                h = h * 0.5 + tf.reduce_mean(h)
                h = tf.maximum(h, -1.0)
            return tf.reduce_sum(h)
        variants.update(cold_pair("tf.function", lambda: tf.function(layers_tf),
                                  (tf.constant(x), tf.constant(w)),
                                  (tf.constant(x2), tf.constant(w))))
    return variants


def measure(quick=False):
    report = Report(f"trace cost of a 200-op function ({STEPS} unrolled steps)",
                    "fast executor: cold trace + first call <= 8 ms")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    x2 = rng.normal(size=(4, 16)).astype(np.float32)
    w = (rng.normal(size=(16, 16)) * 0.3).astype(np.float32)
    tx, tx2, tw = rt.constant(x), rt.constant(x2), rt.constant(w)
    f = rt.function(layers)
    np.testing.assert_allclose(f(tx, tw).numpy(), layers_numpy(x, w), rtol=1e-4)
    ops = len(f.get_concrete_function(tx, tw).graph.ops)
    variants = {}
    for executor in ("fast", "plain"):
        variants.update(cold_pair(f"{executor} executor", lambda: rt.function(layers),
                                  (tx, tw), (tx2, tw), under(executor)))
    eager_compile = {
        f"fast executor, compiled before the first call: {k.split(': ')[1]}": v
        for k, v in cold_pair("fast", lambda: rt.function(layers), (tx, tw), (tx2, tw),
                              compiled_first).items()}
    variants.update(eager_compile)
    variants.update(framework_variants(x, w, x2))
    report.values.update(cold_medians(variants, repeat=7 if quick else 31))
    report.values["warm call (fast executor)"] = medians(
        {"warm": lambda: f(tx, tw)}, repeat=5 if quick else 15)["warm"]
    report.values["numpy"] = medians({"numpy": lambda: layers_numpy(x, w)},
                                     repeat=5 if quick else 15)["numpy"]
    report.notes.append(f"{ops} operations traced; ratios are to one numpy call")
    return report


if __name__ == "__main__":
    main(measure)
