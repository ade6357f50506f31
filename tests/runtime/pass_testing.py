"""Shared helpers of the graph-pass tests: a graph's text before and after passes, and
results of the optimized graph against the graph as traced.

`text(graph)` is the graph's text form without its `# file:line` column, so the
expected texts in the tests read like the docstrings of the pass modules.
`check_same_results(fn, *args)` runs `fn` traced, with the passes off and then on,
under both executors, and asserts the results are identical: same dtype, same
bits (NaN equal to NaN).
"""
import textwrap

import numpy as np

import runtime as rt
from runtime import passes


def text(graph):
    """The text form of `graph` without the source-line column."""
    return "\n".join(line.split("  # ")[0].rstrip() for line in str(graph).splitlines())


def traced(fn, *specs):
    """The graph `fn` traces for these TensorSpecs (or values)."""
    return rt.function(fn).get_concrete_function(*specs).graph


def before_after(fn, specs, names):
    """(text before, text after) the passes `names` rewrite `fn`'s graph."""
    graph = traced(fn, *specs)
    return text(graph), text(passes.optimize(graph, names))


def expect(source):
    return textwrap.dedent(source).strip("\n")


def check_same_results(fn, *args):
    """`fn`'s results with passes off, then on (fast and plain executors): identical."""
    def run(executor, optimizations):
        with rt.config.options(executor=executor, optimizations=optimizations):
            result = rt.function(fn)(*args)
        return [np.asarray(t) for t in rt.nest.flatten(result)]

    reference = run("plain", False)
    for executor in ("fast", "plain"):
        got = run(executor, True)
        assert len(got) == len(reference)
        for g, r in zip(got, reference):
            assert g.dtype == r.dtype, (executor, g.dtype, r.dtype)
            assert g.shape == r.shape, (executor, g.shape, r.shape)
            assert g.tobytes() == r.tobytes() or np.array_equal(g, r, equal_nan=True) and \
                np.array_equal(np.signbit(g), np.signbit(r)), (executor, g, r)
    return reference
