"""Call overhead: one call of a converted `x + 1` on a 1-element tensor.

Everything a call costs beyond the add: the signature lookup, argument binding, the
graph run and wrapping the result. Target: within 30x of numpy's own `x + 1` on a
1-element array (tf.function measures about 320x).
"""
import numpy as np

import autograph as ag
import runtime as rt
from harness import Report, executor_variants, main, medians, optional


@ag.convert
def plus_one(x):
    return x + 1


def framework_variants(x):
    variants = {}
    tf = optional("tensorflow")
    if tf is not None:
        f, t = tf.function(lambda v: v + 1), tf.constant(x)
        variants["tf.function"] = lambda: f(t)
    jax = optional("jax")
    if jax is not None:
        f, t = jax.jit(lambda v: v + 1), jax.numpy.asarray(x)
        variants["jax.jit"] = lambda: f(t).block_until_ready()
    torch = optional("torch")
    if torch is not None:
        t = torch.from_numpy(x)
        variants["torch eager"] = lambda: t + 1
    return variants


def measure(quick=False):
    report = Report("call of a converted x + 1 (1 element)", "graph <= 30x numpy")
    x = np.ones(1, np.float32)
    t = rt.constant(x)
    assert plus_one(t).numpy() == 2.0
    variants = executor_variants(lambda: plus_one(t))
    variants.update({"eager op (t + 1)": lambda: t + 1, "numpy": lambda: x + 1})
    variants.update(framework_variants(x))
    report.values.update(medians(variants, repeat=5 if quick else 15))
    return report


if __name__ == "__main__":
    main(measure)
