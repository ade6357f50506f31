"""Time and peak memory of a loop's gradient: 300 steps of `x = x + 0.1 * tanh(x * w)` over
16K float32 (w a scalar), converted by autograph, gradients by a GradientTape in the
function, against hand-written numpy forward + backward (which keeps each step's x and
tanh, the values its backward pass reads).

Targets (issue 15): time <= 1.2x numpy; peak memory <= 1.1x numpy.
"""
import numpy as np

import autograph as ag
import runtime as rt
from runtime import compiled
from harness import (Report, executor_variants, keep_freed_memory, main, medians, optional,
                     peak_bytes)

STEPS, SIZE = 300, 1 << 14


@ag.convert
def loop_gradients(x, w, steps):
    with rt.GradientTape() as tape:
        tape.watch(x)
        tape.watch(w)
        y = x
        i = 0
        while i < steps:                 # a tensor: a graph while loop
            y = y + 0.1 * rt.tanh(y * w)
            i += 1
        loss = rt.reduce_sum(y)
    dx, dw = tape.gradient(loss, [x, w])
    return loss, dx, dw


def loop_gradients_numpy(x, w):
    xs, ts = [], []
    for _ in range(STEPS):
        t = np.tanh(x * w)
        xs.append(x)
        ts.append(t)
        x = x + np.float32(0.1) * t
    loss = np.sum(x)
    g, gw = np.ones_like(x), np.float32(0)
    for x, t in zip(reversed(xs), reversed(ts)):
        d = g * np.float32(0.1) * (1 - t * t)
        gw = gw + np.dot(d, x)
        g = g + d * w
    return loss, g, gw


def data():
    return (np.linspace(-0.5, 1, SIZE, dtype=np.float32), np.float32(0.7))


def measure(quick=False):
    x, w = data()
    args = [rt.constant(x), rt.constant(w), rt.constant(STEPS)]
    ours, ref = loop_gradients(*args), loop_gradients_numpy(x, w)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a.numpy(), b, rtol=2e-3)
    timing = Report(f"gradient of a {STEPS}-step loop over {SIZE // 1024}K floats: time",
                    "graph <= 1.2x numpy forward + backward")
    variants = executor_variants(lambda: loop_gradients(*args))
    variants["numpy"] = lambda: loop_gradients_numpy(x, w)
    variants.update(framework_variants(x, w))
    for name, seconds in medians(variants, repeat=5 if quick else 15).items():
        timing.add(name, seconds)
    reports = [timing]
    if keep_freed_memory():
        warm = Report(f"the same, malloc keeping freed memory (numpy's arrays warm)",
                      "graph <= 1.2x numpy forward + backward")
        variants = {k: v for k, v in executor_variants(lambda: loop_gradients(*args)).items()
                    if "plain" not in k}
        variants["numpy"] = lambda: loop_gradients_numpy(x, w)
        for name, seconds in medians(variants, repeat=5 if quick else 15).items():
            warm.add(name, seconds)
        reports.append(warm)
    memory = Report(f"gradient of a {STEPS}-step loop over {SIZE // 1024}K floats: peak memory",
                    "graph <= 1.1x numpy", unit="bytes")
    memory.add("graph (fast executor)", peak_bytes(lambda: loop_gradients(*args)))
    if compiled.available():
        with rt.config.options(executor="compiled", compile_policy="always"):
            memory.add("graph (compiled tier)", peak_bytes(lambda: loop_gradients(*args)))
    memory.add("numpy", peak_bytes(lambda: loop_gradients_numpy(x, w)))
    memory.notes.append(f"one vector: {SIZE * 4 / 2**20:.3f} MB; numpy keeps two per step: "
                        f"{2 * STEPS * SIZE * 4 / 2**20:.1f} MB")
    return reports + [memory]


def framework_variants(x, w):
    variants = {}
    jax = optional("jax")
    if jax is not None:
        jnp = jax.numpy

        def loss_jax(x, w):
            def step(x, _):
                return x + 0.1 * jnp.tanh(x * w), None
            return jnp.sum(jax.lax.scan(step, x, None, length=STEPS)[0])
        f = jax.jit(jax.value_and_grad(loss_jax, argnums=(0, 1)))
        args = (jnp.asarray(x), jnp.asarray(w))
        variants["jax.jit (scan)"] = lambda: jax.block_until_ready(f(*args))
    tf = optional("tensorflow")
    if tf is not None:
        @tf.function
        def loss_tf(x, w):
            with tf.GradientTape() as tape:
                tape.watch([x, w])
                y = x
                for _ in tf.range(STEPS):
                    y = y + 0.1 * tf.tanh(y * w)
                loss = tf.reduce_sum(y)
            return loss, tape.gradient(loss, [x, w])
        args = (tf.constant(x), tf.constant(w))
        variants["tf.function"] = lambda: loss_tf(*args)
    torch = optional("torch")
    if torch is not None:
        def loss_torch():
            xt = torch.from_numpy(x).requires_grad_()
            wt = torch.tensor(float(w), requires_grad=True)
            y = xt
            for _ in range(STEPS):
                y = y + 0.1 * torch.tanh(y * wt)
            loss = y.sum()
            loss.backward()
            return loss, xt.grad, wt.grad
        variants["torch eager"] = loss_torch
    return variants


if __name__ == "__main__":
    main(measure)
