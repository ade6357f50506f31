"""One MLP training step: 784-256-256-10, batch 128, softmax cross-entropy, SGD.

Gradients come from rt.GradientTape inside the traced step (symbolic gradients in
the graph). Target: graph within 1.5x of hand-written numpy forward + backward
(tf.function: 1.1x).
"""
import numpy as np

import runtime as rt
from harness import Report, executor_variants, main, medians, optional

BATCH, SIZES, LEARNING_RATE = 128, (784, 256, 256, 10), 0.01


def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, SIZES[0])).astype(np.float32)
    labels = rng.integers(0, SIZES[-1], size=BATCH).astype(np.int32)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.normal(size=(fan_in, fan_out)) * np.sqrt(2 / fan_in)).astype(
            np.float32))
        params.append(np.zeros(fan_out, np.float32))
    return x, labels, params


def make_step(variables):
    def step(x, labels):
        with rt.GradientTape() as tape:
            h = x
            for i in range(0, len(variables) - 2, 2):
                h = rt.relu(rt.matmul(h, variables[i]) + variables[i + 1])
            logits = rt.matmul(h, variables[-2]) + variables[-1]
            loss = rt.reduce_mean(rt.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
        for v, g in zip(variables, tape.gradient(loss, variables)):
            v.assign_sub(LEARNING_RATE * g)
        return loss
    return step


def step_numpy(x, labels, params):
    """Forward and backward by hand, updating `params` in place; returns the loss."""
    rows = np.arange(len(labels))
    activations, pre = [x], []
    h = x
    for i in range(0, len(params) - 2, 2):
        a = h @ params[i] + params[i + 1]
        pre.append(a)
        h = np.maximum(a, 0)
        activations.append(h)
    logits = h @ params[-2] + params[-1]
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    probs = exp / exp.sum(axis=1, keepdims=True)
    loss = -np.mean(np.log(probs[rows, labels]))
    grad = probs
    grad[rows, labels] -= 1
    grad /= len(labels)
    grads = [None] * len(params)
    for layer in range(len(params) // 2 - 1, -1, -1):
        grads[2 * layer] = activations[layer].T @ grad
        grads[2 * layer + 1] = grad.sum(axis=0)
        if layer:
            grad = grad @ params[2 * layer].T
            grad[pre[layer - 1] <= 0] = 0
    for p, g in zip(params, grads):
        p -= LEARNING_RATE * g
    return loss


def framework_variants(x, labels, params):
    variants = {}
    tf = optional("tensorflow")
    if tf is not None:
        ws = [tf.Variable(p) for p in params]
        xt, yt = tf.constant(x), tf.constant(labels)

        @tf.function
        def step_tf():
            with tf.GradientTape() as tape:
                h = xt
                for i in range(0, len(ws) - 2, 2):
                    h = tf.nn.relu(h @ ws[i] + ws[i + 1])
                logits = h @ ws[-2] + ws[-1]
                loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(yt, logits))
            for w, g in zip(ws, tape.gradient(loss, ws)):
                w.assign_sub(LEARNING_RATE * g)
            return loss
        variants["tf.function"] = step_tf
    jax = optional("jax")
    if jax is not None:
        jnp = jax.numpy

        def loss_jax(ps, x, y):
            h = x
            for i in range(0, len(ps) - 2, 2):
                h = jax.nn.relu(h @ ps[i] + ps[i + 1])
            logits = h @ ps[-2] + ps[-1]
            return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(len(y)), y])

        @jax.jit
        def step_jax(ps, x, y):
            grads = jax.grad(loss_jax)(ps, x, y)
            return [p - LEARNING_RATE * g for p, g in zip(ps, grads)]
        state = {"ps": [jnp.asarray(p) for p in params]}
        xj, yj = jnp.asarray(x), jnp.asarray(labels)

        def run():
            state["ps"] = jax.block_until_ready(step_jax(state["ps"], xj, yj))
        variants["jax.jit"] = run
    torch = optional("torch")
    if torch is not None:
        ps = [torch.tensor(p, requires_grad=True) for p in params]
        xt, yt = torch.from_numpy(x), torch.from_numpy(labels).long()

        def step_torch():
            h = xt
            for i in range(0, len(ps) - 2, 2):
                h = torch.relu(h @ ps[i] + ps[i + 1])
            loss = torch.nn.functional.cross_entropy(h @ ps[-2] + ps[-1], yt)
            grads = torch.autograd.grad(loss, ps)
            with torch.no_grad():
                for p, g in zip(ps, grads):
                    p -= LEARNING_RATE * g
            return loss
        variants["torch eager"] = step_torch
    return variants


def measure(quick=False):
    report = Report("MLP training step (784-256-256-10, batch 128)", "graph <= 1.5x numpy")
    x, labels, params = data()
    variables = [rt.Variable(p) for p in params]
    step = make_step(variables)
    graph_step = rt.function(step)
    xt, yt = rt.constant(x), rt.constant(labels)
    reference = [p.copy() for p in params]
    expected = step_numpy(x, labels, reference)
    np.testing.assert_allclose(float(graph_step(xt, yt)), expected, rtol=1e-4)
    np.testing.assert_allclose(variables[0].numpy(), reference[0], rtol=1e-4, atol=1e-6)
    numpy_params = [p.copy() for p in params]
    variants = executor_variants(lambda: graph_step(xt, yt))
    variants.update({
        "eager (GradientTape)": lambda: step(xt, yt),
        "numpy": lambda: step_numpy(x, labels, numpy_params),
    })
    variants.update(framework_variants(x, labels, params))
    report.values.update(medians(variants, repeat=5 if quick else 15))
    return report


if __name__ == "__main__":
    main(measure)
