"""Rematerialization: a loop's gradient recomputes cheap forward values from the loop
variables instead of collecting them at every iteration; same bits, less memory."""
import tracemalloc

import numpy as np

import runtime as rt
from runtime import passes
from pass_testing import text

VECTOR = rt.TensorSpec([None], rt.float32)
SIMPLIFY = ["pruning", "algebraic", "constant_folding", "cse"]
REMAT = rt.config.DEFAULT_PASSES | {"rematerialization"}


def loop_and_gradients(x, w, steps=5):
    def body(i, x):
        y = rt.tanh(x)                        # the gradient needs y, sin(x), y * sin(x), x
        return i + 1, x + y * rt.sin(x) * w
    _, out = rt.while_loop(lambda i, x: i < steps, body, [0, x])
    loss = rt.reduce_sum(out)
    return loss, rt.gradients(loss, [w, x])


def forward_loop(graph):
    return next(op for op in graph.ops if op.type == "while" and "stacks" in op.attrs)


def test_collected_values_become_recomputations_from_the_loop_variable():
    graph = rt.function(loop_and_gradients).get_concrete_function(VECTOR, VECTOR).graph
    before = passes.optimize(graph, SIMPLIFY)
    after = passes.optimize(graph, SIMPLIFY + ["rematerialization"])
    assert forward_loop(before).attrs["stacks"] == 5      # x, tanh, sin, and two products
    assert forward_loop(after).attrs["stacks"] == 1
    body = forward_loop(after).attrs["body_graph"]
    assert text(body).splitlines()[-2].strip() == "return (add, add_1, arg1)"  # x alone
    backward = text(after).split("while_1:0")[-1]
    assert "= tanh(stack_get)" in backward and "= sin(stack_get)" in backward
    assert backward.count("stack_get[") == 1


def test_the_same_bits_under_both_executors():
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    w = np.linspace(0.5, 2, 7, dtype=np.float32)

    def run(executor, optimizations):
        with rt.config.options(executor=executor, optimizations=optimizations):
            return [t.numpy().tobytes() for t in
                    rt.nest.flatten(rt.function(loop_and_gradients)(x, w))]

    reference = run("plain", False)
    for executor in ("fast", "plain"):
        assert run(executor, REMAT) == reference


def test_a_long_loop_keeps_less():
    x = rt.constant(np.linspace(-1, 1, 4096, dtype=np.float32))
    w = rt.constant(np.ones(4096, np.float32))
    f = rt.function(lambda x, w: loop_and_gradients(x, w, steps=100))

    def peak(optimizations):
        with rt.config.options(optimizations=optimizations):
            f(x, w)
            rt.config.release_buffers()   # (the call allocates all it uses)
            tracemalloc.start()
            try:
                f(x, w)
                return tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()

    kept, recomputed = peak(True), peak(REMAT)
    assert recomputed < 0.5 * kept                     # one collection instead of four


def test_off_by_default_and_switched_on_by_config():
    assert "rematerialization" not in rt.config.DEFAULT_PASSES
    with rt.config.options():
        rt.config.set_rematerialization(True)
        assert "rematerialization" in rt.config.get_optimizations()
        rt.config.set_rematerialization(False)
        assert "rematerialization" not in rt.config.get_optimizations()
