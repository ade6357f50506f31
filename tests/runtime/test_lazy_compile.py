"""Lazy compiling (rt.config.set_lazy_compile): a graph run once does not pay for its passes
and generated source.

By default the fast executor runs the first run of a small loop-free graph step by step,
as traced (the plain executor), and optimizes and compiles it for its second run; graphs
with loops, or holding many elements, compile before their first run. Either way a call
gives the same values, printed text and errors. (The suites otherwise run with lazy
compiling off, tests/conftest.py, so that they test the executor they name.) Graphs with
ops on another device than cpu:0 compile (and are placed) first: these tests run with
cpu:0 as the default device, whatever RT_DEVICE says.
"""
import contextlib
import io

import numpy as np
import pytest

import autograph as ag
import runtime as rt
from runtime import codegen_executor

pytestmark = pytest.mark.usefixtures("on_cpu")


@pytest.fixture
def compiles(monkeypatch):
    """The graphs the fast executor compiled (their names), lazily compiling."""
    names = []
    compile_graph = codegen_executor.compile_graph

    def counted(graph, jit=False):
        if ("program-jit" if jit else "program") not in graph._plans:
            names.append(graph.name)
        return compile_graph(graph, jit)

    monkeypatch.setattr(codegen_executor, "compile_graph", counted)
    with rt.config.options(executor="fast"):
        saved = rt.config.get_lazy_compile()
        rt.config.set_lazy_compile(True)
        try:
            yield names
        finally:
            rt.config.set_lazy_compile(saved)


def test_a_loop_free_graph_compiles_on_its_second_run_with_the_same_results(compiles):
    @rt.function
    def step(x, w):
        h = rt.tanh(rt.matmul(x, w) + 0.5)
        return h * 2.0 - rt.reduce_mean(h), rt.reduce_sum(h, axis=0)

    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    w = np.linspace(0.5, -0.5, 16, dtype=np.float32).reshape(4, 4)
    first = [t.numpy() for t in step(x, w)]
    assert compiles == []
    second = [t.numpy() for t in step(x, w)]
    assert compiles == ["step"]
    third = [t.numpy() for t in step(x, w)]
    assert compiles == ["step"]
    for a, b, c in zip(first, second, third):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes() == c.tobytes()


def test_graphs_with_loops_or_many_elements_compile_before_their_first_run(compiles):
    @ag.convert
    def count(n):
        steps = 0
        while n > 1:
            n = n // 2
            steps += 1
        return steps

    @rt.function
    def big(x):
        return x * 2.0 + 1.0

    assert int(count(rt.constant(1000))) == 9
    assert compiles == ["count"]
    big(np.zeros(rt.config.LAZY_ELEMENTS, np.float32))
    assert compiles == ["count", "big"]


def test_lazy_compiling_off_compiles_every_graph_before_its_first_run(compiles):
    rt.config.set_lazy_compile(False)

    @rt.function
    def add_one(x):
        return x + 1

    assert int(add_one(rt.constant(1))) == 2
    assert compiles == ["add_one"]


def test_first_and_later_runs_print_and_fail_alike(compiles):
    @ag.convert
    def checked(x):
        print("x is", x)
        rt.debugging.assert_less(x, 10.0, message="x too big")
        return x + 1.0

    outputs, errors = [], []
    for run in range(2):                # interpreted, then compiled
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(rt.errors.OpError) as info:
            checked(rt.constant(30.0))
        outputs.append(out.getvalue())
        errors.append(str(info.value))
        assert compiles == ["checked"] * run
    assert outputs[0] == outputs[1] == "x is 30.0\n"
    assert errors[0] == errors[1] and "x too big" in errors[0]
    assert float(checked(rt.constant(3.0))) == 4.0


def test_jit_compile_graphs_are_never_interpreted(compiles):
    @rt.function(jit_compile=True)
    def scaled(x):
        return x * 3.0 + 1.0

    assert float(scaled(rt.constant(2.0))) == 7.0
    assert compiles == ["scaled"]


def test_device_arrays_fed_to_a_first_run_reach_it_on_the_cpu_and_placed_graphs_compile(
        compiles):
    pytest.importorskip("array_api_strict")

    @rt.function
    def double(x):
        return x * 2.0

    @rt.function
    def halve(x):
        with rt.device("strict:1"):
            return x / 2.0

    with rt.device("strict:0"):
        x = rt.constant([1.0, 3.0])          # a strict:0 array, fed to cpu:0 ops
    first = double(x)
    assert compiles == [] and first.device == "cpu:0"
    np.testing.assert_array_equal(first.numpy(), [2.0, 6.0])
    np.testing.assert_array_equal(double(x).numpy(), [2.0, 6.0])
    assert compiles == ["double"]
    half = halve(x)                          # ops on strict:1: placed, so compiled first
    assert compiles == ["double", "halve"]
    np.testing.assert_array_equal(half.numpy(), [0.5, 1.5])
