"""A dynamic RNN converted by autograph: `for x in xs` over a tensor of T=200 steps,
batch 16, hidden 64, collecting every state (`outputs.append(h)`).

Target: graph within 1.3x of hand-written numpy (tf.function: 2.0x).
"""
import numpy as np

import runtime as rt
from harness import Report, executor_variants, main, medians, optional, sample

T, BATCH, INPUTS, HIDDEN = 200, 16, 64, 64
rnn = sample("dynamic_rnn").rnn              # @ag.convert of rnn_numpy's loop, on tensors


def rnn_numpy(xs, h, w_x, w_h, b):
    outputs = []
    for x in xs:
        h = np.tanh(x @ w_x + h @ w_h + b)
        outputs.append(h)
    return h, np.stack(outputs)


def data():
    rng = np.random.default_rng(0)
    return [rng.normal(size=(T, BATCH, INPUTS)).astype(np.float32),
            np.zeros((BATCH, HIDDEN), np.float32),
            (rng.normal(size=(INPUTS, HIDDEN)) * 0.1).astype(np.float32),
            (rng.normal(size=(HIDDEN, HIDDEN)) * 0.1).astype(np.float32),
            np.zeros(HIDDEN, np.float32)]


def framework_variants(arrays):
    variants = {}
    tf = optional("tensorflow")
    if tf is not None:
        def rnn_tf(xs, h, w_x, w_h, b):
            outputs = tf.TensorArray(tf.float32, size=T)
            for i in tf.range(T):
                h = tf.tanh(tf.matmul(xs[i], w_x) + tf.matmul(h, w_h) + b)
                outputs = outputs.write(i, h)
            return h, outputs.stack()
        f, args = tf.function(rnn_tf), [tf.constant(a) for a in arrays]
        variants["tf.function"] = lambda: f(*args)
    jax = optional("jax")
    if jax is not None:
        jnp = jax.numpy

        def rnn_jax(xs, h, w_x, w_h, b):
            def step(h, x):
                h = jnp.tanh(x @ w_x + h @ w_h + b)
                return h, h
            return jax.lax.scan(step, h, xs)
        f, args = jax.jit(rnn_jax), [jnp.asarray(a) for a in arrays]
        variants["jax.jit"] = lambda: jax.block_until_ready(f(*args))
    torch = optional("torch")
    if torch is not None:
        args = [torch.from_numpy(a) for a in arrays]

        def rnn_torch():
            xs, h, w_x, w_h, b = args
            outputs = []
            for x in xs:
                h = torch.tanh(x @ w_x + h @ w_h + b)
                outputs.append(h)
            return h, torch.stack(outputs)
        variants["torch eager"] = rnn_torch
    return variants


def measure(quick=False):
    report = Report(f"dynamic RNN (T={T}, batch {BATCH}, hidden {HIDDEN})",
                    "graph <= 1.3x numpy")
    arrays = data()
    tensors = [rt.constant(a) for a in arrays]
    np.testing.assert_allclose(rnn(*tensors)[1].numpy(), rnn_numpy(*arrays)[1], rtol=1e-5,
                               atol=1e-5)
    variants = executor_variants(lambda: rnn(*tensors))
    variants.update({
        "graph (fast, no passes)": (lambda: rnn(*tensors),
                                    lambda: rt.config.options(optimizations=False)),
        "numpy": lambda: rnn_numpy(*arrays),
    })
    variants.update(framework_variants(arrays))
    report.values.update(medians(variants, repeat=5 if quick else 15))
    return report


if __name__ == "__main__":
    main(measure)
