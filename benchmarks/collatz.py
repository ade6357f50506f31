"""collatz(27) converted by autograph: a data-dependent while loop with a branch inside.

Target: graph within 1.5x of the same loop on numpy int32 scalars, and at least 3x
faster than our eager mode (tf.function measures 48x numpy here).
"""
import numpy as np

import runtime as rt
from harness import Report, executor_variants, main, medians, optional, sample

N = 27
collatz = sample("collatz").collatz          # @ag.convert of the loop below, on tensors


def collatz_numpy(n):
    """The same loop on numpy int32 scalars (Python ints are weakly typed: n stays int32)."""
    steps = np.int32(0)
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


class _EagerFunctions:
    """Our eager mode: the converted function's Python runs op by op on eager tensors."""

    def __enter__(self):
        rt.run_functions_eagerly(True)

    def __exit__(self, *exc):
        rt.run_functions_eagerly(False)


def framework_variants():
    variants = {}
    tf = optional("tensorflow")
    if tf is not None:
        def collatz_tf(n):
            steps = tf.constant(0)
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps
        f, n = tf.function(collatz_tf), tf.constant(N)
        variants["tf.function"] = lambda: f(n)
    jax = optional("jax")
    if jax is not None:
        lax, jnp = jax.lax, jax.numpy

        def collatz_jax(n):
            def body(state):
                n, steps = state
                return lax.cond(n % 2 == 0, lambda: n // 2, lambda: 3 * n + 1), steps + 1
            return lax.while_loop(lambda s: s[0] != 1, body, (n, jnp.int32(0)))[1]
        f, n = jax.jit(collatz_jax), jnp.int32(N)
        variants["jax.jit"] = lambda: f(n).block_until_ready()
    torch = optional("torch")
    if torch is not None:
        def collatz_torch(n):
            steps = torch.tensor(0, dtype=torch.int32)
            while n != 1:
                n = n // 2 if n % 2 == 0 else 3 * n + 1
                steps += 1
            return steps
        n = torch.tensor(N, dtype=torch.int32)
        variants["torch eager"] = lambda: collatz_torch(n)
    return variants


def measure(quick=False):
    report = Report("collatz(27)", "graph <= 1.5x numpy, eager >= 3x graph")
    n = rt.constant(N)
    assert int(collatz(n)) == int(collatz_numpy(np.int32(N))) == 111
    variants = executor_variants(lambda: collatz(n))
    variants.update({
        "eager": (lambda: collatz(n), _EagerFunctions),
        "numpy": lambda: collatz_numpy(np.int32(N)),
    })
    variants.update(framework_variants())
    report.values.update(medians(variants, repeat=5 if quick else 15))
    graph, eager = report.values["graph (fast executor)"], report.values["eager"]
    report.notes.append(f"eager / graph: {eager / graph:.1f}x")
    return report


if __name__ == "__main__":
    main(measure)
